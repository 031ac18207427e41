/**
 * Canonical sessions written into the store (`chronicle import --canonical`), whole or a page
 * of operations at a time as their file is read: the session an export holds becomes the same
 * rows an import would have made, so the store reads it back byte for byte as the session it
 * was. A session that the local logs own is
 * left alone; one that is already stored exactly as given is not written at all.
 */
import {
  type CanonicalSession,
  ChronicleError,
  compareOrder,
  type OperationPage,
  type OperationRecord,
  type OrderKey,
  type StreamedSession,
  timelineOf,
} from "../model/mod.ts";
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
  /** The checksum of the `session.json` of what the store holds for the session now, or null. */
  storedSha: () => string | null;
  now?: () => Date;
}

/**
 * Stores a canonical session and its payloads (bytes by SHA-256), unless it is already stored
 * exactly so, the local logs own it, or it was forgotten here. The caller holds the transaction
 * (the store's `putCanonicalSession`).
 */
export function putCanonical(
  w: Writer,
  session: CanonicalSession,
  payloads: Map<string, Uint8Array>,
  options: CanonicalWriteOptions,
): CanonicalImportOutcome {
  const times = new Map<string, number>();
  for (const [id, op] of Object.entries(session.operations)) {
    if (op.ts_ms !== undefined) times.set(id, op.ts_ms);
  }
  const write = beginCanonical(w, { head: { ...session, operations: {} }, times }, options);
  if (typeof write === "string") return write;
  write.page({ operations: Object.entries(session.operations), payloads });
  return write.finish();
}

/** A canonical session being stored a page of operations at a time (`beginCanonical`). */
export interface CanonicalWrite {
  /** Stores a page of the session's operations and the payloads they name. */
  page(page: OperationPage): void;
  /** Stores the rest of the session once every page is in. */
  finish(): CanonicalImportOutcome;
}

/**
 * Begins storing a canonical session from its head and its operations' own times (a
 * `StreamedSession`'s): what it comes to when it is not written (as `putCanonical`), else
 * the writer its pages go to, in any order. The caller holds the transaction, from the first
 * page to `finish` (the store's `putCanonicalPages`).
 */
