/**
 * Full-text search over every operation: what a user can see of it (prompts, replies,
 * thinking, tool inputs, whole outputs) is in the FTS5 index, which names the operations
 * holding each word. Words and prefixes are answered by the index alone; a phrase (an
 * identifier, a path, a quoted phrase) by the index's candidates, each one's text checked for
 * the phrase (search_query.ts).
 *
 * Hits come newest first, and paging reaches every one of them. (BM25 ranking was dropped: it
 * counts every row holding each word, a scan of the word's whole doclist, which for a common
 * word or a short prefix over a million messages costs hundreds of milliseconds.) The count is
 * exact up to {@link COUNT_CAP} (with a session filter, of the matches read: all of them when
 * they are few, or when the filter's runs of rowids were read through; else the newest
 * {@link RANGED_FIRST} of its runs' span and more, or the newest {@link FILTERED_COUNT_SCAN}
 * (see `filteredPage`); for a phrase, when every candidate was checked, or
 * {@link PHRASE_CHECKS} checks' worth of them); past that it is a lower bound and
 * `total_capped` says so.
 * Operations a bulk import has stored but not indexed yet are not found; `unindexed` says how
 * many there are (backlog.ts).
 */
import type { Operation, PayloadRef } from "../model/mod.ts";
import { backlogSize, buildTexts, readOperations } from "./backlog.ts";
import {
  FilterRuns,
  type FilterStrategy,
  inRuns,
  JOIN_COST_OPS,
  listable,
  type OwnedRuns,
  ownersOf,
  type Runs,
} from "./filter_runs.ts";
import type { InflatedFrames } from "./payload_codec.ts";
import type { PayloadStore } from "./payloads.ts";
import { readStoredDoc, type StoredOp, storedOpColumns } from "./prepare.ts";
import type { Queries } from "./queries.ts";
import {
  type Continuations,
  COUNT_CAP,
  FILTERED_COUNT_SCAN,
  ftsQuery,
  type IndexWord,
  matchPattern,
  phraseCheck,
  type PrefixWords,
  TEXT_FILTER_WINDOW,
} from "./search_query.ts";
import {
  INDEXED_PAYLOAD_BYTES,
  INDEXED_TEXT_CHARS,
  indexedText,
  payloadWords,
} from "./search_text.ts";
import type { Sql, SqlRow } from "./_sql.ts";
import type { SearchHit, SearchResult, SessionQuery, Snippet } from "./types.ts";

/**
 * The characters other than a–z and 0–9 that follow an ASCII `prefix` (two letters or digits)
 * in some indexed word: the third characters of the index's words from `prefix` + U+0080 (the
 * first character past ASCII) up to the next prefix (`ab` → `ac`). The range is nearly always
 * empty, so it costs a seek.
 */
export function indexContinuations(sql: Sql): Continuations {
  return (prefix) => {
    const rows = sql.stmt("SELECT term FROM operations_fts_words WHERE term >= ? AND term < ?")
      .all(prefix + "\u0080", nextPrefix(prefix)) as { term: string }[];
    return [...new Set(rows.map((r) => [...r.term][prefix.length]).filter(Boolean))];
  };
}

/** The most words of one prefix read from the index's word list (more: FTS5's prefix query). */
const MAX_PREFIX_WORDS = 4096;

/**
 * The index's words that begin with `prefix` (ASCII letters and digits, or an identifier's
 * pair of them), and how many operations hold each, up to {@link MAX_PREFIX_WORDS} (more:
 * null). The word list counts each word's operations as it reads it, so this costs a read of
 * their lists (3,000,000 messages: 5–9 ms for a common word's 102 words; 1 GB of Claude Code
 * logs: 2.5 ms for the 395 words of `session`), not the merge of them a prefix query makes.
 */
export function indexPrefixWords(sql: Sql): PrefixWords {
  return (prefix) => {
    const rows = sql.rows<IndexWord>(
      `SELECT term, doc FROM operations_fts_words WHERE term >= ? AND term < ?
       LIMIT ${MAX_PREFIX_WORDS + 1}`,
      prefix,
      nextPrefix(prefix),
    );
    return rows.length > MAX_PREFIX_WORDS ? null : rows;
  };
}

