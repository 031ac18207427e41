/**
 * `chronicle replay` end to end through `deno run` with the permission flags of `deno task
 * chronicle`: the JSON document, exit codes, --to, --yes-commands, and --from exported files
 * whose payloads are checked against their SHA-256.
 */
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { projectRepo } from "./_projects.ts";
import { chronicle } from "../../_helpers/chronicle_cli.ts";

interface ReplayJson {
  sandbox: string;
  seeded_from: string | null;
  steps: { seq: number; kind: string; target: string | null; status: string; detail: string }[];
  divergences: number;
}

Deno.test("chronicle replay prints the JSON document and exits 0 only when every step applied", async () => {
  const data = await Deno.makeTempDir({ prefix: "chronicle-replay-cli-" });
  const { dir, commit } = await projectRepo("s1-basic", { final: true });
  const env = {
    HOME: `${FIXTURES}/realclients/claude/s1-basic/native`,
    CHRONICLE_HOME: `${data}/home`,
  };
  try {
    assertEquals((await chronicle(["import"], env)).code, 0);
    const id = "6e1ca488";
    const all = await chronicle(["replay", id, "--repo", dir, "--yes-commands", "--json"], env);
    assertEquals(all.code, 0, all.stderr + all.stdout);
    const doc: ReplayJson = JSON.parse(all.stdout);
    assert(doc.sandbox.startsWith(`${await Deno.realPath(data)}/home/replay/`), doc.sandbox);
    assertEquals((await Deno.stat(doc.sandbox)).mode! & 0o777, 0o700);
    assertEquals(doc.seeded_from, commit);
    assertEquals(doc.divergences, 0);
    assertEquals(doc.steps.map((s) => [s.seq, s.kind, s.target, s.status]), [
      [2, "write", "notes.md", "applied"],
      [4, "edit", "notes.md", "applied"],
      [5, "exec", "git status --short && wc -l notes.md", "applied"],
    ]);
    for (const s of doc.steps) {
      assertEquals(Object.keys(s), ["seq", "kind", "target", "status", "detail"]);
    }

    // Without --yes-commands the shell step is skipped, which is not "every step applied".
    const noCmd = JSON.parse(
      (await chronicle(["replay", id, "--repo", dir, "--json"], env)).stdout,
    );
    assertEquals(noCmd.steps.map((s: { status: string }) => s.status), [
      "applied",
      "applied",
      "skipped",
    ]);
    assertEquals((await chronicle(["replay", id, "--repo", dir, "--json"], env)).code, 1);

    // --to 2: only the write runs; the final state then differs (the edit is missing).
    const to = await chronicle(["replay", id, "--repo", dir, "--to", "2", "--json"], env);
    const toDoc: ReplayJson & { final: { differing: { path: string }[] } } = JSON.parse(to.stdout);
    assertEquals(toDoc.steps.map((s) => s.status), ["applied", "skipped", "skipped"]);
    assertEquals(toDoc.final.differing.map((d) => d.path), ["notes.md"]);
    assertEquals(to.code, 1);

    const text = await chronicle(["replay", id, "--repo", dir, "--yes-commands"], env);
    assertEquals(text.code, 0);
    assertMatch(
      text.stdout,
      /3 applied, 0 diverged, 0 failed, 0 blocked, 0 skipped; 0 divergences/,
    );

    for (const bad of [["replay"], ["replay", id, "--to", "x"], ["replay", id, "--nope"]]) {
      assertEquals((await chronicle(bad, env)).code, 2, bad.join(" "));
    }
    assertEquals((await chronicle(["replay", "no-such-session"], env)).code, 1);
  } finally {
    await Deno.remove(data, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("chronicle replay --from replays exported files and never uses a payload that fails its SHA-256", async () => {
  const data = await Deno.makeTempDir({ prefix: "chronicle-replay-cli-" });
  const { dir } = await projectRepo("s1-basic", { final: true });
  const env = {
    HOME: `${FIXTURES}/realclients/codex/s1-basic/native`,
    CHRONICLE_HOME: `${data}/home`,
  };
  try {
    assertEquals((await chronicle(["import"], env)).code, 0);
    const id = "01a22bda-a5a7";
    const exp = await chronicle(
      ["export", id, "--format", "canonical", "--out", `${data}/out`],
      env,
    );
    assertEquals(exp.code, 0, exp.stderr);
    // A fresh data folder: the store is not used.
    const fresh = { ...env, CHRONICLE_HOME: `${data}/fresh` };
    const ok = await chronicle([
      "replay",
      id,
      "--from",
      `${data}/out`,
      "--repo",
      dir,
      "--yes-commands",
      "--json",
    ], fresh);
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    const okDoc: ReplayJson = JSON.parse(ok.stdout);
    assertEquals(okDoc.steps.every((s) => s.status === "applied"), true);

    // Change the bytes of the patch that adds notes.md (same name, other content).
    const sessionDir = `${data}/out/sessions/${
      [...Deno.readDirSync(`${data}/out/sessions`)][0].name
    }`;
    let corrupted = "";
    for (const e of Deno.readDirSync(`${sessionDir}/payloads`)) {
      const p = `${sessionDir}/payloads/${e.name}`;
      const t = await Deno.readTextFile(p);
      if (t.includes("*** Add File: notes.md")) {
        await Deno.chmod(p, 0o600);
        await Deno.writeTextFile(p, t.replace("wirte", "WRONG"));
        corrupted = e.name;
      }
    }
    assert(corrupted, "found the patch payload");
    const bad = await chronicle([
      "replay",
      id,
      "--from",
      sessionDir,
      "--repo",
      dir,
      "--yes-commands",
      "--json",
    ], fresh);
    assertEquals(bad.code, 1);
    const doc = JSON.parse(bad.stdout);
    const write = doc.steps.find((s: { kind: string }) => s.kind === "write");
    assertEquals(write.status, "blocked");
    assertMatch(write.detail, /missing_payload/);
    assert(
      doc.notices.some((n: string) => n.includes(`${corrupted} does not match its SHA-256`)),
      doc.notices,
    );
    // The changed bytes were never written: notes.md is missing from the sandbox.
    assertEquals(doc.final.differing.map((d: { path: string }) => d.path), ["notes.md"]);
  } finally {
    await Deno.remove(data, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});
