/**
 * The text the search index holds for an operation: what the session view shows of it — its
 * own words (prompt, reply, thinking, tool name, summary, target), its tool input and its whole
 * output. Pure, so it can run wherever the payload bytes are.
 */
import { openingBytes, openingText } from "../model/payload.ts";
import { PAIR_MARK, pairTerm, WORD_CHARS } from "./search_words.ts";

/**
 * How much of one payload is indexed (and searched for a snippet): all of any payload up to
 * this size, the opening of a bigger one, so one huge output costs bounded memory.
 */
export const INDEXED_PAYLOAD_BYTES = 4 << 20;

/**
 * How much of an operation's own text (a prompt, reply or thinking) is indexed, searched and
 * shown in a hit, as of a payload: a pasted 28 MiB log is its first 4 Mi characters there.
 */
export const INDEXED_TEXT_CHARS = INDEXED_PAYLOAD_BYTES;

/** The bytes of a UTF-8 text's opening that hold its first {@link INDEXED_TEXT_CHARS}. */
export const INDEXED_TEXT_BYTES = openingBytes(INDEXED_TEXT_CHARS);

/** `text` as far as it is indexed ({@link INDEXED_TEXT_CHARS}). */
export const indexedText = (text: string): string =>
  text.length > INDEXED_TEXT_CHARS ? text.slice(0, INDEXED_TEXT_CHARS) : text;

const decoder = new TextDecoder();

/**
 * A text's UTF-8 `bytes` (all of them, or their first {@link INDEXED_TEXT_BYTES}) decoded as
 * far as the text is indexed: what the index reads of a text left to its payload.
 */
export const indexedTextOf = (bytes: Uint8Array): string => openingText(bytes, INDEXED_TEXT_CHARS);

/**
 * The words of a payload: its text, or the string values of a JSON payload (a tool input is
 * JSON: indexing it raw would glue `\n` escapes to the next word and index its keys).
 */
