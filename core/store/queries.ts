/**
 * The store's read side: the session list and its filters, one session's detail, timeline
 * pages, connections, where an operation sits in its thread, projects, the canonical session
 * rebuilt from its parts, and a change stamp for caches.
 */
import { drain, drainInTurns, PAGE_STEPS } from "../paged.ts";
import { spawnParents } from "../model/spawn.ts";
import {
  assembleOutline,
  assembleSession,
  type CanonicalSession,
  type Checkpoint,
  type Connection,
  type Epoch,
  type LossWindow,
  offsetNs,
  type OperationKind,
  type OperationRecord,
  type SessionInfo,
  type SessionIssue,
  type SessionOutline,
  type SessionParts,
  type UsageEntry,
} from "../model/mod.ts";
import { type PayloadText, readViewDoc, type StoredOp, storedOpColumns } from "./prepare.ts";
import { likeEscape, likePrefix, OP_ORDER, sessionNum, type Sql } from "./_sql.ts";
import type {
  ConnectionView,
  LocatedOp,
  ProjectSummary,
  SessionDetail,
  SessionQuery,
  SessionSummary,
  TimelineItem,
} from "./types.ts";

const SUMMARY_COLS =
  "id, source, native_id, project_path, title, user_title, first_prompt, starred_at, started_at, ended_at, op_count, error_count, kept_count";

/** A summary row as the API answers it: `starred` said outright beside its time. */
function summaryOf(row: Record<string, unknown>): SessionSummary {
  return { ...row, starred: row.starred_at !== null } as unknown as SessionSummary;
}

/**
 * The title a session sorts by: `sessionTitle` of core/model/titles.ts in SQL (the user's
 * name, else the agent's title, else the first prompt; none of them is ever stored blank).
 */
const TITLE_SQL = "coalesce(user_title, title, first_prompt)";

/** An operation row's place in the canonical order (its `ts_ms`, `rank`, `line`, `block`). */
function orderOf(r: Record<string, string | number | null>): OperationRecord["order"] {
  return {
    ts_ms: r.ts_ms === null ? null : Number(r.ts_ms),
    rank: Number(r.rank),
    line: Number(r.line),
    block: Number(r.block),
  };
}

export class Queries {
  constructor(
    private readonly sql: Sql,
    /** The text of a reply or thinking, which its stored doc leaves to its payload. */
    private readonly payloadText: PayloadText,
    /**
     * The sessions with an operation matching a text (search.ts), null when nothing in it is
     * searchable: the session list's text filter.
     */
    private readonly matchingSessions: (text: string, scope: SessionQuery) => string[] | null,
  ) {}

  /**
   * Finds a session from what a user typed: its full id, its native id, or a prefix of
   * either that matches exactly one session. Null when none or several match.
   */
  resolveSessionId(wanted: string): string | null {
    if (!wanted) return null;
    const exact = this.sql.stmt("SELECT id FROM sessions WHERE id = ? OR native_id = ? LIMIT 2")
      .all(
        wanted,
        wanted,
      ) as { id: string }[];
    if (exact.length === 1) return exact[0].id;
    const like = likePrefix(wanted);
    const rows = this.sql.stmt(
      `SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' OR native_id LIKE ?1 ESCAPE '\\' LIMIT 2`,
    ).all(like) as { id: string }[];
    return rows.length === 1 ? rows[0].id : null;
  }

  /**
   * The sessions a typed id could mean: an exact id or native id alone, else every session
   * whose id or native id starts with it (at most `limit`, newest first) and how many there are.
   */
  sessionCandidates(wanted: string, limit: number): { total: number; ids: string[] } {
    if (!wanted) return { total: 0, ids: [] };
    const exact = this.sql.stmt("SELECT id FROM sessions WHERE id = ? OR native_id = ? LIMIT 2")
      .all(wanted, wanted) as { id: string }[];
    if (exact.length === 1) return { total: 1, ids: [exact[0].id] };
    const where = `id LIKE ?1 ESCAPE '\\' OR native_id LIKE ?1 ESCAPE '\\'`;
    const like = likePrefix(wanted);
    const total = this.sql.count(`SELECT count(*) AS n FROM sessions WHERE ${where}`, like);
    const ids = (this.sql.stmt(
      `SELECT id FROM sessions WHERE ${where} ORDER BY started_at DESC, id LIMIT ?2`,
    ).all(like, limit) as { id: string }[]).map((r) => r.id);
    return { total, ids };
  }

