/**
 * Applying one unit's import result: its payloads, then each delta merged into its session
 * (info, connections, operations and their search text, usage, issues, loss windows, epochs),
 * then the unit's checkpoint. The caller holds the transaction.
 *
 * The archive keeps what it saw: a full re-read replaces what the file said before, so the
 * same bytes twice give identical rows, but an operation the file no longer holds (the log was
 * rewritten shorter, or replaced) stays, marked `kept`, as do a deleted file's operations
 * (`markUnitGone`). Forgetting them is the user's decision, never an import's.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import {
  type CanonicalSession,
  type Checkpoint,
  type Connection,
  mergeInfo,
  openingTitle,
  type SessionInfo,
  type SessionIssue,
  TITLE_OPENING_CHARS,
} from "../model/mod.ts";
import type { SourceUnit, UnitResult } from "../sources/types.ts";
import { VERSION } from "../version.ts";
import { slicedOn } from "../sources/results.ts";
import { queueForSearch, unqueue } from "./backlog.ts";
import type { ChangeStamps } from "./change_stamps.ts";
import type { PayloadStore } from "./payloads.ts";
import {
  COLUMN_FIELDS,
  opBody,
  type PackedPayloads,
  type PreparedDelta,
  type PreparedOp,
  type PreparedUnit,
  stepOf,
} from "./prepare.ts";
import { OP_ORDER, RowBatch, sessionNum, type Sql } from "./_sql.ts";
import { FILE_IS, opFileId } from "./op_files.ts";
import { dropSessionStats, refreshSessionStats } from "./stats_rollup.ts";
import { type AdmitOptions, admitted } from "./admit.ts";
import type { SourceRow } from "./types.ts";

/** `operations.kept` of a file being read again, until the read shows what it still holds. */
const PENDING = 2;

/** SQL: what an operations row did, whatever it was read from (prepare.ts). */
const STEP = stepOf();
/**
 * SQL: the same of an operation given as numbered parameters: its doc (?1), its columns'
 * values (?2...), then its order time.
 */
const STEP_GIVEN = stepOf(
  "?1",
  COLUMN_FIELDS.map((_, i) => `?${i + 2}`),
  `?${COLUMN_FIELDS.length + 2}`,
);
/** The next free parameter number after {@link STEP_GIVEN}'s. */
const AFTER_STEP_GIVEN = COLUMN_FIELDS.length + 3;

/** The import pipeline that wrote a recording: Chronicle's own version. */
export const PIPELINE_VERSION = VERSION;

/** What applying writes through: the connection, the payload store and the change stamps. */
export interface Writer {
  sql: Sql;
  payloads: PayloadStore;
  changes: ChangeStamps;
  /**
   * A bulk import: search texts go to the backlog, indexed after the pass (backlog.ts), and
   * the sessions' statistics wait in theirs (`refreshAggregates`).
   */
  deferSearch?: boolean;
}

/**
 * Every source unit's epoch and checkpoint, by path: what an import pass plans from; or only
 * those of `paths` (a live import of one log need not parse the 1,651 others of a 3 GB history).
 */
export function sourceCheckpoints(
  sql: Sql,
  paths?: readonly string[],
): Map<string, UnitCheckpoint> {
  const columns = "SELECT path, source, epoch, checkpoint, issues FROM sources";
  type Row = {
    path: string;
    source: string;
    epoch: number;
    checkpoint: string | null;
    issues: string | null;
  };
  const one = paths && sql.stmt(`${columns} WHERE path = ?`);
  const rows = one
    ? paths.flatMap((p) => (one.get(p) as Row | undefined) ?? [])
    : sql.stmt(columns).all() as Row[];
  return new Map(rows.map((r) => {
    const out: UnitCheckpoint = {
      source: r.source,
      epoch: Number(r.epoch),
      checkpoint: r.checkpoint ? JSON.parse(r.checkpoint) : null,
    };
    // most units have none: parse only what may hold an error
    if (r.issues && r.issues.includes('"error"')) {
      const failing = (JSON.parse(r.issues) as SessionIssue[]).filter((i) =>
        i.severity === "error"
      );
      if (failing.length) out.failing = failing;
    }
    return [r.path, out];
  }));
}

/** What an import pass plans a unit from. */
export interface UnitCheckpoint {
  source: string;
  epoch: number;
  checkpoint: Checkpoint | null;
  /** The unit's own errors from its last pass (corrupt, locked): still true while unchanged. */
  failing?: SessionIssue[];
}

/** The importer's state saved with a unit's checkpoint. */
export function sourceState(sql: Sql, path: string): unknown {
  const row = sql.stmt("SELECT state FROM source_states WHERE path = ?").get(path) as
    | { state: string | Uint8Array | null }
    | undefined;
  return readState(row?.state ?? null);
}

