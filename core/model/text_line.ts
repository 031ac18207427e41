/**
 * Text on one line, as a title, a summary or a terminal line shows it: whitespace runs made one
 * space, trimmed, and read from the text's opening only as far as the line goes. Collapsing a
 * pasted 28 MiB log whole to show its first 100 characters made 470 MB of garbage.
 */

/**
 * `text` on one line, at most `max` characters, read from its opening only as far as that
 * takes. `clean` runs first on each opening tried, told whether it is the whole text.
 */
export function flatOpening(
  text: string,
  max: number,
  clean?: (part: string, whole: boolean) => string,
): string {
  for (let n = Math.min(text.length, max * 2 + 64);; n = Math.min(text.length, n * 4)) {
    const whole = n >= text.length;
    const part = whole ? text : text.slice(0, n);
    const line = (clean ? clean(part, whole) : part).replace(/\s+/g, " ").trim();
    // An opening's line is the whole's up to a whitespace run cut at its end, which is one
    // space either way and past `max`.
    if (whole || line.length > max) return line.slice(0, max);
  }
}

/** `text` on one line, at most `max` characters; a longer one ends in an ellipsis. */
export function textLine(text: string, max: number): string {
  const line = flatOpening(text, max + 1);
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}
