/** Content-addressed payloads: bytes are hashed once and referred to by SHA-256. */
import { createHash } from "node:crypto";
import type { PayloadRef } from "./types.ts";

const encoder = new TextEncoder();

/** Hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Text payloads share buffers: the first a pass makes is small, each next one twice the last,
 * up to the largest; a text that could need more than a quarter of that gets its own.
 */
const ARENA_MIN = 1 << 16;
const ARENA_MAX = 1 << 20;

/**
 * Collects the payloads an import pass produces, each stored once by its hash. Texts are
 * encoded side by side into shared buffers, so a pass hands over a few buffers rather than
 * one per payload.
 */
export class PayloadSink {
  readonly payloads = new Map<string, Uint8Array>();
  private arena = new Uint8Array(0);
  private used = 0;

  /** Stores text as UTF-8 bytes and returns its reference. */
  text(value: string): PayloadRef {
    // UTF-8 needs at most 3 bytes for each UTF-16 code unit.
    const room = value.length * 3;
    if (room > ARENA_MAX / 4) return this.bytes(encoder.encode(value));
    if (this.arena.byteLength - this.used < room) {
      const size = Math.min(ARENA_MAX, Math.max(ARENA_MIN, 2 * this.arena.byteLength, room));
      this.arena = new Uint8Array(size);
      this.used = 0;
    }
    const written = encoder.encodeInto(value, this.arena.subarray(this.used)).written;
    const bytes = this.arena.subarray(this.used, this.used + written);
    const sha256 = sha256Hex(bytes);
    if (!this.payloads.has(sha256)) {
      this.payloads.set(sha256, bytes);
      this.used += written; // a repeat leaves its room to the next text
    }
    return { sha256, size: written };
  }

  /** Stores a value as JSON (strings are kept as they are) and returns its reference. */
  json(value: unknown): PayloadRef {
    return this.text(typeof value === "string" ? value : JSON.stringify(value) ?? "null");
  }

  bytes(data: Uint8Array): PayloadRef {
    const sha256 = sha256Hex(data);
    if (!this.payloads.has(sha256)) this.payloads.set(sha256, data);
    return { sha256, size: data.byteLength };
  }
}

/**
 * The bytes of a UTF-8 text's opening that hold at least its first `units` UTF-16 code units:
 * a unit takes at most 3 bytes (a character of two units, 4), and a character the opening's end
 * cuts in two is decoded as one more.
 */
export const openingBytes = (units: number): number => 3 * units + 4;

const decoder = new TextDecoder();

/**
 * The first `units` UTF-16 code units of a UTF-8 text, from its `bytes` (all of them, or at
 * least its {@link openingBytes}). Its first `units` bytes are decoded first: when each gave one
 * character and the last is not a replacement (so a character of one byte, which no later byte
 * changes), they are the opening, and a pasted log of megabytes decodes a third of what its
 * opening bytes hold, where a slice of the whole decoded kept the whole alive.
 */
export function openingText(bytes: Uint8Array, units: number): string {
  if (bytes.byteLength > units) {
    const head = decoder.decode(bytes.subarray(0, units));
    if (head.length === units && head.charCodeAt(units - 1) !== 0xfffd) return head;
  }
  const text = decoder.decode(bytes.subarray(0, openingBytes(units)));
  return text.length > units ? text.slice(0, units) : text;
}

export function isHashRef(ref: PayloadRef | undefined): ref is { sha256: string; size: number } {
  return ref !== undefined && "sha256" in ref;
}

/** A stable short id derived from parts (used for operation ids that survive re-imports). */
export function stableId(prefix: string, ...parts: (string | number)[]): string {
  return prefix + sha256Hex(parts.join("\u0000")).slice(0, 16);
}