/**
 * The records a log gave before (`UnitResult.seen`), every key, or undefined when the store
 * holds none.
 */
export function sourceSeen(sql: Sql, path: string): Uint8Array | undefined {
  const rows = sql.stmt("SELECT keys FROM source_seen WHERE path = ?").all(path) as {
    keys: Uint8Array;
  }[];
  if (!rows.length) return undefined;
  if (rows.length === 1) return rows[0].keys;
  const all = new Uint8Array(rows.reduce((n, r) => n + r.keys.byteLength, 0));
  let at = 0;
  for (const r of rows) all.set(r.keys, at), at += r.keys.byteLength;
  return all;
}

/**
 * A log's seen records are kept in at most this many rows: a log appended to pass after pass
 * (a live session) would otherwise add a row each pass, all read by the next.
 */
const SEEN_ROWS = 32;

/** Stores what a pass read of a log's records (`UnitResult.seen`). */
function storeSeen(sql: Sql, path: string, seen: UnitResult["seen"]): void {
  if (!seen) return;
  if (seen.from === 0) sql.stmt("DELETE FROM source_seen WHERE path = ?").run(path);
  if (!seen.added.byteLength) return;
  sql.stmt("INSERT INTO source_seen (path, keys) VALUES (?, ?)").run(path, seen.added);
  if (sql.count("SELECT count(*) AS n FROM source_seen WHERE path = ?", path) > SEEN_ROWS) {
    const all = sourceSeen(sql, path)!;
    sql.stmt("DELETE FROM source_seen WHERE path = ?").run(path);
    sql.stmt("INSERT INTO source_seen (path, keys) VALUES (?, ?)").run(path, all);
  }
}

/**
 * An importer's state is JSON; a big one (Claude Code's record ids seen, 66 KB a session on
 * average) is kept as raw DEFLATE of it, a BLOB: 10.5 MB of states over a 300 MB corpus take
 * 3.7 MB. A state written before (TEXT) reads as it was.
 */
const STATE_DEFLATE_BYTES = 4096;

function storedState(state: unknown): string | Uint8Array | null {
  if (state === undefined) return null;
  const json = JSON.stringify(state);
  if (json.length < STATE_DEFLATE_BYTES) return json;
  const z = deflateRawSync(new TextEncoder().encode(json), { level: 1 });
  return new Uint8Array(z.buffer, z.byteOffset, z.byteLength);
}

function readState(stored: string | Uint8Array | null): unknown {
  if (stored === null || stored === "") return null;
  const json = typeof stored === "string"
    ? stored
    : new TextDecoder().decode(inflateRawSync(stored));
  return JSON.parse(json);
}

export function getSource(sql: Sql, path: string): SourceRow | null {
  const row = sql.stmt("SELECT * FROM sources WHERE path = ?").get(path) as
    | Record<string, string | number | Uint8Array | null>
    | undefined;
  if (!row) return null;
  return {
    path: String(row.path),
    source: String(row.source),
    epoch: Number(row.epoch),
    checkpoint: row.checkpoint ? JSON.parse(String(row.checkpoint)) : null,
    sessions: JSON.parse(String(row.sessions)),
    issues: JSON.parse(String(row.issues)),
  };
}

/**
 * Settles the sessions of a log whose read stopped after a slice (its next slice could not be
 * read or stored): their counts, first prompt and statistics are recomputed now, from the rows
 * the slices stored. The caller holds the transaction.
 */
export function settleSlices(w: Writer, path: string): void {
  for (const sid of getSource(w.sql, path)?.sessions ?? []) refreshAggregates(w, sid);
}

/**
 * How many operations the slices of one read of `path` wrote: the file's rows stamped after
 * `clock` (the store's clock before the first slice was stored), the rows it no longer holds
 * aside. Counted by the store, not by the import holding every op id a big log has given (at
 * 1 GiB, 176k ids were 20 MB of the writer's heap).
 */
export function slicedOperations(sql: Sql, path: string, clock: number): number {
  const count = sql.stmt(
    `SELECT count(*) AS n FROM operations
     WHERE session = ${sessionNum("?1")} AND stamp > ?2 AND ${FILE_IS("?1", "?3")}
       AND kept IS NULL`,
  );
  let n = 0;
  for (const sid of getSource(sql, path)?.sessions ?? []) {
    n += Number((count.get(sid, clock, path) as { n: number }).n);
  }
  return n;
}

/**
 * A source unit whose file is gone: its operations stay, marked kept (no longer on disk), and
 * its checkpoint is dropped, so the file coming back is read as new. Returns the sessions it
 * contributed to.
 */
