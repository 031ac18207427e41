/**
 * Content-addressed payloads: a small one in the database, a big one in an append-only pack
 * file (when the store has them), each located by its SHA-256 and stored compressed when that
 * pays (compressed in the import worker, see prepare.ts). A whole payload read back is checked
 * against its hash, so a pack changed under the store gives a missing payload, never other
 * bytes.
 */
import { inflateRawSync } from "node:zlib";
import { type PayloadRef, sha256Hex } from "../model/mod.ts";
import { PACK_LIMIT, PACK_MIN_BYTES, PACK_WRITE_SLICE, type PackFiles } from "./packs.ts";
import { CODEC_DEFLATE, CODEC_RAW, type PackedPayloads, payloadAt } from "./prepare.ts";
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
      "INSERT OR IGNORE INTO payloads (sha256, size, bytes, codec) VALUES (?, ?, ?, ?)",
    );
    const big: number[] = [];
    for (let i = 0; i < packed.sha256.length; i++) {
      const stored = payloadAt(packed, i);
      if (this.packs && stored.byteLength >= PACK_MIN_BYTES) big.push(i);
      else inline.run(packed.sha256[i], packed.size[i], stored, packed.codec[i]);
    }
    if (big.length) this.writePacked(packed, big);
  }

  private writePacked(packed: PackedPayloads, big: number[]): void {
    const packs = this.packs!;
    let n = Math.max(this.pack, 1);
    let end = packs.size(n);
    while (end >= this.packLimit) end = packs.size(++n);
    this.pack = n;
    const insert = this.sql.stmt(
      `INSERT OR IGNORE INTO payloads (sha256, size, bytes, pack, pack_offset, codec, stored)
       VALUES (?, ?, X'', ?, ?, ?, ?)`,
    );
    const fresh: Uint8Array[] = [];
    let length = 0;
    for (const i of big) {
      const bytes = payloadAt(packed, i);
      const codec = packed.codec[i];
      const stored = codec === CODEC_RAW ? null : bytes.byteLength;
      const row = [packed.sha256[i], packed.size[i], n, end + length, codec, stored] as const;
      if (Number(insert.run(...row).changes) === 1) {
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
      "SELECT size, pack, pack_offset, bytes, codec, stored FROM payloads WHERE sha256 = ?",
    ).get(sha256) as
      | {
        size: number;
        pack: number | null;
        pack_offset: number | null;
        bytes: Uint8Array;
        codec: number;
        stored: number | null;
      }
      | undefined;
    if (!row) return null;
    const compressed = row.codec === CODEC_DEFLATE;
    if (!compressed && row.codec !== CODEC_RAW) return null; // written by a newer Chronicle
    let bytes: Uint8Array;
    if (row.pack === null) bytes = row.bytes;
    else {
      if (!this.packs) return null;
      // A compressed payload is read whole; a raw one only as far as asked.
      const want = compressed ? row.stored ?? 0 : Math.min(row.size, maxBytes);
      bytes = this.packs.read(row.pack, row.pack_offset ?? 0, want);
      if (bytes.byteLength !== want) return null;
    }
    if (compressed) {
      try {
        const raw = inflateRawSync(bytes);
        bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
      } catch {
        return null; // changed under the store
      }
      if (bytes.byteLength !== row.size) return null;
    }
    // A whole payload is checked against its hash (a file the store does not control can
    // change under it); a head is only ever read for heuristics and excerpts.
    if (maxBytes >= row.size) return sha256Hex(bytes) === sha256 ? bytes : null;
    return bytes.byteLength > maxBytes ? bytes.subarray(0, maxBytes) : bytes;
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
