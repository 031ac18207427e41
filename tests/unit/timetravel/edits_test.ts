/** Recorded changes applied to text, for every agent's shape; and a file's history with a fake repository. */
import { sessionFacts } from "../../../core/causality/mod.ts";
import {
  applyEdit,
  createHistory,
  fileState,
  type StepEdit,
  stepEdits,
} from "../../../core/timetravel/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import { inlineReader, PROJECT, sessionOf, type Step } from "../causality/_session.ts";

/** The edits of a one-step session, applied to `before`. */
function applyStep(step: Step, before: string | null): { after: string | null; status: string } {
  const session = sessionOf([step]);
  const [facts] = sessionFacts(session, inlineReader);
  const op = session.operations["op-0"];
  const edits = stepEdits(op, facts, inlineReader(op.request), inlineReader(op.response));
  const r = applyEdit(before, edits[0]);
  return { after: r.after, status: r.status };
}

Deno.test("applyEdit() turns each agent's recorded change into the text after it", async (t) => {
  const before = "alpha\nbeta\nbeta\ngamma\n";
  const cases: {
    name: string;
    step: Step;
    before?: string | null;
    after: string | null;
    status: string;
  }[] = [
    {
      name: "Claude Write",
      step: { tool: "Write", input: { file_path: "a.txt", content: "new\n" }, target: "a.txt" },
      after: "new\n",
      status: "applied",
    },
    {
      name: "Claude Edit replaces its old text",
      step: {
        tool: "Edit",
        input: { file_path: "a.txt", old_string: "alpha", new_string: "A" },
        target: "a.txt",
      },
      after: "A\nbeta\nbeta\ngamma\n",
      status: "applied",
    },
    {
      name: "an old text found twice without replace_all does not apply, as the agents refuse it",
      step: {
        tool: "Edit",
        input: { file_path: "a.txt", old_string: "beta", new_string: "B" },
        target: "a.txt",
      },
      after: "alpha\nbeta\nbeta\ngamma\n",
      status: "not_applied",
    },
    {
      name: "Claude Edit with replace_all",
      step: {
        tool: "Edit",
        input: { file_path: "a.txt", old_string: "beta", new_string: "B", replace_all: true },
        target: "a.txt",
      },
      after: "alpha\nB\nB\ngamma\n",
      status: "applied",
    },
    {
      name: "MultiEdit applies its edits in order",
      step: {
        tool: "MultiEdit",
        input: {
          file_path: "a.txt",
          edits: [{ old_string: "alpha", new_string: "A" }, {
            old_string: "A\nbeta",
            new_string: "AB",
          }],
        },
        target: "a.txt",
      },
      after: "AB\nbeta\ngamma\n",
      status: "applied",
    },
    {
      name: "OpenCode edit (oldString/newString, replaceAll)",
      step: {
        tool: "edit",
        input: { filePath: "a.txt", oldString: "beta", newString: "b", replaceAll: true },
        target: "a.txt",
      },
      after: "alpha\nb\nb\ngamma\n",
      status: "applied",
    },
    {
      name: "Gemini replace",
      step: {
        tool: "replace",
        input: { file_path: "a.txt", old_string: "gamma", new_string: "G" },
        target: "a.txt",
      },
      after: "alpha\nbeta\nbeta\nG\n",
      status: "applied",
    },
    {
      name: "an edit whose old text is gone does not apply",
      step: {
        tool: "Edit",
        input: { file_path: "a.txt", old_string: "delta", new_string: "D" },
        target: "a.txt",
      },
      after: before,
      status: "not_applied",
    },
    {
      name: "a failed edit leaves the file",
      step: {
        tool: "Edit",
        input: { file_path: "a.txt", old_string: "beta", new_string: "B" },
        target: "a.txt",
        result: "<tool_use_error>String to replace not found</tool_use_error>",
        is_error: true,
      },
      after: before,
      status: "not_applied",
    },
    {
      name: "Codex apply_patch update, anchored by @@",
      step: {
        tool: "apply_patch",
        kind: "edit",
        target: "a.txt",
        input:
          "*** Begin Patch\n*** Update File: a.txt\n@@ beta\n beta\n-gamma\n+GAMMA\n*** End Patch",
      },
      after: "alpha\nbeta\nbeta\nGAMMA\n",
      status: "applied",
    },
    {
      name: "Codex apply_patch add",
      step: {
        tool: "apply_patch",
        kind: "write",
        target: "n.txt",
        input: "*** Begin Patch\n*** Add File: n.txt\n+x\n+y\n*** End Patch",
      },
      before: null,
      after: "x\ny\n",
      status: "applied",
    },
    {
      name: "Codex apply_patch delete",
      step: {
        tool: "apply_patch",
        kind: "edit",
        target: "a.txt",
        input: "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
      },
      after: null,
      status: "applied",
    },
    {
      name: "Cursor delete_file",
      step: { tool: "delete_file", kind: "edit", input: { target_file: "a.txt" }, target: "a.txt" },
      after: null,
      status: "applied",
    },
    {
      name: "Cursor's sketch edit is not spelled out",
      step: {
        tool: "edit_file",
        input: { target_file: "a.txt", code_edit: "// ... existing code ...\nx" },
        target: "a.txt",
      },
      after: before,
      status: "unknown",
    },
    {
      name: "a shell here-document writes its body",
      step: { tool: "Bash", input: { command: "cat > a.txt <<'EOF'\nhello\nEOF" } },
      after: "hello\n",
      status: "applied",
    },
    {
      name: "a shell rm deletes",
      step: { tool: "Bash", input: { command: "rm -f a.txt" } },
      after: null,
      status: "applied",
    },
    {
      name: "sed -i changes the file in a way the log does not show",
      step: { tool: "Bash", input: { command: "sed -i 's/a/b/' a.txt" } },
      after: before,
      status: "unknown",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const b = c.before === undefined ? before : c.before;
      assertEquals(applyStep(c.step, b), { after: c.after, status: c.status });
    });
  }
});

