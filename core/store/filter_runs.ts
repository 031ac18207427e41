/**
 * A session filter (agent, project, dates) as the rowids of the operations it selects, in runs
 * of consecutive rowids: an import writes a session's operations one after another, so one
 * session is one run, or a few (a sub-agent's log read later, lines appended since).
 *
 * Search asks which of a word's matches a filter holds. Joining each match to its operation and
 * session costs a random read of the operations table (about 3 µs a match at 10,000,000
 * messages); testing it against the runs costs nothing, once they are listed. Listing them
 * reads the filter's entries of an index, about 0.13 µs an operation. Which pays depends on how
 * many operations the filter holds and how many matches the query has: search.ts chooses
 * (`Search.filteredPage`), with the figures here.
 */
import type { Sql } from "./_sql.ts";

type Params = readonly (string | number)[];

/** Run `i` is the rowids `lo[i]` to `hi[i]`; the runs ascend and neither overlap nor touch. */
export interface Runs {
  lo: number[];
  hi: number[];
}

/** Runs each with the session (its number) whose operations fill it; they ascend. */
export interface OwnedRuns extends Runs {
  num: number[];
}

/**
 * How search narrows matches to a filter: `runs` lists the filter's runs; `each` joins every
 * match (read whole first) to its session in one statement; `join` reads matches joined to
 * their sessions, newest first, as far as the page and the count need; `auto` chooses. Tests
 * pin one; the store runs `auto`.
 */
export type FilterStrategy = "auto" | "runs" | "each" | "join";
export const FILTER_STRATEGIES: readonly FilterStrategy[] = ["auto", "runs", "each", "join"];

/**
 * The most operations a filter's runs are listed for, for a query of words (64,000: about
 * 8 ms) and for a phrase (500,000: about 65 ms), whose candidates cost more when joined: each
 * one's text is read too, where with runs only the filter's are.
 */
export const RUNS_MAX_OPS = { words: 64_000, phrase: 500_000 } as const;
/**
 * A filter holding more than one operation in this many is joined for a phrase: most of the
 * phrase's candidates are then the filter's, and their texts are read either way.
 */
export const RUNS_SHARE = 8;

/**
 * Whether a filter of `ops` operations, in a store of `all`, is listed as runs for a query of
 * words or a phrase ({@link RUNS_MAX_OPS}, {@link RUNS_SHARE}).
 */
export function listable(ops: number, all: number, query: keyof typeof RUNS_MAX_OPS): boolean {
  return ops <= RUNS_MAX_OPS[query] && (query === "words" || ops * RUNS_SHARE <= all);
}
/**
 * How many operations listed as runs cost as much as one match joined to its session: a query
 * with fewer matches than the filter's operations over this joins each of them instead.
 */
export const JOIN_COST_OPS = 24;

/**
 * The sessions a filter selects, about how many operations they hold, and the store's (its
 * largest rowid: deletions leave gaps).
 */
export interface FilterLook {
  nums: number[];
  ops: number;
  all: number;
}

/** The most sessions whose runs are kept (about 100 bytes each). */
const KEPT_SESSIONS = 100_000;

/**
 * Each session's runs, listed once and kept while the store is unchanged. `look` comes first
 * for every query: it forgets them all when any connection has written since.
 */
export class FilterRuns {
  /** Each session's runs, by its number, as listed since the store last changed. */
  private kept = new Map<number, Runs>();
  private keptVersion = "";

  /** `keptMax`: the most sessions whose runs are kept; past it they start over. */
  constructor(private readonly sql: Sql, private readonly keptMax = KEPT_SESSIONS) {}

  /**
   * The sessions `filter` (SQL over `sessions s`, with `params`) selects, and about how many
   * operations they hold: as many as their share of the sessions (a sum of their counts would
   * read each session's row, 3 ms for 4,000 sessions at 10,000,000 messages; their numbers alone
   * come from the index the filter uses).
   */
  look(filter: string, params: Params): FilterLook {
    this.forgetIfChanged();
    const r = this.sql.stmt(
      `SELECT json_group_array(s.num) AS nums, count(*) AS n,
         (SELECT count(*) FROM sessions) AS sessions,
         (SELECT coalesce(max(rowid), 0) FROM operations) AS "all"
       FROM sessions s WHERE ${filter}`,
    ).get(...params) as { nums: string; n: number; sessions: number; all: number };
    const ops = r.sessions ? Math.round((r.all * r.n) / r.sessions) : 0;
    return { nums: JSON.parse(r.nums), ops, all: r.all };
  }

  /**
   * The runs of the operations of sessions `nums`, if each one's were listed since the store
   * last changed (search-as-you-type asks again with every key); else null.
   */
  cached(nums: readonly number[]): Runs | null {
    return nums.every((n) => this.kept.has(n)) ? this.joined(nums) : null;
  }

