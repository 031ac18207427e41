/**
 * How a payload is stored: its own bytes, raw DEFLATE when that pays (a payload kept in the
 * database), or a place in a frame: consecutive payloads of one unit compressed together with
 * Zstandard, in a pack file. Pure (no store): the store compresses as it writes (the import
 * worker, the busier thread of an import, sends payloads raw), and the search-text worker
 * decodes what it reads.
 *
 * A bulk import writes its frames uncompressed ({@link CODEC_PLAIN_FRAME}) and compresses them
 * once its search backlog is indexed: on the 300 MB corpus Zstandard took 0.75-0.85 s of the
 * writer's 2.5-2.7 s before every session was browsable.
 *
 * Why frames: most payloads are small (half of them under 1 KiB), and alone each compresses
 * poorly. A 300 MB corpus's 138 MB of payloads took 65 MB stored one by one with DEFLATE, and
 * 39 MB in 128 KiB Zstandard frames, for the same CPU (about 1 s); reading one back inflates
 * its frame, about 0.3 ms, and a reader keeps the last frames it inflated.
 */
import { joinBytes } from "../bytes.ts";
import {
  constants,
  deflateRawSync,
  inflateRawSync,
  zstdCompressSync,
  zstdDecompressSync,
} from "node:zlib";

/** Stored as the payload's own bytes. */
export const CODEC_RAW = 0;
/** Stored as raw DEFLATE (RFC 1951, `node:zlib`'s deflateRaw) at level 1: fast. */
export const CODEC_DEFLATE = 1;
/**
 * Stored as `size` bytes at `frame_offset` of a frame: a Zstandard frame (RFC 8878) of
 * consecutive payloads, `stored` bytes long at its `pack_offset` in a pack.
 */
export const CODEC_FRAME = 2;
/**
 * Stored as `size` bytes at `frame_offset` of a frame of consecutive payloads kept as they are
 * (not compressed), `stored` bytes long at its `pack_offset` in a pack of such frames only:
 * what a bulk import writes, its sessions browsable sooner; once its search backlog is indexed
 * each such frame is compressed into a {@link CODEC_FRAME} elsewhere, and its pack removed
 * (`compressFrames` in core/store/import.ts).
 */
export const CODEC_PLAIN_FRAME = 3;

/** A payload stored in a frame of several (compressed or not): its bytes are the frame's. */
export function isFramed(codec: number): boolean {
  return codec === CODEC_FRAME || codec === CODEC_PLAIN_FRAME;
}
/** Payloads smaller than this are stored as they are: compression would win nothing. */
const COMPRESS_MIN_BYTES = 256;
/** The largest output buffer compression starts with. */
const COMPRESS_CHUNK_MAX = 64 << 10;
/** A payload is kept compressed only when that saves at least an eighth of it. */
const COMPRESS_KEEP = 0.875;

export interface StoredBytes {
  codec: number;
  bytes: Uint8Array;
}

/** How a payload is stored: compressed when that pays, else as it is. */
export function encodePayload(bytes: Uint8Array): StoredBytes {
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return { codec: CODEC_RAW, bytes };
  // An output buffer the payload's size (not the default 16 KiB) for most payloads, which are
  // small: a quarter less CPU per payload, most of it the allocation and its garbage.
  const z = deflateRawSync(bytes, {
    level: 1,
    chunkSize: Math.min(COMPRESS_CHUNK_MAX, bytes.byteLength + 64),
  });
  return z.byteLength <= bytes.byteLength * COMPRESS_KEEP
    ? { codec: CODEC_DEFLATE, bytes: new Uint8Array(z.buffer, z.byteOffset, z.byteLength) }
    : { codec: CODEC_RAW, bytes };
}

/** The largest output buffer inflating starts with. */
const INFLATE_CHUNK_MAX = 16 << 20;

/**
 * A stored payload's own bytes, given how it is stored and its size; null when they cannot
 * be its (a codec of a newer Chronicle, bytes changed under the store).
 */
