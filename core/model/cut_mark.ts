/**
 * The mark a text cut on import ends with: an operation whose text, input or result holds one is
 * `truncated` (core/sources/json_cut.ts cuts, `finishDelta` marks); readers say how much went.
 */

/** The mark a cut string ends with (plain ASCII and `…`: nothing to escape in JSON). */
export function cutMark(bytes: number): string {
  return ` … [${bytes} more bytes cut on import]`;
}

/** A {@link cutMark} in a text. */
export const CUT_MARK = / … \[(\d+) more bytes cut on import\]/;

/** The bytes the cut marks in `text` say were left out (0 when it holds none). */
export function cutBytes(text: string): number {
  let total = 0;
  for (const m of text.matchAll(new RegExp(CUT_MARK, "g"))) total += Number(m[1]);
  return total;
}
