/**
 * textLine() (core/model/text_line.ts), the one way a title, a summary or a terminal line puts a
 * text on one line: what collapsing the whole text gave, read only as far as the line goes.
 */
import { textLine } from "../../../core/model/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";

/** The line as every copy of it made it: the whole text collapsed, then cut. */
function wholeLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}

Deno.test("textLine() gives the line collapsing the whole text gave", () => {
  let seed = 11;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const pieces = ["word", "é", "😀", " ", "\n", "\t", "  \n  ", "x".repeat(50)];
  for (let i = 0; i < 400; i++) {
    let text = "";
    const n = next(5) === 0 ? 500 + next(2_000) : next(60);
    for (let j = 0; j < n; j++) {
      text += next(30) === 0 ? " ".repeat(next(5_000)) : pieces[next(pieces.length)];
    }
    for (const max of [1, 2, 10, 80, 100, 300]) {
      assertEquals(textLine(text, max), wholeLine(text, max), JSON.stringify([max, text]));
    }
  }
  // a pasted log: the same line from its opening
  const log = "\n\n  pasted:\n" + "2026-12-06 INFO served\n".repeat(100_000);
  assertEquals(textLine(log, 100), wholeLine(log, 100));
});