  /**
   * Lists the runs of the operations of sessions `nums`: those not listed yet are read from the
   * narrowest index on the operations' session (within a session and a stamp its rowids
   * ascend).
   */
  list(nums: readonly number[]): Runs {
    this.keep(nums);
    return this.joined(nums);
  }

  /** The runs of sessions `nums` each with its session, listed as {@link list} lists them. */
  owned(nums: readonly number[]): OwnedRuns {
    this.keep(nums);
    const spans: [number, number, number][] = [];
    for (const n of nums) {
      const { lo, hi } = this.kept.get(n)!;
      for (let i = 0; i < lo.length; i++) spans.push([lo[i], hi[i], n]);
    }
    spans.sort((a, b) => a[0] - b[0]);
    return {
      lo: spans.map((s) => s[0]),
      hi: spans.map((s) => s[1]),
      num: spans.map((s) => s[2]),
    };
  }

  /** Reads the runs of the sessions of `nums` not kept yet. */
  private keep(nums: readonly number[]): void {
    let missing = nums.filter((n) => !this.kept.has(n));
    if (!missing.length) return;
    if (this.kept.size + missing.length > this.keptMax) {
      this.kept.clear(); // and every session of `nums` is read again
      missing = [...nums];
    }
    const r = this.sql.stmt(
      `SELECT json_group_array(o.session) AS sessions, json_group_array(o.rowid) AS ids
       FROM json_each(?) m CROSS JOIN operations o INDEXED BY operations_changes
         ON o.session = m.value`,
    ).get(JSON.stringify(missing)) as { sessions: string; ids: string };
    const sessions = JSON.parse(r.sessions) as number[];
    const ids = JSON.parse(r.ids) as number[];
    for (let i = 0, j = 0; i < ids.length; i = j) {
      while (j < ids.length && sessions[j] === sessions[i]) j++;
      this.kept.set(sessions[i], runsOf(ids.slice(i, j)));
    }
    for (const n of missing) if (!this.kept.has(n)) this.kept.set(n, { lo: [], hi: [] });
  }

  /** The kept runs of sessions `nums`, as one list. */
  private joined(nums: readonly number[]): Runs {
    const spans: [number, number][] = [];
    for (const n of nums) {
      const { lo, hi } = this.kept.get(n)!;
      for (let i = 0; i < lo.length; i++) spans.push([lo[i], hi[i]]);
    }
    return joinSpans(spans);
  }

  /** Forgets every session's runs when any connection has written to the store since. */
  private forgetIfChanged(): void {
    const version = (this.sql.stmt(
      "SELECT total_changes() || ':' || data_version AS v FROM pragma_data_version",
    ).get() as { v: string }).v;
    if (version !== this.keptVersion) this.kept.clear();
    this.keptVersion = version;
  }
}

/** The runs of `rowids` (any order, each once). */
export function runsOf(rowids: readonly number[]): Runs {
  // Runs as they come (ascending stretches), then sorted and joined where they touch.
  const spans: [number, number][] = [];
  let span: [number, number] | null = null;
  for (const r of rowids) {
    if (span && r === span[1] + 1) span[1] = r;
    else spans.push(span = [r, r]);
  }
  return joinSpans(spans);
}

/** Spans `[lo, hi]` (any order) as runs: sorted, and joined where they overlap or touch. */
function joinSpans(spans: [number, number][]): Runs {
  spans.sort((a, b) => a[0] - b[0]);
  const runs: Runs = { lo: [], hi: [] };
  for (const [lo, hi] of spans) {
    const last = runs.hi.length - 1;
    if (last >= 0 && lo <= runs.hi[last] + 1) runs.hi[last] = Math.max(runs.hi[last], hi);
    else {
      runs.lo.push(lo);
      runs.hi.push(hi);
    }
  }
  return runs;
}

/** The rowids of `newestFirst` (descending) that lie in `runs`, in the same order. */
export function inRuns(newestFirst: readonly number[], runs: Runs): number[] {
  const out: number[] = [];
  eachInRuns(newestFirst, runs, (rowid) => out.push(rowid));
  return out;
}

/** The rowids of `newestFirst` (descending) that lie in `runs`, each with its run's session. */
export function ownersOf(
  newestFirst: readonly number[],
  runs: OwnedRuns,
): { rowid: number; num: number }[] {
  const out: { rowid: number; num: number }[] = [];
  eachInRuns(newestFirst, runs, (rowid, run) => out.push({ rowid, num: runs.num[run] }));
  return out;
}

/** Calls `found` with each rowid of `newestFirst` (descending) inside a run, and the run. */
function eachInRuns(
  newestFirst: readonly number[],
  runs: Runs,
  found: (rowid: number, run: number) => void,
): void {
  let j = runs.lo.length - 1;
  for (const r of newestFirst) {
    while (j >= 0 && runs.lo[j] > r) j--;
    if (j < 0) break;
    if (r <= runs.hi[j]) found(r, j);
  }
}
