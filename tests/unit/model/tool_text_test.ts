/** parseToolInput() and toolResultText(): the one reading of a tool call's recorded text. */
import { assertEquals } from "../../_helpers/assert.ts";
import { parseToolInput, toolResultText } from "../../../core/model/mod.ts";
import { plainResult } from "../../../core/replay/fidelity.ts";

Deno.test("parseToolInput() reads JSON objects and arrays, and keeps any other text", async (t) => {
  const cases: { name: string; input: string | null; expected: unknown }[] = [
    { name: "an object", input: ' {"command": "ls"}', expected: { command: "ls" } },
    { name: "an array", input: '["bash", "-lc", "ls"]', expected: ["bash", "-lc", "ls"] },
    { name: "a patch envelope", input: "*** Begin Patch\n", expected: "*** Begin Patch\n" },
    { name: "broken JSON stays text", input: '{"command": ', expected: '{"command": ' },
    { name: "a number stays text", input: "42", expected: "42" },
    { name: "nothing recorded", input: null, expected: undefined },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(parseToolInput(c.input), c.expected));
  }
});

Deno.test("toolResultText() unwraps JSON results and Codex's header, and keeps plain text", async (t) => {
  const cases: { name: string; input: string | null; expected: string }[] = [
    {
      name: "Gemini's functionResponse: the output, not its id or name",
      input: JSON.stringify({ id: "c1", name: "run_shell_command", response: { output: "a\nb" } }),
      expected: "a\nb",
    },
    {
      name: "a list of text blocks",
      input: JSON.stringify([{ type: "text", text: "one" }, { type: "text", text: "two" }]),
      expected: "one\ntwo",
    },
    {
      name: "Codex's header before the output",
      input: "Chunk ID: 1\nWall time: 0.1 s\nExit code: 0\nOutput:\nhello\n",
      expected: "hello\n",
    },
    { name: "plain output", input: "Output:\nnot a header\n", expected: "Output:\nnot a header\n" },
    { name: "broken JSON stays text", input: "[1, 2", expected: "[1, 2" },
    { name: "nothing recorded", input: null, expected: "" },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(toolResultText(c.input), c.expected));
  }
});

Deno.test("replay's fidelity reads a recorded result as causality does", () => {
  const raw = JSON.stringify({ id: "c1", name: "run_shell_command", response: { output: "ok" } });
  assertEquals(plainResult(raw), toolResultText(raw));
  assertEquals(plainResult(raw), "ok");
});
