/**
 * SSE event ids of a live stream are change cursors: `S` is "everything through stamp S", and
 * `S.R` is "stamp S up to operation row R" (a batch that stopped inside one import's changes).
 * Stamps live in the store, so an id stays meaningful across a server restart, and a client
 * that sends `Last-Event-ID` resumes exactly after what it received.
 */
import type { ChangeCursor } from "../store/mod.ts";

export function formatEventId(c: ChangeCursor): string {
  return Number.isFinite(c.rowid) ? `${c.stamp}.${c.rowid}` : `${c.stamp}`;
}

/** The cursor an event id names; null for anything else (a client's garbage is not an error). */
export function parseEventId(id: string | null | undefined): ChangeCursor | null {
  const m = /^(\d{1,15})(?:\.(\d{1,15}))?$/.exec(id?.trim() ?? "");
  if (!m) return null;
  return { stamp: Number(m[1]), rowid: m[2] === undefined ? Infinity : Number(m[2]) };
}
