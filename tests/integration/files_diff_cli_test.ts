/**
 * `chronicle files` and `chronicle diff` end to end, through `deno run` with the CLI's own
 * permission flags: a Claude Code log (written in the agent's format) of a session in a git
 * repository made here, imported, then its code looked at after each step.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { git } from "../_helpers/git.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { chronicle } from "../_helpers/chronicle_cli.ts";

Deno.test("chronicle files and chronicle diff show a session's code after each step", async () => {
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-files-cli-" }));
  const project = `${scratch}/project`;
  const home = `${scratch}/home`;
  await Deno.mkdir(project);
  await Deno.writeTextFile(`${project}/README.md`, "# Demo\n\nSome text.\n");
  await Deno.writeTextFile(`${project}/keep.txt`, "unchanged\n");
  await git(project, ["init", "-q", "-b", "main"], "2026-01-05T09:00:00Z");
  await git(project, ["add", "-A"], "2026-01-05T09:00:00Z");
  await git(project, ["commit", "-q", "-m", "initial"], "2026-01-05T09:00:00Z");
  const sid = "0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8";
  await writeClaudeSession(home, {
    sessionId: sid,
    cwd: project,
    turns: [
      { user: "Fix the readme and add notes" },
      {
        tool: {
          name: "Edit",
          input: {
            file_path: `${project}/README.md`,
            old_string: "Some text.",
            new_string: "Better text.",
          },
          result: "The file has been updated successfully.",
        },
      },
      {
        tool: {
          name: "Write",
          input: { file_path: `${project}/notes.md`, content: "- one\n- two\n" },
          result: "File created successfully at: notes.md",
        },
      },
      { assistant: "Done." },
    ],
  });
  const env = { HOME: home, CHRONICLE_HOME: `${scratch}/data` };
  try {
    assertEquals((await chronicle(["import"], env)).code, 0);
    const show = await chronicle(["show", sid], env);
    const seqOf = (tool: string) =>
      Number(show.stdout.split("\n").find((l) => l.includes(` ${tool}`))!.trim().split(/\s+/)[0]);
    const edit = seqOf("edit Edit"), write = seqOf("write Write");

    const before = await chronicle(["files", sid, "--at=-1"], env);
    assertEquals(before.code, 0, before.stderr);
    assertStringIncludes(before.stdout, `git repository ${project} (main)`);
    assertStringIncludes(before.stdout, '"initial"');
    assertEquals(before.stdout.split("\n").filter((l) => /^. \S/.test(l)), [
      "  README.md",
      "  keep.txt",
    ]);

    const after = await chronicle(["files", sid, "--at", String(edit)], env);
    assertStringIncludes(after.stdout, `M README.md  session, step ${edit}`);
    assert(!after.stdout.includes("notes.md"), "notes.md is written only later");

    const json = JSON.parse((await chronicle(["files", sid, "--touched", "--json"], env)).stdout);
    assertEquals(json.entries.map((e: { path: string; state: string }) => [e.path, e.state]), [
      ["README.md", "modified"],
      ["notes.md", "added"],
    ]);

    const step = await chronicle(["diff", sid, "--at", String(edit)], env);
    assertEquals(step.code, 0, step.stderr);
    assertStringIncludes(step.stdout, "--- a/README.md\n+++ b/README.md\n");
    assertStringIncludes(step.stdout, "-Some text.\n+Better text.\n");

    const all = await chronicle(["diff", sid], env);
    assertStringIncludes(all.stdout, "# modified README.md (+1 -1)");
    assertStringIncludes(all.stdout, "# added notes.md (+2 -0)");
    assertStringIncludes(all.stdout, "--- /dev/null\n+++ b/notes.md\n");
    const one = await chronicle(["diff", sid, "notes.md", "--json"], env);
    assertEquals(JSON.parse(one.stdout).files.map((f: { path: string }) => f.path), ["notes.md"]);
    const nothing = await chronicle(["diff", sid, "--at", String(write), "README.md"], env);
    assertStringIncludes(nothing.stdout, `# Step ${write} changed no file named README.md`);

    // The project gone: only what the session recorded, and said so.
    await Deno.remove(project, { recursive: true });
    const gone = await chronicle(["files", sid], env);
    assertStringIncludes(
      gone.stdout,
      "no longer exists: only the session's recorded changes are shown",
    );
    assertStringIncludes(gone.stdout, "A notes.md  recorded");

    assertEquals((await chronicle(["files", sid, "--at", "x"], env)).code, 2);
    assertEquals((await chronicle(["diff"], env)).code, 2);
    const unknown = await chronicle(["files", "no-such-session"], env);
    assertEquals(unknown.code, 1);
    assertStringIncludes(unknown.stderr, 'no session "no-such-session"');
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
});
