/**
 * Forgetting sessions (table `forgotten`, migration 12). A forgotten session is deleted with
 * everything it owns: its operations and their search rows, connections, usage, issues, loss
 * windows, epochs, statistics (the rollup drops with them), shares, its canonical import, its
 * place in the source units' session lists, and every payload no remaining operation refers to.
 * Its id stays in `forgotten`, so no import brings it back: `admitted` drops its deltas when a
 * unit is applied (admit.ts), and a canonical import of it is refused. Giving the space back to the disk
 * (packs, database pages) is compact.ts's, after the commit.
 */
import { deleteSession } from "./apply.ts";
import { PAYLOAD_ROWS, PAYLOAD_TABLES, SHA_HEX } from "./payloads.ts";
import { likePrefix, sessionNum, type Sql } from "./_sql.ts";
import type { ForgottenSession } from "./types.ts";

/** Where a deleted payload's bytes were in a pack: to scrub, or to let compaction drop. */
export interface DeadRange {
  pack: number;
  offset: number;
  length: number;
}

/** What forgetting removed from the rows (the caller holds the transaction). */
export interface ForgetRows {
  sessions: (ForgottenSession & { operations: number })[];
  operations: number;
  /** Payloads no remaining operation refers to, deleted; their size (uncompressed). */
  payloads: number;
  payload_bytes: number;
  shares: number;
  /** The places in packs of the frames that lose payloads: each goes whole. */
  dead: DeadRange[];
  /**
   * Payloads that stay in a frame with payloads that go: the store writes them again elsewhere
   * (`PayloadStore.rewrite`) before the frame's bytes are scrubbed.
   */
  rewrite: string[];
  /** Those frames' rows, to delete once what stays of them is written elsewhere (`dropFrames`). */
  frames: number[];
}

/** A payload reference in an operation's JSON (request, response, or inside extensions). */
const HASH_REF = /"sha256":"([0-9a-f]{64})"/g;
/** Operations that may hold one: the rest are skipped without parsing. */
const HAS_REF = `instr(doc, '"sha256":"') > 0`;

/** The ids of the sessions in a project folder or below it, as `--project` filters. */
export function projectSessionIds(sql: Sql, project: string): string[] {
  const p = project.replace(/\/+$/, "") || "/";
  const rows = sql.stmt(
    `SELECT id FROM sessions WHERE project_path = ? OR project_path LIKE ? ESCAPE '\\'
     ORDER BY started_at, id`,
  ).all(p, likePrefix(p === "/" ? "/" : p + "/")) as { id: string }[];
  return rows.map((r) => r.id);
}

/** Every forgotten session, the last forgotten first. */
export function forgottenSessions(sql: Sql): ForgottenSession[] {
  return (sql.stmt(
    `SELECT session_id AS id, source, project_path, title, forgotten_at FROM forgotten
     ORDER BY forgotten_at DESC, session_id`,
  ).all() as unknown as ForgottenSession[]).map((r) => ({ ...r }));
}

/** The longest title kept for a forgotten session (enough to recognise it in a list). */
const TITLE_KEPT = 200;

/**
 * Deletes the sessions `ids` (full ids, all stored) with everything they own and records them
 * as forgotten. The caller holds the transaction; nothing reaches the disk's free space yet.
 */
