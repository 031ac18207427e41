/**
 * Content-addressed payloads: a small one in the database, a big one in an append-only pack
 * file (when the store has them), each located by its SHA-256 and stored compressed when that
 * pays. A whole payload read back is checked
 * against its hash, so a pack changed under the store gives a missing payload, never other
 * bytes.
 */
import { type PayloadRef, sha256Hex } from "../model/mod.ts";
import { PACK_LIMIT, PACK_MIN_BYTES, PACK_WRITE_SLICE, type PackFiles } from "./packs.ts";
import { type PackedPayloads, payloadAt, storedAt } from "./prepare.ts";
import { CODEC_RAW, decodePayload, encodePayload } from "./payload_codec.ts";
import type { Sql } from "./_sql.ts";

const decoder = new TextDecoder();

/** The columns a payload is read from. */
const ROW = "size, pack, pack_offset, bytes, codec, stored";
interface PayloadRow {
  size: number;
  pack: number | null;
  pack_offset: number | null;
  bytes: Uint8Array;
  codec: number;
  stored: number | null;
}
/** A payload as stored, for decoding elsewhere (a worker building search texts). */
export interface StoredPayload {
  sha256: string;
  size: number;
  codec: number;
  bytes: Uint8Array;
}

export class PayloadStore {
  /** The pack new payloads go to; found on the first write. */
  private pack = 0;
  /** Packs written to since their last flush to disk. */
  private readonly unsynced = new Set<number>();

  constructor(
    private readonly sql: Sql,
    /** Where big payloads live; null for a store without packs (in memory, tests). */
    readonly packs: PackFiles | null,
    /** When to start the next pack, in bytes. */
    readonly packLimit = PACK_LIMIT,
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
    const known = this.sql.stmt("SELECT 1 FROM payloads WHERE sha256 = ?");
    const inline = this.sql.stmt(
      "INSERT INTO payloads (sha256, size, bytes, codec) VALUES (?, ?, ?, ?)",
    );
    const big: { sha: string; size: number; codec: number; bytes: Uint8Array }[] = [];
    for (let i = 0; i < packed.sha256.length; i++) {
      const sha = packed.sha256[i];
      if (known.get(sha)) continue; // stored already: not compressed again
      const own = payloadAt(packed, i);
      // compressed by the import worker, or here
      const s = packed.stored ? storedAt(packed, i) : encodePayload(own);
      if (this.packs && s.bytes.byteLength >= PACK_MIN_BYTES) {
        big.push({ sha, size: own.byteLength, ...s });
      } else inline.run(sha, own.byteLength, s.bytes, s.codec);
    }
    if (big.length) this.writePacked(big);
  }

  private writePacked(big: { sha: string; size: number; codec: number; bytes: Uint8Array }[]) {
    const packs = this.packs!;
    // The last pack, never one below it: a compaction (compact.ts) may have removed a pack
    // this store appended to, and a pack number is never used twice.
    let n = Math.max(this.pack, packs.list().at(-1) ?? 0, 1);
    let end = packs.size(n);
    while (end >= this.packLimit) end = packs.size(++n);
    this.pack = n;
    const insert = this.sql.stmt(
      `INSERT OR IGNORE INTO payloads (sha256, size, bytes, pack, pack_offset, codec, stored)
       VALUES (?, ?, X'', ?, ?, ?, ?)`,
    );
    const fresh: Uint8Array[] = [];
    let length = 0;
    for (const p of big) {
      const len = p.codec === CODEC_RAW ? null : p.bytes.byteLength;
      if (Number(insert.run(p.sha, p.size, n, end + length, p.codec, len).changes) === 1) {
        fresh.push(p.bytes);
        length += p.bytes.byteLength;
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
    const row = this.sql.stmt(`SELECT ${ROW} FROM payloads WHERE sha256 = ?`).get(sha256) as
      | PayloadRow
      | undefined;
    if (!row) return null;
    const bytes = this.decode(row, maxBytes);
    // A whole payload is checked against its hash (a file the store does not control can
    // change under it); a head is only ever read for heuristics and excerpts.
    if (!bytes || maxBytes < row.size) return bytes;
    return sha256Hex(bytes) === sha256 ? bytes : null;
  }

  /**
   * Payloads by hash, as stored (compressed or not), read with one query: for building search
   * texts (backlog.ts), where a payload changed under the store costs a wrong word in the
   * index, never wrong bytes shown, so they are not checked against their hash. Unknown or
   * unreadable ones are absent.
   */
  storedMany(sha256s: readonly string[]): StoredPayload[] {
    if (!sha256s.length) return [];
    const rows = this.sql.stmt(
      `SELECT sha256, ${ROW} FROM payloads WHERE sha256 IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(sha256s)) as unknown as (PayloadRow & { sha256: string })[];
    const out: StoredPayload[] = [];
    for (const row of rows) {
      const bytes = this.storedBytes(row, Infinity);
      if (bytes) out.push({ sha256: row.sha256, size: row.size, codec: row.codec, bytes });
    }
    return out;
  }

  /** A payload's stored bytes: a raw one in a pack only as far as `maxBytes`. */
  private storedBytes(row: PayloadRow, maxBytes: number): Uint8Array | null {
    if (row.pack === null) return row.bytes;
    if (!this.packs) return null;
    // A compressed payload is read whole; a raw one only as far as asked.
    const want = row.codec === CODEC_RAW ? Math.min(row.size, maxBytes) : row.stored ?? 0;
    const bytes = this.packs.read(row.pack, row.pack_offset ?? 0, want);
    return bytes.byteLength === want ? bytes : null;
  }

  /** A stored payload's bytes, up to `maxBytes` of a raw one in a pack; null when unreadable. */
  private decode(row: PayloadRow, maxBytes: number): Uint8Array | null {
    const stored = this.storedBytes(row, maxBytes);
    if (!stored) return null;
    // a raw payload read from a pack only as far as asked is its head
    if (row.codec === CODEC_RAW && stored.byteLength < row.size) return stored;
    const bytes = decodePayload(row.codec, stored, row.size);
    if (!bytes) return null;
    return maxBytes < bytes.byteLength ? bytes.subarray(0, maxBytes) : bytes;
  }

  /**
   * A payload's whole text (UTF-8) by its hash; null when unknown or unreadable. Bound, so it
   * is handed around as a `PayloadText` as it is.
   */
  readonly textOf = (sha256: string): string | null => {
    const bytes = this.bytes(sha256);
    return bytes ? decoder.decode(bytes) : null;
  };

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
