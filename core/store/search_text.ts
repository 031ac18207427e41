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

/** The index text of an operation from its own words and its payloads (either may be absent). */
export function searchBody(
  words: string,
  input: Uint8Array | string | null,
  output: Uint8Array | string | null,
): string {
  const parts = [words];
  if (input !== null) parts.push(payloadWords(input));
  if (output !== null) parts.push(payloadWords(output));
  return parts.filter(Boolean).join("\n");
}
