/**
 * Canonical sessions written into the store whole (`chronicle import --canonical`): the
 * session an export holds becomes the same rows an import would have made, so the store
 * reads it back byte for byte as the session it was. A session that the local logs own is
 * left alone; one that is already stored exactly as given is not written at all.
 */
import {
  assembleSession,
  type CanonicalSession,
  type OperationRecord,
  type OrderKey,
  type SessionDelta,
  type SessionParts,
  sha256Hex,
  type UsageEntry,
} from "../model/mod.ts";
import { sessionJson } from "../artifacts/mod.ts";
import { isForgotten } from "./admit.ts";
import {
  deleteSession,
  indexOperations,
  insertOperations,
  refreshAggregates,
  SESSION_COLS,
  SESSION_PARAMS,
  sessionRow,
  type Writer,
} from "./apply.ts";
import { opFileId } from "./op_files.ts";
import { prepareUnit } from "./prepare.ts";
import type { Sql } from "./_sql.ts";

export type CanonicalImportOutcome =
  /** Written: new here, or replacing an earlier canonical import that differed. */
  | "imported"
  /** Already stored exactly like this: nothing was written. */
  | "unchanged"
  /** The session is imported from local agent logs here: those stay the truth; not written. */
  | "kept_local"
  /** The user forgot this session here: never imported again (forget.ts). */
  | "forgotten";

/**
 * What storing an exported session would come to without writing it, when that needs neither
 * the session nor its payloads: "forgotten", "unchanged" (`storedSha`, the checksum of the
 * stored session's `session.json`, is the export's), "kept_local"; null when it would be
 * written. The same rules `putCanonical` applies in its transaction.
 */
export function canonicalSkip(
  sql: Sql,
  id: string,
  sessionSha256: string,
  storedSha: () => string | null,
): CanonicalImportOutcome | null {
  if (isForgotten(sql, id)) return "forgotten";
  const sha = storedSha();
  if (sha === null) return null;
  if (sha === sessionSha256) return "unchanged";
  return ownedByLocalLogs(sql, id) ? "kept_local" : null;
}

/** True when a local source unit (an agent's log) contributes to the session. */
function ownedByLocalLogs(sql: Sql, id: string): boolean {
  return sql.stmt(
    "SELECT 1 FROM sources, json_each(sources.sessions) WHERE json_each.value = ? LIMIT 1",
  ).get(id) !== undefined;
}

export interface CanonicalWriteOptions {
  /** The checksum of the session's `session.json`, as its manifest states it. */
  sessionSha256: string;
  /** What the store holds for this session now (its `loadSession`), or null. */
  stored: CanonicalSession | null;
  now?: () => Date;
}

/**
 * Stores a canonical session and its payloads (bytes by SHA-256), unless it is already stored
 * exactly so, the local logs own it, or it was forgotten here. The caller holds the transaction (the store's
 * `putCanonicalSession`).
 */
