/**
 * How a payload is stored: its own bytes, or raw DEFLATE when that pays. Pure (no store), so
 * the import worker compresses a unit's payloads while the main thread writes the previous
 * unit, and the store compresses only what reaches it uncompressed (canonical imports, tests).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";

/** Stored as the payload's own bytes. */
export const CODEC_RAW = 0;
/** Stored as raw DEFLATE (RFC 1951, `node:zlib`'s deflateRaw) at level 1: fast. */
export const CODEC_DEFLATE = 1;
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
