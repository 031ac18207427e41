/**
 * @module
 * An over-long JSON text read in bounded memory. A line longer than the longest one parsed whole
 * (`MAX_LINE_BYTES`: a tool's 200 MB output, an image kept inline) passes through a
 * {@link JsonCutter} as it is read, chunk by chunk, and is never held whole: its structure is
 * copied as it is, and each string keeps its first `keep` bytes, the rest skipped up to its
 * closing quote and replaced by a mark saying how many bytes went. What comes out is valid JSON
 * whenever what went in was, so it is parsed like any line, and the record (its prompt, its
 * call, its ids and times) is kept; the reader reports the cut as a loss.
 *
 * A line that comes to more than `max` ({@link MAX_CUT_BYTES}) even cut (millions of short
 * strings, or numbers) cannot be bounded this way: the cutter gives up, and the line is a loss as
 * before.
 */
import { cutMark, MAX_CUT_BYTES } from "../model/cut_mark.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

/** How much of each string an over-long line keeps: 1 MiB. */
export const KEEP_TEXT_BYTES = 1 << 20;

/** What a cutter made of a text. */
export interface CutJson {
  /** The text with its long strings cut: valid JSON when the input was. */
  bytes: Uint8Array;
  /** How many strings were cut. */
  texts: number;
  /** How many bytes their cuts left out (as they stood in the JSON, escapes and all). */
  cutBytes: number;
}

/** Where the cutter stands: between strings (bytes copied), inside a string before its `keep`
 * bytes (copied), or past them (counted up to the closing quote). */
const OUTSIDE = 0, KEEP = 1, SKIP = 2;

const encoder = new TextEncoder();

/** What a loss says of a text (`what`: a line, a document) read with its long texts cut. */
function cutReason(what: string, max: number, keep: number, made: CutJson): string {
  const texts = made.texts === 1 ? "1 text" : `${made.texts} texts`;
  return `${what} longer than ${max} bytes: ${texts} cut after ${keep} bytes, ` +
    `${made.cutBytes} bytes left out`;
}

/** A loss window's reason written by {@link cutReason}. */
export const CUT_REASON = /^\w+ longer than \d+ bytes: \d+ texts? cut after \d+ bytes/;

/**
 * A cutter for a text found longer than `max` (the most read whole), fed the pieces read so far;
 * what it makes comes to `MAX_CUT_BYTES` at most.
 */
export function cutterAfter(read: Iterable<Uint8Array>, max: number, keep: number): JsonCutter {
  const cutter = new JsonCutter(Math.min(max, MAX_CUT_BYTES), keep);
  for (const piece of read) cutter.push(piece);
  return cutter;
}

/**
 * What an over-long text (`what`: a line, a document; longer than `max`) came to: its bytes cut
 * and the loss's reason, or why it could not be cut short enough.
 */
export function cutOutcome(
  cutter: JsonCutter,
  what: string,
  max: number,
): { bytes: Uint8Array; reason: string } | { error: string } {
  const made = cutter.finish();
  if (!made) return { error: `${what} longer than ${max} bytes` };
  return { bytes: made.bytes, reason: cutReason(what, max, cutter.keep, made) };
}

/**
 * Copies a JSON text pushed to it in pieces, cutting every string after its first `keep` bytes
 * (at a character's boundary, never inside an escape), into at most `max` bytes.
 */
export class JsonCutter {
  #out: Uint8Array;
  #used = 0;
  #mode: typeof OUTSIDE | typeof KEEP | typeof SKIP = OUTSIDE;
  /**
   * Where the current escape stands: 0 none, -1 after its backslash, 1-4 the hex digits of a
   * `\u` escape still to come.
   */
  #escape = 0;
  #kept = 0;
  #skipped = 0;
  #texts = 0;
  #cutBytes = 0;
  #failed = false;

  constructor(readonly max = MAX_CUT_BYTES, readonly keep = KEEP_TEXT_BYTES) {
    this.#out = new Uint8Array(Math.min(max, 1 << 16));
  }

  /** Takes the next piece; false once the text cannot fit in `max` bytes (the cutter gave up). */
  push(bytes: Uint8Array): boolean {
    if (this.#failed) return false;
    let run = this.#mode === SKIP ? -1 : 0; // the start of the bytes to copy, if any
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (this.#mode === OUTSIDE) {
        if (b === QUOTE) {
          this.#mode = KEEP;
          this.#kept = 0;
          this.#escape = 0;
        }
      } else if (this.#mode === KEEP) {
        if (this.#escape === -1) this.#escape = b === LOWER_U ? 4 : 0;
        else if (this.#escape > 0) this.#escape--;
        else if (b === QUOTE) this.#mode = OUTSIDE;
        else if (this.#kept >= this.keep && (b & 0xc0) !== 0x80) {
          // a character's first byte, outside any escape: the string is cut before it
          if (!this.#copy(bytes, run, i)) return false;
          run = -1;
          this.#mode = SKIP;
          this.#skipped = 1;
          if (b === BACKSLASH) this.#escape = -1;
          continue;
        } else if (b === BACKSLASH) this.#escape = -1;
        this.#kept++;
      } else if (this.#escape !== 0) {
        this.#escape = 0; // a skipped escape's hex digits are neither quotes nor backslashes
        this.#skipped++;
      } else {
        // skipping: on to the next quote that no backslash escapes (an odd run of them before it)
        const q = bytes.indexOf(QUOTE, i);
        const end = q === -1 ? bytes.length : q;
        let slashes = 0;
        while (end - slashes - 1 >= i && bytes[end - slashes - 1] === BACKSLASH) slashes++;
        if (q === -1 || slashes % 2 === 1) {
          // the piece ends (a backslash ending it escapes the next one's first byte), or the
          // quote is escaped: skipped with the rest
          this.#skipped += end - i + (q === -1 ? 0 : 1);
          if (q === -1) {
            if (slashes % 2 === 1) this.#escape = -1;
            break;
          }
          i = q;
        } else {
          this.#skipped += q - i;
          if (!this.#mark()) return false;
          this.#mode = OUTSIDE;
          i = q;
          run = i; // the closing quote is copied
        }
      }
    }
    return run === -1 || this.#copy(bytes, run, bytes.length);
  }

  /** The text as cut, or null when it did not fit in `max` bytes. */
  finish(): CutJson | null {
    if (this.#failed) return null;
    if (this.#mode === SKIP && !this.#mark()) return null; // ends inside a string: will not parse
    return {
      bytes: this.#out.subarray(0, this.#used),
      texts: this.#texts,
      cutBytes: this.#cutBytes,
    };
  }

  #mark(): boolean {
    this.#texts++;
    this.#cutBytes += this.#skipped;
    const mark = encoder.encode(cutMark(this.#skipped));
    return this.#copy(mark, 0, mark.length);
  }

  #copy(bytes: Uint8Array, from: number, to: number): boolean {
    const n = to - from;
    if (n <= 0) return true;
    if (this.#used + n > this.max) {
      this.#failed = true;
      this.#out = new Uint8Array(0);
      return false;
    }
    if (this.#used + n > this.#out.length) {
      const grown = new Uint8Array(
        Math.min(this.max, Math.max(2 * this.#out.length, this.#used + n)),
      );
      grown.set(this.#out.subarray(0, this.#used));
      this.#out = grown;
    }
    this.#out.set(bytes.subarray(from, to), this.#used);
    this.#used += n;
    return true;
  }
}
