/**
 * Content-addressed payloads: a small one in the database, a big one in an append-only pack
 * file (when the store has them), each located by its SHA-256 and stored compressed when that
 * pays. A whole payload read back is checked
 * against its hash, so a pack changed under the store gives a missing payload, never other
 * bytes.
 */
import { openingBytes, openingText, type PayloadRef, sha256Hex } from "../model/mod.ts";
import { PACK_LIMIT, PACK_MIN_BYTES, PACK_WRITE_SLICE, type PackFiles } from "./packs.ts";
import { type PackedPayloads, payloadAt, sizeAt } from "./prepare.ts";
import {
  CODEC_FRAME,
  CODEC_PLAIN_FRAME,
  CODEC_RAW,
  decodeFrame,
  decodePayload,
  encodeFrame,
  encodePayload,
  FRAME_BYTES,
  frameEnds,
  isFramed,
  type StoredForm,
} from "./payload_codec.ts";
import { HashFilter } from "./hash_filter.ts";
import { RowBatch, type Sql } from "./_sql.ts";

const decoder = new TextDecoder();

/**
 * SQL: a payload row's hash as the rest of Chronicle spells it, lowercase hex. The table keeps
 * the 32 bytes (migration 22), and SQL given a hash takes it as `unhex(?)`.
 */
export const SHA_HEX = "lower(hex(sha256)) AS sha256";

/**
 * SQL: every payload row, in `payloads` or among the rows a bulk import has not merged into it
 * yet (`payloads_new`, migration 28). SQLite takes a condition on it into both tables.
 */
export const PAYLOAD_ROWS = "(SELECT * FROM payloads UNION ALL SELECT * FROM payloads_new)";

/** The two tables `PAYLOAD_ROWS` reads: a change to a payload row is made in both. */
export const PAYLOAD_TABLES = ["payloads", "payloads_new"] as const;

/**
 * Rows a bulk import gathers in `payloads_new` before they join `payloads` (`merge`): a small
 * table's pages stay in the page cache between commits (32k rows: about 110 pages of 16 KiB, of
 * the 256 it holds), and a merge writes each page of the big one once.
 */
export const MERGE_ROWS = 1 << 15;

/**
 * Where a payload is read from: its row, and the frame it is in (migration 27) when packed. A
 * frame's codec is the payload's; a row's own 'codec' is that of its inline bytes.
 */
const FROM = `${PAYLOAD_ROWS} p LEFT JOIN frames f ON f.id = p.frame`;
/** The columns a payload is read from (`FROM`). */
const ROW = `p.size AS size, f.pack AS pack, f.pack_offset AS pack_offset, p.bytes AS bytes,
  coalesce(f.codec, p.codec) AS codec, f.stored AS stored, p.frame_offset AS frame_offset`;
interface PayloadRow {
  size: number;
  pack: number | null;
  pack_offset: number | null;
  bytes: Uint8Array;
  codec: number;
  stored: number | null;
  frame_offset: number | null;
}
/**
 * A payload as stored, for decoding elsewhere (a worker building search texts, with
 * `decodeStored`): the payloads of one frame share its bytes, one object. One read only as far
 * as `storedMany`'s `maxBytes` is a plain frame of its head: its `size` is the head's.
 */
export interface StoredPayload extends StoredForm {
  sha256: string;
}

/**
 * A bulk import makes its filter of the stored hashes (`mayBeStored`) once it has asked about
 * this many, and about an eighth as many as are stored: reading every stored hash for the
 * filter costs about what looking up an eighth of them does (3 GB history, 716k payloads: 0.44 s
 * to read them, 4.6 µs a lookup). A small import into a big store never reads the table.
 */
const FILTER_AFTER = 4096;
const FILTER_SHARE = 1 / 8;

/** How many inflated frames a payload store keeps (each at most 256 KiB): a session's reads. */
const FRAMES_KEPT = 8;

/**
 * Plain frames compressed per slice (about 4 MiB of payloads): small enough that compressing
 * them beside the search index's slices adds little memory.
 */
export const COMPRESS_SLICE_FRAMES = 32;