export function beginCanonical(
  w: Writer,
  session: Pick<StreamedSession, "head" | "times">,
  options: CanonicalWriteOptions,
): CanonicalImportOutcome | CanonicalWrite {
  const { head } = session;
  const id = head.session.id;
  let storedSha: string | null = null;
  const skip = canonicalSkip(w.sql, id, options.sessionSha256, () => {
    storedSha = options.storedSha();
    return storedSha;
  });
  if (skip) return skip;
  const stored = storedSha !== null;
  const places = placesOf(head, session.times);
  const now = (options.now?.() ?? new Date()).toISOString();
  const stamp = w.changes.next();
  // What the user marked (user_marks.ts) outlives the rows a newer export replaces.
  const marks = w.sql.stmt("SELECT user_title, starred_at FROM sessions WHERE id = ?").get(id) as
    | { user_title: string | null; starred_at: string | null }
    | undefined;
  if (stored) deleteSession(w.sql, id);
  const info = head.session;
  // (its number, `sessions.num`, which its operations name it by)
  const num = Number(
    w.sql.stmt(
      `INSERT INTO sessions (${SESSION_COLS}, user_title, starred_at)
       VALUES (${SESSION_PARAMS}, ?, ?)`,
    ).run(
      ...sessionRow(id, info, head.recording, head.extensions, now),
      marks?.user_title ?? null,
      marks?.starred_at ?? null,
    ).lastInsertRowid,
  );
  // each thread's row names the file its first operation was read from
  const firstOf = new Map<string, { seq: number; file: string }>();
  return {
    page({ operations, payloads }) {
      // Operations go in by the file their calls were read from, as an import files them.
      const byFile = new Map<string, OperationRecord[]>();
      for (const [opId, op] of operations) {
        const place = places.get(opId);
        if (!place) {
          throw new ChronicleError(
            "invalid_session",
            `operation ${opId} is not on the session's timeline`,
          );
        }
        const file = op.provenance.source_range.file;
        const list = byFile.get(file) ?? [];
        list.push({ id: opId, connection: place.connection, order: place.order, op });
        byFile.set(file, list);
        const first = firstOf.get(place.connection);
        if (!first || place.seq < first.seq) {
          firstOf.set(place.connection, { seq: place.seq, file });
        }
      }
      const unit = prepareUnit({
        mode: "full",
        deltas: [...byFile].map(([file, recs]) => ({
          session_id: id,
          file,
          info,
          primary: false,
          connections: [],
          operations: recs,
          usage: [],
          loss_windows: [],
          issues: [],
        })),
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
    },
    finish() {
      finishCanonical(w, head, { stamp, firstFile: firstOf, stored });
      w.sql.stmt(
        `INSERT INTO canonical_imports (session_id, session_sha256, imported_at) VALUES (?, ?, ?)
         ON CONFLICT(session_id) DO UPDATE SET session_sha256 = excluded.session_sha256,
           imported_at = excluded.imported_at`,
      ).run(id, options.sessionSha256, now);
      return "imported";
    },
  };
}

/** The rows of a canonical session but its operations', once they are all in. */
function finishCanonical(
  w: Writer,
  head: CanonicalSession,
  at: { stamp: number; firstFile: ReadonlyMap<string, { file: string }>; stored: boolean },
): void {
  const id = head.session.id;
  const conn = w.sql.stmt(
    "INSERT INTO connections (session_id, id, file, doc) VALUES (?, ?, ?, ?)",
  );
  for (const c of head.connections) {
    conn.run(id, c.id, at.firstFile.get(c.id)?.file ?? "", JSON.stringify(c));
  }
  const usage = w.sql.stmt(
    `INSERT INTO usage (session_id, key, file_id, model, input, output, cache_read, cache_write,
       ts_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
  );
  // Usage is kept per model as the session sums it. (An export's usage comes from no log of
  // this machine: the file "", as before.)
  const byModel = Object.entries(head.usage.by_model);
  const noFile = byModel.length ? opFileId(w.sql, id, "") : 0;
  byModel.forEach(([model, u], i) => {
    const key = `canonical:${String(i).padStart(6, "0")}`;
    usage.run(id, key, noFile, model, u.input, u.output, u.cache_read, u.cache_write);
  });
  const issue = w.sql.stmt(
    "INSERT INTO session_issues (session_id, file, epoch, doc) VALUES (?, ?, 0, ?)",
  );
  for (const i of head.issues) issue.run(id, i.file ?? "", JSON.stringify(i));
  const loss = w.sql.stmt("INSERT INTO loss_windows (session_id, file, doc) VALUES (?, ?, ?)");
  for (const l of head.provenance.loss_windows) loss.run(id, l.file, JSON.stringify(l));
  // The store keeps one checkpoint an epoch and orders epochs by (file, ordinal): a numbered
  // file keeps the exported order.
  const epoch = w.sql.stmt(
    `INSERT INTO epochs (session_id, file, ordinal, imported_at, checkpoint)
     VALUES (?, ?, ?, ?, ?)`,
  );
  head.provenance.epochs.forEach((e, i) => {
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
  if (at.stored) w.sql.stmt("UPDATE sessions SET reset_stamp = ? WHERE id = ?").run(at.stamp, id);
  w.changes.settle(at.stamp, [id]);
}

/** Where each operation of a canonical session goes: its thread, order key and place. */
interface Place {
  connection: string;
  order: OrderKey;
  seq: number;
}

/**
 * Each operation's place from the session's timeline: its order key is rebuilt so that the
 * store orders and offsets the operations exactly as the session does (the first of
 * {@link orderCandidates} that gives the timeline back).
 */
function placesOf(head: CanonicalSession, times: ReadonlyMap<string, number>): Map<string, Place> {
  const want = JSON.stringify(head.timeline);
  let keys: OrderKey[] = [];
  for (keys of orderCandidates(head, times)) {
    const sorted = head.timeline.map((t) => ({
      id: t.op,
      connection: t.connection,
      order: keys[t.seq],
    }))
      .sort((a, b) => compareOrder(a.order, b.order));
    if (JSON.stringify(timelineOf(sorted, head.session)) === want) break;
  }
  return new Map(
    head.timeline.map((t) => [t.op, { connection: t.connection, order: keys[t.seq], seq: t.seq }]),
  );
}

/**
 * Order keys that may reproduce the timeline, best first. Times are rebuilt from each step's
 * offset and an anchor (a step that states its own time, else the session's start); steps
 * before the first timed one keep no time, as an import leaves them. The last candidate only
 * keeps the order (times never decrease along the timeline).
 */
function orderCandidates(head: CanonicalSession, times: ReadonlyMap<string, number>): OrderKey[][] {
  const tl = head.timeline;
  const anchors: number[] = [];
  const timed = tl.find((t) => times.has(t.op));
  if (timed) anchors.push(times.get(timed.op)! - timed.offset_ns / 1e6);
  const started = head.session.started_at ? Date.parse(head.session.started_at) : NaN;
  if (!Number.isNaN(started)) anchors.push(started);
  if (!anchors.length) anchors.push(0);
  let untimed = 0;
  while (untimed < tl.length && tl[untimed].offset_ns === 0 && !times.has(tl[untimed].op)) {
    untimed++;
  }
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
