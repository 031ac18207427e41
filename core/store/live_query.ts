/**
 * The read side of change stamps (see change_stamps.ts): what a live view of a session asks
 * the store for. "The operations of session X written after cursor C", a batch at a time, in
 * canonical order and with their places in the timeline, so a view can put each one where it
 * belongs without reloading.
 */
import { type PayloadText, readViewDoc, type StoredOp, storedOpColumns } from "./prepare.ts";
import type { TimelineItem } from "./types.ts";
import { OP_ORDER, sessionNum, type Sql } from "./_sql.ts";

/**
 * A place in the stream of changes: everything up to stamp `stamp`, and within it up to
 * operation row `rowid` (`Infinity`: the whole stamp). Stamps come from the store's clock.
 */
export interface ChangeCursor {
  stamp: number;
  rowid: number;
}

/** A changed operation: a timeline item (`seq` over the whole session) and its place in its connection. */
export interface ChangedOperation extends TimelineItem {
  /** Position within its connection's timeline (what a sub-agent thread shows). */
  index: number;
}

export interface SessionChanges {
  /** Operations written after the cursor, in canonical order. */
  ops: ChangedOperation[];
  /** Where the next call resumes: after the last operation returned. */
  next: ChangeCursor;
  /** More changed operations wait beyond this batch. */
  more: boolean;
  /** The session's last change and last reset (a re-read that dropped operations). */
  stamp: number;
  reset_stamp: number;
  /** Operations in the session, and in each connection that has a changed one. */
  totals: { all: number; connections: Record<string, number> };
}

export interface SessionChangesOptions {
  after: ChangeCursor;
  /** Operations per batch. Default 500. */
  limit?: number;
  /** Each operation's own text only as far as this (`readViewDoc`). Default: whole. */
  textChars?: number;
}

type Key = { ts_ms: number | null; rank: number; line: number; block: number };

/** The store's clock: the stamp of the last unit applied. */
export function changeClock(sql: Sql): number {
  const row = sql.stmt("SELECT stamp FROM change_clock WHERE id = 1").get() as
    | { stamp: number }
    | undefined;
  return Number(row?.stamp ?? 0);
}

/** The files a session was imported from (its recording's source paths): what a live view watches. */
export function sessionSourcePaths(sql: Sql, sessionId: string): string[] {
  const row = sql.stmt("SELECT recording FROM sessions WHERE id = ?").get(sessionId) as
    | { recording: string }
    | undefined;
  if (!row) return [];
  const paths = (JSON.parse(row.recording) as { source_paths?: unknown }).source_paths;
  return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === "string") : [];
}

/** The session's last change stamp and reset stamp; null when there is no such session. */
function sessionStamps(
  sql: Sql,
  sessionId: string,
): { stamp: number; reset_stamp: number } | null {
  const row = sql.stmt("SELECT stamp, reset_stamp FROM sessions WHERE id = ?").get(sessionId) as
    | { stamp: number; reset_stamp: number }
    | undefined;
  return row ? { stamp: Number(row.stamp), reset_stamp: Number(row.reset_stamp) } : null;
}

/** Rows at or after `key` in canonical order (untimed operations sort first). */
function fromKey(key: Key): string {
  return key.ts_ms === null
    ? "(ts_ms IS NOT NULL OR (rank, line, block) >= (?, ?, ?))"
    : "(ts_ms, rank, line, block) >= (?, ?, ?, ?)";
}

function keyParams(key: Key): number[] {
  return key.ts_ms === null
    ? [key.rank, key.line, key.block]
    : [key.ts_ms, key.rank, key.line, key.block];
}

function compareKeys(a: Key, b: Key): number {
  if (a.ts_ms !== b.ts_ms) {
    if (a.ts_ms === null) return -1;
    if (b.ts_ms === null) return 1;
    return a.ts_ms - b.ts_ms;
  }
  return a.rank - b.rank || a.line - b.line || a.block - b.block;
}

/**
 * Positions of `ops` (sorted canonically) among `total` operations: the ids from the first of
 * them to the end, walked once. Changes are nearly always at the end, so the walk is short.
 */