export function markUnitGone(w: Writer, path: string): string[] {
  const prev = getSource(w.sql, path);
  if (!prev) return [];
  const stamp = w.changes.next();
  const mark = w.sql.stmt(
    `UPDATE operations SET kept = 1, stamp = ?1
     WHERE session = ${sessionNum("?2")} AND ${FILE_IS("?2", "?3")} AND kept IS NULL`,
  );
  const touched = new Set<string>();
  for (const sid of prev.sessions) {
    if (Number(mark.run(stamp, sid, path).changes) > 0) touched.add(sid);
  }
  w.sql.stmt("DELETE FROM sources WHERE path = ?").run(path);
  w.sql.stmt("DELETE FROM source_states WHERE path = ?").run(path);
  w.sql.stmt("DELETE FROM source_seen WHERE path = ?").run(path);
  w.changes.settle(stamp, touched);
  for (const sid of touched) refreshAggregates(w, sid);
  return prev.sessions;
}

/**
 * Applies one unit's import result (the caller holds the transaction). Importing the same bytes
 * twice gives identical rows; what a re-read file no longer holds is kept, marked (see the
 * head of this file). Deltas of forgotten sessions and excluded projects are not applied
 * (admit.ts). Returns the ids of the sessions it wrote to.
 */
export function applyUnit(
  w: Writer,
  unit: SourceUnit,
  given: PreparedUnit,
  epoch: number,
  admit: AdmitOptions = {},
): string[] {
  if (given.mode === "unchanged" && !given.issues.length) return [];
  // held: stored sessions of excluded projects, left as they are
  const { result, held } = admitted(w.sql, given, { ...admit, path: unit.path });
  {
    const prev = getSource(w.sql, unit.path);
    const touched = new Set<string>();
    const stamp = w.changes.next();
    const reread = new Map<string, UsageRow[]>();
    // A full read replaces what the file held of the sessions it holds, and its last part (a
    // read in one part is its own last) what it held of the sessions no part held: their rows
    // stay, kept. A big database comes in parts of whole sessions (partsBefore), each part
    // replacing its own; the sessions a read found unchanged (unchangedSessions) stay as
    // they are.
    const full = result.mode === "full";
    const last = !slicedOn(result.checkpoint);
    const holds = new Set(result.deltas.map((d) => d.session_id));
    const partsBefore = result.partsBefore ?? [];
    const heldBefore = new Set([...partsBefore, ...result.unchangedSessions ?? []]);
    const gone = (sid: string) => last && !holds.has(sid) && !heldBefore.has(sid);
    for (const sid of prev && full ? prev.sessions : []) {
      if (held.has(sid) || !(holds.has(sid) || gone(sid))) continue;
      w.changes.keep(sid, unit.path);
      reread.set(sid, replaceFileRows(w.sql, sid, unit.path));
      touched.add(sid);
    }
    w.payloads.write(result.payloads);
    const now = new Date().toISOString();
    for (const d of result.deltas) {
      applyDelta(w, d, result, epoch, now);
      touched.add(d.session_id);
    }
    for (const [sid, usage] of reread) settleReread(w.sql, sid, unit.path, stamp, usage);
    if (last && partsBefore.length && result.checkpoint) {
      // the chats of a read's earlier parts take its last part's checkpoint, as in one read
      const checkpoint = w.sql.stmt(
        "UPDATE epochs SET checkpoint = ? WHERE session_id = ? AND file = ? AND ordinal = ?",
      );
      const json = JSON.stringify(result.checkpoint);
      for (const sid of partsBefore) {
        if (!holds.has(sid)) checkpoint.run(json, sid, unit.path, epoch);
      }
    }
    w.changes.settle(stamp, touched);
    // A slice of a big log (more follows) leaves its sessions' counts, first prompt and
    // statistics to the log's last slice: recomputed from every row each slice, they cost the
    // session's size a slice (a 131 MiB session in 4 MiB slices spent 3 of its 10 s there).
    // The last slice settles every session the log holds, so a read that stopped half-way (an
    // import killed) is settled when the next import reads on. A database's parts hold whole
    // sessions: each part settles its own, so the list counts them as the read goes.
    const wholeSessions = result.checkpoint?.kind === "sqlite";
    if (last || wholeSessions) {
      const settle = slicedOn(prev?.checkpoint) && !wholeSessions
        ? new Set([...touched, ...(prev?.sessions ?? [])])
        : touched;
      for (const sid of settle) refreshAggregates(w, sid, w.deferSearch);
    }
    const sessions = new Set([...(prev?.sessions ?? []), ...holds]);
    if (full && prev) {
      // sessions the file no longer mentions lose nothing else; keep the list current
      for (const sid of prev.sessions) if (!held.has(sid) && gone(sid)) sessions.delete(sid);
    }
    w.sql.stmt(
      `INSERT INTO sources (path, source, epoch, checkpoint, sessions, issues, imported_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET epoch = excluded.epoch, checkpoint = excluded.checkpoint,
         sessions = excluded.sessions, issues = excluded.issues, imported_at = excluded.imported_at`,
    ).run(
      unit.path,
      unit.source,
      epoch,
      result.checkpoint ? JSON.stringify(result.checkpoint) : null,
      JSON.stringify([...sessions]),
      JSON.stringify(result.issues),
      now,
    );
    const state = storedState(result.state);
    if (state === null) {
      w.sql.stmt("DELETE FROM source_states WHERE path = ?").run(unit.path);
      w.sql.stmt("DELETE FROM source_seen WHERE path = ?").run(unit.path);
    } else {
      storeSeen(w.sql, unit.path, result.seen);
      w.sql.stmt(
        `INSERT INTO source_states (path, state) VALUES (?, ?)
         ON CONFLICT(path) DO UPDATE SET state = excluded.state`,
      ).run(unit.path, state);
    }
    return [...touched];
  }
}

