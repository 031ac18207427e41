import { assert, assertEquals } from "../../_helpers/assert.ts";
import type { CanonicalSession, Operation } from "../../../core/model/mod.ts";
import {
  applyPatchSection,
  applyReplacements,
  buildPlan,
  compareOutput,
  mapPath,
  parsePatch,
  REASONING_CHARS,
  reasoningTexts,
  recordedRun,
} from "../../../core/replay/mod.ts";

Deno.test("applyReplacements() applies, refuses and reports where", async (t) => {
  const cases = [
    {
      name: "one edit",
      text: "a\nb\nc\n",
      edits: [{ old: "b", new: "B" }],
      out: "a\nB\nc\n",
      lines: [2],
    },
    {
      name: "edits in order, each on the last result",
      text: "x y",
      edits: [{ old: "x", new: "y" }, { old: "y y", new: "z" }],
      out: "z",
      lines: [1, 1],
    },
    {
      name: "replace all",
      text: "a a a",
      edits: [{ old: "a", new: "b", all: true }],
      out: "b b b",
      lines: [1],
    },
    {
      name: "an empty old text creates a file",
      text: null,
      edits: [{ old: "", new: "new" }],
      out: "new",
      lines: [1],
    },
    {
      name: "a missing old text",
      text: "abc",
      edits: [{ old: "zz", new: "y" }],
      reason: /not in the file/,
    },
    {
      name: "an ambiguous old text",
      text: "a a",
      edits: [{ old: "a", new: "b" }],
      reason: /2 times/,
    },
    {
      name: "a missing file",
      text: null,
      edits: [{ old: "a", new: "b" }],
      reason: /does not exist/,
    },
    {
      name: "a dollar sign is kept",
      text: "v",
      edits: [{ old: "v", new: "$& $1 $$" }],
      out: "$& $1 $$",
      lines: [1],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const r = applyReplacements(c.text, c.edits);
      if (c.reason) {
        assert(!r.ok && c.reason.test(r.reason), JSON.stringify(r));
      } else {
        assert(r.ok, JSON.stringify(r));
        assertEquals([r.text, r.lines], [c.out, c.lines]);
      }
    });
  }
});

Deno.test("applyPatchSection() follows Codex: context lines, fuzz on trailing space, add and delete", async (t) => {
  const patch = (body: string) => parsePatch(`*** Begin Patch\n${body}\n*** End Patch`)[0];
  const cases = [
    {
      name: "an update after an @@ context line",
      text: "def a():\n    x = 1\n\ndef b():\n    x = 1\n",
      body: "*** Update File: f.py\n@@ def b():\n-    x = 1\n+    x = 2",
      out: "def a():\n    x = 1\n\ndef b():\n    x = 2\n",
    },
    {
      name: "trailing spaces in the file do not stop it",
      text: "a  \nb\n",
      body: "*** Update File: f\n@@\n-a\n+A",
      out: "A\nb\n",
    },
    {
      name: "an added file",
      text: null,
      body: "*** Add File: n.md\n+# T\n+\n+x",
      out: "# T\n\nx\n",
    },
    { name: "a deleted file", text: "x\n", body: "*** Delete File: f", out: null },
    {
      name: "missing lines",
      text: "a\n",
      body: "*** Update File: f\n@@\n-zzz\n+y",
      reason: /expected lines/,
    },
    {
      name: "an update of a missing file",
      text: null,
      body: "*** Update File: f\n@@\n-a\n+b",
      reason: /does not exist/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const r = applyPatchSection(c.text, patch(c.body));
      if (c.reason) assert(!r.ok && c.reason.test(r.reason), JSON.stringify(r));
      else {
        assert(r.ok, JSON.stringify(r));
        assertEquals(r.text, c.out);
      }
    });
  }
  const multi = parsePatch(
    "*** Begin Patch\n*** Add File: a\n+1\n*** Update File: b\n*** Move to: c\n@@\n-x\n+y\n*** Delete File: d\n*** End Patch",
  );
  assertEquals(multi.map((s) => [s.action, s.path, s.moveTo]), [
    ["add", "a", undefined],
    ["update", "b", "c"],
    ["delete", "d", undefined],
  ]);
});

Deno.test("mapPath() keeps targets inside the project and out of .git", async (t) => {
  const cases: [string, string | null][] = [
    ["/home/dev/p/src/a.py", "src/a.py"],
    ["src/a.py", "src/a.py"],
    ["./src/../b.py", "b.py"],
    ["../../etc/x", null],
    ["/etc/passwd", null],
    ["/home/dev/p2/a", null],
    ["/home/dev/p/../p2/a", null],
    [".git/hooks/pre-commit", null],
    ["/home/dev/p", null],
  ];
  for (const [target, expected] of cases) {
    await t.step(target, () => {
      const m = mapPath("/home/dev/p", target);
      assertEquals(m.path ?? null, expected, m.outside);
      if (expected === null) assert(m.outside);
    });
  }
  assert(mapPath(null, "/abs/x").outside, "an absolute path needs a project");
  assertEquals(mapPath(null, "rel/x").path, "rel/x");
});

function session(ops: [string, Partial<Operation>][]): CanonicalSession {
  const operations: Record<string, Operation> = {};
  ops.forEach(([id, op]) => {
    operations[id] = {
      kind: "other",
      effect: "none",
      completeness: "complete",
      provenance: { epoch: 0, source_range: { file: "f", lines: [1, 1], bytes: [0, 1] } },
      replay: { replayable: false, blockers: [] },
      ...op,
    } as Operation;
  });
  return {
    schema_version: 1,
    recording: { id: "rec", source: "claude-code", source_paths: [], pipeline_version: "t" },
    session: {
      id: "claude-code:t",
      native_id: "t",
      source: "claude-code",
      project: { path: "/home/dev/p" },
    },
    connections: [],
    timeline: ops.map(([id], seq) => ({ seq, op: id, connection: "main", offset_ns: seq })),
    operations,
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  };
}