export function payloadWords(payload: Uint8Array | string): string {
  const text = typeof payload === "string"
    ? payload.slice(0, INDEXED_PAYLOAD_BYTES)
    : decoder.decode(payload.subarray(0, INDEXED_PAYLOAD_BYTES));
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[" && start !== '"') return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Cut at the cap, or not JSON after all: drop the escapes that would join words.
    return text.replace(/\\[nrtbf"\\/]/g, " ");
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join("\n");
}

/**
 * What the index is given for an operation, from its own words and its payloads (either may
 * be absent): its text's {@link indexBody}; with `forIndex` false, the text itself, which a
 * phrase is checked on.
 */
export function searchBody(
  words: string,
  input: Uint8Array | string | null,
  output: Uint8Array | string | null,
  forIndex = true,
): string {
  const parts = [words];
  if (input !== null) parts.push(payloadWords(input));
  if (output !== null) parts.push(payloadWords(output));
  const text = parts.filter(Boolean).join("\n");
  return forIndex ? indexBody(text) : text;
}

/**
 * The index body of a text: each of its chunks once (runs the index never splits, see
 * {@link scanText}), then its {@link joinedPairs}. The index keeps which operations hold a word,
 * not where or how often (migration 24), so the chunks hold every word of the text for it; a
 * text that repeats its words gives the tokenizer a fraction of its length (the 300 MB Codex
 * history's index: the main thread's CPU 3.7 -> 2.9 s, peak RSS 300 -> 230 MB).
 */
export function indexBody(text: string): string {
  const { chunks, pairs } = scanText(text);
  const body = chunks.join(" ");
  return pairs.length ? `${body}\n${pairs.join(" ")}` : body;
}

/** Whitespace between two words: they are not one identifier. */
const SPACE = /\s/;

/**
 * Each two words that follow each other with no whitespace between them (in an identifier,
 * a path, a flag, a version: `aws_access_key_id`, `src/main.rs`), joined ({@link pairTerm}),
 * separated by spaces, each pair once. The index has no positions (migration
 * 24): these pairs are how it finds an identifier typed as one chunk without reading every text
 * that holds its words (search_query.ts). A tenth of a typical text's size, two fifths of its
 * index's. Text already holding the mark makes no pairs of it: a pair is only ever a hint,
 * which the search checks on the text.
 */
export function joinedPairs(text: string): string {
  return scanText(text).pairs.join(" ");
}

/**
 * A character as the scan sees it: in a word (`WORD_CHARS`, and so in a chunk); whitespace
 * (two words it stands between are not one identifier); other punctuation or symbols beyond
 * ASCII (between words, in a chunk); ASCII punctuation, symbols and controls (between words
 * and between chunks).
 */
const WORD = 0, SPACE_CHAR = 1, OTHER = 2, CUT = 3;
type Kind = typeof WORD | typeof SPACE_CHAR | typeof OTHER | typeof CUT;
/** Of each UTF-16 code unit below 0x10000: 0 not known yet, else 1 + its kind. */
const KINDS = new Uint8Array(0x10000);
const WORD_CHAR = new RegExp(`^[${WORD_CHARS}]$`, "u");

function kindOf(ch: string, code: number): Kind {
  if (WORD_CHAR.test(ch)) return WORD;
  if (SPACE.test(ch)) return SPACE_CHAR;
  return code < 0x80 ? CUT : OTHER;
}

const MARK_CODE = PAIR_MARK.charCodeAt(0);
/** The kind of each ASCII code unit (see {@link kindOf}). */
const ASCII_KINDS = Uint8Array.from({ length: 0x80 }, (_, c) => kindOf(String.fromCharCode(c), c));

/** A hash of code units, one at a time (kept in 30 bits: a small integer, a fast Map key). */
const mix = (h: number, c: number) => Math.imul(h ^ c, 0x5bd1e995) & 0x3fffffff;
const SEED = 0x2545f491 & 0x3fffffff;

/**
 * Strings of one text, each kept once, in the order first met: found again by a hash of their
 * characters and checked against the string kept (a Set of strings hashed every piece of a big
 * text anew: the slower half of indexing).
 */
export class Distinct {
  readonly values: string[] = [];
  private readonly byHash = new Map<number, string>();
  /** The strings whose hash another string had first. */
  private readonly others = new Set<string>();

  /** Adds `text` from `start` to `end` (its hash `h`) unless it is held. */
  addSlice(h: number, text: string, start: number, end: number): void {
    const held = this.byHash.get(h);
    if (held !== undefined && held.length === end - start && sameAt(held, 0, text, start, end)) {
      return;
    }
    this.keep(h, held, text.slice(start, end));
  }

  /** Adds the pair (`pairTerm`) of two words of `text` (its hash `h`) unless it is held. */
  addPair(h: number, text: string, ps: number, pe: number, ws: number, we: number): void {
    const held = this.byHash.get(h);
    const at = 1 + pe - ps;
    if (
      held !== undefined && held.length === at + 1 + we - ws && held.charCodeAt(0) === MARK_CODE &&
      held.charCodeAt(at) === MARK_CODE && sameAt(held, 1, text, ps, pe) &&
      sameAt(held, at + 1, text, ws, we)
    ) return;
    this.keep(h, held, pairTerm(text.slice(ps, pe), text.slice(ws, we)));
  }

  /** Keeps `v`, new unless another string with its hash (`held`) came first and `v` too. */
  private keep(h: number, held: string | undefined, v: string): void {
    if (held === undefined) this.byHash.set(h, v);
    else if (this.others.has(v)) return;
    else this.others.add(v);
    this.values.push(v);
  }
}

/** Whether `held`, from `at`, is `text` from `start` to `end`. */
function sameAt(held: string, at: number, text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    if (held.charCodeAt(at + k - start) !== text.charCodeAt(k)) return false;
  }
  return true;
}

/**
 * A text's chunks and joined pairs, each once, in one pass over its characters (by hand: a
 * regular expression's match objects made building the index's texts the slower half of
 * indexing).
 * - A chunk is a run of characters the index never splits: all but ASCII punctuation, symbols,
 *   spaces and controls, each of which `unicode61` splits on; whatever else it splits on, it
 *   splits a chunk the same wherever the chunk stands, so a text's chunks hold its words.
 * - A word is a run of `WORD_CHARS`, as the index splits text; two words with no whitespace
 *   between them make a pair, unless either holds {@link PAIR_MARK}.
 */
export function scanText(text: string): { chunks: string[]; pairs: string[] } {
  const chunks = new Distinct();
  const pairs = new Distinct();
  const n = text.length;
  let chunkStart = -1;
  let chunkHash = 0;
  let wordStart = -1;
  let wordHash = 0;
  let marked = false;
  /** The word before, when it may pair with the next (-1 after whitespace or a marked word). */
  let prevStart = -1;
  let prevEnd = 0;
  let prevHash = 0;
  for (let i = 0; i <= n; i++) {
    let kind: Kind = CUT;
    let width = 1;
    let c = 0;
    let d = 0;
    if (i < n) {
      c = text.charCodeAt(i);
      if (c < 0x80) kind = ASCII_KINDS[c] as Kind;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        // a character beyond the first 65,536: its two code units, classified together
        d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          width = 2;
          kind = kindOf(text.slice(i, i + 2), c);
        } else kind = kindOf(text[i], c);
      } else {
        kind = (KINDS[c] ||= kindOf(text[i], c) + 1) - 1 as Kind;
        if (c === MARK_CODE) marked = true;
      }
    }
    if (kind === WORD) {
      if (wordStart < 0) {
        wordStart = i;
        wordHash = SEED;
      }
      wordHash = mix(wordHash, c);
      if (width === 2) wordHash = mix(wordHash, d);
    } else if (wordStart >= 0) {
      if (prevStart >= 0 && !marked) {
        pairs.addPair(
          mix(mix(prevHash, MARK_CODE), wordHash),
          text,
          prevStart,
          prevEnd,
          wordStart,
          i,
        );
      }
      prevStart = marked ? -1 : wordStart;
      prevEnd = i;
      prevHash = wordHash;
      wordStart = -1;
      marked = false;
    }
    if (kind === SPACE_CHAR) prevStart = -1;
    if (kind !== CUT && kind !== SPACE_CHAR) {
      if (chunkStart < 0) {
        chunkStart = i;
        chunkHash = SEED;
      }
      chunkHash = mix(chunkHash, c);
      if (width === 2) chunkHash = mix(chunkHash, d);
    } else if (chunkStart >= 0) {
      chunks.addSlice(mix(chunkHash, i - chunkStart), text, chunkStart, i);
      chunkStart = -1;
    }
    i += width - 1;
  }
  return { chunks: chunks.values, pairs: pairs.values };
}
