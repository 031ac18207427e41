/**
 * Time travel against a real git repository made in the test. A scripted session is carried
 * out for real in the repository (edits, a write, a commit by the session's own git command, a
 * Codex patch, shell rm / here-document / mv, a failed edit, a commit made meanwhile by someone
 * else, uncommitted work at the end) and recorded as canonical operations. The files on disk
 * as each step left them are the truth: the rebuilt file at every step must equal them.
 */
import { createTwoFilesPatch } from "diff";
import { createGitEngine, gitEnv } from "../../core/git/mod.ts";
import { prepareSessionCode } from "../../core/timetravel/mod.ts";
import { denoProcessRunner } from "../../runtime/process_runner.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { gitTestEnv } from "../_helpers/git.ts";
import { inlineReader, sessionOf, type Step } from "../unit/causality/_session.ts";

const git = createGitEngine(denoProcessRunner, { env: gitEnv(Deno.env.toObject()) });
const dec = new TextDecoder();

/** Runs a shell command line in `dir` with a fixed identity and commit date. */
async function shell(dir: string, line: string, atMs: number): Promise<string> {
  const date = new Date(Math.floor(atMs / 1000) * 1000).toISOString();
  const r = await new Deno.Command("bash", {
    args: ["-c", line],
    cwd: dir,
    env: gitTestEnv(dir, date),
    clearEnv: true,
  }).output();
  const out = dec.decode(r.stdout) + dec.decode(r.stderr);
  if (!r.success) throw new Error(`${line}: ${out}`);
  return out;
}

/** Every file under `dir` (outside .git) with its text. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(rel ? `${dir}/${rel}` : dir)) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === ".git") continue;
      if (e.isDirectory) await walk(p);
      else out.set(p, await Deno.readTextFile(`${dir}/${p}`));
    }
  };
  await walk("");
  return out;
}

/** Claude Code's Read result: numbered lines. */
function numbered(text: string): string {
  return text.split("\n").map((l, i) => `${i + 1}\t${l}`).join("\n");
}

