/**
 * Statistics kept up to date at import (migration 7), so the analytics page answers from a few
 * thousand rows whatever the history's size:
 * - `session_stats`: each session's counts by dimension (`kind`, `tool`, `day`, `file`,
 *   `model`, and one `span` row with its operation count and first and last time), recomputed
 *   for the sessions a unit touched, from their own rows only;
 * - `stats_rollup`: the same counts summed per agent and project: a session's old rows are
 *   taken out (under the project they were added with) and its new ones added.
 * Date-bounded and one-session statistics are computed from the operations directly (stats.ts).
 */
import type { Stats, StatsFilter } from "../analytics/stats.ts";
import { sessionNum, type Sql, type SqlRow } from "./_sql.ts";

/**
 * When a usage row's tokens were spent (ms), for per-day tokens and costs: its own time, else
 * its session's start (no importer dates usage rows yet, so today a session's tokens count on
 * the day it started). `u` is the usage row, `s` its session.
 */
export const USAGE_MS = "coalesce(u.ts_ms, (julianday(s.started_at) - 2440587.5) * 86400000.0)";

/**
 * An operation that touches a file (`o`: the operations table's alias, or "" for none): it reads
 * or writes the one its target names. A search (Grep, Glob, ls) reads under a folder or pattern,
 * its target no file: counted as files, the folders a session searched over and over topped its
 * most touched files (migration 30).
 */
export function touchesFile(o = ""): string {
  const col = (c: string) => (o ? `${o}.${c}` : c);
  return `${col("target")} IS NOT NULL AND ${col("effect")} IN ('fs_read', 'fs_write') AND ${
    col("kind")
  } <> 'search'`;
}

/** A session's rows, as computed from its operations and usage. */
const SESSION_ROWS = `
SELECT 'span' AS dim, '' AS key, NULL AS kind, count(*) AS n, 0 AS errors, 0 AS reads,
    0 AS writes, 0 AS input, 0 AS output, 0 AS cache_read, 0 AS cache_write, min(ts_ms) AS min_ts,
    max(ts_ms) AS max_ts
  FROM operations WHERE session = ${sessionNum("?1")}
UNION ALL SELECT 'kind', kind, NULL, count(*), 0, 0, 0, 0, 0, 0, 0, NULL, NULL
  FROM operations WHERE session = ${sessionNum("?1")} GROUP BY kind
UNION ALL SELECT 'tool', tool, max(kind), count(*), coalesce(sum(is_error = 1), 0), 0, 0, 0, 0, 0, 0, NULL, NULL
  FROM operations WHERE session = ${sessionNum("?1")} AND tool IS NOT NULL GROUP BY tool
UNION ALL SELECT 'day', date(ts_ms / 1000, 'unixepoch'), NULL, count(*),
    coalesce(sum(is_error = 1 AND tool IS NOT NULL), 0), 0, 0, 0, 0, 0, 0, NULL, NULL
  FROM operations WHERE session = ${sessionNum("?1")} AND ts_ms IS NOT NULL GROUP BY 2
UNION ALL SELECT 'file', target, NULL, count(*), 0, sum(effect = 'fs_read'),
    sum(effect = 'fs_write'), 0, 0, 0, 0, NULL, NULL
  FROM operations WHERE session = ${sessionNum("?1")} AND ${touchesFile()} GROUP BY target
UNION ALL SELECT 'model', model, NULL, count(*), 0, 0, 0, coalesce(sum(input), 0),
    coalesce(sum(output), 0), coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0),
    NULL, NULL
  FROM usage WHERE session_id = ?1 GROUP BY model
UNION ALL SELECT 'daymodel', date(${USAGE_MS} / 1000, 'unixepoch') || '|' || u.model, NULL,
    count(*), 0, 0, 0, coalesce(sum(u.input), 0), coalesce(sum(u.output), 0),
    coalesce(sum(u.cache_read), 0), coalesce(sum(u.cache_write), 0), NULL, NULL
  FROM usage u JOIN sessions s ON s.id = u.session_id
  WHERE u.session_id = ?1 AND ${USAGE_MS} IS NOT NULL GROUP BY 2`;

const COLS = "dim, key, kind, n, errors, reads, writes, input, output, cache_read, cache_write";