export function decodePayload(codec: number, bytes: Uint8Array, size: number): Uint8Array | null {
  if (codec === CODEC_RAW) return bytes;
  if (codec !== CODEC_DEFLATE) return null;
  let raw: Uint8Array;
  try {
    // An output buffer of the payload's size: one allocation, not one per 16 KiB (a search
    // backlog's 77,000 payloads inflate in a third of the time).
    raw = inflateRawSync(bytes, { chunkSize: Math.min(Math.max(size, 64), INFLATE_CHUNK_MAX) });
  } catch {
    return null;
  }
  return raw.byteLength === size
    ? new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)
    : null;
}

/** A frame holds consecutive payloads up to about this many bytes. */
export const FRAME_BYTES = 128 << 10;
/** Zstandard's level 3 (its default): within 1% of level 5's size at half its CPU. */
const FRAME_LEVEL = 3;

/**
 * Where each frame of consecutive payloads ends (exclusive indexes into `sizes`): a frame
 * closes once it holds {@link FRAME_BYTES}, and a payload that big is a frame of its own, so
 * a frame of several payloads never inflates beyond twice that.
 */
export function frameEnds(sizes: ArrayLike<number>): number[] {
  const ends: number[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (sizes[i] >= FRAME_BYTES && i > start) {
      ends.push(i);
      start = i;
      bytes = 0;
    }
    bytes += sizes[i];
    if (bytes >= FRAME_BYTES) {
      ends.push(i + 1);
      start = i + 1;
      bytes = 0;
    }
  }
  if (start < sizes.length) ends.push(sizes.length);
  return ends;
}

/** The payloads `parts` one after the other: a frame as it is stored uncompressed. */
export function plainFrame(parts: readonly Uint8Array[]): Uint8Array {
  return joinBytes(parts);
}

/** One frame of the payloads `parts`, in their order. */
export function encodeFrame(parts: readonly Uint8Array[]): Uint8Array {
  const z = zstdCompressSync(plainFrame(parts), {
    params: { [constants.ZSTD_c_compressionLevel]: FRAME_LEVEL },
  });
  return new Uint8Array(z.buffer, z.byteOffset, z.byteLength);
}

/** Plain frames ({@link CODEC_PLAIN_FRAME}'s bytes), each compressed into one frame, in order. */
export function compressPlainFrames(frames: readonly Uint8Array[]): Uint8Array[] {
  return frames.map((f) => encodeFrame([f]));
}

/**
 * A frame's bytes, inflated; null when they cannot be a frame holding `needed` bytes (cut
 * short, changed under the store). Never inflates beyond what a frame can hold, so a damaged
 * pack cannot make a reader allocate without bound.
 */
export function decodeFrame(bytes: Uint8Array, needed: number): Uint8Array | null {
  let raw: Uint8Array;
  try {
    raw = zstdDecompressSync(bytes, { maxOutputLength: Math.max(2 * FRAME_BYTES, needed) });
  } catch {
    return null;
  }
  return raw.byteLength >= needed
    ? new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)
    : null;
}

/** A payload as stored, wherever it was read: its codec, bytes and, in a frame, its place. */
export interface StoredForm {
  codec: number;
  /** Its own bytes, DEFLATE, or (CODEC_FRAME) the whole frame's. */
  bytes: Uint8Array;
  size: number;
  /** Where it starts in its inflated frame (CODEC_FRAME). */
  offset?: number | null;
}

/**
 * Frames already inflated, by the frame's stored bytes (a reader passes the same bytes for
 * every payload of a frame): a slice of payloads inflates each of its frames once.
 */
export type InflatedFrames = Map<Uint8Array, Uint8Array | null>;

/** A stored payload's own bytes (see {@link decodePayload}); a frame's through `frames`. */
export function decodeStored(p: StoredForm, frames: InflatedFrames): Uint8Array | null {
  const offset = p.offset ?? 0;
  if (p.codec === CODEC_PLAIN_FRAME) {
    return p.bytes.byteLength >= offset + p.size ? p.bytes.subarray(offset, offset + p.size) : null;
  }
  if (p.codec !== CODEC_FRAME) return decodePayload(p.codec, p.bytes, p.size);
  let frame = frames.get(p.bytes);
  if (frame === undefined) {
    frame = decodeFrame(p.bytes, offset + p.size);
    frames.set(p.bytes, frame);
  }
  return frame && frame.byteLength >= offset + p.size
    ? frame.subarray(offset, offset + p.size)
    : null;
}
