/**
 * The mark a text cut on import ends with: an operation whose text, input or result holds one is
 * `truncated` (core/sources/json_cut.ts cuts, `finishDelta` marks); readers say how much went.
 */

/**
 * The most a text may come to once cut: 8 MiB, a few of its texts' first MiB and their
 * structure. A 200 MB output's line comes to 2 MiB (Claude Code writes the output twice). The
 * bound is what one given up costs: a 36 MB line of numbers alone, copied to 32 MiB before the
 * cutter gave up, raised an import's peak from 126-159 to 193-232 MB; to 8 MiB, 150-153 MB
 * (126-128 when such a line was skipped at once).
 */
export const MAX_CUT_BYTES = 8 << 20;

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

/**
 * What a stored payload's cut marks count, read whole by `read` only when it is no bigger than a
 * cut text can be (a payload of unknown size, or over {@link MAX_CUT_BYTES}, was never cut).
 */
export function storedCutBytes(size: number | null, read: () => string | null): number {
  if (size === null || size > MAX_CUT_BYTES) return 0;
  const text = read();
  return text === null ? 0 : cutBytes(text);
}