/**
 * The rollup's rows for every agent and project together: source '' (no agent's id), project
 * ''. The unfiltered view reads them, one row a key, in the order of an index, instead of
 * summing every agent's and project's rows (the files touched grow with the history).
 */
export const ALL = "";

/** Rows given to the rollup add to the ones it has (a key's kind: the last one given). */
const ADD_TO_ROLLUP = `ON CONFLICT (source, project, dim, key) DO UPDATE SET
  kind = coalesce(excluded.kind, kind), n = n + excluded.n, errors = errors + excluded.errors,
  reads = reads + excluded.reads, writes = writes + excluded.writes,
  input = input + excluded.input, output = output + excluded.output,
  cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
  sessions = sessions + excluded.sessions`;

/**
 * Adds (`sign` 1) or takes out (-1) a session's stored rows to or from the rollup: its agent's
 * and project's rows, and the rows of everything ({@link ALL}).
 */
const ROLL = (sign: 1 | -1, all = false) =>
  `INSERT INTO stats_rollup (source, project, ${COLS}, sessions)
   SELECT ${all ? "''" : "source"}, ${all ? "''" : "coalesce(project, '')"}, dim, key, kind,
     ${sign} * n, ${sign} * errors,
     ${sign} * reads, ${sign} * writes, ${sign} * input, ${sign} * output,
     ${sign} * cache_read, ${sign} * cache_write, ${sign}
   FROM session_stats WHERE session_id = ? AND dim <> 'span'
   ${ADD_TO_ROLLUP}`;

/** Moves a session's stored rows into (1) or out of (-1) the rollup, its own and everything's. */
function roll(sql: Sql, sign: 1 | -1, sessionId: string): void {
  sql.stmt(ROLL(sign)).run(sessionId);
  sql.stmt(ROLL(sign, true)).run(sessionId);
}

/**
 * Recomputes a session's statistics and moves its share of the rollup to match. A session that
 * has rows under its current project has only the rows that changed written, and only their
 * difference moved into the rollup: a line appended to a long session changes a few of its
 * rows, where it used to move all of them out of the rollup and back (a 200 MiB session of
 * 35k operations has 8,200 rows, most of them files: 260 ms of SQL for each appended line).
 * A new session, or one whose project changed, has all its rows moved.
 */
export function refreshSessionStats(sql: Sql, sessionId: string): void {
  const stored = sql.stmt(
    `SELECT project, ${COLS}, min_ts, max_ts FROM session_stats WHERE session_id = ?`,
  ).all(sessionId) as SqlRow[];
  const session = sql.stmt("SELECT source, project_path FROM sessions WHERE id = ?").get(
    sessionId,
  ) as { source: string; project_path: string | null } | undefined;
  if (!session || !stored.length || stored.some((r) => r.project !== session.project_path)) {
    roll(sql, -1, sessionId);
    sql.stmt("DELETE FROM session_stats WHERE session_id = ?").run(sessionId);
    sql.stmt(
      `INSERT INTO session_stats (session_id, source, project, ${COLS}, min_ts, max_ts)
       SELECT s.id, s.source, s.project_path, r.* FROM sessions s, (${SESSION_ROWS}) r
       WHERE s.id = ?1 AND r.n > 0`,
    ).run(sessionId);
    roll(sql, 1, sessionId);
    return;
  }
  const fresh = sql.stmt(`SELECT * FROM (${SESSION_ROWS}) WHERE n > 0`).all(sessionId) as SqlRow[];
  const before = new Map(stored.map((r) => [rowKey(r), r]));
  const write = sql.stmt(
    `INSERT INTO session_stats (session_id, source, project, ${COLS}, min_ts, max_ts)
     VALUES (?, ?, ?, ${STAT_COLS.map(() => "?").join(", ")})
     ON CONFLICT (session_id, dim, key) DO UPDATE SET
       ${STAT_COLS.slice(2).map((c) => `${c} = excluded.${c}`).join(", ")}`,
  );
  const move = (r: SqlRow, was: SqlRow | undefined, sign: 1 | -1) => {
    if (r.dim === "span") return; // not in the rollup
    const project = session.project_path ?? "";
    const values = SUMS.map((c) => sign * (num(r[c]) - num(was?.[c])));
    for (const [source, proj] of [[session.source, project], [ALL, ALL]]) {
      sql.stmt(MOVE).run(
        source,
        proj,
        r.dim as string,
        r.key as string,
        r.kind ?? null,
        ...values,
        sign * (was ? 0 : 1),
      );
    }
  };
  for (const r of fresh) {
    const k = rowKey(r);
    const was = before.get(k);
    before.delete(k);
    if (was && STAT_COLS.every((c) => was[c] === r[c])) continue;
    write.run(sessionId, session.source, session.project_path, ...STAT_COLS.map((c) => r[c]));
    move(r, was, 1);
  }
  // the rows the session no longer has
  const drop = sql.stmt("DELETE FROM session_stats WHERE session_id = ? AND dim = ? AND key = ?");
  for (const r of before.values()) {
    drop.run(sessionId, r.dim as string, r.key as string);
    move(r, undefined, -1);
  }
}