Deno.test("the file at every step equals what the session's changes made of the repository", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-tt-" }));
  const t0 = Math.floor(Date.parse("2026-11-30T10:00:00Z") / 1000) * 1000;
  const at = (i: number) => t0 + i * 2000;
  // The project before the session: one commit, an hour earlier.
  await Deno.mkdir(`${dir}/src`);
  await Deno.mkdir(`${dir}/docs`);
  await Deno.writeTextFile(`${dir}/src/app.py`, "def run(x):\n    # TODO\n    return x\n");
  await Deno.writeTextFile(
    `${dir}/src/util.py`,
    "def slug(s):\n    return s.lower()\n\n\nLIMIT = 3\n",
  );
  await Deno.writeTextFile(`${dir}/README.md`, "# Demo\n\nIntro.\n\nUsage: none.\n");
  await Deno.writeTextFile(`${dir}/docs/a.md`, "old doc\n");
  await Deno.writeTextFile(`${dir}/other.txt`, "someone else's file\n");
  await shell(dir, "git init -q -b main && git add -A && git commit -q -m initial", t0 - 3_600_000);

  // The session, carried out for real; each step recorded as the agent would log it.
  const steps: Step[] = [];
  const truth: Map<string, string>[] = [];
  const read = async (p: string) => await Deno.readTextFile(`${dir}/${p}`);
  const edit = async (p: string, old: string, next: string) => {
    const text = await read(p);
    await Deno.writeTextFile(`${dir}/${p}`, text.replace(old, next));
    return text;
  };
  type Action = (i: number) => Promise<Step>;
  const script: Action[] = [
    async () => ({
      tool: "Read",
      input: { file_path: `${dir}/src/app.py` },
      target: `${dir}/src/app.py`,
      result: numbered(await read("src/app.py")),
    }),
    async () => {
      await edit("src/app.py", "    # TODO\n", "    x = x.strip()\n");
      return {
        tool: "Edit",
        input: {
          file_path: `${dir}/src/app.py`,
          old_string: "    # TODO\n",
          new_string: "    x = x.strip()\n",
        },
        target: `${dir}/src/app.py`,
        result: "The file has been updated successfully.",
      };
    },
    async () => {
      await Deno.writeTextFile(`${dir}/src/new.py`, "NEW = 1\n");
      return {
        tool: "Write",
        input: { file_path: "src/new.py", content: "NEW = 1\n" },
        target: "src/new.py",
        result: "File created successfully at: src/new.py",
      };
    },
    async (i) => {
      const command = `git add -A && git commit -m "Step three"`;
      return { tool: "Bash", input: { command }, result: await shell(dir, command, at(i)) };
    },
    async () => {
      const patch =
        "*** Begin Patch\n*** Update File: src/util.py\n@@ def slug(s):\n-    return s.lower()\n+    return s.lower().replace(' ', '-')\n@@\n-LIMIT = 3\n+LIMIT = 5\n*** End Patch";
      await edit(
        "src/util.py",
        "    return s.lower()\n",
        "    return s.lower().replace(' ', '-')\n",
      );
      await edit("src/util.py", "LIMIT = 3\n", "LIMIT = 5\n");
      return {
        tool: "apply_patch",
        kind: "edit",
        input: patch,
        target: "src/util.py",
        result: "Success. Updated the following files:\nM src/util.py\n",
      };
    },
    async (i) => ({
      tool: "Bash",
      input: { command: "rm docs/a.md" },
      result: await shell(dir, "rm docs/a.md", at(i)),
    }),
    async (i) => {
      const before = await read("README.md");
      await edit("README.md", "Intro.", "An intro.");
      await edit("README.md", "Usage: none.", "Usage: run it.");
      // Meanwhile, a second after this step, someone else commits another file.
      await Deno.writeTextFile(`${dir}/other.txt`, "changed by a colleague\n");
      await shell(dir, "git add other.txt && git commit -q -m colleague", at(i) + 1000);
      return {
        tool: "MultiEdit",
        input: {
          file_path: `${dir}/README.md`,
          edits: [
            { old_string: "Intro.", new_string: "An intro." },
            { old_string: "Usage: none.", new_string: "Usage: run it." },
          ],
        },
        target: `${dir}/README.md`,
        result: "Applied 2 edits",
        extensions: { "claude-code": { tool_use_result: { originalFileContents: before } } },
      };
    },
    () =>
      Promise.resolve({
        tool: "Edit",
        input: { file_path: `${dir}/src/app.py`, old_string: "missing text", new_string: "zzz" },
        target: `${dir}/src/app.py`,
        result: "<tool_use_error>String to replace not found in file.</tool_use_error>",
        is_error: true,
      }),
    async (i) => {
      const command = "cat > docs/b.md <<'EOF'\n# B\n$HOME is literal here\nEOF";
      return { tool: "Bash", input: { command }, result: await shell(dir, command, at(i)) };
    },
    async (i) => ({
      tool: "Bash",
      input: { command: "mv src/new.py src/renamed.py" },
      result: await shell(dir, "mv src/new.py src/renamed.py", at(i)),
    }),
    async () => {
      await edit("src/renamed.py", "NEW = 1", "NEW = 2");
      return {
        tool: "edit",
        input: { filePath: `${dir}/src/renamed.py`, oldString: "NEW = 1", newString: "NEW = 2" },
        target: `${dir}/src/renamed.py`,
        result: "Edit applied successfully.",
      };
    },
    async () => {
      await edit("src/app.py", "return x", "return x or None");
      return {
        tool: "replace",
        input: {
          file_path: `${dir}/src/app.py`,
          old_string: "return x",
          new_string: "return x or None",
        },
        target: `${dir}/src/app.py`,
        result: "Successfully modified file",
      };
    },
  ];
  for (const [i, act] of script.entries()) {
    if (i > 0) truth.push(await snapshot(dir));
    steps.push({ ...(await act(i)), ts_ms: at(i) });
  }
  truth.push(await snapshot(dir));

  const session = sessionOf(steps, { project: dir, startMs: at(0) });
  const code = await prepareSessionCode(session, { git, read: inlineReader });
  assertEquals(code.repo.kind, "git");
  assertEquals(code.start?.subject, "initial");
  assertEquals(
    code.commits.map((c) => [c.subject, c.after, c.matched]),
    [["Step three", 3, "command"], ["colleague", 6, "time"]],
  );

  const every = new Set(truth.flatMap((t) => [...t.keys()]));
  let compared = 0;
  for (let i = 0; i < steps.length; i++) {
    for (const path of every) {
      const got = await code.fileAt(path, i);
      const want = truth[i].get(path);
      assertEquals(got.exists, want !== undefined, `${path} exists after step ${i}`);
      assertEquals(got.text, want ?? null, `${path} after step ${i}`);
      assertEquals(got.status, "exact", `${path} after step ${i}: ${got.notes.join("; ")}`);
      compared++;
    }
    const tree = await code.treeAt(i);
    assertEquals(
      tree.entries.filter((e) => e.state !== "deleted").map((e) => e.path),
      [...truth[i].keys()].sort(),
      `tree after step ${i}`,
    );
  }
  assert(compared >= steps.length * 8);

  // Each change's diff is the one between the files just before and after it.
  for (const i of [1, 4, 6, 10, 11]) {
    const change = await code.changeAt(i);
    assertEquals(change.files.length, 1);
    const f = change.files[0];
    const want = createTwoFilesPatch(
      `a/${f.path}`,
      `b/${f.path}`,
      truth[i - 1].get(f.path)!,
      truth[i].get(f.path)!,
      undefined,
      undefined,
      { context: 3 },
    )
      .split("\n").slice(1).join("\n");
    assertEquals(f.patch, want, `diff of step ${i}`);
    assertEquals(f.applied?.status, "applied");
  }
  const failed = await code.changeAt(7);
  assertEquals([failed.files[0].patch, failed.files[0].applied?.status], ["", "not_applied"]);

  // What changed over the whole session: net diffs from the start commit to the end.
  const changed = await code.whatChanged();
  assertEquals(
    changed.files.map((f) => [f.path, f.state]),
    [
      ["README.md", "modified"],
      ["docs/a.md", "deleted"],
      ["docs/b.md", "added"],
      ["src/app.py", "modified"],
      ["src/new.py", "unchanged"],
      ["src/renamed.py", "added"],
      ["src/util.py", "modified"],
    ],
  );
  const app = changed.files.find((f) => f.path === "src/app.py")!;
  assertEquals([app.added, app.removed], [2, 2]);
  const tree = await code.treeAt(steps.length - 1);
  assertEquals(
    tree.entries.map((e) => [e.path, e.origin, e.state]),
    [
      ["README.md", "session", "modified"],
      ["docs/a.md", "session", "deleted"],
      ["docs/b.md", "session", "added"],
      ["other.txt", "commit", "unchanged"],
      ["src/app.py", "session", "modified"],
      ["src/new.py", "session", "deleted"],
      ["src/renamed.py", "session", "added"],
      ["src/util.py", "session", "modified"],
    ],
  );
  // Line origins: before the session's commit, the line step 1 wrote; after it, that line is
  // the commit's and only step 11's line is the session's own (uncommitted) work.
  assertEquals((await code.fileAt("src/app.py", 2)).lines, [
    { start: 0, end: 1, seq: null },
    { start: 1, end: 2, seq: 1 },
    { start: 2, end: 3, seq: null },
  ]);
  const end = await code.fileAt("src/app.py", steps.length - 1);
  assertEquals([end.base.kind, end.base.commit], ["commit", code.commits[1].sha]);
  assertEquals(end.lines, [{ start: 0, end: 2, seq: null }, { start: 2, end: 3, seq: 11 }]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("time travel says when the project is not a git repository or is gone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-tt-plain-" });
  const steps: Step[] = [
    {
      tool: "Write",
      input: { file_path: `${dir}/a.txt`, content: "one\n" },
      target: `${dir}/a.txt`,
      result: "File created successfully",
    },
    {
      tool: "Edit",
      input: { file_path: `${dir}/b.txt`, old_string: "x", new_string: "y" },
      target: `${dir}/b.txt`,
      result: "ok",
    },
  ];
  const plain = await prepareSessionCode(sessionOf(steps, { project: dir }), {
    git,
    read: inlineReader,
  });
  assertEquals(plain.repo.kind, "not_a_repo");
  const a = await plain.fileAt("a.txt", 1);
  assertEquals([a.text, a.status, a.base.kind], ["one\n", "exact", "absent"]);
  const b = await plain.fileAt("b.txt", 1);
  assertEquals([b.exists, b.status], [null, "unknown"]);
  const tree = await plain.treeAt(1);
  assertEquals(tree.entries.map((e) => [e.path, e.origin, e.state]), [
    ["a.txt", "recorded", "added"],
    ["b.txt", "recorded", "modified"],
  ]);
  await Deno.remove(dir, { recursive: true });
  const gone = await prepareSessionCode(sessionOf(steps, { project: dir }), {
    git,
    read: inlineReader,
  });
  assertEquals(gone.repo.kind, "gone");
  assertEquals((await gone.fileAt("a.txt", 1)).text, "one\n");
});