export function forgetRows(sql: Sql, ids: readonly string[], now: string): ForgetRows {
  const out: ForgetRows = {
    sessions: [],
    operations: 0,
    payloads: 0,
    payload_bytes: 0,
    shares: 0,
    dead: [],
    rewrite: [],
    frames: [],
  };
  const candidates = new Set<string>();
  const gone = new Set<string>();
  for (const id of ids) {
    if (gone.has(id)) continue;
    const s = sql.stmt(
      `SELECT id, source, project_path, coalesce(user_title, title) AS title, op_count
       FROM sessions WHERE id = ?`,
    ).get(id) as
      | { id: string; source: string; project_path: string | null; title: string | null }
      | undefined;
    if (!s) continue;
    gone.add(id);
    for (
      const row of sql
        .stmt(`SELECT doc FROM operations WHERE session = ${sessionNum()} AND ${HAS_REF}`)
        .iterate(id)
    ) {
      for (const m of String((row as { doc: string }).doc).matchAll(HASH_REF)) {
        candidates.add(m[1]);
      }
    }
    const operations = sql.count(
      `SELECT count(*) AS n FROM operations WHERE session = ${sessionNum()}`,
      id,
    );
    const title = s.title ? s.title.slice(0, TITLE_KEPT) : null;
    sql.stmt(
      `INSERT INTO forgotten (session_id, source, project_path, title, forgotten_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(session_id) DO UPDATE SET forgotten_at = excluded.forgotten_at`,
    ).run(id, s.source, s.project_path, title, now);
    deleteSession(sql, id);
    out.shares += Number(sql.stmt("DELETE FROM shares WHERE session_id = ?").run(id).changes);
    sql.stmt("DELETE FROM canonical_imports WHERE session_id = ?").run(id);
    out.operations += operations;
    out.sessions.push({
      id,
      source: s.source,
      project_path: s.project_path,
      title,
      forgotten_at: now,
      operations,
    });
  }
  if (!gone.size) return out;
  // The units that fed them no longer name them (their checkpoints stay: nothing is read again).
  const sources = sql.stmt("SELECT path, sessions FROM sources").all() as {
    path: string;
    sessions: string;
  }[];
  const update = sql.stmt("UPDATE sources SET sessions = ? WHERE path = ?");
  for (const src of sources) {
    const list = JSON.parse(src.sessions) as string[];
    const kept = list.filter((sid) => !gone.has(sid));
    if (kept.length !== list.length) update.run(JSON.stringify(kept), src.path);
  }
  // A payload another session refers to stays: one pass over the operations that hold refs,
  // ending as soon as every candidate is known to be shared.
  if (candidates.size) {
    for (const row of sql.stmt(`SELECT doc FROM operations WHERE ${HAS_REF}`).iterate()) {
      for (const m of String((row as { doc: string }).doc).matchAll(HASH_REF)) {
        candidates.delete(m[1]);
      }
      if (!candidates.size) break;
    }
  }
  // From both tables: a bulk import gathers its rows apart until it merges them (and one
  // killed before that left them there), and another process may have stored the same payload
  // in the big table meanwhile; a row left in either would come back.
  const deletes = PAYLOAD_TABLES.map((table) =>
    sql.stmt(`DELETE FROM ${table} WHERE sha256 = unhex(?) RETURNING size, frame`)
  );
  const frames = new Set<number>();
  for (const sha of candidates) {
    let found = false;
    for (const del of deletes) {
      const r = del.get(sha) as { size: number; frame: number | null } | undefined;
      if (!r) continue;
      if (!found) {
        out.payloads++;
        out.payload_bytes += Number(r.size);
      }
      found = true;
      if (r.frame !== null) frames.add(Number(r.frame));
    }
  }
  if (frames.size) {
    out.frames = [...frames];
    const list = JSON.stringify(out.frames);
    for (
      const r of sql.stmt(
        "SELECT pack, pack_offset, stored FROM frames WHERE id IN (SELECT value FROM json_each(?))",
      ).all(list) as { pack: number; pack_offset: number; stored: number }[]
    ) {
      out.dead.push({
        pack: Number(r.pack),
        offset: Number(r.pack_offset),
        length: Number(r.stored),
      });
    }
    // One pass over the packed payloads: those that stay in a frame that loses others.
    const staying = sql.stmt(
      `SELECT ${SHA_HEX} FROM ${PAYLOAD_ROWS} WHERE frame IN (SELECT value FROM json_each(?))`,
    );
    for (const r of staying.iterate(list) as Iterable<{ sha256: string }>) {
      out.rewrite.push(r.sha256);
    }
  }
  return out;
}