/** A statistics row's columns beside its session's: its dimension and key first. */
const STAT_COLS = [...COLS.split(", "), "min_ts", "max_ts"];
/** The columns the rollup sums: {@link COLS} after its dimension, key and kind. */
const SUMS = COLS.split(", ").slice(3);
const rowKey = (r: SqlRow) => `${r.dim}\u0000${r.key}`;

/** Adds one row's difference to the rollup (its `sessions`: 1 for a key new to the session). */
const MOVE = `INSERT INTO stats_rollup (source, project, ${COLS}, sessions)
  VALUES (?, ?, ?, ?, ?, ${SUMS.map(() => "?").join(", ")}, ?)
  ${ADD_TO_ROLLUP}`;

/** Takes a session's statistics out, before the session itself goes. */
export function dropSessionStats(sql: Sql, sessionId: string): void {
  roll(sql, -1, sessionId);
  sql.stmt("DELETE FROM session_stats WHERE session_id = ?").run(sessionId);
}

/**
 * Which kept statistics answer this filter, if any: the rollup (everything, an agent's, a
 * project's), one session's own rows (a session alone), or none (a date range, or a session
 * narrowed further: its operations are counted).
 */
export function keptStatsFor(f: StatsFilter): "rollup" | "session" | null {
  if (f.from || f.to) return null;
  if (f.session_id === undefined) return "rollup";
  return f.source === undefined && f.project === undefined ? "session" : null;
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v ?? 0));
const TOKEN_SUMS = `sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read,
  sum(cache_write) AS cache_write`;
const usage = (r: SqlRow) => ({
  input: num(r.input),
  output: num(r.output),
  cache_read: num(r.cache_read),
  cache_write: num(r.cache_write),
});

