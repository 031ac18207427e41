/**
 * Payload bytes outside the database: append-only pack files, numbered from 1. The store
 * keeps each payload's place (pack, offset, size) in its `payloads` table and writes the bytes
 * while it holds SQLite's write lock, so two writers never append at once.
 *
 * Bulk bytes in SQLite pages are written twice (the WAL, then the checkpoint) and fill pages
 * only partly; in a pack they are written once, in one call per unit.
 *
 * A crash between writing bytes and committing their rows leaves unreferenced bytes at the
 * end of a pack: wasted space, never a wrong payload, because the next writer appends after
 * whatever the file holds. Injected, so core code never touches the file system itself; every
 * call is synchronous because it runs inside a SQLite transaction.
 *
 * Forgetting sessions gives pack space back (compact.ts): the live payloads of a pack that is
 * mostly dead are copied into a new pack numbered after every existing one, and the old file is
 * removed. A pack number is never used twice (writers append to the last pack, never below it),
 * so a file handle another process still holds on a removed pack is never read for a new row.
 */
export interface PackFiles {
  /** The length of pack `n`: 0 when it does not exist yet. */
  size(n: number): number;
  /**
   * Writes all of `bytes` at `offset` of pack `n`, creating it (owner-only) when needed; the
   * caller may fill `bytes` again once it returns.
   */
  write(n: number, offset: number, bytes: Uint8Array): void;
  /** Up to `length` bytes at `offset`: fewer when the pack is shorter, none when it is gone. */
  read(n: number, offset: number, length: number): Uint8Array;
  /** Flushes what was written to pack `n` to the disk. */
  sync(n: number): void;
  /** The numbers of the packs that exist, ascending. */
  list(): number[];
  /** Deletes pack `n` (closing it first); nothing when it does not exist. */
  remove(n: number): void;
  /** Closes every open pack (they open again when used). */
  close(): void;
}

/**
 * Payloads smaller than this stay in the database: they fit its pages without overflow, and a
 * live session's short prompts and replies then cost no write and no flush of a pack.
 */
export const PACK_MIN_BYTES = 4096;

/** A pack grows to about this size before the next one is started. */
export const PACK_LIMIT = 1 << 30;

/**
 * Writes in slices of at most this many bytes, gathered in one buffer a store keeps (a payload
 * bigger than that is written as it is), so a big unit never needs a second copy.
 */
export const PACK_WRITE_SLICE = 8 << 20;