export function putCanonical(
  w: Writer,
  session: CanonicalSession,
  payloads: Map<string, Uint8Array>,
  options: CanonicalWriteOptions,
): CanonicalImportOutcome {
  const id = session.session.id;
  const { stored } = options;
  const skip = canonicalSkip(
    w.sql,
    id,
    options.sessionSha256,
    () => stored && sha256Hex(sessionJson(stored)),
  );
  if (skip) return skip;
  const parts = partsOf(session);
  const now = (options.now?.() ?? new Date()).toISOString();
  const stamp = w.changes.next();
  // What the user marked (user_marks.ts) outlives the rows a newer export replaces.
  const marks = w.sql.stmt("SELECT user_title, starred_at FROM sessions WHERE id = ?").get(id) as
    | { user_title: string | null; starred_at: string | null }
    | undefined;
  if (stored) deleteSession(w.sql, id);
  const info = session.session;
  // (its number, `sessions.num`, which its operations name it by)
  const num = Number(
    w.sql.stmt(
      `INSERT INTO sessions (${SESSION_COLS}, user_title, starred_at)
       VALUES (${SESSION_PARAMS}, ?, ?)`,
    ).run(
      ...sessionRow(id, info, session.recording, session.extensions, now),
      marks?.user_title ?? null,
      marks?.starred_at ?? null,
    ).lastInsertRowid,
  );
  // Operations go in by the file their calls were read from, as an import files them.
  const byFile = new Map<string, OperationRecord[]>();
  for (const rec of parts.operations) {
    const file = rec.op.provenance.source_range.file;
    const list = byFile.get(file) ?? [];
    list.push(rec);
    byFile.set(file, list);
  }
  const deltas: SessionDelta[] = [...byFile].map(([file, operations]) => ({
    session_id: id,
    file,
    info,
    primary: false,
    connections: [],
    operations,
    usage: [],
    loss_windows: [],
    issues: [],
  }));
  const unit = prepareUnit({
    mode: "full",
    deltas,
    checkpoint: null,
    state: null,
    issues: [],
    payloads,
    bytesRead: 0,
  });
  w.payloads.write(unit.payloads);
  for (const d of unit.deltas) {
    const fileId = opFileId(w.sql, d.session_id, d.file);
    const written = insertOperations(w.sql, d.operations, { stamp, fileId, session: num });
    indexOperations(w.sql, written, unit.payloads, { stored: (sha) => w.payloads.bytes(sha) });
  }
  const firstFile = new Map<string, string>();
  for (const rec of parts.operations) {
    if (!firstFile.has(rec.connection)) {
      firstFile.set(rec.connection, rec.op.provenance.source_range.file);
    }
  }
  const conn = w.sql.stmt(
    "INSERT INTO connections (session_id, id, file, doc) VALUES (?, ?, ?, ?)",
  );
  for (const c of session.connections) {
    conn.run(id, c.id, firstFile.get(c.id) ?? "", JSON.stringify(c));
  }
  const usage = w.sql.stmt(
    `INSERT INTO usage (session_id, key, file_id, model, input, output, cache_read, cache_write,
       ts_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
  );
  // (an export's usage comes from no log of this machine: the file "", as before)
  const noFile = parts.usage.length ? opFileId(w.sql, id, "") : 0;
  for (const u of parts.usage) {
    usage.run(
      id,
      u.key,
      noFile,
      u.model,
      u.usage.input,
      u.usage.output,
      u.usage.cache_read,
      u.usage.cache_write,
    );
  }
  const issue = w.sql.stmt(
    "INSERT INTO session_issues (session_id, file, epoch, doc) VALUES (?, ?, 0, ?)",
  );
  for (const i of parts.issues) issue.run(id, i.file ?? "", JSON.stringify(i));
  const loss = w.sql.stmt("INSERT INTO loss_windows (session_id, file, doc) VALUES (?, ?, ?)");
  for (const l of parts.loss_windows) loss.run(id, l.file, JSON.stringify(l));
  // The store keeps one checkpoint an epoch and orders epochs by (file, ordinal): a numbered
  // file keeps the exported order.
  const epoch = w.sql.stmt(
    `INSERT INTO epochs (session_id, file, ordinal, imported_at, checkpoint)
     VALUES (?, ?, ?, ?, ?)`,
  );
  parts.epochs.forEach((e, i) => {
    const file = `canonical:${String(i).padStart(6, "0")}`;
    const checkpoints = e.checkpoints.length ? e.checkpoints : [null];
    checkpoints.forEach((cp, k) => {
      epoch.run(
        id,
        k ? `${file}.${k}` : file,
        e.ordinal,
        e.imported_at,
        cp ? JSON.stringify(cp) : null,
      );
    });
  });
  refreshAggregates(w, id);
  // A live view of a replaced session reloads it.
  if (stored) w.sql.stmt("UPDATE sessions SET reset_stamp = ? WHERE id = ?").run(stamp, id);
  w.changes.settle(stamp, [id]);
  w.sql.stmt(
    `INSERT INTO canonical_imports (session_id, session_sha256, imported_at) VALUES (?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET session_sha256 = excluded.session_sha256,
       imported_at = excluded.imported_at`,
  ).run(id, options.sessionSha256, now);
  return "imported";
}

/**
 * The parts the store keeps for a canonical session. Usage is kept per model as the session
 * sums it; each operation's order key is rebuilt from the timeline so the store orders and
 * offsets the operations exactly as the session does.
 */
export function partsOf(session: CanonicalSession): SessionParts {
  const usage: UsageEntry[] = Object.entries(session.usage.by_model).map(([model, u], i) => ({
    key: `canonical:${String(i).padStart(6, "0")}`,
    model,
    usage: { ...u },
  }));
  const base: Omit<SessionParts, "operations"> = {
    info: session.session,
    recording: session.recording,
    connections: session.connections,
    usage,
    epochs: session.provenance.epochs,
    loss_windows: session.provenance.loss_windows,
    issues: session.issues,
    extensions: session.extensions,
  };
  const want = JSON.stringify(session.timeline);
  let parts: SessionParts | null = null;
  for (const keys of orderCandidates(session)) {
    parts = {
      ...base,
      operations: session.timeline.map((t) => ({
        id: t.op,
        connection: t.connection,
        order: keys[t.seq],
        op: session.operations[t.op],
      })),
    };
    if (JSON.stringify(assembleSession(parts).timeline) === want) break;
  }
  return parts!;
}

/**
 * Order keys that may reproduce the timeline, best first. Times are rebuilt from each step's
 * offset and an anchor (a step that states its own time, else the session's start); steps
 * before the first timed one keep no time, as an import leaves them. The last candidate only
 * keeps the order (times never decrease along the timeline).
 */
function orderCandidates(session: CanonicalSession): OrderKey[][] {
  const tl = session.timeline;
  const anchors: number[] = [];
  const timed = tl.find((t) => session.operations[t.op].ts_ms !== undefined);
  if (timed) anchors.push(session.operations[timed.op].ts_ms! - timed.offset_ns / 1e6);
  const started = session.session.started_at ? Date.parse(session.session.started_at) : NaN;
  if (!Number.isNaN(started)) anchors.push(started);
  if (!anchors.length) anchors.push(0);
  let untimed = 0;
  while (
    untimed < tl.length && tl[untimed].offset_ns === 0 &&
    session.operations[tl[untimed].op].ts_ms === undefined
  ) untimed++;
  const key = (ts: number | null, seq: number): OrderKey => ({
    ts_ms: ts,
    rank: 0,
    line: seq,
    block: 0,
  });
  const out: OrderKey[][] = [];
  for (const s of anchors) {
    out.push(tl.map((t, i) => key(i < untimed ? null : s + t.offset_ns / 1e6, t.seq)));
    out.push(tl.map((t) => key(s + t.offset_ns / 1e6, t.seq)));
  }
  let last = -Infinity;
  out.push(tl.map((t) => {
    last = Math.max(last, anchors[0] + t.offset_ns / 1e6);
    return key(last, t.seq);
  }));
  return out;
}
