/**
 * What a user typed, turned into the search index's query language. Pure.
 *
 * The index splits text into words of letters and digits (FTS5 `unicode61`, diacritics
 * removed), keeping each word's position. So:
 * - a word must appear; the last one typed is a prefix (search-as-you-type) from
 *   {@link MIN_PREFIX} characters, and a shorter one is matched whole;
 * - an identifier or path typed as one chunk (`aws_access_key_id`, `core/store/store.ts`,
 *   `--max-count`, `std::vector`, `v1.2.3`) is the phrase of its words, in order and adjacent;
 * - a quoted `"exact phrase"` is a phrase (an unclosed quote runs to the end);
 * - FTS syntax typed by the user (`AND`, `*`, `NEAR`, `^`, parentheses) is plain text: no input
 *   is a syntax error.
 */

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
  /** Its last word is a prefix. */
  prefix: boolean;
  /** The user quoted it. */
  quoted: boolean;
}

/** The words of a text as the index splits them (letters and digits), lower-cased. */
export function indexWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}\p{Co}]+/gu) ?? [];
}

/** The parts of a query: quoted phrases and whitespace-separated chunks, in order. */
export function queryParts(q: string): QueryPart[] {
  const parts: QueryPart[] = [];
  const re = /"([^"]*)("?)|(\S+?)(?=\s|"|$)/gu;
  for (const m of q.matchAll(re)) {
    const quoted = m[1] !== undefined;
    const words = indexWords(quoted ? m[1] : m[3]);
    if (!words.length) continue;
    // Search-as-you-type: the word being typed (at the very end, no closing quote, no
    // punctuation after it) is a prefix.
    const atEnd = m.index! + m[0].length === q.length;
    const open = quoted && m[2] === "";
    const typing = atEnd && (quoted ? open : /[\p{L}\p{N}]$/u.test(m[3]));
    const prefix = typing && words[words.length - 1].length >= MIN_PREFIX;
    parts.push({ words, prefix, quoted });
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

/** What follows a short prefix in most words: always tried, whether any word has it or not. */
const ASCII_NEXT = [..."abcdefghijklmnopqrstuvwxyz0123456789"];

/**
 * Turns what a user typed into a safe FTS5 query: every part must appear; a part of several
 * words is a phrase; the part being typed ends in a prefix (unless `prefix: false`). Null when
 * nothing in it is searchable.
 *
 * A prefix shorter than {@link INDEXED_PREFIX} has no index: FTS5 would merge the positions of
 * every word it begins, hundreds of milliseconds over a million messages. With `next`, it is
 * the word itself or any of its indexed prefixes one character longer (`"ab" OR "aba"* OR …`),
 * each read newest first as the page needs it; the characters `next` names complete the list,
 * so the count stays exact. A short prefix beyond ASCII (`пр`, `dæ`), whose folded form only the
 * tokenizer knows, or one without `next`, is FTS5's own prefix query: exact, and slower.
 */
export function ftsQuery(
  q: string,
  options: { prefix?: boolean; next?: Continuations } = {},
): string | null {
  const parts = queryParts(q);
  if (!parts.length) return null;
  const prefix = options.prefix ?? true;
  // Words are letters and digits only, so quoting them is enough to make them inert; a
  // continuation comes from the index, and is quoted all the same.
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  return parts.map((p) => {
    const phrase = p.words.join(" ");
    if (!prefix || !p.prefix) return quote(phrase);
    const last = p.words[p.words.length - 1];
    if (!options.next || last.length >= INDEXED_PREFIX || !/^[a-z0-9]+$/.test(last)) {
      return `${quote(phrase)}*`;
    }
    const next = [...ASCII_NEXT, ...options.next(last).filter((c) => !ASCII_NEXT.includes(c))];
    return `(${[quote(phrase), ...next.map((c) => `${quote(phrase + c)}*`)].join(" OR ")})`;
  }).join(" AND ");
}

/**
 * A regular expression that finds what the query matches in a text, for snippets and
 * highlighting: each part's words in order with any separators between them, the prefix part's
 * last word followed by the rest of its word.
 */
export function matchPattern(q: string): RegExp | null {
  const parts = queryParts(q);
  if (!parts.length) return null;
  const esc = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const alts = parts.map((p) => {
    const words = p.words.map(esc);
    if (p.prefix) words[words.length - 1] += "[\\p{L}\\p{N}]*";
    // Whole words only, as the index matches them (a word is letters and digits).
    return `(?<![\\p{L}\\p{N}])${words.join("[^\\p{L}\\p{N}]+")}(?![\\p{L}\\p{N}])`;
  });
  return new RegExp(alts.join("|"), "giu");
}
