/**
 * Giving space back after a forget (forget.ts deletes the rows; this runs after the commit).
 *
 * - Packs: a pack whose bytes are now mostly dead is compacted: its live payloads are copied
 *   into a new pack numbered after every existing one, their rows repointed and the new pack
 *   flushed in ONE transaction, and only after that commit is the old file removed. A crash
 *   before the commit leaves unreferenced bytes in the new pack (wasted space, found dead and
 *   compacted next time); a crash after it leaves an old file no row refers to (removed next
 *   time). No moment has a live payload without its bytes. Writers append to the last pack only
 *   (payloads.ts), so nobody appends to a pack being removed, and pack numbers are never used
 *   twice: an empty pack keeps the number when the last one goes with nothing to copy.
 * - The packs that stay: the deleted payloads' bytes are overwritten with zeros, so a forgotten
 *   session's outputs are not left on the disk (the space comes back when the pack is compacted).
 * - The database: VACUUM where Deno lets SQLite run it, else an incremental vacuum (stores are
 *   made with `auto_vacuum = INCREMENTAL`), then the write-ahead log checkpointed and
 *   truncated, so freed pages, and the deleted text in them, leave the file (`reclaimPages`).
 */
import { PACK_WRITE_SLICE } from "./packs.ts";
import type { PayloadStore } from "./payloads.ts";
import type { DeadRange } from "./forget.ts";
import { isBusy, type Sql } from "./_sql.ts";

/** A pack is compacted once at least this share of its bytes is dead. */
export const COMPACT_DEAD_SHARE = 0.5;

/** The bytes of every pack that exists. */
export function packBytes(payloads: PayloadStore): number {
  const packs = payloads.packs;
  return packs ? packs.list().reduce((n, p) => n + packs.size(p), 0) : 0;
}

/**
 * Copies the live payloads of mostly dead packs into new packs and repoints their rows. Runs
 * inside the caller's transaction (flushing what it wrote before returning); returns the packs
 * to remove once that transaction has committed.
 */
export function compactPacks(
  sql: Sql,
  payloads: PayloadStore,
  deadShare = COMPACT_DEAD_SHARE,
): number[] {
  const packs = payloads.packs;
  if (!packs) return [];
  const files = packs.list();
  if (!files.length) return [];
  const live = new Map<number, number>();
  for (
    const r of sql.stmt("SELECT pack, sum(stored) AS live FROM frames GROUP BY pack").all() as {
      pack: number;
      live: number;
    }[]
  ) live.set(Number(r.pack), Number(r.live));
  const victims = files.filter((n) => {
    const size = packs.size(n);
    const dead = size - (live.get(n) ?? 0);
    return size > 0 && dead > 0 && dead >= deadShare * size;
  });
  if (!victims.length) return [];
  let target = files.at(-1)! + 1;
  let end = 0;
  const written = new Set<number>();
  let batch: Uint8Array[] = [];
  let batchAt = 0;
  let batchSize = 0;
  const flush = () => {
    if (!batchSize) return;
    const out = new Uint8Array(batchSize);
    for (let k = 0, o = 0; k < batch.length; o += batch[k++].byteLength) out.set(batch[k], o);
    packs.write(target, batchAt, out);
    written.add(target);
    batch = [];
    batchSize = 0;
  };
  // A frame is copied once, whatever number of payloads it holds: they name it, not its place.
  const move = sql.stmt("UPDATE frames SET pack = ?, pack_offset = ? WHERE id = ?");
  const rows = sql.stmt(
    `SELECT id, pack, pack_offset, stored FROM frames
     WHERE pack IN (${victims.map(() => "?").join(", ")}) ORDER BY pack, pack_offset`,
  ).all(...victims) as { id: number; pack: number; pack_offset: number; stored: number }[];
  for (const r of rows) {
    const length = Number(r.stored);
    const bytes = packs.read(Number(r.pack), Number(r.pack_offset), length);
    if (bytes.byteLength !== length) continue; // lost already (a pack cut short): left as it is
    if (end > 0 && end + length > payloads.packLimit) {
      flush();
      target++;
      end = 0;
    }
    if (batchSize + length > PACK_WRITE_SLICE) flush();
    if (!batchSize) batchAt = end;
    batch.push(bytes);
    batchSize += length;
    move.run(target, end, r.id);
    end += length;
  }
  flush();
  // The last pack going with nothing to copy: an empty one keeps its number from coming back.
  if (!written.size && victims.includes(files.at(-1)!)) {
    packs.write(target, 0, new Uint8Array(0));
    written.add(target);
  }
  for (const n of written) packs.sync(n);
  return victims;
}

/** A run of zeros to overwrite dead bytes with. */
const ZEROS = new Uint8Array(1 << 20);

/**
 * Overwrites the dead ranges with zeros in the packs that still exist (never creating one),
 * then flushes them. Returns the bytes overwritten.
 */