/** Statistics of all sessions, or of one agent's and/or one project's, from the rollup. */
export function rollupStats(sql: Sql, f: StatsFilter): Stats {
  const scope: string[] = [];
  const params: string[] = [];
  if (f.source !== undefined) (scope.push("source = ?"), params.push(f.source));
  if (f.project !== undefined) (scope.push("project = ?"), params.push(f.project));
  const where = (dim: string) => `WHERE dim = '${dim}' ${scope.map((c) => `AND ${c}`).join(" ")}`;
  // Everything: the ALL rows, one a key (grouping them is free). A filter: its agent's or
  // project's rows, summed; never the ALL rows (no agent's id is '').
  const rollupWhere = (dim: string) =>
    scope.length
      ? `${where(dim)} AND source <> '${ALL}'`
      : `WHERE source = '${ALL}' AND project = '${ALL}' AND dim = '${dim}'`;
  const rows = (dim: string, select: string, rest = "") =>
    sql.stmt(`SELECT ${select} FROM stats_rollup ${rollupWhere(dim)} GROUP BY key ${rest}`)
      .all(...params) as SqlRow[];
  const span = sql.stmt(
    `SELECT count(*) AS sessions, coalesce(sum(n), 0) AS ops, min(min_ts) AS first,
       max(max_ts) AS last FROM session_stats ${where("span")}`,
  ).get(...params) as SqlRow;
  const tools = rows("tool", "key, max(kind) AS kind, sum(n) AS n, sum(errors) AS errors")
    .filter((r) => num(r.n) > 0)
    .map((r) => ({
      tool: String(r.key),
      kind: String(r.kind),
      count: num(r.n),
      errors: num(r.errors),
    }))
    .sort((a, b) => b.count - a.count || (a.tool < b.tool ? -1 : 1));
  return {
    sessions: num(span.sessions),
    operations: num(span.ops),
    kinds: rows("kind", "key, sum(n) AS n", "HAVING sum(n) > 0 ORDER BY sum(n) DESC, key")
      .map((r) => ({ kind: String(r.key), count: num(r.n) })),
    tools,
    activity: rows(
      "day",
      "key, sum(n) AS n, sum(sessions) AS sessions, sum(errors) AS errors",
      "HAVING sum(n) > 0 ORDER BY key",
    ).map((r) => ({
      day: String(r.key),
      operations: num(r.n),
      sessions: num(r.sessions),
      errors: num(r.errors),
    })),
    errors: tools.reduce((n, t) => n + t.errors, 0),
    tokens: rows(
      "model",
      `key, ${TOKEN_SUMS}`,
      "HAVING sum(n) > 0 ORDER BY sum(output) + sum(input) DESC, key",
    ).map((r) => ({ model: String(r.key), ...usage(r) })),
    tokens_by_day: rows(
      "daymodel",
      `key, ${TOKEN_SUMS}`,
      "HAVING sum(n) > 0 ORDER BY key",
    ).map((r) => ({
      day: String(r.key).slice(0, 10),
      model: String(r.key).slice(11),
      ...usage(r),
    })),
    tokens_by_project: (sql.stmt(
      `SELECT project, key, ${TOKEN_SUMS}
       FROM stats_rollup ${where("model")} AND source <> '${ALL}' GROUP BY project, key
       HAVING sum(n) > 0
       ORDER BY project, key`,
    ).all(...params) as SqlRow[]).map((r) => ({
      project: String(r.project),
      model: String(r.key),
      ...usage(r),
    })),
    files: (scope.length
      ? rows(
        "file",
        "key, sum(reads) AS reads, sum(writes) AS writes",
        "HAVING sum(n) > 0 ORDER BY sum(n) DESC, key LIMIT 200",
      )
      // The most touched files of all, straight from the ALL rows' index (stats_rollup_top).
      : sql.stmt(
        `SELECT key, reads, writes FROM stats_rollup WHERE source = '${ALL}'
           AND project = '${ALL}' AND dim = 'file' AND n > 0 ORDER BY n DESC, key LIMIT 200`,
      ).all() as SqlRow[])
      .map((r) => ({ path: String(r.key), reads: num(r.reads), writes: num(r.writes) })),
    files_touched: scope.length
      ? num(
        (sql.stmt(
          `SELECT count(*) AS n FROM (SELECT key FROM stats_rollup ${rollupWhere("file")}
             GROUP BY key HAVING sum(n) > 0)`,
        ).get(...params) as SqlRow).n,
      )
      : num(
        (sql.stmt(
          `SELECT count(*) AS n FROM stats_rollup WHERE source = '${ALL}' AND project = '${ALL}'
             AND dim = 'file' AND n > 0`,
        ).get() as SqlRow).n,
      ),
    first_ms: typeof span.first === "number" ? span.first : null,
    last_ms: typeof span.last === "number" ? span.last : null,
  };
}

/**
 * One session's statistics from its kept rows: a few thousand rows read by their key, where
 * counting its operations scans them five times (135-220 ms for a session of 35k operations).
 * Null while the rows are behind its operations: the session waits in a bulk import's
 * `stats_backlog`, or a big log is stored in slices (its rows wait for the last one), which its
 * operation count tells apart from its rows' in a millisecond.
 */
