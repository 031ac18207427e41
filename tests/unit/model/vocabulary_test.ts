import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  agentName,
  AGENTS,
  classifyTool,
  commandOf,
  effectOf,
  EFFECTS,
  exitCodeInText,
  FILE_READING_TOOLS,
  finishOperation,
  isInjectedText,
  OPERATION_KINDS,
  pathsOf,
  SHELL_TOOLS,
  SOURCE_IDS,
  summarizeToolInput,
  targetOf,
  toolFacts,
  toolRole,
} from "../../../core/model/mod.ts";
import { IMPORTERS } from "../../../core/sources/registry.ts";

Deno.test("every agent has one importer, in the agents' order, named from the one list", () => {
  assertEquals(IMPORTERS.map((i) => i.id), [...SOURCE_IDS]);
  assertEquals(SOURCE_IDS, AGENTS.map((a) => a.id));
  for (const i of IMPORTERS) assertEquals(i.displayName, agentName(i.id));
  assertEquals(agentName("codex", { short: true }), "Codex");
  assertEquals(agentName("no-such-agent"), "no-such-agent");
});

Deno.test("every operation kind has an effect among the canonical effects", () => {
  for (const kind of OPERATION_KINDS) assert(EFFECTS.includes(effectOf(kind)), kind);
});

Deno.test("the tool vocabulary says which tools read files and which run shells", async (t) => {
  const table: { name: string; kind: string; reads: boolean; shell: boolean }[] = [
    { name: "Read", kind: "read", reads: true, shell: false },
    { name: "Grep", kind: "search", reads: true, shell: false },
    { name: "Glob", kind: "search", reads: false, shell: false },
    { name: "Bash", kind: "exec", reads: false, shell: true },
    { name: "BashOutput", kind: "exec", reads: false, shell: false },
    { name: "exec_command", kind: "exec", reads: false, shell: true },
    { name: "write_stdin", kind: "exec", reads: false, shell: false },
    { name: "read_file", kind: "read", reads: true, shell: false },
    { name: "run_shell_command", kind: "exec", reads: false, shell: true },
    { name: "run_terminal_cmd", kind: "exec", reads: false, shell: true },
    { name: "view", kind: "read", reads: true, shell: false },
    { name: "apply_patch", kind: "edit", reads: false, shell: false },
  ];
  for (const c of table) {
    await t.step(`${c.name} is ${c.kind}`, () => {
      assertEquals(classifyTool(c.name), c.kind);
      assertEquals(toolFacts(c.name)?.kind, c.kind);
      assertEquals(FILE_READING_TOOLS.has(c.name.toLowerCase()), c.reads);
      assertEquals(SHELL_TOOLS.has(c.name.toLowerCase()), c.shell);
    });
  }
  await t.step("an MCP tool is mcp by its prefix, an unknown tool other", () => {
    assertEquals(classifyTool("mcp__github__create_issue"), "mcp");
    assertEquals(classifyTool("SomethingNew"), "other");
    assertEquals(toolFacts("SomethingNew"), undefined);
  });
});

Deno.test("toolRole() tells the guard what a call does to files", async (t) => {
  const table: [string, string | undefined][] = [
    ["Read", "read"],
    ["Edit", "edit"],
    ["Write", "write"],
    ["apply_patch", "write"],
    ["Grep", "search"],
    ["codebase_search", "search"],
    ["Glob", "list"],
    ["list_directory", "list"],
    ["Bash", "shell"],
    ["BashOutput", undefined],
    ["WebFetch", "web"],
    ["Task", undefined],
    ["mcp__fs__read", undefined],
  ];
  for (const [name, role] of table) {
    await t.step(`${name} -> ${role}`, () => assertEquals(toolRole(name), role));
  }
});

Deno.test("input keys name the path, the paths, the command and the one-line summary", () => {
  assertEquals(targetOf({ file_path: "/a", url: "http://x" }), "/a");
  assertEquals(targetOf({ dir_path: "/d" }), "/d");
  assertEquals(targetOf({ url: "http://x" }), "http://x");
  assertEquals(targetOf({ path: "" }), undefined);
  assertEquals(pathsOf({ file_path: "/a", paths: ["/b", 3, "/c"] }), ["/a", "/b", "/c"]);
  assertEquals(commandOf({ command: ["bash", "-lc", "ls"] }), "bash -lc ls");
  assertEquals(commandOf({ cmd: "ls -la" }), "ls -la");
  assertEquals(summarizeToolInput({ pattern: "TODO", dir_path: "/src" }), "TODO");
  assertEquals(summarizeToolInput({ command: "echo  a\n b" }), "echo a b");
});

Deno.test("exitCodeInText() reads the exit codes Codex and Gemini print, and no prose", () => {
  assertEquals(exitCodeInText("Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"), 0);
  assertEquals(exitCodeInText("Chunk ID: 1\nProcess exited with code 127\n"), 127);
  assertEquals(exitCodeInText("Output: x\nError: (none)\nExit Code: 2\nSignal: 0"), 2);
  assertEquals(exitCodeInText('{"output":"x\\nExit Code: 3"}'), 3);
  assertEquals(exitCodeInText("the Exit code: 3 in prose"), undefined);
  assertEquals(exitCodeInText("Output: x"), undefined);
});

Deno.test("isInjectedText() tells injected context from the user's words", async (t) => {
  const table: [string, boolean][] = [
    ["<user_instructions>x</user_instructions>", true],
    ["<environment_context>\n  <cwd>/p</cwd>\n</environment_context>", true],
    ["<session_context>\n…\n</session_context>", true],
    ["<system-reminder>remember</system-reminder> and more", true],
    ["# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>", true],
    ["This is the Gemini CLI. We are setting up the context for our chat.", true],
    ["<user_query>fix it</user_query>", false],
    ["<b>bold</b> is html", false],
    ["please fix", false],
  ];
  for (const [text, injected] of table) {
    await t.step(
      JSON.stringify(text.slice(0, 30)),
      () => assertEquals(isInjectedText(text), injected),
    );
  }
});

Deno.test("finishOperation() derives effect and replay from kind, completeness and request", () => {
  const ref = { sha256: "0".repeat(64), size: 1 };
  const op = finishOperation({
    kind: "exec",
    completeness: "complete",
    request: ref,
    tool: undefined,
    provenance: { epoch: 0, source_range: { file: "f", lines: [1, 1], bytes: [0, 1] } },
  });
  assertEquals([op.effect, op.replay], ["process", {
    replayable: true,
    blockers: ["needs_confirmation"],
  }]);
  assert(!("tool" in op), "fields left undefined are dropped");
  const open = finishOperation({ ...op, completeness: "incomplete" });
  assertEquals(open.replay, { replayable: false, blockers: ["incomplete"] });
});