function place(
  sql: Sql,
  query: { sessionId: string; connection?: string },
  ops: { op_id: string; key: Key }[],
): { total: number; at: Map<string, number> } {
  const conn = query.connection === undefined ? "" : "AND connection = ?";
  const base: (string | number)[] = query.connection === undefined
    ? [query.sessionId]
    : [query.sessionId, query.connection];
  const total = Number(
    (sql.stmt(`SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()} ${conn}`)
      .get(...base) as { n: number }).n,
  );
  const first = ops[0].key;
  const tail = sql.stmt(
    `SELECT op_id FROM operations WHERE session = ${sessionNum()} ${conn} AND ${
      fromKey(first)
    } ORDER BY ${OP_ORDER}`,
  ).all(...base, ...keyParams(first)) as { op_id: string }[];
  const wanted = new Set(ops.map((o) => o.op_id));
  const at = new Map<string, number>();
  const start = total - tail.length;
  tail.forEach((r, i) => {
    if (wanted.has(r.op_id)) at.set(r.op_id, start + i);
  });
  return { total, at };
}

/**
 * The operations of `sessionId` written after `options.after`, at most `limit` of them (in
 * the order they were written, then sorted canonically), with their positions. Null when the
 * session does not exist.
 */
export function sessionChanges(
  sql: Sql,
  sessionId: string,
  options: SessionChangesOptions,
  payloadText: PayloadText,
): SessionChanges | null {
  const stamps = sessionStamps(sql, sessionId);
  if (!stamps) return null;
  const limit = Math.max(1, options.limit ?? 500);
  const after = options.after;
  const rowid = Number.isFinite(after.rowid) ? after.rowid : Number.MAX_SAFE_INTEGER;
  const rows = sql.stmt(
    `SELECT rowid, stamp, op_id, connection, ts_ms, rank, line, block, ${storedOpColumns()}, kept
     FROM operations WHERE session = ${sessionNum()} AND (stamp, rowid) > (?, ?)
     ORDER BY stamp, rowid LIMIT ?`,
  ).all(sessionId, after.stamp, rowid, limit + 1) as unknown as ({
    rowid: number;
    stamp: number;
    op_id: string;
    connection: string;
    ts_ms: number | null;
    rank: number;
    line: number;
    block: number;
    kept: number | null;
  } & StoredOp)[];
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const last = rows[rows.length - 1];
  const next: ChangeCursor = !last
    ? after
    : more
    ? { stamp: Number(last.stamp), rowid: Number(last.rowid) }
    : { stamp: Number(last.stamp), rowid: Infinity };
  const totals = { all: 0, connections: {} as Record<string, number> };
  if (!rows.length) {
    return { ops: [], next, more, ...stamps, totals };
  }
  const keyed = rows
    .map((r) => ({ r, op_id: r.op_id, key: r as Key }))
    .sort((a, b) => compareKeys(a.key, b.key));
  const all = place(sql, { sessionId }, keyed);
  totals.all = all.total;
  const index = new Map<string, number>();
  for (const connection of new Set(keyed.map((k) => k.r.connection))) {
    const mine = keyed.filter((k) => k.r.connection === connection);
    const p = place(sql, { sessionId, connection }, mine);
    totals.connections[connection] = p.total;
    for (const [id, i] of p.at) index.set(id, i);
  }
  const start = (sql.stmt(`SELECT min(ts_ms) AS t FROM operations WHERE session = ${sessionNum()}`)
    .get(sessionId) as { t: number | null }).t;
  const ops = keyed.map(({ r }) => ({
    seq: all.at.get(r.op_id) ?? 0,
    index: index.get(r.op_id) ?? 0,
    op_id: r.op_id,
    connection: r.connection,
    ts_ms: r.ts_ms,
    offset_ns: r.ts_ms !== null && start !== null ? Math.round((r.ts_ms - start) * 1e6) : 0,
    ...readViewDoc(r, payloadText, options.textChars),
    ...(r.kept === 1 ? { kept: true as const } : {}),
  }));
  return { ops, next, more, ...stamps, totals };
}