interface UsageRow {
  key: string;
  model: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  ts_ms: number | null;
}

const USAGE_COLS = "key, model, input, output, cache_read, cache_write, ts_ms";

/** Two usage rows of one model response: the same tokens of the same model. */
const usageStep = (u: UsageRow) =>
  [u.model, u.input, u.output, u.cache_read, u.cache_write].join(" ");

/**
 * Before a full re-read: what the file said about the session is read again (issues, loss
 * windows, its epoch, its usage, returned for `settleReread`), while its operations and
 * connections stay, pending, until `settleReread` knows which of them the file still holds.
 */
function replaceFileRows(sql: Sql, sessionId: string, file: string): UsageRow[] {
  sql.stmt(
    `UPDATE operations SET kept = ${PENDING} WHERE session = ${sessionNum("?1")} AND ${FILE_IS()}`,
  ).run(
    sessionId,
    file,
  );
  const usage = sql.stmt(
    `SELECT ${USAGE_COLS} FROM usage WHERE session_id = ?1 AND ${FILE_IS()}`,
  ).all(sessionId, file) as unknown as UsageRow[];
  sql.stmt(`DELETE FROM usage WHERE session_id = ?1 AND ${FILE_IS()}`).run(sessionId, file);
  for (const table of ["session_issues", "loss_windows", "epochs"]) {
    sql.stmt(`DELETE FROM ${table} WHERE session_id = ? AND file = ?`).run(sessionId, file);
  }
  return usage;
}

/**
 * After a full re-read: an operation the file wrote again is current (the upsert cleared its
 * mark); one it no longer holds is kept, unless the file now holds the same step under another
 * id (a line-numbered id moves when lines before it go): then the old row is dropped. Same step
 * = the same canonical operation but for where it was read from (its provenance).
 */
function settleReread(
  sql: Sql,
  sessionId: string,
  file: string,
  stamp: number,
  usage: UsageRow[],
): void {
  settleUsage(sql, sessionId, file, usage);
  const step = (kept: string) =>
    sql.stmt(
      `SELECT rowid, ${STEP} AS step FROM operations
       WHERE session = ${sessionNum("?1")} AND ${FILE_IS()} AND kept ${kept}`,
    ).all(sessionId, file) as { rowid: number; step: string }[];
  const pending = step(`= ${PENDING}`);
  if (!pending.length) return;
  const current = new Set(step("IS NULL").map((r) => r.step));
  const delFts = sql.stmt("DELETE FROM operations_fts WHERE rowid = ?");
  const delOp = sql.stmt("DELETE FROM operations WHERE rowid = ?");
  for (const r of pending) {
    if (!current.has(r.step)) continue;
    delFts.run(r.rowid);
    delOp.run(r.rowid);
  }
  sql.stmt(
    `UPDATE operations SET kept = 1, stamp = ?1
     WHERE session = ${sessionNum("?2")} AND ${FILE_IS("?2", "?3")} AND kept = ${PENDING}`,
  ).run(stamp, sessionId, file);
  // A connection nothing points at any more goes with the file's last word on it.
  sql.stmt(
    `DELETE FROM connections WHERE session_id = ?1 AND file = ?2 AND id <> 'main'
       AND NOT EXISTS (SELECT 1 FROM operations o
         WHERE o.session = ${sessionNum("?1")} AND o.connection = id)`,
  ).run(sessionId, file);
}

