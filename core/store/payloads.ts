/**
 * Content-addressed payloads: a small one in the database, a big one in an append-only pack
 * file (when the store has them), each located by its SHA-256. A whole payload read from a
 * pack is checked against its hash, so a pack changed under the store gives a missing payload,
 * never other bytes.
 */
import { type PayloadRef, sha256Hex } from "../model/mod.ts";
import { PACK_LIMIT, PACK_MIN_BYTES, PACK_WRITE_SLICE, type PackFiles } from "./packs.ts";
import { type PackedPayloads, payloadAt } from "./prepare.ts";
import type { Sql } from "./_sql.ts";

const decoder = new TextDecoder();

export class PayloadStore {
  /** The pack new payloads go to; found on the first write. */
  private pack = 0;
  /** Packs written to since their last flush to disk. */
  private readonly unsynced = new Set<number>();

  constructor(
    private readonly sql: Sql,
    private readonly packs: PackFiles | null,
    private readonly packLimit = PACK_LIMIT,
  ) {}

  /** Flushes the packs written since the last flush: before the commit that points at them. */
  sync(): void {
    for (const n of this.unsynced) this.packs?.sync(n);
    this.unsynced.clear();
  }

  close(): void {
    this.packs?.close();
  }

  /**
   * Stores the payloads not stored yet: a big one in a pack when the store has them (one write
   * for the new ones, at the end of the current pack), the others in the database. Runs inside
   * the unit's transaction, so no other writer appends meanwhile.
   */
  write(packed: PackedPayloads): void {
    if (!packed.sha256.length) return;
    const inline = this.sql.stmt(
      "INSERT OR IGNORE INTO payloads (sha256, size, bytes) VALUES (?, ?, ?)",
    );
    const big: [string, Uint8Array][] = [];
    for (let i = 0; i < packed.sha256.length; i++) {
      const bytes = payloadAt(packed, i);
      if (this.packs && bytes.byteLength >= PACK_MIN_BYTES) big.push([packed.sha256[i], bytes]);
      else inline.run(packed.sha256[i], bytes.byteLength, bytes);
    }
    if (big.length) this.writePacked(big);
  }

  private writePacked(big: [string, Uint8Array][]): void {
    const packs = this.packs!;
    let n = Math.max(this.pack, 1);
    let end = packs.size(n);
    while (end >= this.packLimit) end = packs.size(++n);
    this.pack = n;
    const insert = this.sql.stmt(
      `INSERT OR IGNORE INTO payloads (sha256, size, bytes, pack, pack_offset)
       VALUES (?, ?, X'', ?, ?)`,
    );
    const fresh: Uint8Array[] = [];
    let length = 0;
    for (const [sha, bytes] of big) {
      if (Number(insert.run(sha, bytes.byteLength, n, end + length).changes) === 1) {
        fresh.push(bytes);
        length += bytes.byteLength;
      }
    }
    if (!length) return;
    this.unsynced.add(n);
    // Consecutive payloads go out together, up to a slice at a time.
    let at = end;
    let batch: Uint8Array[] = [];
    let size = 0;
    const flush = () => {
      if (!batch.length) return;
      let out = batch[0];
      if (batch.length > 1) {
        out = new Uint8Array(size);
        for (let k = 0, o = 0; k < batch.length; o += batch[k++].byteLength) out.set(batch[k], o);
      }
      packs.write(n, at, out);
      at += size;
      batch = [];
      size = 0;
    };
    for (const bytes of fresh) {
      if (size + bytes.byteLength > PACK_WRITE_SLICE) flush();
      batch.push(bytes);
      size += bytes.byteLength;
    }
    flush();
  }

  /**
   * A payload's bytes; null when unknown, or when its pack lost them (cut short, deleted,
   * overwritten): never bytes other than the ones its hash names.
   */
  bytes(sha256: string): Uint8Array | null {
    return this.head(sha256, Infinity);
  }

  /** The first `maxBytes` bytes of a payload (all of it when shorter). */
  head(sha256: string, maxBytes: number): Uint8Array | null {
    const row = this.sql.stmt(
      "SELECT size, pack, pack_offset, bytes FROM payloads WHERE sha256 = ?",
    ).get(sha256) as
      | { size: number; pack: number | null; pack_offset: number | null; bytes: Uint8Array }
      | undefined;
    if (!row) return null;
    if (row.pack === null) {
      return row.bytes.byteLength > maxBytes ? row.bytes.subarray(0, maxBytes) : row.bytes;
    }
    if (!this.packs) return null;
    const want = Math.min(row.size, maxBytes);
    const bytes = this.packs.read(row.pack, row.pack_offset ?? 0, want);
    if (bytes.byteLength !== want) return null;
    // A whole payload is checked against its hash (a file the store does not control can
    // change under it); a head is only ever read for heuristics and excerpts.
    return want === row.size && sha256Hex(bytes) !== sha256 ? null : bytes;
  }

  /** The text of a payload ref (UTF-8), cut at `max` characters when given. */
  text(ref: PayloadRef | undefined, max?: number): string | null {
    if (!ref) return null;
    if ("inline" in ref) return max ? ref.inline.slice(0, max) : ref.inline;
    if (!("sha256" in ref)) return null;
    // UTF-8 takes at most 4 bytes a character.
    const bytes = this.head(ref.sha256, max ? max * 4 : Infinity);
    if (!bytes) return null;
    const text = decoder.decode(bytes);
    return max ? text.slice(0, max) : text;
  }
}