const inline = (v: unknown) => ({ inline: JSON.stringify(v) });
const edit = (target: string, extra: Partial<Operation> = {}): Partial<Operation> => ({
  kind: "edit",
  effect: "fs_write",
  tool: "Edit",
  target,
  request: inline({ file_path: target, old_string: "a", new_string: "b" }),
  replay: { replayable: true, blockers: [] },
  ...extra,
});

Deno.test("buildPlan() keeps reasoning, maps targets and says why a step is blocked", () => {
  const plan = buildPlan(
    session([
      ["t", { kind: "thinking", text: "I should fix a." }],
      ["blank", { kind: "reply", text: " \n " }],
      ["r", { kind: "reply", text: "Fixing a." }],
      ["e1", edit("/home/dev/p/a.txt")],
      ["e2", edit("/home/dev/p/../../etc/x")],
      ["e3", edit("/etc/passwd")],
      [
        "e4",
        edit("/home/dev/p/b.txt", {
          completeness: "incomplete",
          replay: { replayable: false, blockers: ["incomplete"] },
        }),
      ],
      ["e5", edit("/home/dev/p/c.txt", { request: { missing: true, reason: "gone" } })],
      ["x", {
        kind: "exec",
        effect: "process",
        tool: "Bash",
        request: inline({ command: "ls", cwd: "/home/dev/p/src" }),
        replay: { replayable: true, blockers: ["needs_confirmation"] },
      }],
      ["x2", {
        kind: "exec",
        effect: "process",
        request: inline({ command: "ls", workdir: "/tmp" }),
        replay: { replayable: true, blockers: ["needs_confirmation"] },
      }],
    ]),
    (ref) => (ref && "inline" in ref ? ref.inline : null),
  );
  const by = new Map(plan.steps.map((s) => [s.op, s]));
  assertEquals(by.get("e1")!.path, "a.txt");
  // the reasoning names its operations (a blank one left out); their texts are read when shown,
  // each at most
  // REASONING_CHARS, one that cannot be read left out
  assertEquals(by.get("e1")!.reasoning, [{ kind: "thinking", op: "t" }, {
    kind: "reply",
    op: "r",
  }]);
  const texts: Record<string, string> = {
    t: "I should fix a.",
    r: "x".repeat(REASONING_CHARS + 5),
  };
  // (each read asks for at most what it shows)
  const asked: number[] = [];
  assertEquals(reasoningTexts(by.get("e1")!, (op, max) => (asked.push(max), texts[op] ?? null)), [
    { kind: "thinking", text: "I should fix a." },
    { kind: "reply", text: "x".repeat(REASONING_CHARS) },
  ]);
  assertEquals(asked, [REASONING_CHARS, REASONING_CHARS]);
  assertEquals(reasoningTexts(by.get("e1")!, (op) => (op === "r" ? "Fixing a." : null)), [
    { kind: "reply", text: "Fixing a." },
  ]);
  assertEquals(by.get("e2")!.reasoning, []);
  assertEquals(by.get("e2")!.replayable, false);
  assertEquals(by.get("e2")!.blockers, ["out_of_scope"]);
  assertEquals(by.get("e3")!.blockers, ["out_of_scope"]);
  assert(by.get("e3")!.detail!.includes("outside the project"));
  assertEquals(by.get("e4")!.blockers, ["incomplete"]);
  assert(by.get("e4")!.detail!.startsWith("incomplete: "));
  assertEquals(by.get("e5")!.blockers, ["missing_payload"]);
  assertEquals([by.get("x")!.workdir, by.get("x")!.replayable], ["src", true]);
  assertEquals(by.get("x2")!.blockers.includes("out_of_scope"), true);
});

Deno.test("compareOutput() agrees on recorded output in its wrappers and finds real differences", async (t) => {
  const cases = [
    {
      name: "plain output",
      replayed: "?? notes.md\n4 notes.md\n",
      recorded: "?? notes.md\n4 notes.md",
      same: true,
    },
    {
      name: "Codex's wrapper",
      replayed: "a\n",
      recorded: "Chunk ID: 1\nWall time: 0\nProcess exited with code 0\nOutput:\na\n",
      same: true,
    },
    {
      name: "Gemini's JSON and Output: prefix",
      replayed: "?? notes.md\n",
      recorded: JSON.stringify([{
        functionResponse: { response: { output: "Output: ?? notes.md\nProcess Group PGID: 1" } },
      }]),
      same: true,
    },
    {
      name: "a recording that kept the head only",
      replayed: Array.from({ length: 300 }, (_, i) => `row ${i}`).join("\n"),
      recorded: "Output too large. Preview (first 2KB):\nrow 0\nrow 1\nrow 2\nrow 3",
      same: true,
    },
    { name: "a different number", replayed: "5 notes.md\n", recorded: "4 notes.md", same: false },
    {
      name: "lines about .git are not compared",
      replayed: "grep: ./.git/index: binary\nx\n",
      recorded: "x",
      same: true,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const d = compareOutput(c.replayed, recordedRun(false, c.recorded));
      assertEquals(d === null, c.same, d ?? "");
    });
  }
  assertEquals(recordedRun(true, "Exit code 1\nTraceback").exitCode, 1);
  assertEquals(recordedRun(null, '{"output":"x","exitCodeV2":3}').exitCode, 3);
  assertEquals(recordedRun(null, JSON.stringify({ o: "Output: x\nExit Code: 2" })).exitCode, 2);
  assertEquals(recordedRun(true, "boom").failed, true);
});
