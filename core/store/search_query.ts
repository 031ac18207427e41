/**
 * What a user typed, turned into the search index's query language. Pure.
 *
 * The index splits text into words of letters and digits (FTS5 `unicode61`, diacritics
 * removed) and keeps which operations hold each word, not where (`detail=none`: a seventh of
 * the size with positions, migration 24). So:
 * - a word must appear; the last one typed is a prefix (search-as-you-type) from
 *   {@link MIN_PREFIX} characters, and a shorter one is matched whole;
 * - an identifier or path typed as one chunk (`aws_access_key_id`, `core/store/store.ts`,
 *   `--max-count`, `std::vector`, `v1.2.3`) is its words in order, adjacent, with no
 *   whitespace between them (any other separators: `AWS-ACCESS-KEY-ID` matches); the index
 *   holds each two words so joined as a word of its own (search_text.ts), so it finds them;
 * - a quoted `"exact phrase"` is its words in order and adjacent, whatever separates them (an
 *   unclosed quote runs to the end);
 * - FTS syntax typed by the user (`AND`, `*`, `NEAR`, `^`, parentheses) is plain text: no input
 *   is a syntax error.
 *
 * The index finds the operations holding every pair of an identifier and every word of a
 * quoted phrase ({@link ftsQuery}); whether they stand in order and adjacent is checked on each
 * candidate's text ({@link phraseCheck}).
 */

import { INDEX_WORD, pairTerm, WORD_CHARS } from "./search_words.ts";

/** Hits are counted exactly up to this many; past it the count says "at least". */
export const COUNT_CAP = 10_000;
/**
 * With a session filter (agent, project, dates), how many of the newest matches are checked
 * against it for the count; past it the count says "at least".
 */
export const FILTERED_COUNT_SCAN = 5_000;
/** How many of the newest matching operations the session list's text filter looks at. */
export const TEXT_FILTER_WINDOW = 50_000;
/** The shortest last word searched as a prefix. */
export const MIN_PREFIX = 2;
/**
 * The one prefix length with an index of its own (migration 14). A longer prefix expands to
 * few words; a prefix of {@link MIN_PREFIX} characters is searched as the word itself or one of
 * its prefixes of this length (see `ftsQuery`).
 */
export const INDEXED_PREFIX = 3;
/** At most this many chunks (words, identifiers, phrases) of a query are used. */
const MAX_CHUNKS = 16;

/** One part of a query: the words of a word, an identifier or a quoted phrase. */
export interface QueryPart {
  /** Its words, lower-cased, as the index splits them. */
  words: string[];
  /**
   * Its last word is the one being typed (at the very end, no closing quote, no punctuation
   * after it): a prefix from {@link MIN_PREFIX} characters, shorter matched whole.
   */
  typed: boolean;
  /** Its last word is a prefix. */
  prefix: boolean;
  /** The user quoted it. */
  quoted: boolean;
}

/** The words of a text as the index splits them ({@link WORD_CHARS}), lower-cased. */
export function indexWords(text: string): string[] {
  return text.toLowerCase().match(INDEX_WORD) ?? [];
}

/** The parts of a query: quoted phrases and whitespace-separated chunks, in order. */
export function queryParts(q: string): QueryPart[] {
  const parts: QueryPart[] = [];
  const re = /"([^"]*)("?)|(\S+?)(?=\s|"|$)/gu;
  for (const m of q.matchAll(re)) {
    const quoted = m[1] !== undefined;
    const words = indexWords(quoted ? m[1] : m[3]);
    if (!words.length) continue;
    // Search-as-you-type: the word being typed is a prefix.
    const atEnd = m.index! + m[0].length === q.length;
    const open = quoted && m[2] === "";
    const typed = atEnd && (quoted ? open : /[\p{L}\p{N}]$/u.test(m[3]));
    const prefix = typed && words[words.length - 1].length >= MIN_PREFIX;
    parts.push({ words, typed, prefix, quoted });
    if (parts.length === MAX_CHUNKS) break;
  }
  return parts;
}

/** Every word of a query, lower-cased, in order (for highlighting and hints). */
export function queryTerms(q: string): string[] {
  return queryParts(q).flatMap((p) => p.words);
}

/**
 * The characters, other than a–z and 0–9, that follow a prefix of {@link MIN_PREFIX} ASCII
 * letters and digits in some indexed word (the store reads them from the index's word list).
 */
export type Continuations = (prefix: string) => readonly string[];

/** A word the tokenizer keeps as it is (lower-case ASCII letters and digits). */
const ASCII_WORD = /^[a-z0-9]+$/;

/** A word of the index, and how many operations hold it (`operations_fts_words`). */
export interface IndexWord {
  term: string;
  doc: number;
}

