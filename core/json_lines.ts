/**
 * Values kept as gzip of JSON lines, a gzip member a megabyte of lines, members one after the
 * other: what a share keeps of its document, and what a big session's export document keeps of
 * its steps while it is built. Read back a line at a time, a member inflated at a time, never
 * parsed as one whole.
 */
import { crc32, gzipSync, inflateRawSync } from "node:zlib";

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
 * Gzip of JSON lines (its members one after the other): its values parsed a line at a time as
 * they are asked for, from line `skip` on, as often as asked, a member inflated at a time (a
 * share of the bench's 35,342-step session, 15 MB of gzip, inflated whole held 65 MB while its
 * page was sent).
 */
export function jsonLines(gz: Uint8Array): { values(skip?: number): Generator<unknown> } {
  const decoder = new TextDecoder();
  const NL = 0x0a;
  return {
    *values(skip = 0) {
      let line = 0;
      // a packer's member holds whole lines
      for (const text of gzipMembers(gz)) {
        for (let at = 0; at < text.byteLength;) {
          let stop = text.indexOf(NL, at);
          if (stop < 0) stop = text.byteLength;
          if (stop > at && line++ >= skip) {
            yield JSON.parse(decoder.decode(text.subarray(at, stop)));
          }
          at = stop + 1;
        }
      }
    },
  };
}

/** zlib's answer with `info`: the output, and the input bytes its stream took. */
interface InflatedWithInfo {
  buffer: Uint8Array;
  engine: { bytesWritten: number };
}

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;

/**
 * Each member of a gzip file (RFC 1952) inflated in turn, checked against its trailer's CRC-32
 * and size; a damaged or cut member throws.
 */
export function* gzipMembers(gz: Uint8Array): Generator<Uint8Array> {
  const bad = (why: string) => new Error(`Not a whole gzip member: ${why}`);
  let at = 0;
  while (at < gz.byteLength) {
    if (gz[at] !== 0x1f || gz[at + 1] !== 0x8b || gz[at + 2] !== 8) throw bad("no gzip header");
    const flags = gz[at + 3];
    let start = at + 10;
    if (flags & FEXTRA) start += 2 + (gz[start] | (gz[start + 1] << 8));
    for (const field of [FNAME, FCOMMENT]) {
      if (!(flags & field)) continue;
      const end = gz.indexOf(0, start);
      if (end < 0) throw bad("a header field without its end");
      start = end + 1;
    }
    if (flags & FHCRC) start += 2;
    // raw DEFLATE stops at its stream's end: one member, however many follow it
    const { buffer: raw, engine } = inflateRawSync(gz.subarray(start), {
      info: true,
    }) as unknown as InflatedWithInfo;
    const trailer = start + engine.bytesWritten;
    if (trailer + 8 > gz.byteLength) throw bad("cut short");
    const view = new DataView(gz.buffer, gz.byteOffset + trailer, 8);
    if (
      view.getUint32(0, true) !== crc32(raw) || view.getUint32(4, true) !== raw.byteLength % 2 ** 32
    ) {
      throw bad("its CRC-32 or size does not match");
    }
    yield raw;
    at = trailer + 8;
  }
}
