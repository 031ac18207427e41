/**
 * Statistics over stored operations (the shapes are in core/analytics). Errors are counted
 * from the stored `is_error` flag, which the one error heuristic set at import: no payload is
 * read here.
 */
import type { Stats, StatsFilter } from "../analytics/stats.ts";
import type { Sql, SqlRow } from "./_sql.ts";
import { touchesFile, USAGE_MS } from "./stats_rollup.ts";

type SqlValue = string | number | null;

const DAY_MS = 86_400_000;

function timeBound(value: string, end: boolean): number {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new RangeError(`Cannot read date "${value}": expected ISO 8601`);
  return end && /^\d{4}-\d{2}-\d{2}$/.test(value) ? t + DAY_MS - 1 : t;
}

function opWhere(f: StatsFilter): { sql: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (f.session_id !== undefined) (parts.push("s.id = ?"), params.push(f.session_id));
  if (f.project !== undefined) (parts.push("s.project_path = ?"), params.push(f.project));
  if (f.source !== undefined) (parts.push("s.source = ?"), params.push(f.source));
  if (f.from) (parts.push("o.ts_ms >= ?"), params.push(timeBound(f.from, false)));
  if (f.to) (parts.push("o.ts_ms <= ?"), params.push(timeBound(f.to, true)));
  return { sql: parts.length ? "WHERE " + parts.join(" AND ") : "", params };
}

function sessionWhere(f: StatsFilter): { sql: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (f.session_id !== undefined) (parts.push("s.id = ?"), params.push(f.session_id));
  if (f.project !== undefined) (parts.push("s.project_path = ?"), params.push(f.project));
  if (f.source !== undefined) (parts.push("s.source = ?"), params.push(f.source));
  return { sql: parts.length ? "WHERE " + parts.join(" AND ") : "", params };
}

function usageWhere(f: StatsFilter): { sql: string; params: SqlValue[] } {
  const w = sessionWhere(f);
  const parts = w.sql ? [w.sql.slice("WHERE ".length)] : [];
  const params = [...w.params];
  if (f.from) (parts.push(`${USAGE_MS} >= ?`), params.push(timeBound(f.from, false)));
  if (f.to) (parts.push(`${USAGE_MS} <= ?`), params.push(timeBound(f.to, true)));
  return { sql: parts.length ? "WHERE " + parts.join(" AND ") : "", params };
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v ?? 0));
const and = (where: string, cond: string) => `${where ? where + " AND" : "WHERE"} ${cond}`;
/** A failed tool call: what the session view marks. */
const FAILED = "(o.is_error = 1 AND o.tool IS NOT NULL)";

/** Counts for the operations the filter selects. */
export function computeStats(sql: Sql, filter: StatsFilter = {}): Stats {
  const w = opWhere(filter);
  const from = "FROM operations o JOIN sessions s ON s.num = o.session";
  const all = (query: string, params: SqlValue[] = w.params) =>
    sql.db.prepare(query).all(...params) as SqlRow[];

  const kinds = all(
    `SELECT o.kind AS kind, count(*) AS count ${from} ${w.sql} GROUP BY o.kind ORDER BY count DESC, o.kind`,
  ).map((r) => ({ kind: String(r.kind), count: num(r.count) }));

  const [totals] = all(
    `SELECT count(*) AS ops, count(DISTINCT o.session) AS sessions, min(o.ts_ms) AS first,
       max(o.ts_ms) AS last, coalesce(sum(${FAILED}), 0) AS errors ${from} ${w.sql}`,
  );

  const tools = all(
    `SELECT o.tool AS tool, max(o.kind) AS kind, count(*) AS count,
       sum(o.is_error = 1) AS errors ${from} ${and(w.sql, "o.tool IS NOT NULL")}
     GROUP BY o.tool ORDER BY count DESC, o.tool`,
  ).map((r) => ({
    tool: String(r.tool),
    kind: String(r.kind),
    count: num(r.count),
    errors: num(r.errors),
  }));

  const activity = all(
    `SELECT date(o.ts_ms / 1000, 'unixepoch') AS day, count(*) AS ops,
       count(DISTINCT o.session) AS sessions, sum(${FAILED}) AS errors
     ${from} ${and(w.sql, "o.ts_ms IS NOT NULL")} GROUP BY day ORDER BY day`,
  ).map((r) => ({
    day: String(r.day),
    operations: num(r.ops),
    sessions: num(r.sessions),
    errors: num(r.errors),
  }));

  const sw = sessionWhere(filter);
  const tokens = all(
    `SELECT u.model AS model, sum(u.input) AS input, sum(u.output) AS output,
       sum(u.cache_read) AS cache_read, sum(u.cache_write) AS cache_write
     FROM usage u JOIN sessions s ON s.id = u.session_id ${sw.sql}
     GROUP BY u.model ORDER BY sum(u.output) + sum(u.input) DESC, u.model`,
    sw.params,
  ).map((r) => ({
    model: String(r.model),
    input: num(r.input),
    output: num(r.output),
    cache_read: num(r.cache_read),
    cache_write: num(r.cache_write),
  }));

  // Usage rows are dated: a date-bounded filter counts the tokens spent in its days.
  const uw = usageWhere(filter);
  const tokenSums = `sum(u.input) AS input, sum(u.output) AS output,
       sum(u.cache_read) AS cache_read, sum(u.cache_write) AS cache_write`;
  const usageOf = (r: SqlRow) => ({
    input: num(r.input),
    output: num(r.output),
    cache_read: num(r.cache_read),
    cache_write: num(r.cache_write),
  });
  const tokens_by_day = all(
    `SELECT date(${USAGE_MS} / 1000, 'unixepoch') AS day, u.model AS model, ${tokenSums}
     FROM usage u JOIN sessions s ON s.id = u.session_id ${and(uw.sql, `${USAGE_MS} IS NOT NULL`)}
     GROUP BY day, u.model ORDER BY day, u.model`,
    uw.params,
  ).map((r) => ({ day: String(r.day), model: String(r.model), ...usageOf(r) }));
  const tokens_by_project = all(
    `SELECT coalesce(s.project_path, '') AS project, u.model AS model, ${tokenSums}
     FROM usage u JOIN sessions s ON s.id = u.session_id ${uw.sql}
     GROUP BY 1, u.model ORDER BY 1, u.model`,
    uw.params,
  ).map((r) => ({ project: String(r.project), model: String(r.model), ...usageOf(r) }));

  const files = all(
    `SELECT o.target AS path, sum(o.effect = 'fs_read') AS reads,
       sum(o.effect = 'fs_write') AS writes
     ${from} ${and(w.sql, touchesFile("o"))}
     GROUP BY o.target ORDER BY count(*) DESC, o.target LIMIT 200`,
  ).map((r) => ({ path: String(r.path), reads: num(r.reads), writes: num(r.writes) }));

  const [touched] = all(
    `SELECT count(DISTINCT o.target) AS n
     ${from} ${and(w.sql, touchesFile("o"))}`,
  );

  return {
    sessions: num(totals.sessions),
    operations: num(totals.ops),
    kinds,
    tools,
    activity,
    errors: num(totals.errors),
    tokens,
    tokens_by_day,
    tokens_by_project,
    files,
    files_touched: num(touched.n),
    first_ms: typeof totals.first === "number" ? totals.first : null,
    last_ms: typeof totals.last === "number" ? totals.last : null,
  };
}