/**
 * How a prefix is searched when FTS5's own prefix query would be slow: the words it begins
 * that are named (each read newest first, as far as the page needs), and longer prefixes that
 * cover the rest (each merged whole by FTS5, and so only ever over small lists).
 */
export interface PrefixCover {
  words: string[];
  prefixes: string[];
}

/** The index's words that begin with a prefix, in order (null: more than the store reads). */
export type PrefixWords = (prefix: string) => readonly IndexWord[] | null;

/**
 * At most this many parts (words and prefixes) a longer prefix is searched as. Each part costs
 * about 0.07 ms for a page and its count whatever the history's size (so 128 parts, about 9
 * ms); FTS5's own prefix query merges the whole list of every word the prefix begins before it
 * answers, in proportion to the history (3,000,000 messages: 55–75 ms for a common word's
 * four-letter prefix, 5–9 ms for its 102 words named).
 */
export const MAX_PREFIX_PARTS = 128;

/**
 * A word held by at least this many operations is named rather than covered by a longer
 * prefix: merging costs about 0.2 µs an operation, naming about 70 µs a word.
 */
export const NAMED_WORD_OPS = 512;

/**
 * How to search `prefix` given the words it begins: every one named when they are few; else
 * the common ones named and the rest covered by longer prefixes, each the prefix and one more
 * character, split again where a common word begins it. Null when that takes more than
 * {@link MAX_PREFIX_PARTS} parts (FTS5's own prefix query, then). A character past ASCII after
 * the prefix has its words named: a prefix ending in it would be folded by the tokenizer.
 */
export function prefixCover(prefix: string, words: readonly IndexWord[]): PrefixCover | null {
  const cover: PrefixCover = { words: [], prefixes: [] };
  if (words.length <= MAX_PREFIX_PARTS) {
    cover.words = words.map((w) => w.term);
    return cover;
  }
  const full = () => cover.words.length + cover.prefixes.length > MAX_PREFIX_PARTS;
  const split = (p: string, ws: readonly IndexWord[]): boolean => {
    const groups = new Map<string, IndexWord[]>();
    for (const w of ws) {
      if (w.term === p) cover.words.push(w.term);
      else {
        const next = p + String.fromCodePoint(w.term.codePointAt(p.length)!);
        const group = groups.get(next);
        if (group) group.push(w);
        else groups.set(next, [w]);
      }
    }
    for (const [q, group] of groups) {
      const ascii = ASCII_WORD.test(q.slice(p.length)); // (an identifier's pair is not ASCII)
      if (group.length === 1 || !ascii) cover.words.push(...group.map((w) => w.term));
      else if (group.every((w) => w.doc < NAMED_WORD_OPS)) cover.prefixes.push(q);
      else if (!split(q, group)) return false;
      if (full()) return false;
    }
    return !full();
  };
  return split(prefix, words) ? cover : null;
}

/** What follows a short prefix in most words: always tried, whether any word has it or not. */
const ASCII_NEXT = [..."abcdefghijklmnopqrstuvwxyz0123456789"];

/**
 * Turns what a user typed into a safe FTS5 query: every word of every part must appear (the
 * index has no positions: a phrase is its words here, and {@link phraseCheck} checks their
 * order); the part being typed ends in a prefix (unless `prefix: false`). Null when nothing in
 * it is searchable.
 *
 * Only a prefix of {@link INDEXED_PREFIX} characters has an index of its own; for any other,
 * FTS5 would merge the lists of every word it begins, in proportion to the history (a short
 * prefix: hundreds of milliseconds over a million messages). So:
 * - a shorter one, with `next`, is the word itself or any of its indexed prefixes one character
 *   longer (`"ab" OR "aba"* OR …`), each read newest first as the page needs it; the
 *   characters `next` names complete the list, so the count stays exact;
 * - a longer one (an identifier's last pair too), with `words`, is the words it begins, named
 *   (`"pars" OR "parse" OR "parser"`), or when they are many, the common ones named and the
 *   rest under longer prefixes ({@link prefixCover});
 * - a prefix beyond ASCII (`пр`, `dæ`), whose folded form only the tokenizer knows, a longer
 *   one that begins no word or too many, or one without `next` or `words`, is FTS5's own
 *   prefix query: exact, and slower.
 */
