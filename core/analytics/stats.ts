/**
 * Statistics over stored operations: tool distribution, operation kinds, activity per day,
 * errors and token usage per model. Pure SQL over an injected database plus the shared error
 * heuristic, so the numbers match what the session view marks.
 */
import type { OperationKind } from "../model/types.ts";
import { ERROR_SCAN_CHARS, isErrorResult } from "./error_heuristic.ts";

/** The part of node:sqlite's DatabaseSync these queries use. */
export interface SqlDatabase {
  prepare(sql: string): {
    all(...params: SqlValue[]): unknown[];
  };
}
export type SqlValue = string | number | null;

/** Which operations to count. Every field is optional; none means the whole store. */
export interface StatsFilter {
  /** Only sessions of this project path. */
  project?: string;
  /** Only sessions of this agent. */
  source?: string;
  /** Only this session. */
  session_id?: string;
  /** ISO date or timestamp: operations at or after it. */
  from?: string;
  /** ISO date or timestamp: operations on or before it (a bare date includes the whole day). */
  to?: string;
}

export interface ToolCount {
  tool: string;
  kind: string;
  count: number;
  errors: number;
}
export interface DayActivity {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  operations: number;
  sessions: number;
  errors: number;
}
export interface ModelTokens {
  model: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}
export interface FileTouch {
  path: string;
  reads: number;
  writes: number;
}

export interface Stats {
  sessions: number;
  operations: number;
  /** Operations per kind, most frequent first. */
  kinds: { kind: string; count: number }[];
  /** Tool calls per native tool name, most frequent first. */
  tools: ToolCount[];
  activity: DayActivity[];
  /** Tool results judged errors by {@link isErrorResult}. */
  errors: number;
  tokens: ModelTokens[];
  /** Files read or written, most touched first (at most 200). */
  files: FileTouch[];
  /** Earliest and latest operation time in ms, when any operation has one. */
  first_ms: number | null;
  last_ms: number | null;
}

const DAY_MS = 86_400_000;

function timeBound(value: string, end: boolean): number {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new RangeError(`Cannot read date "${value}": expected ISO 8601`);
  return end && /^\d{4}-\d{2}-\d{2}$/.test(value) ? t + DAY_MS - 1 : t;
}