export function scrubDead(payloads: PayloadStore, dead: readonly DeadRange[]): number {
  const packs = payloads.packs;
  if (!packs || !dead.length) return 0;
  const present = new Set(packs.list());
  const touched = new Set<number>();
  let bytes = 0;
  for (const d of dead) {
    if (!present.has(d.pack) || d.length <= 0) continue;
    // never past the end: a pack cut short is not lengthened
    const length = Math.min(d.length, packs.size(d.pack) - d.offset);
    for (let done = 0; done < length;) {
      const n = Math.min(ZEROS.byteLength, length - done);
      packs.write(d.pack, d.offset + done, ZEROS.subarray(0, n));
      done += n;
    }
    if (length > 0) {
      bytes += length;
      touched.add(d.pack);
    }
  }
  for (const n of touched) packs.sync(n);
  return bytes;
}

/** The database's size as its pages count it. */
export function databaseBytes(sql: Sql): number {
  const pages = sql.stmt("PRAGMA page_count").get() as { page_count: number };
  const size = sql.stmt("PRAGMA page_size").get() as { page_size: number };
  return Number(pages.page_count) * Number(size.page_size);
}

/** How the database's freed pages went back to the disk (see `reclaimPages`). */
export type PagesReclaimed = "vacuum" | "incremental" | "none";

/**
 * Gives the database's free pages back to the disk, then truncates the write-ahead log.
 *
 * - In a store made with `auto_vacuum = INCREMENTAL` (every store this version creates),
 *   `PRAGMA incremental_vacuum`: the free pages move to the end of the file and are cut off,
 *   at a cost in proportion to what was freed.
 * - Else VACUUM, when SQLite may run it here: Deno allows the ATTACH it needs (its temporary
 *   copy) only to a process with every permission, which Chronicle's own tasks never have. It
 *   also makes the store incremental from then on (`ChronicleStore.open` asks for it). Its copy
 *   goes to a temporary file, not memory; changing `temp_store` drops temporary tables, so
 *   `restoreTemp` makes the store's own again.
 * - Else (a store made before this version) the pages stay free, their content zeroed
 *   (`secure_delete` during the forget), and later imports fill them before the file grows.
 *
 * Another writer keeping it waiting past the busy timeout gives it up the same way; the next
 * forget tries again. Outside any transaction.
 */
export function reclaimPages(
  sql: Sql,
  restoreTemp: () => void,
): { pages: PagesReclaimed; walTruncated: boolean } {
  let pages: PagesReclaimed = "none";
  const gaveUp = (e: unknown) => {
    if (!isBusy(e) && !/attached databases/i.test((e as Error).message)) throw e;
  };
  if (autoVacuum(sql) === INCREMENTAL) {
    try {
      // one row a page: stepped to the end, or only the first page goes
      sql.db.prepare("PRAGMA incremental_vacuum").all();
      pages = "incremental";
    } catch (e) {
      gaveUp(e);
    }
  } else {
    sql.db.exec("PRAGMA temp_store = FILE");
    try {
      sql.db.exec("VACUUM");
      pages = "vacuum";
    } catch (e) {
      gaveUp(e);
    } finally {
      sql.db.exec("PRAGMA temp_store = MEMORY");
      restoreTemp();
    }
  }
  let walTruncated = true;
  try {
    const r = sql.db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
    walTruncated = Number(r.busy) === 0;
  } catch {
    walTruncated = false; // another connection holds the log: SQLite checkpoints later
  }
  return { pages, walTruncated };
}

/**
 * Free pages a bulk index build leaves behind (FTS5 merging its segments frees the ones it
 * merged: 97 MB, 14% of the database, after a first import of 1 GB) go back to the disk, up
 * to `maxPages` a call, when they are at least {@link VACUUM_MIN_SHARE} of the database and
 * {@link VACUUM_MIN_BYTES}; fewer are left for the next writes to fill. Only a store made
 * with `auto_vacuum = INCREMENTAL` can. Returns how many pages are still to give back (0: done
 * or not worth it, or another writer holds the database: the pages stay for the next writes).
 * In its own short write; `PRAGMA incremental_vacuum` costs in proportion to the pages it moves
 * (about 0.85 s for those 97 MB). Any other failure is thrown.
 */
export function vacuumFreePages(sql: Sql, maxPages: number): number {
  if (autoVacuum(sql) !== INCREMENTAL) return 0;
  const free = freeBytes(sql);
  if (free < VACUUM_MIN_BYTES || free < VACUUM_MIN_SHARE * databaseBytes(sql)) return 0;
  try {
    // one row a page: stepped to the end, or only the first page goes
    sql.db.prepare(`PRAGMA incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`).all();
  } catch (e) {
    if (isBusy(e)) return 0;
    throw e;
  }
  return Number(
    (sql.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number })
      .freelist_count,
  );
}

/** Free pages below this share of the database are left to the next writes. */
export const VACUUM_MIN_SHARE = 0.01;
/** ...and below this many bytes. */
export const VACUUM_MIN_BYTES = 8 << 20;
/** How many pages one call of {@link vacuumFreePages} moves at most, between turns. */
export const VACUUM_SLICE_PAGES = 2048;

/** `PRAGMA auto_vacuum`'s value for incremental. */
export const INCREMENTAL = 2;

export function autoVacuum(sql: Sql): number {
  return Number(
    (sql.db.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum,
  );
}

/** Bytes of the database's free pages. */
export function freeBytes(sql: Sql): number {
  const free = sql.db.prepare("PRAGMA freelist_count").get() as { freelist_count: number };
  const size = sql.db.prepare("PRAGMA page_size").get() as { page_size: number };
  return Number(free.freelist_count) * Number(size.page_size);
}
