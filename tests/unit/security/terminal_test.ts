/** termSafe(): foreign text never reaches a terminal as control characters. */
import { assertEquals } from "../../_helpers/assert.ts";
import { termSafe, termSafeLines } from "../../../core/security/mod.ts";
import { oneLine } from "../../../cli/sessions.ts";
import { formatSummary } from "../../../cli/import.ts";

Deno.test("termSafe() writes C0, C1, DEL and bidi overrides as visible escapes", async (t) => {
  const table: [string, string][] = [
    ["plain text", "plain text"],
    ["a\nb", "a\\nb"],
    ["a\rb\tc", "a\\rb\\tc"],
    ["\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"],
    ["\x1b]0;title\x07", "\\x1b]0;title\\x07"],
    ["\x9b2J", "\\x9b2J"],
    ["\x7f\x00", "\\x7f\\x00"],
    ["abc\u202edcba", "abc\\u202edcba"],
    ["Ünïcode ✓ 日本", "Ünïcode ✓ 日本"],
  ];
  for (const [input, want] of table) {
    await t.step(JSON.stringify(input), () => assertEquals(termSafe(input), want));
  }
});

Deno.test("termSafeLines() keeps line breaks and tabs, escapes the rest", () => {
  assertEquals(termSafeLines("a\n\tb\x1b[2J\r"), "a\n\tb\\x1b[2J\\r");
});

Deno.test("the session list's one-line titles are escaped too", () => {
  assertEquals(oneLine("fix\x1b[2J the\nbug", 100), "fix\\x1b[2J the bug");
});

Deno.test("an import issue line cannot forge a line: its message is escaped", () => {
  const out = formatSummary({
    sessions: 0,
    operations: 0,
    issues: 1,
    loss_windows: 0,
    seconds: 0.1,
    bytes_read: 0,
    sources: {},
    changed_sessions: [],
    browsable_seconds: 0.1,
    indexed: 0,
    unindexed: 0,
    errors: [{
      code: "unreadable",
      severity: "error",
      message: 'Cannot read "/p/x\x1b[2J\nImported in 0.00 s: all clear.jsonl"',
    }],
  });
  assertEquals(out.split("\n").filter((l) => l.startsWith("Imported")).length, 1);
  // deno-lint-ignore no-control-regex -- the test looks for exactly these characters
  assertEquals(/\x1b/.test(out), false);
});