/**
 * Token usage the re-read file no longer holds is put back (the tokens were spent), unless the
 * file holds the same response under another key (a line-numbered key moves with its line).
 */
function settleUsage(sql: Sql, sessionId: string, file: string, old: UsageRow[]): void {
  if (!old.length) return;
  const now = sql.stmt(
    `SELECT ${USAGE_COLS} FROM usage WHERE session_id = ?1 AND ${FILE_IS()}`,
  ).all(sessionId, file) as unknown as UsageRow[];
  const oldKeys = new Set(old.map((u) => u.key));
  const keys = new Set(now.map((u) => u.key));
  const moved = new Map<string, number>();
  for (const u of now) {
    if (!oldKeys.has(u.key)) moved.set(usageStep(u), (moved.get(usageStep(u)) ?? 0) + 1);
  }
  const put = sql.stmt(
    `INSERT INTO usage (session_id, file_id, ${USAGE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const fileId = opFileId(sql, sessionId, file);
  for (const u of old) {
    if (keys.has(u.key)) continue;
    const n = moved.get(usageStep(u)) ?? 0;
    if (n > 0) moved.set(usageStep(u), n - 1);
    else {
      put.run(
        sessionId,
        fileId,
        u.key,
        u.model,
        u.input,
        u.output,
        u.cache_read,
        u.cache_write,
        u.ts_ms,
      );
    }
  }
}

function applyDelta(
  w: Writer,
  d: PreparedDelta,
  result: PreparedUnit,
  epoch: number,
  now: string,
): void {
  const existing = w.sql.stmt("SELECT info, recording, extensions FROM sessions WHERE id = ?").get(
    d.session_id,
  ) as { info: string; recording: string; extensions: string } | undefined;
  let info: SessionInfo;
  let recording: CanonicalSession["recording"];
  let extensions: Record<string, unknown>;
  if (existing) {
    info = mergeInfo(JSON.parse(existing.info), d.info, d.primary);
    recording = JSON.parse(existing.recording);
    if (!recording.source_paths.includes(d.file)) {
      recording.source_paths = [...recording.source_paths, d.file].sort();
    }
    extensions = JSON.parse(existing.extensions);
  } else {
    info = { ...d.info, project: d.info.project ?? {} };
    recording = {
      id: `rec_${crypto.randomUUID()}`,
      source: d.info.source,
      source_paths: [d.file],
      pipeline_version: PIPELINE_VERSION,
    };
    extensions = {};
  }
  for (const [k, v] of Object.entries(d.extensions ?? {})) {
    extensions[k] = typeof v === "object" && v && !Array.isArray(v)
      ? { ...(extensions[k] as object), ...v }
      : v;
  }
  const { num: session } = w.sql.stmt(
    `INSERT INTO sessions (${SESSION_COLS}) VALUES (${SESSION_PARAMS})
     ON CONFLICT(id) DO UPDATE SET project_path = excluded.project_path, title = excluded.title,
       started_at = excluded.started_at, ended_at = excluded.ended_at, info = excluded.info,
       recording = excluded.recording, extensions = excluded.extensions,
       updated_at = excluded.updated_at
     RETURNING num`,
  ).get(...sessionRow(d.session_id, info, recording, extensions, now)) as { num: number };
  const upConn = w.sql.stmt(
    `INSERT INTO connections (session_id, id, file, doc) VALUES (?, ?, ?, ?)
     ON CONFLICT(session_id, id) DO UPDATE SET doc = excluded.doc, file = excluded.file`,
  );
  for (const c of d.connections) {
    upConn.run(d.session_id, c.id, d.file, JSON.stringify(mergeConnection(w.sql, d.session_id, c)));
  }
  // Plain inserts when nothing can conflict: a session the store does not hold has no rows
  // (deleteSession removes a session's operations with it), whether its file is new or not
  // (a database's later parts, a log whose other sessions are stored).
  const noConflict = !existing;
  const fileId = opFileId(w.sql, d.session_id, d.file);
  const row = { stamp: w.changes.current, fileId, session };
  const written: WrittenOp[] = noConflict
    ? insertOperations(w.sql, d.operations, row)
    : d.operations.flatMap((rec) => upsertOperation(w.sql, rec, row) ?? []);
  for (const rec of d.operations) {
    // The call names the sub-agent it spawned; the sub-agent's file may come before or after.
    if (rec.spawns) {
      w.sql.stmt(
        `UPDATE connections SET doc = json_set(doc, '$.parent_op', ?)
         WHERE session_id = ? AND id = ? AND json_extract(doc, '$.parent_op') IS NULL`,
      ).run(rec.id, d.session_id, rec.spawns);
    }
  }
  const usage = new RowBatch(
    w.sql,
    `INSERT INTO usage (session_id, key, file_id, model, input, output, cache_read, cache_write,
       ts_ms)`,
    "(?, ?, ?, ?, ?, ?, ?, ?, NULL)",
    `ON CONFLICT(session_id, key) DO UPDATE SET model = excluded.model, input = excluded.input,
       output = excluded.output, cache_read = excluded.cache_read,
       cache_write = excluded.cache_write`,
  );
  for (const u of d.usage) {
    const { input, output, cache_read, cache_write } = u.usage;
    usage.add(d.session_id, u.key, fileId, u.model, input, output, cache_read, cache_write);
  }
  usage.flush();
  const insIssue = w.sql.stmt(
    "INSERT INTO session_issues (session_id, file, epoch, doc) VALUES (?, ?, ?, ?)",
  );
  for (const i of d.issues) insIssue.run(d.session_id, d.file, epoch, JSON.stringify(i));
  const insLoss = w.sql.stmt("INSERT INTO loss_windows (session_id, file, doc) VALUES (?, ?, ?)");
  for (const l of d.loss_windows) insLoss.run(d.session_id, d.file, JSON.stringify(l));
  w.sql.stmt(
    `INSERT OR REPLACE INTO epochs (session_id, file, ordinal, imported_at, checkpoint)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(
    d.session_id,
    d.file,
    epoch,
    now,
    result.checkpoint ? JSON.stringify(result.checkpoint) : null,
  );
  indexOperations(w.sql, written, result.payloads, {
    defer: w.deferSearch,
    stored: (sha) => w.payloads.bytes(sha),
  });
}

/** Keeps what another file said about a connection (its parent) when this one did not. */
function mergeConnection(sql: Sql, sessionId: string, c: Connection): Connection {
  if (c.parent_op && c.agent_type) return c;
  const row = sql.stmt("SELECT doc FROM connections WHERE session_id = ? AND id = ?").get(
    sessionId,
    c.id,
  ) as { doc: string } | undefined;
  const old = row ? JSON.parse(row.doc) as Connection : undefined;
  let parent = c.parent_op ?? old?.parent_op;
  if (!parent && c.kind === "subagent") {
    // The spawning call may have been imported first, from the main file.
    const spawner = sql.stmt(
      `SELECT op_id FROM operations WHERE session = ${sessionNum()} AND kind = 'task'
         AND json_extract(doc, '$.spawns') = ? LIMIT 1`,
    ).get(sessionId, c.id) as { op_id: string } | undefined;
    parent = spawner?.op_id;
  }
  const merged: Connection = { ...c };
  if (parent) merged.parent_op = parent;
  const agentType = c.agent_type ?? old?.agent_type;
  if (agentType) merged.agent_type = agentType;
  return merged;
}

/** What writing an operation's row did to it, for its search text (see `indexOperations`). */
export interface WrittenOp {
  rowid: number;
  rec: PreparedOp;
  /** Its row existed with another document: the index holds an older text to replace. */
  replaced: boolean;
}

/** Where an operation's row goes: its session's number, its log's and the change stamp. */
export interface OpRow {
  stamp: number;
  fileId: number;
  /** The session's number (`sessions.num`: operations name their session by it). */
  session: number;
}

/** An operation's row's values, for {@link OP_COLS}. */
function opValues(rec: PreparedOp, { stamp, fileId, session }: OpRow) {
  return [
    session,
    rec.id,
    rec.connection,
    fileId,
    rec.order.ts_ms,
    rec.order.rank,
    rec.order.line,
    rec.order.block,
    rec.kind,
    rec.effect,
    rec.tool,
    rec.target,
    rec.is_error,
    rec.completeness,
    rec.model,
    rec.doc,
    stamp,
  ] as const;
}

/**
 * Writes the rows of operations nothing can conflict with (a session the store does not hold),
 * many to a statement (`RowBatch`), each with the rowid SQLite would give it (one past the
 * largest, in turn: the transaction is the only writer). A bulk import writes most of its rows
 * so.
 */
export function insertOperations(sql: Sql, recs: readonly PreparedOp[], row: OpRow): WrittenOp[] {
  const last = sql.stmt("SELECT coalesce(max(rowid), 0) AS n FROM operations").get() as {
    n: number;
  };
  const rows = new RowBatch(sql, `INSERT INTO operations (rowid, ${OP_COLS})`, `(?, ${OP_PARAMS})`);
  const written = recs.map((rec, i) => {
    const rowid = last.n + 1 + i;
    rows.add(rowid, ...opValues(rec, row));
    return { rowid, rec, replaced: false };
  });
  rows.flush();
  return written;
}

/**
 * Writes an operation's row, where another may be: a re-read, an appended log. Returns what
 * the search index needs to do about it: nothing (null) when the row was already stored with
 * the same document but its provenance (a re-read step: its search text, built from the
 * document and the payloads it names by hash, is what the index holds), or when a re-read file
 * holds the step only in part (its result is gone) and the stored whole one stays.
 */
export function upsertOperation(sql: Sql, rec: PreparedOp, place: OpRow): WrittenOp | null {
  const values = opValues(rec, place);
  const session = place.session;
  // The same step but for where it was read from (a re-read's epoch): the same search text.
  const before = sql.stmt(
    `SELECT ${STEP} = ${STEP_GIVEN} AS same FROM operations
     WHERE session = ?${AFTER_STEP_GIVEN} AND op_id = ?${AFTER_STEP_GIVEN + 1}`,
  ).get(rec.doc, ...COLUMN_FIELDS.map((f) => rec[f]), rec.order.ts_ms, session, rec.id) as
    | { same: number }
    | undefined;
  const row = sql.stmt(UPSERT_OP).get(...values) as { rowid: number } | undefined;
  if (!row || before?.same === 1) return null;
  return { rowid: row.rowid, rec, replaced: before !== undefined };
}

/**
 * Puts the search texts of operations just written in the index, replacing the older text of
 * a replaced one. Called once a delta's rows are written, never between them: FTS5 flushes the
 * terms it holds in memory to a new segment whenever a statement opens a statement journal (an
 * upsert does), so a text written right after its row made a segment per operation. With that,
 * and with every re-read step's text written again whether it changed or not, `import --full`
 * of an unchanged 300 MB history took 52 s against 9 s for its first import. Each text is
 * built from the payload bytes and dropped before the next (memory stays bounded). With
 * `defer` (a bulk import), the texts wait in the backlog instead (backlog.ts).
 */
export function indexOperations(
  sql: Sql,
  written: WrittenOp[],
  payloads: PackedPayloads,
  { defer = false, stored }: {
    defer?: boolean;
    /** A payload stored before this unit (a call a big log's earlier slice began). */
    stored: (sha256: string) => Uint8Array | null;
  },
): void {
  const del = sql.stmt("DELETE FROM operations_fts WHERE rowid = ?");
  for (const w of written) if (w.replaced) del.run(w.rowid);
  const rowids = written.map((w) => w.rowid);
  // An operation is in the index or in the backlog, never both (see backlog.ts).
  if (defer) return queueForSearch(sql, rowids);
  unqueue(sql, rowids);
  const insert = sql.stmt(INSERT_FTS);
  for (const { rowid, rec } of written) {
    const body = opBody(rec, payloads, stored);
    if (body) insert.run(rowid, body);
  }
}

/**
 * Recomputes what the session list shows of a session (its counts, first prompt) and its
 * statistics; `deferStats` (a bulk import) leaves the statistics to `settleStats`, after the
 * pass: its sessions are browsable sooner (on the 300 MB corpora the statistics took 0.3 s of
 * Claude Code's writer and 0.5 s of Codex's, every session recounted after each of its logs).
 */
export function refreshAggregates(
  w: Pick<Writer, "sql" | "payloads">,
  sessionId: string,
  deferStats = false,
): void {
  const sql = w.sql;
  sql.stmt(
    `UPDATE sessions SET
       op_count = (SELECT count(*) FROM operations WHERE session = num),
       error_count = (SELECT count(*) FROM operations WHERE session = num AND is_error = 1),
       kept_count = (SELECT count(*) FROM operations WHERE session = num AND kept = 1)
     WHERE id = ?1`,
  ).run(sessionId);
  // The first prompt the user typed, as a title reads it (a slash command's markup becomes
  // the command): core/model's promptTitle, so list, show, search and export agree. Its text
  // may be left to its request payload (prepare.ts, `"text": null`). Read its opening only,
  // unless the title needs more (`openingTitle`).
  const first = sql.stmt(
    `SELECT rowid, substr(json_extract(doc, '$.text'), 1, ${TITLE_OPENING_CHARS}) AS text,
       CASE WHEN json_type(doc, '$.text') = 'null'
         THEN json_extract(doc, '$.request.sha256') END AS input
     FROM operations
     WHERE session = ${sessionNum()} AND kind = 'prompt' AND connection = 'main'
       AND json_extract(doc, '$.injected') IS NULL
     ORDER BY ${OP_ORDER} LIMIT 1`,
  ).get(sessionId) as { rowid: number; text: unknown; input: unknown } | undefined;
  const sha = typeof first?.input === "string" ? first.input : null;
  const opening = sha !== null ? w.payloads.textOf(sha, TITLE_OPENING_CHARS) : first?.text;
  const whole = () =>
    sha !== null ? w.payloads.textOf(sha) : (sql.stmt(
      "SELECT json_extract(doc, '$.text') AS text FROM operations WHERE rowid = ?",
    ).get(first!.rowid) as { text: string }).text;
  const prompt = typeof opening === "string" ? openingTitle(opening, whole) : null;
  sql.stmt("UPDATE sessions SET first_prompt = ? WHERE id = ?").run(prompt, sessionId);
  if (deferStats) {
    sql.stmt("INSERT OR IGNORE INTO stats_backlog (session_id) VALUES (?)").run(sessionId);
  } else refreshSessionStats(sql, sessionId);
  const gone = sql.stmt(
    `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()}`,
  ).get(sessionId) as { n: number };
  const sources = sql.stmt(
    "SELECT count(*) AS n FROM epochs WHERE session_id = ?",
  ).get(sessionId) as { n: number };
  if (gone.n === 0 && sources.n === 0) deleteSession(sql, sessionId);
}

/**
 * Recomputes the statistics of up to `max` sessions a bulk import left waiting, in the
 * caller's transaction. Returns how many are still waiting.
 */
export function settleStats(sql: Sql, max: number): number {
  const ids = sql.stmt("SELECT session_id FROM stats_backlog LIMIT ?").all(max) as {
    session_id: string;
  }[];
  const done = sql.stmt("DELETE FROM stats_backlog WHERE session_id = ?");
  for (const { session_id } of ids) {
    refreshSessionStats(sql, session_id);
    done.run(session_id);
  }
  return ids.length < max ? 0 : sql.count("SELECT count(*) AS n FROM stats_backlog");
}

/** The columns of a session's row {@link sessionRow} gives, in its order. */
export const SESSION_COLS =
  "id, source, native_id, project_path, title, started_at, ended_at, info, recording, extensions, updated_at";
/** A parameter for each of {@link SESSION_COLS}. */
export const SESSION_PARAMS = SESSION_COLS.replace(/\w+/g, "?");

/** A session's row, for {@link SESSION_COLS}. */
export function sessionRow(
  id: string,
  info: SessionInfo,
  recording: CanonicalSession["recording"],
  extensions: Record<string, unknown>,
  now: string,
): (string | null)[] {
  return [
    id,
    info.source,
    info.native_id,
    info.project.path ?? null,
    info.title ?? null,
    info.started_at ?? null,
    info.ended_at ?? null,
    JSON.stringify(info),
    JSON.stringify(recording),
    JSON.stringify(extensions),
    now,
  ];
}

/** Deletes a session and every row it owns, its operations' search texts among them. */
export function deleteSession(sql: Sql, id: string): void {
  dropSessionStats(sql, id);
  sql.stmt("DELETE FROM stats_backlog WHERE session_id = ?").run(id);
  sql.stmt(
    `DELETE FROM operations_fts WHERE rowid IN
       (SELECT rowid FROM operations WHERE session = ${sessionNum()})`,
  ).run(id);
  sql.stmt(`DELETE FROM operations WHERE session = ${sessionNum()}`).run(id);
  for (
    const t of [
      "op_files",
      "connections",
      "usage",
      "session_issues",
      "loss_windows",
      "epochs",
    ]
  ) sql.stmt(`DELETE FROM ${t} WHERE session_id = ?`).run(id);
  sql.stmt("DELETE FROM sessions WHERE id = ?").run(id);
}

const OP_COLS =
  "session, op_id, connection, file_id, ts_ms, rank, line, block, kind, effect, tool, target, is_error, completeness, model, doc, stamp";
const OP_PARAMS = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";

// Built once: the statement cache is keyed by the SQL text, whose hash a constant keeps.
const UPSERT_OP = `INSERT INTO operations (${OP_COLS}) VALUES (${OP_PARAMS})
  ON CONFLICT(session, op_id) DO UPDATE SET connection = excluded.connection,
    file_id = excluded.file_id, ts_ms = excluded.ts_ms, rank = excluded.rank,
    line = excluded.line, block = excluded.block, kind = excluded.kind,
    effect = excluded.effect, tool = excluded.tool, target = excluded.target,
    is_error = excluded.is_error, completeness = excluded.completeness,
    model = excluded.model, doc = excluded.doc, stamp = excluded.stamp, kept = NULL
  WHERE NOT (operations.kept = ${PENDING} AND operations.completeness = 'complete'
    AND excluded.completeness <> 'complete')
  RETURNING rowid`;
const INSERT_FTS = "INSERT INTO operations_fts (rowid, body) VALUES (?, ?)";