/** The first string past every word that begins with `prefix`, whose last character is ASCII. */
function nextPrefix(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The index's expansions of a query's prefixes (see `ftsQuery`). */
function indexLookups(sql: Sql): { next: Continuations; words: PrefixWords } {
  return { next: indexContinuations(sql), words: indexPrefixWords(sql) };
}

/** At most this many hits a page. */
export const SEARCH_PAGE_MAX = 200;

/**
 * How many candidates of a phrase query are checked at least (for its count, or the session
 * list's filter), less {@link FRAME_CHECK_COST} for each frame their payloads inflated; a page
 * further down checks as deep as it lies.
 */
export const PHRASE_CHECKS = 1_000;
/**
 * What inflating one frame of payloads (128 KiB, see payload_codec.ts) counts for among the
 * {@link PHRASE_CHECKS}: about 0.2 ms, against about 35 µs for reading and checking one
 * candidate whose payloads are inflated already (the 300 MB corpus's store). An identifier
 * whose 1,000 candidates lay in 344 frames took 100 ms to count, a phrase whose 1,000 lay in
 * 37 frames 38 ms.
 */
export const FRAME_CHECK_COST = 6;
/** Candidates read and checked at a time: first few (a page is often full after them), then more. */
const CHECK_BATCH = 40;
const CHECK_BATCH_MAX = 640;
/**
 * With a filter listed as runs, how many of the newest matches are read first (then four times
 * as many each time the page is not among them): 20,000 rowids of one word cost about 3 ms.
 */
export const RANGED_FIRST = 20_000;
/**
 * Within a filter listed as runs, how many of the newest matches between its first and last
 * operation the session list's text filter looks at (100,000 rowids: about 12 ms of one word).
 */
export const TEXT_FILTER_SPAN = 100_000;

/**
 * Where a page of matches is read: the index alone (`from`), or joined to the sessions a filter
 * selects (its SQL `cond` and `params`), and which page.
 */
interface PageQuery {
  from: string;
  cond: string;
  params: (string | number)[];
  limit: number;
  offset: number;
}

/** A page of matching rowids, newest first, and the count of the matches. */
interface Page {
  page: number[];
  total: number;
  capped: boolean;
}

/** SQL: every match of the query (`?`) that `q` selects, newest first. */
const newestMatches = ({ from, cond }: PageQuery) =>
  `SELECT f.rowid AS rowid FROM ${from} WHERE operations_fts MATCH ? ${cond}
   ORDER BY f.rowid DESC`;

export class Search {
  private readonly runs: FilterRuns;

  constructor(
    private readonly sql: Sql,
    private readonly payloads: PayloadStore,
    private readonly queries: Queries,
    private readonly strategy: FilterStrategy = "auto",
  ) {
    this.runs = new FilterRuns(sql);
  }

  /** One page of the operations matching `q` among the sessions `f` selects. */
  search(q: string, f: SessionQuery = {}): SearchResult {
    const limit = Math.min(Math.max(f.limit ?? 20, 1), SEARCH_PAGE_MAX);
    const offset = Math.max(f.offset ?? 0, 0);
    const match = ftsQuery(q, indexLookups(this.sql));
    const unindexed = backlogSize(this.sql);
    if (!match) return { total: 0, total_capped: false, offset, limit, hits: [], unindexed };
    const { where, params } = this.queries.sessionWhere({ ...f, text: undefined }, "s");
    const filter = where ? where.slice("WHERE ".length) : "";
    const from = filter
      ? `operations_fts f JOIN operations o ON o.rowid = f.rowid
           JOIN sessions s ON s.num = o.session`
      : "operations_fts f";
    const cond = filter ? `AND ${filter}` : "";
    const query: PageQuery = { from, cond, params, limit, offset };

    const check = phraseCheck(q);
    const { page, total, capped } = filter
      ? this.filteredPage(match, check, query, filter)
      : check
      ? this.checkedPage(this.newest(match, query), check, query)
      : this.plainPage(match, query);
    const pattern = matchPattern(q);
    // (an index entry whose operation is gone, which a damaged store may hold, is no hit)
    const hits = page.flatMap((rowid) => this.hit(rowid, pattern) ?? []);
    return {
      // (a page past a capped count raises the count; a page past the last hit leaves it)
      total: hits.length ? Math.max(total, offset + hits.length) : total,
      total_capped: capped,
      offset,
      limit,
      hits,
      unindexed,
    };
  }

  /**
   * The sessions with an operation matching `text` (the session list's text filter), among
   * those `scope`'s other filters select; null when nothing in `text` is searchable. Looked for
   * among the newest {@link TEXT_FILTER_WINDOW} matches, or, within a filter listed as runs
   * (filter_runs.ts, as {@link filteredPage} chooses for a phrase), among the newest
   * {@link TEXT_FILTER_SPAN} between its first and last operation, which the runs tell without
   * a join: so a project's session is found even when the store holds many newer matches
   * elsewhere. A phrase is checked on the newest candidates of each session until one holds
   * it, {@link PHRASE_CHECKS} checks' worth in all.
   */
  matchingSessions(text: string, scope: SessionQuery = {}): string[] | null {
    const match = ftsQuery(text, indexLookups(this.sql));
    if (!match) return null;
    const check = phraseCheck(text);
    const owned = this.scopeRuns(scope);
    // The newest matches only: a word in every session would otherwise cost a join per
    // matching operation (seconds over a million of them).
    const newest = `SELECT rowid FROM operations_fts WHERE operations_fts MATCH ?
      ORDER BY rowid DESC LIMIT ${TEXT_FILTER_WINDOW}`;
    if (!check && !owned) {
      return (this.sql.stmt(
        `SELECT s.id FROM sessions s WHERE s.num IN
           (SELECT o.session FROM (${newest}) m JOIN operations o ON o.rowid = m.rowid)`,
      ).all(match) as { id: string }[]).map((r) => r.id);
    }
    const rows = owned
      ? this.ownedMatches(match, owned)
      : this.sql.rows<{ rowid: number; num: number }>(
        `SELECT m.rowid AS rowid, o.session AS num FROM (${newest}) m
         JOIN operations o ON o.rowid = m.rowid ORDER BY m.rowid DESC`,
        match,
      );
    const found = new Set<number>();
    if (!check) rows.forEach((r) => found.add(r.num));
    const spent = { checks: 0 };
    for (let i = 0; check && i < rows.length && spent.checks < PHRASE_CHECKS; i += CHECK_BATCH) {
      const batch = rows.slice(i, i + CHECK_BATCH).filter((r) => !found.has(r.num));
      const holds = this.check(batch.map((r) => r.rowid), check, spent);
      batch.forEach((r, j) => {
        if (holds[j]) found.add(r.num);
      });
    }
    return (this.sql.stmt(
      "SELECT id FROM sessions WHERE num IN (SELECT value FROM json_each(?))",
    ).all(JSON.stringify([...found])) as { id: string }[]).map((r) => r.id);
  }

  /**
   * The runs of the sessions `scope` selects, each with its session, when they are kept or a
   * filter that small would be listed for a phrase (see {@link filteredPage}); else null.
   */
  private scopeRuns(scope: SessionQuery): OwnedRuns | null {
    const { where, params } = this.queries.sessionWhere({ ...scope, text: undefined }, "s");
    if (!where || this.strategy === "join" || this.strategy === "each") return null;
    const { nums, ops, all } = this.runs.look(where.slice("WHERE ".length), params);
    const small = listable(ops, all, "phrase");
    if (this.strategy === "auto" && !small && !this.runs.cached(nums)) return null;
    return this.runs.owned(nums);
  }

  /** The newest {@link TEXT_FILTER_SPAN} matches in the runs' span, each with its session. */
  private ownedMatches(match: string, owned: OwnedRuns): { rowid: number; num: number }[] {
    if (!owned.lo.length) return [];
    return ownersOf(this.newestIds(match, TEXT_FILTER_SPAN, owned), owned);
  }

  /**
   * A query with a phrase: the index names the candidates (every word somewhere), newest
   * first, and each candidate's text is checked for the phrase, as far down as the page lies
   * and for the count {@link PHRASE_CHECKS} checks' worth (a candidate one, a frame its payloads
   * inflated {@link FRAME_CHECK_COST}). The count is exact when every candidate was checked (up
   * to {@link COUNT_CAP}); past that it says "at least".
   */
  private checkedPage(
    candidates: Iterator<number>,
    check: (text: string) => boolean,
    query: Pick<PageQuery, "limit" | "offset">,
  ): Page {
    const { limit, offset } = query;
    const hits: number[] = [];
    const spent = { checks: 0 };
    let batch: number[] = [];
    let size = CHECK_BATCH;
    const result = (all: boolean) => ({
      page: hits.slice(offset, offset + limit),
      total: Math.min(hits.length, COUNT_CAP),
      capped: !all || hits.length > COUNT_CAP,
    });
    try {
      for (;;) {
        const row = candidates.next();
        if (!row.done) batch.push(row.value);
        if (batch.length < size && !row.done) continue;
        const holds = this.check(batch, check, spent);
        batch.forEach((rowid, i) => holds[i] && hits.push(rowid));
        if (row.done) return result(true);
        const enough = hits.length >= offset + limit &&
          (spent.checks >= PHRASE_CHECKS || hits.length > COUNT_CAP);
        if (enough) return result(false);
        batch = [];
        size = Math.min(size * 2, CHECK_BATCH_MAX);
        // a full page reads on for the count only: as far as PHRASE_CHECKS, not a batch past
        // it (batches of 40 to 640 checked 1,240 candidates)
        if (hits.length >= offset + limit) size = Math.min(size, PHRASE_CHECKS - spent.checks);
      }
    } finally {
      candidates.return?.();
    }
  }

  /**
   * Every match `query` selects, newest first, as one statement read as the caller goes: FTS5
   * merges the words' lists once (re-reading them a batch at a time, from a rowid down, cost
   * 3 ms a batch).
   */
  private *newest(match: string, query: PageQuery): Generator<number> {
    const rows = this.sql.stmt(newestMatches(query)).iterate(match, ...query.params) as Iterator<
      { rowid: number }
    >;
    try {
      for (let row = rows.next(); !row.done; row = rows.next()) yield row.value.rowid;
    } finally {
      rows.return?.();
    }
  }

  /**
   * With a filter (agent, project, dates), the way to tell which matches it holds is chosen
   * (filter_runs.ts) by the filter's operations and the query's matches:
   * - the filter's runs, when each of its sessions' were listed since the store last changed;
   * - a filter too big to list (`listable`): the matches joined
   *   to their sessions, as far as needed ({@link joinedPage});
   * - few matches (fewer than the filter's operations over {@link JOIN_COST_OPS}): all of them
   *   read, and each joined to its session in one statement;
   * - else the filter's runs, listed.
   */
  private filteredPage(
    match: string,
    check: ((text: string) => boolean) | null,
    query: PageQuery,
    filter: string,
  ): Page {
    const pinned = this.strategy;
    if (pinned === "join") return this.joinedPage(match, check, query);
    if (pinned === "each") return this.eachPage(this.newestIds(match, -1), check, query, filter);
    const { nums, ops, all } = this.runs.look(filter, query.params);
    if (pinned === "runs") return this.rangedPage(match, this.runs.list(nums), check, query);
    const cached = this.runs.cached(nums);
    if (cached) return this.rangedPage(match, cached, check, query);
    const small = listable(ops, all, check ? "phrase" : "words");
    if (!small) return this.joinedPage(match, check, query);
    const few = Math.floor(ops / JOIN_COST_OPS);
    const newest = this.newestIds(match, few + 1);
    if (newest.length <= few) return this.eachPage(newest, check, query, filter);
    return this.rangedPage(match, this.runs.list(nums), check, query);
  }

  /**
   * The newest `max` matches (-1: all), as rowids alone, newest first; with `runs`, only those
   * between the runs' first and last rowid.
   */
  private newestIds(match: string, max: number, runs?: Runs): number[] {
    const span = runs ? "AND rowid BETWEEN ? AND ?" : "";
    const bounds = runs ? [runs.lo[0], runs.hi[runs.hi.length - 1]] : [];
    return JSON.parse(
      (this.sql.stmt(
        `SELECT json_group_array(rowid) AS ids FROM (SELECT rowid FROM operations_fts
         WHERE operations_fts MATCH ? ${span} ORDER BY rowid DESC LIMIT ?)`,
      ).get(match, ...bounds, max) as { ids: string }).ids,
    );
  }

  /**
   * Every match (`newest`, all of them), each joined to its session in one statement, the
   * matches leading (CROSS JOIN, as in {@link joinedPage}).
   */
  private eachPage(
    newest: readonly number[],
    check: ((text: string) => boolean) | null,
    query: PageQuery,
    filter: string,
  ): Page {
    const { params, limit, offset } = query;
    const { ids } = this.sql.stmt(
      `SELECT json_group_array(m.value) AS ids FROM json_each(?) m
       CROSS JOIN operations o ON o.rowid = m.value CROSS JOIN sessions s ON s.num = o.session
       WHERE ${filter}`,
    ).get(JSON.stringify(newest), ...params) as { ids: string };
    const hits = (JSON.parse(ids) as number[]).sort((a, b) => b - a);
    if (check) return this.checkedPage(hits.values(), check, query);
    return {
      page: hits.slice(offset, offset + limit),
      total: Math.min(hits.length, COUNT_CAP),
      capped: hits.length > COUNT_CAP,
    };
  }

  /**
   * The matches joined to their sessions, as far as needed: for words the newest
   * {@link FILTERED_COUNT_SCAN}, checked against the filter once, for the count and, when it
   * lies among them, the page (only a page further down reads deeper, so a common word costs a
   * bounded scan); for a phrase its candidates newest first, as far as the page and the checks
   * need. The matches lead the join (CROSS JOIN): left to itself, SQLite started from the
   * sessions the filter selects and looked each of their operations up among the matches
   * (10,000,000 messages, an agent's 2,000,000: 175 ms instead of 22).
   */
  private joinedPage(
    match: string,
    check: ((text: string) => boolean) | null,
    query: PageQuery,
  ): Page {
    if (check) return this.checkedPage(this.newest(match, query), check, query);
    const { cond, params, limit, offset } = query;
    const r = this.sql.stmt(
      `WITH m AS MATERIALIZED (SELECT rowid FROM operations_fts WHERE operations_fts MATCH ?
         ORDER BY rowid DESC LIMIT ${FILTERED_COUNT_SCAN + 1}),
       hits AS MATERIALIZED (SELECT m.rowid AS rowid FROM m
         CROSS JOIN operations o ON o.rowid = m.rowid CROSS JOIN sessions s ON s.num = o.session
         WHERE m.rowid IS NOT NULL ${cond})
       SELECT (SELECT count(*) FROM m) AS scanned, (SELECT count(*) FROM hits) AS n,
         (SELECT json_group_array(rowid) FROM
           (SELECT rowid FROM hits ORDER BY rowid DESC LIMIT ? OFFSET ?)) AS page`,
    ).get(match, ...params, limit, offset) as { scanned: number; n: number; page: string };
    const n = Number(r.n);
    const deeper = Number(r.scanned) > FILTERED_COUNT_SCAN;
    let page = JSON.parse(r.page) as number[];
    if (page.length < limit && deeper) page = this.deepPage(match, query);
    return { page, total: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP || deeper };
  }

  /**
   * With a filter listed as runs of rowids (filter_runs.ts): the newest matches between its
   * first and last operation are read as rowids alone, {@link RANGED_FIRST} of them, then four
   * times as many each time until the page is found; those in its runs are its hits (a phrase's
   * candidates, checked as {@link checkedPage} does), with no join. A read starts again from the
   * newest match (FTS5 reads its lists from their end down, so a read from a rowid down costs
   * as much), so all the reads together cost at most a third more than the last. The count is
   * of the matches read: exact when they were all read, else "at least".
   */
  private rangedPage(
    match: string,
    runs: Runs,
    check: ((text: string) => boolean) | null,
    query: PageQuery,
  ): Page {
    const { limit, offset } = query;
    if (!runs.lo.length) return { page: [], total: 0, capped: false };
    let read = 0;
    let whole = false;
    /** The hits of the next read's new matches, newest first; [] once every match was read. */
    const more = (): number[] => {
      if (whole) return [];
      const size = read ? read * 4 : RANGED_FIRST;
      const ids = this.newestIds(match, size, runs);
      whole = ids.length < size;
      const fresh = inRuns(ids.slice(read), runs);
      read = ids.length;
      return fresh;
    };
    if (check) {
      const candidates = function* () {
        for (let hits = more(); hits.length || !whole; hits = more()) yield* hits;
      };
      return this.checkedPage(candidates(), check, query);
    }
    let hits = more();
    while (hits.length < offset + limit && !whole) hits = hits.concat(more());
    return {
      page: hits.slice(offset, offset + limit),
      total: Math.min(hits.length, COUNT_CAP),
      capped: !whole || hits.length > COUNT_CAP,
    };
  }

  /**
   * Whether each operation's text as search reads it (not its index body; "" for one gone)
   * passes `check`: read and checked a slice at a time, each slice's texts let go before the next.
   * `spent.checks` counts each operation and {@link FRAME_CHECK_COST} for each frame inflated.
   */
  private check(
    rowids: readonly number[],
    check: (text: string) => boolean,
    spent: { checks: number },
  ): boolean[] {
    const out: boolean[] = [];
    for (const slice of readOperations(this.sql, this.payloads, rowids)) {
      const frames: InflatedFrames = new Map();
      for (const text of buildTexts(slice, false, frames)) out.push(check(text));
      spent.checks += slice.rowids.length + FRAME_CHECK_COST * frames.size;
    }
    return out;
  }

  /**
   * Without a filter: one pass over the newest {@link COUNT_CAP} + 1 matches gives both the
   * page and the count, so a prefix that has no index of its own expands to its words once.
   */
  private plainPage(match: string, query: PageQuery): Page {
    const { limit, offset } = query;
    const r = this.sql.stmt(
      `WITH m AS MATERIALIZED (SELECT rowid FROM operations_fts WHERE operations_fts MATCH ?
         ORDER BY rowid DESC LIMIT ${COUNT_CAP + 1})
       SELECT (SELECT count(*) FROM m) AS n, (SELECT json_group_array(rowid) FROM
         (SELECT rowid FROM m ORDER BY rowid DESC LIMIT ? OFFSET ?)) AS page`,
    ).get(match, limit, offset) as { n: number; page: string };
    const n = Number(r.n);
    let page = JSON.parse(r.page) as number[];
    // A page past the counted matches: read as deep as it lies.
    if (page.length < limit && n > COUNT_CAP) {
      page = this.deepPage(match, query);
    }
    return { page, total: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP };
  }

  /** A page wherever it lies among the matches, newest first. */
  private deepPage(match: string, query: PageQuery): number[] {
    const { params, limit, offset } = query;
    return (this.sql.stmt(`${newestMatches(query)} LIMIT ? OFFSET ?`)
      .all(match, ...params, limit, offset) as { rowid: number }[]).map((r) => r.rowid);
  }

  private hit(rowid: number, pattern: RegExp | null): SearchHit | null {
    const r = this.sql.stmt(
      `SELECT s.id AS session_id, o.op_id, ${storedOpColumns("o.")}, s.title, s.user_title,
         s.first_prompt, s.starred_at, s.source, s.project_path
       FROM operations o JOIN sessions s ON s.num = o.session
       WHERE o.rowid = ?`,
    ).get(rowid) as SqlRow | undefined;
    if (!r) return null;
    // (its own text only as far as it is indexed, as its payloads are: `payloadSearchText`)
    const op = readStoredDoc(
      r as unknown as StoredOp,
      (sha) => this.payloads.textOf(sha, INDEXED_TEXT_CHARS),
    );
    if (op.text) op.text = indexedText(op.text);
    const { field, snippet } = this.snippetOf(op, pattern);
    const str = (v: string | number | null) => v === null ? null : String(v);
    return {
      session_id: String(r.session_id),
      op_id: String(r.op_id),
      seq: this.queries.seqOf(String(r.session_id), String(r.op_id)) ?? 0,
      kind: String(r.kind),
      tool: str(r.tool),
      field,
      snippet,
      session: {
        title: str(r.title),
        user_title: str(r.user_title),
        first_prompt: str(r.first_prompt),
        starred: r.starred_at !== null,
        source: String(r.source),
        project_path: str(r.project_path),
      },
    };
  }

  /** The first place the query matches, in the order the session view shows an operation. */
  private snippetOf(
    op: Operation,
    pattern: RegExp | null,
  ): { field: SearchHit["field"]; snippet: Snippet } {
    const own = [op.text, op.summary, op.target].filter(Boolean).join(" · ");
    const fields: [SearchHit["field"], () => string][] = [
      ["text", () => own],
      ["input", () => this.payloadSearchText(op.request)],
      ["output", () => this.payloadSearchText(op.response)],
    ];
    for (const [field, text] of fields) {
      const t = text();
      if (pattern && t && t.search(pattern) >= 0) {
        return { field, snippet: makeSnippet(t, pattern) };
      }
    }
    // The index matched words the pattern does not see (diacritics, a field cut for display).
    return {
      field: "text",
      snippet: makeSnippet(own || this.payloadSearchText(op.response), null),
    };
  }

  private payloadSearchText(ref: PayloadRef | undefined): string {
    if (!ref) return "";
    if ("inline" in ref) return payloadWords(ref.inline);
    if (!("sha256" in ref)) return "";
    const bytes = this.payloads.head(ref.sha256, INDEXED_PAYLOAD_BYTES);
    return bytes ? payloadWords(bytes) : "";
  }
}

/**
 * A window of text around the first match, split into matched and plain segments, whitespace
 * runs laid out as one space. Only the text about the match is laid out (a hit in a pasted
 * 4 Mi-character prompt made the whole of it again): `width` characters, fewer where long
 * whitespace runs stand in them.
 */
export function makeSnippet(text: string, pattern: RegExp | null, width = 160): Snippet {
  const lead = Math.floor(width / 3);
  let at = 0;
  if (pattern) {
    pattern.lastIndex = 0;
    at = Math.max(0, text.search(pattern));
  }
  // (a match opens with a word character: no whitespace run stands across `at`)
  const start = Math.max(0, at - 4 * lead), end = Math.min(text.length, at + 4 * width);
  const before = text.slice(start, at).replace(/\s+/g, " ");
  const flat = before + text.slice(at, end).replace(/\s+/g, " ");
  if (!pattern) return [{ text: flat.slice(0, width), match: false }];
  const from = Math.max(0, before.length - lead);
  const window = flat.slice(from, from + width);
  const out: Snippet = [];
  if (start + from > 0) out.push({ text: "…", match: false });
  let last = 0;
  for (const m of window.matchAll(pattern)) {
    if (m.index! > last) out.push({ text: window.slice(last, m.index), match: false });
    out.push({ text: m[0], match: true });
    last = m.index! + m[0].length;
  }
  if (last < window.length) out.push({ text: window.slice(last), match: false });
  if (from + width < flat.length || end < text.length) out.push({ text: "…", match: false });
  return out;
}
