/** Content-addressed payloads: bytes are hashed once and referred to by SHA-256. */
import { createHash } from "node:crypto";
import type { PayloadRef } from "./types.ts";

const encoder = new TextEncoder();

/** Hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Collects the payloads an import pass produces, each stored once by its hash. */
export class PayloadSink {
  readonly payloads = new Map<string, Uint8Array>();

  /** Stores text as UTF-8 bytes and returns its reference. */
  text(value: string): PayloadRef {
    return this.bytes(encoder.encode(value));
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

export function isHashRef(ref: PayloadRef | undefined): ref is { sha256: string; size: number } {
  return ref !== undefined && "sha256" in ref;
}

/** A stable short id derived from parts (used for operation ids that survive re-imports). */
export function stableId(prefix: string, ...parts: (string | number)[]): string {
  return prefix + sha256Hex(parts.join("\u0000")).slice(0, 16);
}
