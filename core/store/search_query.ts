/** What a user typed, turned into the search index's query language. Pure. */

/** How many of the newest matching operations the session list's text filter looks at. */
export const TEXT_FILTER_WINDOW = 50_000;
/** How many of the newest matches search ranks. */
export const SEARCH_WINDOW = 500;
/** The prefix length the search index holds (`prefix='3'` in the schema). */
export const PREFIX_INDEXED = 3;
/** With a session filter, how many of the newest matching operations search ranks. */
export const SEARCH_FILTERED_WINDOW = 300;

/** Words of a user's query, lower-cased, without FTS syntax. */
export function queryTerms(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 16);
}

/**
 * Turns what a user typed into a safe FTS5 query: every word must appear, the last one as a
 * prefix (unless `prefix: false`) when it has at least {@link PREFIX_INDEXED} characters: a
 * shorter prefix would match nearly every word, without an index to do it quickly. Operators
 * typed by the user are treated as words, so no input is a syntax error.
 */
export function ftsQuery(q: string, options: { prefix?: boolean } = {}): string | null {
  const terms = queryTerms(q);
  if (!terms.length) return null;
  const prefix = options.prefix ?? true;
  return terms.map((t, i) =>
    prefix && i === terms.length - 1 && t.length >= PREFIX_INDEXED ? `"${t}"*` : `"${t}"`
  ).join(" AND ");
}
