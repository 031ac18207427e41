/**
 * What the search index takes for a word, and how it joins two: the one rule both the index
 * (search_text.ts) and the reading of a query (search_query.ts) follow. No imports, so the
 * browser's search palette reads a query as the server will (ui/src/search_status.ts).
 */

/**
 * Joins two words into one index word: a private-use character, which the tokenizer keeps
 * inside a word (`unicode61` splits on anything but letters, digits and private use).
 */
export const PAIR_MARK = "\uE000";

/**
 * The index word of two words joined (`joinedPairs` in search_text.ts): the mark, the first,
 * the mark, the second (migration 29). Starting with the mark, a pair never begins with a word:
 * a word typed as a prefix (`error*`) expands to words alone, not to every pair the word starts
 * (3 GB history: 17,796 terms and 110 ms for `error*`, most of them pairs).
 */
export function pairTerm(first: string, second: string): string {
  return PAIR_MARK + first + PAIR_MARK + second;
}

/**
 * The characters of a word as the index splits text, for a regular expression's class: FTS5
 * `unicode61` keeps letters, digits and private-use characters, and splits on the rest.
 */
export const WORD_CHARS = "\\p{L}\\p{N}\\p{Co}";
/** A word as the index splits text (global: for `match` and `matchAll`, which keep no state). */
export const INDEX_WORD = new RegExp(`[${WORD_CHARS}]+`, "gu");