/**
 * Bytes of plain frames a slice stops at, twice what {@link COMPRESS_SLICE_FRAMES} frames
 * of `FRAME_BYTES` hold (its last frame may pass them; a slice has one frame at least): a frame
 * of one big payload is that payload, and 32 of them, a session of pasted 28 MiB prompts, were
 * 900 MB read, copied to the worker and compressed at once.
 */
export const COMPRESS_SLICE_BYTES = 2 * COMPRESS_SLICE_FRAMES * FRAME_BYTES;

/** Where the compression of plain frames goes on from: after this frame of this pack. */
export interface PlainCursor {
  pack: number;
  offset: number;
}

/**
 * A plain frame as read to be compressed: its row, place and bytes. Compressed, it inflates to
 * the same bytes, so its payloads keep their offsets in it.
 */
export interface PlainFrame {
  id: number;
  pack: number;
  offset: number;
  bytes: Uint8Array;
}

/** A slice of plain frames and each of its frames compressed, in order (`encodeFrame`). */
export interface CompressedSlice {
  slice: PlainSlice;
  compressed: readonly Uint8Array[];
}

/** Plain frames to compress (`readPlain`), and where to read on from after them. */
export interface PlainSlice {
  frames: PlainFrame[];
  next: PlainCursor;
}

export class PayloadStore {
  /** The pack new payloads go to; found on the first write. */
  private pack = 0;
  /**
   * While on (a bulk import: the store's `deferSearch`), packed payloads are written in plain
   * frames (`CODEC_PLAIN_FRAME`), compressed (`readPlain`, `applyCompressed`) once the import's
   * search backlog is indexed: the writer's busiest work out of the way of sessions being
   * browsable.
   */
  get plain(): boolean {
    return this.bulk;
  }
  set plain(on: boolean) {
    this.bulk = on;
    this.known = null;
    this.asked = 0;
    this.stored = null;
    this.gathered = null;
  }
  private bulk = false;
  /** Rows in `payloads_new` while `plain` is on (counted once, then kept). */
  private gathered: number | null = null;
  /**
   * While `plain` is on, once {@link FILTER_AFTER} hashes have been asked about: the hashes of
   * the payloads stored, so that only those it may hold are looked up (hash_filter.ts).
   */
  private known: HashFilter | null = null;
  /** Hashes asked about while `plain` is on and `known` is not made yet. */
  private asked = 0;
  /** How many payloads were stored, counted once `asked` reached {@link FILTER_AFTER}. */
  private stored: number | null = null;
  /** The pack this store started for plain frames: they never share a pack with other bytes. */
  private plainPack = 0;
  /** Packs written to since their last flush to disk. */
  private readonly unsynced = new Set<number>();
  /**
   * The frames inflated last, by pack and offset, the oldest first: reading a session's
   * payloads one by one inflates each of its frames once. A pack only grows at its end, and a
   * compacted one is removed and its number never used again, so a place names the same bytes
   * for as long as anything refers to it.
   */
  private readonly frameCache = new Map<string, Uint8Array>();