function where(f: StatsFilter): { sql: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (f.session_id !== undefined) (parts.push("o.session_id = ?"), params.push(f.session_id));
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

type Row = Record<string, unknown>;

/** Reads payload heads from the database itself: enough for a store without pack files. */
function inlineHead(db: SqlDatabase): PayloadHead {
  return (sha256, maxBytes) => {
    const row = db.prepare(
      "SELECT substr(bytes, 1, ?) AS head FROM payloads WHERE sha256 = ? AND pack IS NULL",
    ).all(maxBytes, sha256)[0] as { head?: Uint8Array } | undefined;
    return row?.head instanceof Uint8Array ? row.head : null;
  };
}
const num = (v: unknown): number => (typeof v === "number" ? v : Number(v ?? 0));

/** Counts for the operations the filter selects. */
/** The first `maxBytes` bytes of a stored payload (the store's `payloadHead`). */
export type PayloadHead = (sha256: string, maxBytes: number) => Uint8Array | null;

const decoder = new TextDecoder();

export function computeStats(
  db: SqlDatabase,
  filter: StatsFilter = {},
  payloadHead: PayloadHead = inlineHead(db),
): Stats {
  const w = where(filter);
  const from = "FROM operations o JOIN sessions s ON s.id = o.session_id";

  const kinds = (db.prepare(
    `SELECT o.kind AS kind, count(*) AS count ${from} ${w.sql} GROUP BY o.kind ORDER BY count DESC`,
  ).all(...w.params) as Row[]).map((r) => ({ kind: String(r.kind), count: num(r.count) }));

  const totals = db.prepare(
    `SELECT count(*) AS ops, count(DISTINCT o.session_id) AS sessions, min(o.ts_ms) AS first,
       max(o.ts_ms) AS last ${from} ${w.sql}`,
  ).all(...w.params)[0] as Row;

  // Errors need the heuristic, which reads the opening of the result only where the recorded
  // flag does not settle it. 4 bytes per character covers any UTF-8 text.
  const headBytes = ERROR_SCAN_CHARS * 4;
  const toolWhere = w.sql ? `${w.sql} AND o.tool IS NOT NULL` : "WHERE o.tool IS NOT NULL";
  const toolRows = db.prepare(
    `SELECT o.tool AS tool, o.kind AS kind, o.is_error AS is_error, o.session_id AS sid,
       o.ts_ms AS ts,
       CASE WHEN o.is_error = 1 OR (o.is_error = 0 AND o.kind <> 'exec') THEN NULL
         ELSE json_extract(o.doc, '$.response') END AS response
     ${from} ${toolWhere}`,
  ).all(...w.params) as Row[];
  const headOf = (response: unknown): string | null => {
    if (typeof response !== "string") return null;
    const ref = JSON.parse(response) as { inline?: string; sha256?: string };
    if (typeof ref.inline === "string") return ref.inline.slice(0, ERROR_SCAN_CHARS);
    const bytes = typeof ref.sha256 === "string" ? payloadHead(ref.sha256, headBytes) : null;
    return bytes ? decoder.decode(bytes).slice(0, ERROR_SCAN_CHARS) : null;
  };

  const tools = new Map<string, ToolCount>();
  const errorsByDay = new Map<string, number>();
  let errors = 0;
  for (const r of toolRows) {
    const kind = String(r.kind) as OperationKind;
    const flag = r.is_error === null || r.is_error === undefined
      ? undefined
      : num(r.is_error) === 1;
    const failed = isErrorResult({ kind, is_error: flag }, headOf(r.response));
    const key = String(r.tool);
    const t = tools.get(key) ?? { tool: key, kind, count: 0, errors: 0 };
    t.count++;
    if (failed) {
      t.errors++;
      errors++;
      if (typeof r.ts === "number") {
        const day = new Date(r.ts).toISOString().slice(0, 10);
        errorsByDay.set(day, (errorsByDay.get(day) ?? 0) + 1);
      }
    }
    tools.set(key, t);
  }

  const activity = (db.prepare(
    `SELECT date(o.ts_ms / 1000, 'unixepoch') AS day, count(*) AS ops,
       count(DISTINCT o.session_id) AS sessions
     ${from} ${w.sql ? w.sql + " AND" : "WHERE"} o.ts_ms IS NOT NULL GROUP BY day ORDER BY day`,
  ).all(...w.params) as Row[]).map((r) => ({
    day: String(r.day),
    operations: num(r.ops),
    sessions: num(r.sessions),
    errors: errorsByDay.get(String(r.day)) ?? 0,
  }));

  const sw = sessionWhere(filter);
  const tokens = (db.prepare(
    `SELECT u.model AS model, sum(u.input) AS input, sum(u.output) AS output,
       sum(u.cache_read) AS cache_read, sum(u.cache_write) AS cache_write
     FROM usage u JOIN sessions s ON s.id = u.session_id ${sw.sql}
     GROUP BY u.model ORDER BY output + input DESC`,
  ).all(...sw.params) as Row[]).map((r) => ({
    model: String(r.model),
    input: num(r.input),
    output: num(r.output),
    cache_read: num(r.cache_read),
    cache_write: num(r.cache_write),
  }));

  const fileWhere = `${w.sql ? w.sql + " AND" : "WHERE"} o.target IS NOT NULL AND o.effect IN ` +
    `('fs_read', 'fs_write')`;
  const files = (db.prepare(
    `SELECT o.target AS path, sum(o.effect = 'fs_read') AS reads,
       sum(o.effect = 'fs_write') AS writes
     ${from} ${fileWhere} GROUP BY o.target ORDER BY count(*) DESC, o.target LIMIT 200`,
  ).all(...w.params) as Row[]).map((r) => ({
    path: String(r.path),
    reads: num(r.reads),
    writes: num(r.writes),
  }));

  return {
    sessions: num(totals.sessions),
    operations: num(totals.ops),
    kinds,
    tools: [...tools.values()].sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool)),
    activity,
    errors,
    tokens,
    files,
    first_ms: typeof totals.first === "number" ? totals.first : null,
    last_ms: typeof totals.last === "number" ? totals.last : null,
  };
}