  /** The session's operations no longer in its agent's logs (kept by the store). */
  keptOps(id: string): Set<string> {
    return new Set(
      (this.sql.stmt(`SELECT op_id FROM operations WHERE session = ${sessionNum()} AND kept = 1`)
        .all(
          id,
        ) as { op_id: string }[]).map((r) => r.op_id),
    );
  }

  getSession(id: string): SessionSummary | null {
    const row = this.sql.stmt(`SELECT ${SUMMARY_COLS} FROM sessions WHERE id = ?`).get(id);
    return row ? summaryOf(row) : null;
  }

  listSessions(q: SessionQuery = {}): { total: number; items: SessionSummary[] } {
    const { where, params } = this.sessionWhere(q);
    const sortCol = {
      started_at: "started_at",
      ended_at: "ended_at",
      op_count: "op_count",
      title: TITLE_SQL,
    }[
      q.sort ?? "started_at"
    ] ?? "started_at";
    const order = q.order === "asc" ? "ASC" : "DESC";
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 1000);
    const offset = Math.max(q.offset ?? 0, 0);
    const total = (this.sql.db.prepare(`SELECT count(*) AS n FROM sessions ${where}`).get(
      ...params,
    ) as { n: number }).n;
    // Starred sessions are few: read them through their index and sort them, rather than walk
    // every session in date order looking for stars (the planner's choice with a bound LIMIT).
    const from = q.starred ? "sessions INDEXED BY sessions_starred" : "sessions";
    const items = this.sql.db.prepare(
      `SELECT ${SUMMARY_COLS} FROM ${from} ${where} ORDER BY ${sortCol} ${order} NULLS LAST, id LIMIT ? OFFSET ?`,
    ).all(...params, limit, offset).map(summaryOf);
    return { total, items };
  }

  sessionWhere(
    q: SessionQuery,
    alias = "",
  ): { where: string; params: (string | number)[] } {
    const a = alias ? `${alias}.` : "";
    const clauses: string[] = [];
    const params: (string | number)[] = [];
    if (q.source) {
      clauses.push(`${a}source = ?`);
      params.push(q.source);
    }
    if (q.project) {
      clauses.push(`(${a}project_path = ? OR ${a}project_path LIKE ? ESCAPE '\\')`);
      params.push(q.project, likePrefix(q.project.replace(/\/+$/, "") + "/"));
    }
    if (q.from) {
      clauses.push(`coalesce(${a}ended_at, ${a}started_at) >= ?`);
      params.push(q.from);
    }
    if (q.to) {
      clauses.push(`${a}started_at <= ?`);
      params.push(q.to.length === 10 ? `${q.to}T23:59:59.999Z` : q.to);
    }
    // the partial index sessions_starred (migration 12) holds exactly these rows
    if (q.starred) clauses.push(`${a}starred_at IS NOT NULL`);
    if (q.text) {
      const ids = this.matchingSessions(q.text, q);
      if (ids) {
        const like = `%${likeEscape(q.text)}%`;
        clauses.push(
          `(${a}id IN (SELECT value FROM json_each(?)) OR ${a}title LIKE ? ESCAPE '\\'
            OR ${a}user_title LIKE ? ESCAPE '\\')`,
        );
        params.push(JSON.stringify(ids), like, like);
      }
    }
    return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
  }

  /**
   * One page of a session's timeline, in the canonical order; with `textChars`, each
   * operation's own text only as far as that (`readViewDoc`).
   */
  timeline(
    id: string,
    options: { offset?: number; limit?: number; connection?: string; textChars?: number } = {},
  ): { total: number; items: TimelineItem[] } {
    const offset = Math.max(options.offset ?? 0, 0);
    const limit = Math.min(Math.max(options.limit ?? 200, 1), 5000);
    const start =
      (this.sql.stmt(`SELECT min(ts_ms) AS t FROM operations WHERE session = ${sessionNum()}`).get(
        id,
      ) as {
        t: number | null;
      }).t;
    const connFilter = options.connection ? "AND connection = ?" : "";
    const params: (string | number)[] = options.connection ? [id, options.connection] : [id];
    const total = (this.sql.db.prepare(
      `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()} ${connFilter}`,
    ).get(...params) as { n: number }).n;
    const rows = this.sql.db.prepare(
      `SELECT op_id, connection, ts_ms, ${storedOpColumns()}, kept FROM operations
       WHERE session = ${sessionNum()} ${connFilter} ORDER BY ${OP_ORDER} LIMIT ? OFFSET ?`,
    ).all(...params, limit, offset) as unknown as ({
      op_id: string;
      connection: string;
      ts_ms: number | null;
      kept: number | null;
    } & StoredOp)[];
    const items = rows.map((r, i) => ({
      seq: offset + i,
      op_id: r.op_id,
      connection: r.connection,
      ts_ms: r.ts_ms,
      offset_ns: offsetNs(r.ts_ms, start),
      ...readViewDoc(r, this.payloadText, options.textChars),
      ...(r.kept === 1 ? { kept: true as const } : {}),
    }));
    return { total, items };
  }

  /**
   * An operation's own text (a prompt's, reply's or thinking's), which a timeline page may give
   * only the opening of: whole, or its first `maxChars` characters (read only as far as that, as
   * a page reads it); null when there is no such operation or it has no text.
   */
  operationText(sessionId: string, opId: string, maxChars?: number): string | null {
    const r = this.sql.stmt(
      `SELECT ${storedOpColumns()} FROM operations WHERE session = ${sessionNum()} AND op_id = ?`,
    ).get(sessionId, opId) as StoredOp | undefined;
    const text = r ? readViewDoc(r, this.payloadText, maxChars).op.text : undefined;
    return typeof text === "string" ? text : null;
  }

  /**
   * Position of an operation in its session's timeline (for deep links), or in one
   * connection's timeline when `connection` is given.
   */
  seqOf(sessionId: string, opId: string, options: { connection?: string } = {}): number | null {
    const o = this.sql.stmt(
      `SELECT ts_ms, rank, line, block FROM operations WHERE session = ${sessionNum()} AND op_id = ?`,
    ).get(sessionId, opId) as
      | { ts_ms: number | null; rank: number; line: number; block: number }
      | undefined;
    if (!o) return null;
    const conn = options.connection === undefined ? "" : "AND connection = ?";
    const scope: string[] = options.connection === undefined
      ? [sessionId]
      : [sessionId, options.connection];
    // Operations without a time sort first; both counts walk the (session, order) index.
    const untimed = o.ts_ms === null
      ? this.sql.count(
        `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()} ${conn} AND ts_ms IS NULL
           AND (rank, line, block) < (?, ?, ?)`,
        ...scope,
        o.rank,
        o.line,
        o.block,
      )
      : this.sql.count(
        `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()} ${conn} AND ts_ms IS NULL`,
        ...scope,
      );
    if (o.ts_ms === null) return untimed;
    return untimed + this.sql.count(
      `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()} ${conn}
         AND (${OP_ORDER}) < (?, ?, ?, ?)`,
      ...scope,
      o.ts_ms,
      o.rank,
      o.line,
      o.block,
    );
  }

  projects(): ProjectSummary[] {
    return this.sql.db.prepare(
      `SELECT project_path AS path, count(*) AS sessions, sum(op_count) AS operations,
         max(coalesce(ended_at, started_at)) AS last_active
       FROM sessions WHERE project_path IS NOT NULL GROUP BY project_path ORDER BY last_active DESC`,
    ).all() as unknown as ProjectSummary[];
  }

  /** Rebuilds the canonical session from its stored parts. */
  loadSession(id: string, options: { textChars?: number } = {}): CanonicalSession | null {
    return drain(this.loadingSession(id, options));
  }

  /**
   * {@link loadSession} with a turn of the event loop (`turn`) after every page of
   * {@link PAGE_STEPS} operations: a server stays responsive while a session of tens of
   * thousands of steps loads. A step written meanwhile may be missed (the caller keys what it
   * keeps by the session's count), never given twice.
   */
  async loadSessionInTurns(
    id: string,
    options: { textChars?: number; turn: () => Promise<unknown> },
  ): Promise<CanonicalSession | null> {
    return await drainInTurns(this.loadingSession(id, options), options.turn);
  }

  /** Loads a session, yielding after each page of its operations. */
  private *loadingSession(
    id: string,
    options: { textChars?: number },
  ): Generator<void, CanonicalSession | null> {
    const head = this.sessionHead(id);
    if (!head) return null;
    const operations: OperationRecord[] = [];
    let first = true;
    for (const page of this.operationPages(id, options)) {
      if (!first) yield;
      first = false;
      operations.push(...page);
    }
    return assembleSession({ ...head, operations });
  }

  /**
   * A session's parts but its operations (its info, threads, usage, epochs, loss windows and
   * issues): with {@link operationPages}, a session read without ever holding it whole.
   */
  sessionHead(id: string): Omit<SessionParts, "operations"> | null {
    const s = this.sql.stmt("SELECT info, recording, extensions FROM sessions WHERE id = ?").get(
      id,
    ) as
      | { info: string; recording: string; extensions: string }
      | undefined;
    if (!s) return null;
    const rows = <T>(sql: string) => this.sql.db.prepare(sql).all(id) as T[];
    const connections = rows<{ doc: string }>(
      "SELECT doc FROM connections WHERE session_id = ? ORDER BY id = 'main' DESC, id",
    ).map((r) => JSON.parse(r.doc) as Connection);
    const usage: UsageEntry[] = rows<Record<string, string | number>>(
      "SELECT key, model, input, output, cache_read, cache_write FROM usage WHERE session_id = ? ORDER BY key",
    ).map((r) => ({
      key: String(r.key),
      model: String(r.model),
      usage: {
        input: Number(r.input),
        output: Number(r.output),
        cache_read: Number(r.cache_read),
        cache_write: Number(r.cache_write),
      },
    }));
    const epochs: Epoch[] = rows<Record<string, string | number | null>>(
      "SELECT file, ordinal, imported_at, checkpoint FROM epochs WHERE session_id = ? ORDER BY file, ordinal",
    ).map((r) => ({
      ordinal: Number(r.ordinal),
      imported_at: String(r.imported_at),
      checkpoints: r.checkpoint ? [JSON.parse(String(r.checkpoint)) as Checkpoint] : [],
    }));
    const loss_windows = rows<{ doc: string }>(
      "SELECT doc FROM loss_windows WHERE session_id = ? ORDER BY rowid",
    ).map((r) => JSON.parse(r.doc) as LossWindow);
    const issues = rows<{ doc: string }>(
      "SELECT doc FROM session_issues WHERE session_id = ? ORDER BY rowid",
    ).map((r) => JSON.parse(r.doc) as SessionIssue);
    return {
      info: JSON.parse(s.info),
      recording: JSON.parse(s.recording),
      connections,
      usage,
      epochs,
      loss_windows,
      issues,
      extensions: JSON.parse(s.extensions),
    };
  }

  /**
   * A session without its operations' bodies (see `SessionOutline`): its head, and a light read
   * of its operations' rows (ids, threads, order, kinds, the threads they spawned). With
   * {@link operationPages}, what an export of a session reads without holding it whole.
   */
  sessionOutline(id: string): SessionOutline | null {
    const head = this.sessionHead(id);
    if (!head) return null;
    const rows = this.sql.stmt(
      // the spawned thread parsed only from a doc that names one: 140 ms, not 200-300, for
      // the 35,342 rows of the bench's big session
      `SELECT op_id, connection, ts_ms, rank, line, block, kind,
         CASE WHEN instr(doc, '"spawns"') > 0 THEN json_extract(doc, '$.spawns') END AS spawns
       FROM operations WHERE session = ${sessionNum()} ORDER BY ${OP_ORDER}`,
    ).all(id) as Record<string, string | number | null>[];
    return assembleOutline(
      head,
      rows.map((r) => ({
        id: String(r.op_id),
        connection: String(r.connection),
        order: orderOf(r),
        kind: r.kind as OperationKind,
        spawns: typeof r.spawns === "string" ? r.spawns : null,
      })),
    );
  }

  /**
   * A session in parts of `steps` ({@link PAGE_STEPS}) operations in its timeline's order, each
   * a canonical session holding those operations and their timeline entries (positions and
   * times as in the whole session); the session's own fields (title, last prompt, extensions)
   * with the first part only; one part, with no operation, for a session without any; none
   * for no such session. What a scan reads a session with, never holding it whole: each
   * operation is scanned on its own, so the parts' findings add up to the session's.
   */
  *sessionParts(
    id: string,
    options: { textChars?: number; steps?: number } = {},
  ): Generator<CanonicalSession, void> {
    const head = this.sessionHead(id);
    if (!head) return;
    const whole = assembleSession({ ...head, operations: [] });
    const rest: CanonicalSession = {
      ...whole,
      session: { ...whole.session, title: undefined, last_prompt: undefined },
      extensions: {},
    };
    let seq = 0;
    let startMs: number | null = null;
    let first = true;
    for (const records of this.operationPages(id, options)) {
      const timeline = records.map((rec) => {
        // as timelineOf times them: untimed steps come first, so the first timed one is the start
        startMs ??= rec.order.ts_ms;
        return {
          seq: seq++,
          op: rec.id,
          connection: rec.connection,
          offset_ns: offsetNs(rec.order.ts_ms, startMs),
        };
      });
      const operations = Object.fromEntries(records.map((rec) => [rec.id, rec.op]));
      yield { ...(first ? whole : rest), operations, timeline };
      first = false;
    }
    if (first) yield whole;
  }

  /**
   * A session's operations in its timeline's order, `steps` ({@link PAGE_STEPS}) at a time
   * (no page for a session with none): a step written between two pages is never given twice.
   */
  *operationPages(
    id: string,
    options: { textChars?: number; steps?: number } = {},
  ): Generator<OperationRecord[], void> {
    const steps = options.steps ?? PAGE_STEPS;
    const page = this.sql.db.prepare(
      `SELECT op_id, connection, ts_ms, rank, line, block, ${storedOpColumns()}
       FROM operations WHERE session = ${sessionNum()} ORDER BY ${OP_ORDER} LIMIT ? OFFSET ?`,
    );
    const seen = new Set<string>();
    for (let offset = 0;; offset += steps) {
      const got = page.all(id, steps, offset) as Record<string, string | number | null>[];
      const operations: OperationRecord[] = [];
      for (const r of got) {
        const opId = String(r.op_id);
        if (seen.has(opId)) continue; // moved to a later page by a step written meanwhile
        seen.add(opId);
        operations.push({
          id: opId,
          connection: String(r.connection),
          order: orderOf(r),
          op: readViewDoc(r as unknown as StoredOp, this.payloadText, options.textChars).op,
        });
      }
      if (operations.length) yield operations;
      if (got.length < steps) return;
    }
  }

  /** Counts for summaries: sessions, operations, issues, loss windows. */
  totals(): { sessions: number; operations: number; issues: number; loss_windows: number } {
    const n = (sql: string) => (this.sql.db.prepare(sql).get() as { n: number }).n;
    return {
      sessions: n("SELECT count(*) AS n FROM sessions"),
      operations: n("SELECT count(*) AS n FROM operations"),
      // info-level notes ("client version not recorded") are not problems
      issues: n(
        "SELECT count(*) AS n FROM session_issues WHERE json_extract(doc, '$.severity') IS NOT 'info'",
      ),
      loss_windows: n("SELECT count(*) AS n FROM loss_windows"),
    };
  }

  /** One session's page header; null when there is no such session. */
  detail(id: string): SessionDetail | null {
    const session = this.getSession(id);
    if (!session) return null;
    const { info } = this.sql.stmt("SELECT info FROM sessions WHERE id = ?").get(id) as {
      info: string;
    };
    const connections = this.connections(id);
    return {
      session,
      info: JSON.parse(info) as SessionInfo,
      connections,
      main_connection: mainConnection(connections),
      issues: this.sql.count("SELECT count(*) AS n FROM session_issues WHERE session_id = ?", id),
      loss_windows: this.sql.count(
        "SELECT count(*) AS n FROM loss_windows WHERE session_id = ?",
        id,
      ),
    };
  }

  /** The thread the session view shows by default: see {@link mainConnection}. */
  mainConnection(id: string): string | null {
    return mainConnection(this.connections(id));
  }

  /**
   * The session's connections, main first, each sub-agent with the call that spawned it by the
   * one rule (`spawnParents`, core/model/spawn.ts): `parent_guessed` when the log did not name
   * it; no `parent_op` when there is none.
   */
  connections(id: string): ConnectionView[] {
    const conns: ConnectionView[] = (this.sql.stmt(
      "SELECT doc FROM connections WHERE session_id = ? ORDER BY id = 'main' DESC, id",
    ).all(id) as { doc: string }[]).map((r) => JSON.parse(r.doc) as Connection);
    if (!conns.some((c) => c.kind === "subagent")) return conns;
    const connectionOf = this.sql.stmt(
      `SELECT connection FROM operations WHERE session = ${sessionNum()} AND op_id = ?`,
    );
    const firstAt = this.sql.stmt(
      `SELECT min(ts_ms) AS t FROM operations WHERE session = ${sessionNum()} AND connection = ?`,
    );
    const parents = spawnParents({
      connections: conns,
      tasks: () =>
        (this.sql.stmt(
          `SELECT op_id, ts_ms FROM operations WHERE session = ${sessionNum()} AND kind = 'task'
           AND connection IN (SELECT id FROM connections WHERE session_id = ? AND
             json_extract(doc, '$.kind') = 'main') ORDER BY ${OP_ORDER}`,
        ).all(id, id) as { op_id: string; ts_ms: number | null }[])
          .map((t) => ({ op: t.op_id, at: t.ts_ms })),
      firstAt: (c) => (firstAt.get(id, c) as { t: number | null } | undefined)?.t ?? null,
      connectionOf: (op) =>
        (connectionOf.get(id, op) as { connection: string } | undefined)?.connection,
    });
    for (const c of conns) {
      if (c.kind !== "subagent") continue;
      const p = parents.get(c.id);
      if (!p) delete c.parent_op;
      else {
        c.parent_op = p.op;
        if (p.guessed) c.parent_guessed = true;
      }
    }
    return conns;
  }

  /**
   * Where an operation is, for deep links: from the top thread the session view shows, down
   * through the task calls that spawned its sub-agents, each with its index in its own
   * thread. Empty when the session has no such operation.
   */
  locate(sessionId: string, opId: string): LocatedOp[] {
    const conns = this.connections(sessionId);
    const byId = new Map(conns.map((c) => [c.id, c]));
    const main = mainConnection(conns);
    const chain: LocatedOp[] = [];
    let current: string | undefined = opId;
    for (let depth = 0; current && depth < 16; depth++) {
      const o = this.sql.stmt(
        `SELECT connection FROM operations WHERE session = ${sessionNum()} AND op_id = ?`,
      ).get(sessionId, current) as { connection: string } | undefined;
      if (!o) break;
      const nested = o.connection !== main && byId.get(o.connection)?.kind === "subagent";
      const index = this.seqOf(sessionId, current, {
        connection: main === null && !nested ? undefined : o.connection,
      });
      if (index === null) break;
      chain.unshift({ op_id: current, connection: o.connection, index });
      current = nested ? byId.get(o.connection)?.parent_op : undefined;
    }
    return chain;
  }

  /** Changes whenever the store's content may have changed, through any connection. */
  changeStamp(): string {
    const dv = this.sql.stmt("PRAGMA data_version").get() as { data_version: number };
    const tc = this.sql.stmt("SELECT total_changes() AS n").get() as { n: number };
    return `${dv.data_version}:${tc.n}`;
  }
}

/** The one main connection whose timeline the session view shows, or null for "all". */
function mainConnection(conns: Connection[]): string | null {
  const mains = conns.filter((c) => c.kind === "main");
  return mains.length === 1 && conns.length > 1 ? mains[0].id : null;
}
