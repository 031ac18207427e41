/** The one "is this tool result an error?" rule, shared by the API and the UI. */
import assert from "node:assert/strict";
import { ERROR_SCAN_CHARS, exitCodeOf, isErrorResult } from "../../../core/analytics/mod.ts";
import type { OperationKind } from "../../../core/model/mod.ts";

Deno.test("isErrorResult() decides by the recorded flag first, then exit codes, then the text", async (t) => {
  const cases: {
    name: string;
    kind: OperationKind;
    flag?: boolean;
    text?: string;
    expected: boolean;
  }[] = [
    { name: "a recorded error", kind: "read", flag: true, text: "fine", expected: true },
    {
      name: "a recorded success",
      kind: "read",
      flag: false,
      text: "Error: in file",
      expected: false,
    },
    {
      name: "a shell step flagged ok that exited 1 (Codex guesses its flag)",
      kind: "exec",
      flag: false,
      text: "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 1\nOutput:\n",
      expected: true,
    },
    {
      name: "a shell step that exited 0",
      kind: "exec",
      text: "Process exited with code 0\n",
      expected: false,
    },
    {
      name: "Exit code: 2 without a flag",
      kind: "exec",
      text: "Exit code: 2\nboom",
      expected: true,
    },
    {
      name: "JSON exit_code without a flag",
      kind: "exec",
      text: '{"exit_code": 3}',
      expected: true,
    },
    {
      name: "a traceback without a flag",
      kind: "exec",
      text: "Traceback (most recent call last):\n",
      expected: true,
    },
    {
      name: "a failed patch",
      kind: "edit",
      text: "apply_patch verification failed: x",
      expected: true,
    },
    {
      name: "OpenCode's missing oldString",
      kind: "edit",
      text: "Could not find oldString in the file.",
      expected: true,
    },
    {
      name: "a missing file",
      kind: "read",
      text: "File not found: /x/CHANGELOG.md",
      expected: true,
    },
    {
      name: "Claude's tool_use_error",
      kind: "edit",
      text: "<tool_use_error>String not found</tool_use_error>",
      expected: true,
    },
    {
      name: "a file that mentions Error later",
      kind: "read",
      text: "1: const x = 1\n2: throw new Error('x')",
      expected: false,
    },
    { name: "no result at all", kind: "exec", expected: false },
    {
      name: "a reply is never an error",
      kind: "reply",
      flag: true,
      text: "Error: x",
      expected: false,
    },
    {
      name: "a prompt is never an error",
      kind: "prompt",
      text: "Error: it broke",
      expected: false,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assert.equal(isErrorResult({ kind: c.kind, is_error: c.flag }, c.text), c.expected);
    });
  }
});

Deno.test("isErrorResult() reads only the opening of a result", () => {
  const late = "x".repeat(ERROR_SCAN_CHARS) + "\nProcess exited with code 1";
  assert.equal(exitCodeOf(late), null);
  assert.equal(isErrorResult({ kind: "exec" }, late), false);
});
