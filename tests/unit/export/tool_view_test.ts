/** How a tool call reads: the reason a failed call shows without a click. */
import { failureReason, REASON_LINES } from "../../../core/export/tool_view.ts";
import { assertEquals } from "../../_helpers/assert.ts";

Deno.test("failureReason() takes off the agent's wrapper tags and keeps the opening", async (t) => {
  const long = Array.from({ length: REASON_LINES + 5 }, (_, i) => `line ${i + 1}`).join("\n");
  const cases = [
    {
      name: "Claude's tool_use_error",
      input: "<tool_use_error>String to replace not found in file.</tool_use_error>",
      expected: { text: "String to replace not found in file.", cut: false },
    },
    {
      name: "a plain error",
      input: "  Error: ENOENT\n",
      expected: { text: "Error: ENOENT", cut: false },
    },
    {
      name: "a long result is cut to its opening lines",
      input: long,
      expected: { text: long.split("\n").slice(0, REASON_LINES).join("\n"), cut: true },
    },
    { name: "no result", input: undefined, expected: { text: "", cut: false } },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(failureReason(c.input), c.expected));
  }
});
