/**
 * How a payload is stored: its own bytes, or raw DEFLATE when that pays. Pure (no store), so
 * the import worker compresses a unit's payloads while the main thread writes the previous
 * unit, and the store compresses only what reaches it uncompressed (canonical imports, tests).
 */
import { deflateRawSync } from "node:zlib";

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
