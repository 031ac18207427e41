/**
 * The text the search index holds for an operation: what the session view shows of it — its
 * own words (prompt, reply, thinking, tool name, summary, target), its tool input and its whole
 * output. Pure, so it can run wherever the payload bytes are.
 */

/**
 * How much of one payload is indexed (and searched for a snippet): all of any payload up to
 * this size, the opening of a bigger one, so one huge output costs bounded memory.
 */
export const INDEXED_PAYLOAD_BYTES = 4 << 20;

const decoder = new TextDecoder();

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
 * The index text of an operation from its own words and its payloads (either may be absent),
 * followed by its {@link joinedPairs} (unless `pairs` is false: the text a phrase is checked on).
 */
export function searchBody(
  words: string,
  input: Uint8Array | string | null,
  output: Uint8Array | string | null,
  pairs = true,
): string {
  const parts = [words];
  if (input !== null) parts.push(payloadWords(input));
  if (output !== null) parts.push(payloadWords(output));
  const text = parts.filter(Boolean).join("\n");
  const joined = pairs ? joinedPairs(text) : "";
  return joined ? `${text}\n${joined}` : text;
}

/**
 * Joins two words into one index word: a private-use character, which the tokenizer keeps
 * inside a word (`unicode61` splits on anything but letters, digits and private use).
 */
export const PAIR_MARK = "\uE000";

/**
 * The characters of a word as the index splits text, for a regular expression's class: FTS5
 * `unicode61` keeps letters, digits and private-use characters, and splits on the rest.
 */
export const WORD_CHARS = "\\p{L}\\p{N}\\p{Co}";
/** A word as the index splits text (global: for `match` and `matchAll`, which keep no state). */
export const INDEX_WORD = new RegExp(`[${WORD_CHARS}]+`, "gu");
/** Whitespace between two words: they are not one identifier. */
const SPACE = /\s/;

/**
 * Each two words that follow each other with no whitespace between them (in an identifier,
 * a path, a flag, a version: `aws_access_key_id`, `src/main.rs`), joined by
 * {@link PAIR_MARK}, separated by spaces. The index has no positions (migration 24): these
 * pairs are how it finds an identifier typed as one chunk without reading every text that
 * holds its words (search_query.ts). A tenth of a typical text's size, two fifths of its
 * index's. Text already holding the mark makes no pairs of it: a pair is only ever a hint,
 * which the search checks on the text.
 */
export function joinedPairs(text: string): string {
  // Each pair once: the index keeps which texts hold a word, not how often, and a big output
  // repeats its identifiers (an array of every occurrence of a 4 MiB output's pairs raised a
  // cold import's peak RSS by 30-40 MB).
  const out = new Set<string>();
  let prev = "";
  let prevEnd = 0;
  for (const m of text.matchAll(INDEX_WORD)) {
    const word = m[0].includes(PAIR_MARK) ? "" : m[0];
    if (word && prev && !SPACE.test(text.slice(prevEnd, m.index))) out.add(prev + PAIR_MARK + word);
    prev = word;
    prevEnd = m.index! + m[0].length;
  }
  return [...out].join(" ");
}