export function sessionStatsKept(sql: Sql, sessionId: string): Stats | null {
  if (sql.stmt("SELECT 1 FROM stats_backlog WHERE session_id = ?").get(sessionId)) return null;
  const counted = sql.stmt(
    `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()}`,
  ).get(sessionId) as { n: number };
  const rows = (dim: string, select: string, order: string) =>
    sql.stmt(
      `SELECT ${select} FROM session_stats WHERE session_id = ? AND dim = '${dim}' ORDER BY ${order}`,
    ).all(sessionId) as SqlRow[];
  const [span] = rows("span", "n, min_ts, max_ts", "key");
  if (num(span?.n) !== counted.n) return null;
  const tools = rows("tool", "key, kind, n, errors", "n DESC, key").map((r) => ({
    tool: String(r.key),
    kind: String(r.kind),
    count: num(r.n),
    errors: num(r.errors),
  }));
  const project = (sql.stmt("SELECT coalesce(project_path, '') AS p FROM sessions WHERE id = ?")
    .get(sessionId) as { p: string } | undefined)?.p ?? "";
  return {
    sessions: span ? 1 : 0,
    operations: num(span?.n),
    kinds: rows("kind", "key, n", "n DESC, key")
      .map((r) => ({ kind: String(r.key), count: num(r.n) })),
    tools,
    activity: rows("day", "key, n, errors", "key").map((r) => ({
      day: String(r.key),
      operations: num(r.n),
      sessions: 1,
      errors: num(r.errors),
    })),
    errors: tools.reduce((n, t) => n + t.errors, 0),
    tokens: rows("model", `key, ${TOKEN_COLS}`, "output + input DESC, key")
      .map((r) => ({ model: String(r.key), ...usage(r) })),
    tokens_by_day: rows("daymodel", `key, ${TOKEN_COLS}`, "key").map((r) => ({
      day: String(r.key).slice(0, 10),
      model: String(r.key).slice(11),
      ...usage(r),
    })),
    tokens_by_project: rows("model", `key, ${TOKEN_COLS}`, "key")
      .map((r) => ({ project, model: String(r.key), ...usage(r) })),
    files: rows("file", "key, reads, writes", "n DESC, key LIMIT 200")
      .map((r) => ({ path: String(r.key), reads: num(r.reads), writes: num(r.writes) })),
    files_touched: num(
      (sql.stmt(
        "SELECT count(*) AS n FROM session_stats WHERE session_id = ? AND dim = 'file' AND n > 0",
      ).get(sessionId) as SqlRow).n,
    ),
    first_ms: typeof span?.min_ts === "number" ? span.min_ts : null,
    last_ms: typeof span?.max_ts === "number" ? span.max_ts : null,
  };
}
const TOKEN_COLS = "input, output, cache_read, cache_write";

/**
 * Migration 10: the rollup's rows for everything ({@link ALL}), summed from the agents' and
 * projects' rows, and the index the most touched files are read from.
 */
export const STATS_ALL_MIGRATION = `
DELETE FROM stats_rollup WHERE source = '${ALL}';
INSERT INTO stats_rollup (source, project, ${COLS}, sessions)
  SELECT '${ALL}', '${ALL}', dim, key, max(kind), sum(n), sum(errors), sum(reads), sum(writes),
    sum(input), sum(output), sum(cache_read), sum(cache_write), sum(sessions)
  FROM stats_rollup GROUP BY dim, key;
CREATE INDEX stats_rollup_top ON stats_rollup(source, project, dim, n DESC, key);
`;

/** Migration 7: the tables, filled from what is stored. */
export const STATS_MIGRATION = `
CREATE TABLE session_stats (
  session_id TEXT NOT NULL,
  source TEXT NOT NULL,
  project TEXT,                    -- the session's project when these rows were added
  dim TEXT NOT NULL,               -- span | kind | tool | day | file | model (| daymodel, v11)
  key TEXT NOT NULL,
  kind TEXT,                       -- a tool's operation kind
  n INTEGER NOT NULL,              -- operations (usage rows for 'model')
  errors INTEGER NOT NULL,         -- failed tool calls
  reads INTEGER NOT NULL,
  writes INTEGER NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  min_ts REAL,                     -- 'span' only
  max_ts REAL,
  PRIMARY KEY (session_id, dim, key)
) WITHOUT ROWID;
CREATE INDEX session_stats_scope ON session_stats(dim, source, project);

CREATE TABLE stats_rollup (
  source TEXT NOT NULL,
  project TEXT NOT NULL,           -- '' for sessions without one
  dim TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT,
  n INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  reads INTEGER NOT NULL,
  writes INTEGER NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  sessions INTEGER NOT NULL,       -- sessions with this key (distinct sessions per day)
  PRIMARY KEY (source, project, dim, key)
) WITHOUT ROWID;
CREATE INDEX stats_rollup_dim ON stats_rollup(dim, key);
`;