Deno.test("a file's history: the commit, then the session's steps, corrected by what the log shows", async () => {
  const path = `${PROJECT}/a.txt`;
  const edit = (seq: number, old: string, next: string, before?: string): StepEdit => ({
    seq,
    op: `op-${seq}`,
    path,
    failed: false,
    edit: { kind: "replace", pairs: [{ old, new: next, all: false }] },
    ...(before !== undefined ? { before } : {}),
  });
  const commits = [{
    sha: "c0",
    subject: "start",
    committed_ms: 0,
    after: -1,
    matched: "start" as const,
  }];
  // The working tree held uncommitted work when the session began; step 2's log shows it.
  const h = createHistory(
    commits,
    [edit(1, "one", "ONE"), edit(2, "wip", "done", "ONE\nwip\n")],
    (sha, p) => Promise.resolve(sha === "c0" && p === path ? "one\n" : null),
  );
  const s1 = await fileState(h, path, 1);
  assertEquals([s1.text, s1.status, s1.base.kind], ["ONE\n", "exact", "commit"]);
  assertEquals(s1.lines, [{ start: 0, end: 1, seq: 1 }]);
  const s2 = await fileState(h, path, 2);
  assertEquals([s2.text, s2.status], ["ONE\ndone\n", "exact"]);
  assertEquals(s2.notes.length, 1, "a note says the recorded text differed");
  assertEquals(s2.lines, [{ start: 0, end: 1, seq: 1 }, { start: 1, end: 2, seq: 2 }]);
  // Without the log's text the step does not apply, and the file is marked diverged.
  const blind = createHistory(
    commits,
    [edit(1, "one", "ONE"), edit(2, "wip", "done")],
    h.commitText,
  );
  const d = await fileState(blind, path, 2);
  assertEquals([d.text, d.status], ["ONE\n", "diverged"]);
});
