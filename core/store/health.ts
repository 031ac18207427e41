/**
 * The store's own check, as `chronicle doctor` runs it: SQLite's `PRAGMA quick_check`, and every
 * payload kept in a pack file read back and checked against its SHA-256 (a pack is a file the
 * store does not control; it can be cut short or changed under it).
 */
import { PAYLOAD_ROWS, type PayloadStore, SHA_HEX } from "./payloads.ts";
import type { Sql } from "./_sql.ts";
import type { StoreHealth } from "./types.ts";

/** At most this many bad payloads are named in the answer (the count is always exact). */
const NAMED_BAD = 20;

export function storeHealth(
  sql: Sql,
  payloads: PayloadStore,
  options: { verifyPacks?: boolean } = {},
): StoreHealth {
  const rows = sql.stmt("PRAGMA quick_check").all() as Record<string, unknown>[];
  const quick = rows.map((r) => String(Object.values(r)[0]));
  const packed = sql.count(`SELECT count(*) AS n FROM ${PAYLOAD_ROWS} WHERE frame IS NOT NULL`);
  const inline = sql.count(`SELECT count(*) AS n FROM ${PAYLOAD_ROWS} WHERE frame IS NULL`);
  const bad: string[] = [];
  let badCount = 0;
  let checked = 0;
  if (options.verifyPacks !== false) {
    const shas = sql.stmt(
      `SELECT ${SHA_HEX} FROM ${PAYLOAD_ROWS} p JOIN frames f ON f.id = p.frame
       ORDER BY f.pack, f.pack_offset`,
    )
      .all() as { sha256: string }[];
    for (const { sha256 } of shas) {
      checked++;
      if (payloads.bytes(sha256) === null) {
        badCount++;
        if (bad.length < NAMED_BAD) bad.push(sha256);
      }
    }
  }
  return {
    quick_check: quick.length === 1 && quick[0] === "ok" ? [] : quick,
    sessions: sql.count("SELECT count(*) AS n FROM sessions"),
    operations: sql.count("SELECT count(*) AS n FROM operations"),
    payloads: { inline, packed, checked, bad: badCount, bad_sha256: bad },
  };
}
