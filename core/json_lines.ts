/**
 * Values kept as gzip of JSON lines, a gzip member a megabyte of lines, members one after the
 * other: what a share keeps of its document, and what a big session's export document keeps of
 * its steps while it is built. Read back a line at a time, never parsed as one whole.
 */
import { gunzipSync, gzipSync } from "node:zlib";

/** Characters of lines packed into one gzip member. */
export const MEMBER_CHARS = 1 << 20;

/**
 * Packs values a line each: `add` gives a member once a megabyte of lines is full, `flush` the
 * lines left (null when none). `level`: zlib's compression level (default zlib's own).
 */
export function jsonLinesPacker(options: { level?: number } = {}): {
  add(value: unknown): Uint8Array | null;
  flush(): Uint8Array | null;
} {
  let batch = "";
  const flush = () => {
    const member = batch ? gzipSync(batch, { level: options.level }) : null;
    batch = "";
    return member;
  };
  return {
    add(value) {
      batch += JSON.stringify(value) + "\n";
      return batch.length >= MEMBER_CHARS ? flush() : null;
    },
    flush,
  };
}

/**
 * Gzip of JSON lines (its members one after the other), inflated once: its values parsed a line
 * at a time as they are asked for, from line `skip` on, as often as asked.
 */
export function jsonLines(gz: Uint8Array): { values(skip?: number): Generator<unknown> } {
  const text = gunzipSync(gz); // bytes, decoded a line at a time
  const decoder = new TextDecoder();
  const NL = 0x0a;
  return {
    *values(skip = 0) {
      let line = 0;
      for (let at = 0; at < text.byteLength;) {
        let stop = text.indexOf(NL, at);
        if (stop < 0) stop = text.byteLength;
        if (stop > at && line++ >= skip) {
          yield JSON.parse(decoder.decode(text.subarray(at, stop)));
        }
        at = stop + 1;
      }
    },
  };
}
