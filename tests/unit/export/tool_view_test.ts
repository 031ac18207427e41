/** How a tool call reads: the reason a failed call shows without a click. */
import {
  failureReason,
  numberedLines,
  REASON_LINES,
  searchHits,
  todoItems,
} from "../../../core/export/tool_view.ts";
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

Deno.test("numberedLines() reads a numbered file read back into numbers and text", async (t) => {
  const cases = [
    {
      name: "Claude's tab form with a note after it",
      input: "1\t# notes\n2\t\n3\tsome text\n\n<system-reminder>x</system-reminder>",
      expected: {
        lines: [{ no: 1, text: "# notes" }, { no: 2, text: "" }, { no: 3, text: "some text" }],
        rest: "<system-reminder>x</system-reminder>",
      },
    },
    {
      name: "the arrow form from an offset",
      input: "    40→const a = 1;\n    41→const b = 2;",
      expected: {
        lines: [{ no: 40, text: "const a = 1;" }, { no: 41, text: "const b = 2;" }],
        rest: "",
      },
    },
    { name: "plain text is not numbered", input: "hello\nworld", expected: null },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(numberedLines(c.input), c.expected));
  }
});

Deno.test("todoItems() reads every agent's to-do list", async (t) => {
  const cases = [
    {
      name: "Claude TodoWrite",
      input: { todos: [{ content: "Write tests", status: "completed", activeForm: "Writing" }] },
      expected: [{ text: "Write tests", status: "completed" }],
    },
    {
      name: "Codex update_plan",
      input: { explanation: "x", plan: [{ step: "Read code", status: "in_progress" }] },
      expected: [{ text: "Read code", status: "in_progress" }],
    },
    {
      name: "Gemini write_todos",
      input: { todos: [{ description: "Ship", status: "cancelled" }] },
      expected: [{ text: "Ship", status: "cancelled" }],
    },
    { name: "no list", input: { plan: "## a markdown plan" }, expected: null },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(todoItems(JSON.stringify(c.input)), c.expected));
  }
  assertEquals(todoItems("not json"), null);
});

Deno.test("searchHits() groups path:line:text results by file", () => {
  assertEquals(searchHits("src/a.ts:3:const a = 1;\nsrc/a.ts:9:a++\nlib/b.go:12:func b() {}"), [
    { path: "src/a.ts", lines: [{ no: 3, text: "const a = 1;" }, { no: 9, text: "a++" }] },
    { path: "lib/b.go", lines: [{ no: 12, text: "func b() {}" }] },
  ]);
  assertEquals(searchHits("Found 2 files\nsrc/a.ts\nsrc/b.ts"), null);
});