export function ftsQuery(
  q: string,
  options: { prefix?: boolean; next?: Continuations; words?: PrefixWords } = {},
): string | null {
  const parts = queryParts(q);
  if (!parts.length) return null;
  const prefix = options.prefix ?? true;
  // Words are letters and digits only, so quoting them is enough to make them inert; a
  // continuation comes from the index, and is quoted all the same.
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const terms: string[] = [];
  const add = (term: string) => terms.includes(term) || terms.push(term);
  /** A prefix of ASCII letters and digits (or a pair of such words), as the words it begins. */
  const named = (prefix: string): string => {
    const words = options.words?.(prefix);
    const cover = words?.length ? prefixCover(prefix, words) : null;
    const parts = cover
      ? [...cover.words.map(quote), ...cover.prefixes.map((p) => `${quote(p)}*`)]
      : [`${quote(prefix)}*`];
    return parts.length === 1 ? parts[0] : `(${parts.join(" OR ")})`;
  };
  for (const p of parts) {
    const typing = prefix && p.prefix;
    if (!p.quoted && p.words.length > 1) {
      // An identifier: its joined pairs (search_text.ts), the last one a prefix when typed.
      for (let i = 1; i < p.words.length; i++) {
        const pair = pairTerm(p.words[i - 1], p.words[i]);
        const last = typing && i === p.words.length - 1;
        add(
          !last
            ? quote(pair)
            : ASCII_WORD.test(p.words[i - 1]) && ASCII_WORD.test(p.words[i])
            ? named(pair)
            : `${quote(pair)}*`,
        );
      }
      continue;
    }
    for (const w of p.words.slice(0, typing ? -1 : undefined)) add(quote(w));
    if (!typing) continue;
    const last = p.words[p.words.length - 1];
    if (!ASCII_WORD.test(last)) {
      add(`${quote(last)}*`);
      continue;
    }
    if (last.length > INDEXED_PREFIX) {
      add(named(last));
      continue;
    }
    if (!options.next || last.length === INDEXED_PREFIX) {
      add(`${quote(last)}*`);
      continue;
    }
    const next = [...ASCII_NEXT, ...options.next(last).filter((c) => !ASCII_NEXT.includes(c))];
    add(`(${[quote(last), ...next.map((c) => `${quote(last + c)}*`)].join(" OR ")})`);
  }
  return terms.join(" AND ");
}

/**
 * Folds a text as the index does before it compares words: diacritics off (`é` → `e`), so a
 * phrase is checked on the words the index matched. Text without them is returned as it is.
 */
function fold(text: string): string {
  // deno-lint-ignore no-control-regex
  return /[^\x00-\x7f]/.test(text) ? text.replace(/[^\x00-\x7f]/g, baseLetter) : text;
}

/**
 * A letter with diacritics written as one character (`é`) is its base letter (`e`), as the
 * tokenizer folds it; a combining mark written on its own is left: the tokenizer splits on it.
 */
function baseLetter(c: string): string {
  let base = BASES.get(c);
  if (base === undefined) {
    const d = c.normalize("NFD");
    base = d.length > 1 && /^\p{L}\p{Mn}+$/u.test(d) ? d[0] : c;
    if (BASES.size > 4096) BASES.clear();
    BASES.set(c, base);
  }
  return base;
}
const BASES = new Map<string, string>();

/**
 * Whether a candidate's text holds every phrase of the query (a part of several words: an
 * identifier, a path, a quoted phrase) with its words in order and adjacent, separated by
 * anything but letters and digits. Null when the query has no phrase the index cannot answer
 * exactly: then its answer is exact as it is. An identifier of two words is one joined pair,
 * which says just that (no whitespace between, search_text.ts), so only a longer one (its pairs
 * may stand apart) and a quoted phrase are checked. The last word of the part being typed is a
 * prefix, as in {@link ftsQuery}.
 */
export function phraseCheck(
  q: string,
  options: { prefix?: boolean } = {},
): ((text: string) => boolean) | null {
  const prefix = options.prefix ?? true;
  const checked = (p: QueryPart) => p.words.length > 2 || (p.quoted && p.words.length > 1);
  const phrases = queryParts(q).filter(checked).map((p) =>
    partPattern(p.words.map(fold), prefix && p.prefix, !p.quoted)
  );
  if (!phrases.length) return null;
  return (text) => {
    const folded = fold(text);
    return phrases.every((re) => re.test(folded));
  };
}

const esc = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * One part's words in order, any separators between them, whole words only (as the index
 * matches them); the prefix part's last word followed by the rest of its word.
 */
function partPattern(words: readonly string[], prefix: boolean, joined = false): RegExp {
  const ws = words.map(esc);
  const w = WORD_CHARS;
  if (prefix) ws[ws.length - 1] += `[${w}]*`;
  const between = joined ? `[^${w}\\s]+` : `[^${w}]+`;
  return new RegExp(`(?<![${w}])${ws.join(between)}(?![${w}])`, "iu");
}

/**
 * A regular expression that finds what the query matches in a text, for snippets and
 * highlighting: each part's words in order with any separators between them, the prefix part's
 * last word followed by the rest of its word.
 */
export function matchPattern(q: string): RegExp | null {
  const parts = queryParts(q);
  if (!parts.length) return null;
  return new RegExp(parts.map((p) => partPattern(p.words, p.prefix).source).join("|"), "giu");
}