  constructor(
    private readonly sql: Sql,
    /** Where big payloads live; null for a store without packs (in memory, tests). */
    readonly packs: PackFiles | null,
    /** When to start the next pack, in bytes. */
    readonly packLimit = PACK_LIMIT,
    /** How many rows a bulk import gathers before it merges them ({@link MERGE_ROWS}). */
    readonly mergeRows = MERGE_ROWS,
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
   * Stores the payloads not stored yet. When they add up to {@link PACK_MIN_BYTES} and the
   * store has packs, they go to the end of the current pack in Zstandard frames, in one write
   * per slice; fewer stay in the database, each compressed alone when that pays. Runs inside
   * the unit's transaction, so no other writer appends meanwhile.
   */
  write(packed: PackedPayloads): void {
    if (!packed.sha256.length) return;
    // the ones stored already (not compressed again), found in one statement, not one each
    const ask = this.mayBeStored(packed.sha256);
    const known = new Set(
      ask.length
        ? (this.sql.stmt(
          `SELECT ${SHA_HEX} FROM ${PAYLOAD_ROWS}
           WHERE sha256 IN (SELECT unhex(value) FROM json_each(?))`,
        ).all(JSON.stringify(ask)) as { sha256: string }[]).map((r) => r.sha256)
        : [],
    );
    const fresh = new Uint8Array(packed.sha256.length);
    let bytes = 0;
    for (let i = 0; i < packed.sha256.length; i++) {
      if (known.has(packed.sha256[i])) continue;
      fresh[i] = 1;
      bytes += sizeAt(packed, i);
    }
    if (!bytes && !fresh.includes(1)) return;
    let added = 0;
    for (let i = 0; i < packed.sha256.length; i++) {
      if (!fresh[i]) continue;
      this.known?.addHex(packed.sha256[i]);
      added++;
    }
    // A bulk import's rows gather apart until there are enough to merge (migration 28).
    // (OR IGNORE: a payload another process stored since the filter was made stays as it is.)
    const table = this.bulk ? "payloads_new" : "payloads";
    if (this.bulk) {
      this.gathered ??= this.sql.count("SELECT count(*) AS n FROM payloads_new");
      this.gathered += added;
    }
    this.writeRows(packed, fresh, bytes, table);
    if (this.bulk && this.gathered! >= this.mergeRows) this.merge();
  }

  /**
   * Moves the rows a bulk import gathered in `payloads_new` into `payloads`, in hash order (its
   * own), so each page of the big table is written once; in the caller's transaction.
   */
  merge(): void {
    this.sql.stmt("INSERT OR IGNORE INTO payloads SELECT * FROM payloads_new").run();
    this.sql.stmt("DELETE FROM payloads_new").run();
    this.gathered = 0;
  }

  /** Writes the rows of the payloads `fresh` marks (their `bytes` in all) into `table`. */
  private writeRows(
    packed: PackedPayloads,
    fresh: Uint8Array,
    bytes: number,
    table: string,
  ): void {
    if (!this.packs || bytes < PACK_MIN_BYTES) {
      const inline = this.sql.stmt(
        `INSERT OR IGNORE INTO ${table} (sha256, size, bytes, codec) VALUES (unhex(?), ?, ?, ?)`,
      );
      for (let i = 0; i < packed.sha256.length; i++) {
        if (!fresh[i]) continue;
        const own = payloadAt(packed, i);
        const s = encodePayload(own);
        inline.run(packed.sha256[i], own.byteLength, s.bytes, s.codec);
      }
      return;
    }
    const rows = new RowBatch(
      this.sql,
      `INSERT OR IGNORE INTO ${table} (sha256, size, bytes, frame, frame_offset)`,
      "(unhex(?), ?, X'', ?, ?)",
    );
    const items = [];
    for (let i = 0; i < packed.sha256.length; i++) {
      if (fresh[i]) items.push({ sha: packed.sha256[i], bytes: payloadAt(packed, i) });
    }
    this.writeFrames(items, this.plain, (sha, size, frame, at) => rows.add(sha, size, frame, at));
    rows.flush();
  }

  /**
   * The hashes among `sha256s` that may be stored: all of them, but in a bulk import (`plain`)
   * only those its filter of the stored hashes may hold, once it has asked about enough
   * ({@link FILTER_AFTER}, {@link FILTER_SHARE}).
   */
  private mayBeStored(sha256s: readonly string[]): readonly string[] {
    if (!this.bulk) return sha256s;
    if (!this.known) {
      this.asked += sha256s.length;
      if (this.asked < FILTER_AFTER) return sha256s;
      this.stored ??= this.sql.count(`SELECT count(*) AS n FROM ${PAYLOAD_ROWS}`);
      if (this.asked < this.stored * FILTER_SHARE) return sha256s;
      this.known = this.storedHashes();
    }
    return sha256s.filter((sha) => this.known!.mayHoldHex(sha));
  }

  /**
   * A filter of every stored payload's hash. Read as hex, a slice of the table at a time (by
   * the hash's first byte): a row at a time, the objects made cost three times as much.
   */
  private storedHashes(): HashFilter {
    const known = new HashFilter();
    const words = `SELECT group_concat(hex(substr(sha256, 1, ${HashFilter.KEY_BYTES})), '') AS h
      FROM ${PAYLOAD_ROWS} WHERE sha256 >= ?`;
    const slice = this.sql.stmt(`${words} AND sha256 < ?`);
    const last = this.sql.stmt(words);
    const hexLength = 2 * HashFilter.KEY_BYTES;
    for (let b = 0; b < 256; b++) {
      const from = Uint8Array.of(b);
      const row = (b < 255 ? slice.get(from, Uint8Array.of(b + 1)) : last.get(from)) as {
        h: string | null;
      };
      const h = row.h ?? "";
      for (let i = 0; i < h.length; i += hexLength) known.addHex(h.slice(i, i + hexLength));
    }
    return known;
  }

  /**
   * Writes payloads stored already again, in new frames at the end of the pack, and points
   * their rows there: what forgetting does with the payloads that stay in a frame whose other
   * payloads are gone (forget.ts), so that frame's bytes can be scrubbed. Payloads it cannot
   * read are left where they are, and returned. In the caller's transaction; flushed before it
   * commits.
   */
  rewrite(sha256s: readonly string[]): string[] {
    if (!this.packs || !sha256s.length) return [];
    const moves = PAYLOAD_TABLES.map((table) =>
      this.sql.stmt(
        `UPDATE ${table} SET bytes = X'', codec = ${CODEC_RAW}, frame = ?, frame_offset = ?
         WHERE sha256 = unhex(?)`,
      )
    );
    const items: { sha: string; bytes: Uint8Array }[] = [];
    const lost: string[] = [];
    for (const sha of sha256s) {
      const bytes = this.bytes(sha);
      if (bytes) items.push({ sha, bytes });
      else lost.push(sha);
    }
    this.writeFrames(items, false, (sha, _size, frame, at) => {
      for (const move of moves) move.run(frame, at, sha);
    });
    this.dropInflated();
    return lost;
  }

  /**
   * Deletes the frames `ids` (after a forget wrote what stays of them elsewhere: `rewrite`),
   * with the rows of the payloads still in them, `lost`: those `rewrite` could not read, whose
   * bytes were lost already. A frame's row gone is what tells a compression running meanwhile
   * that the frame changed (`applyCompressed`).
   */
  dropFrames(ids: readonly number[], lost: readonly string[]): void {
    if (!ids.length) return;
    const hashes = JSON.stringify(lost);
    for (const table of PAYLOAD_TABLES) {
      this.sql.stmt(
        `DELETE FROM ${table} WHERE sha256 IN (SELECT unhex(value) FROM json_each(?))`,
      ).run(hashes);
    }
    this.sql.stmt("DELETE FROM frames WHERE id IN (SELECT value FROM json_each(?))")
      .run(JSON.stringify(ids));
  }

  /**
   * The next plain frames a bulk import wrote (`plain`), up to `maxFrames` after `after`, with
   * their bytes, in pack order, for `applyCompressed` once compressed (anywhere:
   * `encodeFrame` is pure). A frame that cannot be read whole is left out and stays as it is
   * (its payloads read as missing, as they would anyway). Null when none is left.
   */
  readPlain(after: PlainCursor | null, maxFrames = COMPRESS_SLICE_FRAMES): PlainSlice | null {
    if (!this.packs) return null;
    const rows = this.sql.stmt(
      `SELECT id, pack, pack_offset, stored FROM frames
       WHERE codec = ${CODEC_PLAIN_FRAME} AND (pack, pack_offset) > (?, ?)
       ORDER BY pack, pack_offset LIMIT ?`,
    ).all(after?.pack ?? -1, after?.offset ?? -1, maxFrames) as unknown as {
      id: number;
      pack: number;
      pack_offset: number;
      stored: number;
    }[];
    if (!rows.length) return null;
    const frames: PlainFrame[] = [];
    let read = 0, last = rows[0];
    for (const row of rows) {
      if (read >= COMPRESS_SLICE_BYTES) break;
      const { id, pack, pack_offset: offset, stored } = last = row;
      const bytes = this.packs.read(pack, offset, stored);
      if (bytes.byteLength === stored) frames.push({ id, pack, offset, bytes });
      read += stored;
    }
    return { frames, next: { pack: last.pack, offset: last.pack_offset } };
  }

  /**
   * Writes `compressed` (each frame of `slice.frames` compressed by `encodeFrame`, in order) at
   * the end of the last pack and points those frames there; a frame that changed since the
   * slice was read is left as it is now. In the caller's transaction; flushed before it
   * commits. Returns the packs no frame is in any more, to be removed once the transaction has
   * committed.
   */
  applyCompressed(slice: PlainSlice, compressed: readonly Uint8Array[]): number[] {
    if (!this.packs || !slice.frames.length) return [];
    // A frame that changed since it was read (a session forgotten meanwhile: what stayed of
    // it moved, its bytes scrubbed, its row gone) is not written: its compressed bytes were
    // made before, and would put what was forgotten back on the disk.
    const unchanged = this.sql.stmt(
      `SELECT 1 FROM frames
       WHERE id = ? AND codec = ${CODEC_PLAIN_FRAME} AND pack = ? AND pack_offset = ?`,
    );
    const move = this.sql.stmt(
      `UPDATE frames SET pack = ?, pack_offset = ?, codec = ${CODEC_FRAME}, stored = ?
       WHERE id = ?`,
    );
    const out = this.appender();
    const packs = new Set<number>();
    for (let i = 0; i < slice.frames.length; i++) {
      const from = slice.frames[i];
      packs.add(from.pack);
      if (!unchanged.get(from.id, from.pack, from.offset)) continue;
      const bytes = compressed[i];
      move.run(out.pack, out.frame([bytes]), bytes.byteLength, from.id);
    }
    out.flush();
    const referred = this.sql.stmt("SELECT 1 FROM frames WHERE pack = ? LIMIT 1");
    return [...packs].filter((n) => !referred.get(n));
  }

  /** Whether any payload is in a plain frame, waiting to be compressed. */
  hasPlain(): boolean {
    return !!this.sql.stmt(`SELECT 1 FROM frames WHERE codec = ${CODEC_PLAIN_FRAME} LIMIT 1`).get();
  }

  /** Whether pack `n` holds plain frames (the index of them answers). */
  private holdsPlain(n: number): boolean {
    return !!this.sql.stmt(
      `SELECT 1 FROM frames WHERE codec = ${CODEC_PLAIN_FRAME} AND pack = ? LIMIT 1`,
    ).get(n);
  }

  /**
   * Frames `items` (payloads, in order) in the last pack (`appender`), a row of `frames` each,
   * and records each payload's place through `place` (its hash, size, frame and offset in the
   * inflated frame). Flushed before it returns; the caller's transaction commits.
   */
  private writeFrames(
    items: readonly { sha: string; bytes: Uint8Array }[],
    plain: boolean,
    place: (sha: string, size: number, frame: number, at: number) => void,
  ): void {
    if (!items.length) return;
    const out = this.appender(plain);
    const row = this.sql.stmt(
      `INSERT INTO frames (pack, pack_offset, codec, stored) VALUES (?, ?, ${
        plain ? CODEC_PLAIN_FRAME : CODEC_FRAME
      }, ?)`,
    );
    let first = 0;
    for (const last of frameEnds(items.map((p) => p.bytes.byteLength))) {
      const part = items.slice(first, last);
      const parts = part.map((p) => p.bytes);
      // (a plain frame's payloads go to the pack's write buffer as they are, not joined first)
      const bytes = plain ? parts : [encodeFrame(parts)];
      const stored = bytes.reduce((n, b) => n + b.byteLength, 0);
      const frame = Number(row.run(out.pack, out.frame(bytes), stored).lastInsertRowid);
      let at = 0;
      for (const p of part) {
        place(p.sha, p.bytes.byteLength, frame, at);
        at += p.bytes.byteLength;
      }
      first = last;
    }
    out.flush();
  }

  /**
   * Appends frames at the end of the last pack, a slice of bytes per write: `frame` gives the
   * offset each goes to in pack `pack`. Plain frames go to a pack of their own, and other
   * frames never to a pack holding plain ones: once its frames are compressed, a pack of plain
   * frames is removed whole.
   */
  private appender(plain = false) {
    const packs = this.packs!;
    // The last pack, never one below it: a compaction (compact.ts) may have removed a pack
    // this store appended to, and a pack number is never used twice.
    let n = Math.max(this.pack, packs.list().at(-1) ?? 0, 1);
    let end = packs.size(n);
    if (end > 0 && (plain ? n !== this.plainPack : this.holdsPlain(n))) end = packs.size(++n);
    while (end >= this.packLimit) end = packs.size(++n);
    this.pack = n;
    if (plain) this.plainPack = n;
    let at = end; // where the buffer's bytes go
    let size = 0; // bytes in the buffer
    const flush = () => {
      if (!size) return;
      packs.write(n, at, this.writeBuffer!.subarray(0, size));
      this.unsynced.add(n);
      at += size;
      size = 0;
    };
    /**
     * Appends a frame, `parts` one after the other (an array, not spread: a frame of tiny
     * payloads may have thousands); returns its offset in the pack.
     */
    const frame = (parts: readonly Uint8Array[]): number => {
      const length = parts.reduce((k, p) => k + p.byteLength, 0);
      if (size + length > PACK_WRITE_SLICE) flush();
      const offset = end;
      if (length > PACK_WRITE_SLICE) {
        // bigger than the buffer (one payload): written as it is, the buffer being empty
        for (const p of parts) {
          packs.write(n, at, p);
          at += p.byteLength;
        }
        this.unsynced.add(n);
      } else {
        const buffer = this.writeBuffer ??= new Uint8Array(PACK_WRITE_SLICE);
        for (const p of parts) {
          buffer.set(p, size);
          size += p.byteLength;
        }
      }
      end += length;
      return offset;
    };
    return { pack: n, frame, flush };
  }

  /**
   * The bytes an appender gathers for one write to a pack, filled again after each: a buffer a
   * write, and a joined copy of each plain frame before it, were megabytes a unit left to the
   * collector and to the allocator.
   */
  private writeBuffer: Uint8Array | null = null;

  /**
   * A payload's bytes; null when unknown, or when its pack lost them (cut short, deleted,
   * overwritten): never bytes other than the ones its hash names.
   */
  bytes(sha256: string): Uint8Array | null {
    return this.head(sha256, Infinity);
  }

  /** The first `maxBytes` bytes of a payload (all of it when shorter). */
  head(sha256: string, maxBytes: number): Uint8Array | null {
    const row = this.sql.stmt(`SELECT ${ROW} FROM ${FROM} WHERE p.sha256 = unhex(?)`).get(sha256) as
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
   * `sha256s` in the order their bytes are stored (by pack and place; the unknown last, as
   * given): read in this order, each frame is inflated once for all its payloads, where an
   * order of hashes inflates one for nearly every payload.
   */
  storedOrder(sha256s: readonly string[]): string[] {
    const rows = this.sql.stmt(
      `SELECT ${SHA_HEX} FROM ${FROM}
       WHERE p.sha256 IN (SELECT unhex(value) FROM json_each(?))
       ORDER BY f.pack, f.pack_offset, p.frame_offset`,
    ).all(JSON.stringify(sha256s)) as { sha256: string }[];
    const known = new Set(rows.map((r) => r.sha256));
    return [...rows.map((r) => r.sha256), ...sha256s.filter((s) => !known.has(s))];
  }

  /**
   * Payloads by hash, as stored (compressed or not), read with one query: for building search
   * texts (backlog.ts), where a payload changed under the store costs a wrong word in the
   * index, never wrong bytes shown, so they are not checked against their hash. Unknown or
   * unreadable ones are absent. A payload in a plain frame of its own (at least `FRAME_BYTES`)
   * is read only as far as `maxBytes`, as a plain frame that holds its head: a backlog slice of
   * a pasted 26 MiB prompt read it whole, to index its first 4 Mi characters.
   */
  storedMany(sha256s: readonly string[], maxBytes = Infinity): StoredPayload[] {
    if (!sha256s.length) return [];
    const rows = this.sql.stmt(
      `SELECT ${SHA_HEX}, ${ROW} FROM ${FROM}
       WHERE p.sha256 IN (SELECT unhex(value) FROM json_each(?)) ORDER BY f.pack, f.pack_offset`,
    ).all(JSON.stringify(sha256s)) as unknown as (PayloadRow & { sha256: string })[];
    const out: StoredPayload[] = [];
    // a frame read once, and sent once (one object) for all its payloads
    const frames = new Map<string, Uint8Array | null>();
    for (const row of rows) {
      // (a payload with a plain frame of its own, read as a plain frame of its head)
      const head = row.codec === CODEC_PLAIN_FRAME && row.size > maxBytes &&
        row.size >= FRAME_BYTES;
      let bytes: Uint8Array | null;
      if (head) {
        const read = this.packs?.read(
          row.pack!,
          row.pack_offset! + (row.frame_offset ?? 0),
          maxBytes,
        );
        bytes = read?.byteLength === maxBytes ? read : null;
      } else if (isFramed(row.codec)) {
        const key = `${row.pack}:${row.pack_offset}`;
        bytes = frames.get(key) ?? null;
        if (!frames.has(key)) frames.set(key, bytes = this.storedBytes(row, Infinity));
      } else bytes = this.storedBytes(row, Infinity);
      if (bytes) {
        out.push({
          sha256: row.sha256,
          size: head ? maxBytes : row.size,
          codec: row.codec,
          bytes,
          offset: head ? 0 : row.frame_offset,
        });
      }
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
    if (isFramed(row.codec)) {
      const frame = this.frame(row);
      const at = row.frame_offset ?? 0;
      if (!frame || frame.byteLength < at + row.size) return null;
      return frame.subarray(at, at + Math.min(row.size, maxBytes));
    }
    const stored = this.storedBytes(row, maxBytes);
    if (!stored) return null;
    // a raw payload read from a pack only as far as asked is its head
    if (row.codec === CODEC_RAW && stored.byteLength < row.size) return stored;
    const bytes = decodePayload(row.codec, stored, row.size);
    if (!bytes) return null;
    return maxBytes < bytes.byteLength ? bytes.subarray(0, maxBytes) : bytes;
  }

  /** The inflated frame a payload row is in (see `frameCache`); null when unreadable. */
  private frame(row: PayloadRow): Uint8Array | null {
    const key = `${row.pack}:${row.pack_offset}`;
    const kept = this.frameCache.get(key);
    if (kept) {
      this.frameCache.delete(key);
      this.frameCache.set(key, kept);
      return kept;
    }
    const stored = this.storedBytes(row, Infinity);
    const frame = stored && row.codec === CODEC_PLAIN_FRAME
      ? stored
      : stored && decodeFrame(stored, (row.frame_offset ?? 0) + row.size);
    if (!frame) return null;
    if (frame.byteLength > 2 * FRAME_BYTES) return frame; // one big payload: read once
    this.frameCache.set(key, frame);
    if (this.frameCache.size > FRAMES_KEPT) {
      this.frameCache.delete(this.frameCache.keys().next().value!);
    }
    return frame;
  }

  /** Forgets the inflated frames kept (after a forget: no forgotten bytes stay in memory). */
  dropInflated(): void {
    this.frameCache.clear();
  }

  /**
   * A payload's text (UTF-8) by its hash, whole or its first `maxChars` characters; null when
   * unknown or unreadable. Bound, so it is handed around as a `PayloadText` as it is.
   */
  readonly textOf = (sha256: string, maxChars?: number): string | null =>
    maxChars === undefined ? this.wholeText(sha256) : this.text({ sha256, size: 0 }, maxChars);

  private wholeText(sha256: string): string | null {
    const bytes = this.bytes(sha256);
    return bytes ? decoder.decode(bytes) : null;
  }

  /** The text of a payload ref (UTF-8), cut at `max` characters when given. */
  text(ref: PayloadRef | undefined, max?: number): string | null {
    if (!ref) return null;
    if ("inline" in ref) return max ? ref.inline.slice(0, max) : ref.inline;
    if (!("sha256" in ref)) return null;
    const bytes = this.head(ref.sha256, max ? openingBytes(max) : Infinity);
    if (!bytes) return null;
    return max ? openingText(bytes, max) : decoder.decode(bytes);
  }
}
