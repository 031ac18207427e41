/**
 * The CLI as a user meets it: every command run from a folder outside the checkout (as a user
 * runs the launcher or `deno task --cwd`), on a HOME holding real-client fixtures.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { userMachine } from "../_helpers/chronicle_cli.ts";
import { DatabaseSync } from "node:sqlite";
import { ChronicleStore } from "../../core/store/mod.ts";
import { documentOf } from "../../core/export/mod.ts";
import { openShare } from "../../core/shares/mod.ts";
import { RuleStore, scanSession } from "../../core/security/mod.ts";
import { exportSession } from "../../core/artifacts/mod.ts";
import { sha256Hex } from "../../core/model/mod.ts";
import { denoArtifactWriter } from "../../runtime/artifact_fs.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { createPackFiles, packDir } from "../../runtime/pack_files.ts";

Deno.test("chronicle doctor reports agents, data folder, store, guard, tools and server, and exits 1 with a fix", async () => {
  await using m = await userMachine(["claude/s1-basic", "codex/s1-basic"]);
  const before = await m.run(["doctor"]);
  // no data folder yet: worth knowing, nothing to fix; doctor does not create it
  assertEquals(before.code, 0, before.stdout + before.stderr);
  assertMatch(before.stdout, /Data folder .* does not exist yet/);
  assert((await Deno.stat(m.data).catch(() => null)) === null, "doctor created nothing");

  assertEquals((await m.run(["import"])).code, 0);
  const r = await m.run(["doctor", "--json"]);
  assertEquals(r.code, 0, r.stdout);
  const report = JSON.parse(r.stdout);
  assertEquals(report.ok, true);
  const claude = report.agents.find((a: { id: string }) => a.id === "claude-code");
  assertEquals(claude.files, 1);
  assertEquals(
    claude.looked.some((l: { path: string; found: boolean }) =>
      l.found && l.path === `${m.home}/.claude/projects`
    ),
    true,
  );
  assert(claude.newest_age_s >= 0);
  assertEquals(report.store.health.quick_check, []);
  assertEquals(report.store.health.sessions, 2);
  assertEquals(report.data_folder.mode, 0o700);
  assertEquals(report.server, null);

  await Deno.chmod(`${m.data}/chronicle.db`, 0o644);
  const bad = await m.run(["doctor"]);
  assertEquals(bad.code, 1);
  assertMatch(bad.stdout, /\[!!\] 1 file readable by others: chronicle\.db \(0644\)/);
  assertStringIncludes(bad.stdout, `fix: chmod 600 ${m.data}/chronicle.db`);
  assertMatch(bad.stdout, /1 thing needs attention\.\n$/);

  // a server.json left by a server that is gone
  await Deno.chmod(`${m.data}/chronicle.db`, 0o600);
  await Deno.writeTextFile(
    `${m.data}/server.json`,
    JSON.stringify({ url: "http://127.0.0.1:9/", port: 9, pid: 1 }),
  );
  const stale = await m.run(["doctor"]);
  assertEquals(stale.code, 1);
  assertMatch(
    stale.stdout,
    /server\.json names http:\/\/127\.0\.0\.1:9\/ \(pid 1\), but nothing answers/,
  );
});

Deno.test("a usage error is one line and the hint: no parser dump, no bad value taken", async (t) => {
  await using m = await userMachine();
  const cases: { args: string[]; line: string }[] = [
    { args: ["sessions", "--bogus"], line: 'unknown option "--bogus"' },
    { args: ["sessions", "--limt", "3"], line: 'unknown option "--limt" (did you mean --limit?)' },
    { args: ["serve", "--port", "-1"], line: '--port takes a number 0..65535, not "-1"' },
    { args: ["sessions", "--limit"], line: "--limit needs a value" },
    { args: ["sessions", "--json=yes"], line: "--json takes no value" },
    {
      args: ["import", "--source", "vim"],
      line:
        'unknown source "vim" (known: claude-code, codex, cursor, opencode, gemini, qwen, copilot)',
    },
    {
      args: ["sessions", "--source", "vim"],
      line:
        'unknown source "vim" (known: claude-code, codex, cursor, opencode, gemini, qwen, copilot)',
    },
    {
      args: ["search", "x", "--source", "vim"],
      line:
        'unknown source "vim" (known: claude-code, codex, cursor, opencode, gemini, qwen, copilot)',
    },
  ];
  for (const c of cases) {
    await t.step(c.args.join(" "), async () => {
      const r = await m.run(c.args);
      assertEquals(r.code, 2);
      assertEquals(r.stdout, "");
      const command = c.args[0];
      assertEquals(
        r.stderr,
        `chronicle: ${c.line}\nRun "chronicle ${command} --help" for usage.\n`,
      );
    });
  }
});

Deno.test("a data folder that is a file, a missing file to scan or a missing folder of exports is one line without the OS's raw text", async () => {
  await using m = await userMachine();
  await Deno.writeTextFile(`${m.root}/afile`, "");
  for (const home of [`${m.root}/afile`, `${m.root}/afile/below`]) {
    const r = await m.run(["sessions"], { CHRONICLE_HOME: home });
    assertEquals(r.code, 1);
    assertEquals(
      r.stderr,
      `chronicle: Cannot use the data folder "${home}": it (or a folder above it) is a file; point CHRONICLE_HOME at a folder\n`,
    );
  }
  // a folder of exports mistyped, or a file: said so, and no store made for it
  for (const args of [["import", "--canonical"], ["verify"]]) {
    const missing = await m.run([...args, "exports"], { CHRONICLE_HOME: `${m.root}/data` });
    assertEquals([missing.code, missing.stdout], [1, ""]);
    assertEquals(missing.stderr, 'chronicle: cannot read "exports": no such file or folder\n');
    const file = await m.run([...args, "../afile"], { CHRONICLE_HOME: `${m.root}/data` });
    assertEquals(file.code, 1);
    assertEquals(
      file.stderr,
      'chronicle: "../afile" is a file, not a folder of exported sessions\n',
    );
  }
  assertEquals(await Deno.stat(`${m.root}/data`).then(() => true, () => false), false);
  const scan = await m.run(["scan", "missing.txt"]);
  assertEquals(scan.code, 2);
  assertEquals(scan.stdout, "", 'no "No findings" before the error');
  assertEquals(scan.stderr, 'chronicle scan: cannot read "missing.txt": no such file or folder\n');
});

Deno.test("another program's database where the store goes (the original Chronicle's): one clear line, left untouched", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  await Deno.mkdir(m.data);
  const path = `${m.data}/chronicle.db`;
  // The original Chronicle's own tables, at the path both programs use by default.
  const theirs = new DatabaseSync(path);
  theirs.exec(`
    CREATE TABLE projects (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT UNIQUE NOT NULL, name TEXT NOT NULL);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, project_id INTEGER NOT NULL, source TEXT NOT NULL, file_path TEXT NOT NULL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT);
    INSERT INTO projects (path, name) VALUES ('/work/demo', 'demo');
  `);
  theirs.close();
  const before = await Deno.readFile(path);
  for (const args of [["sessions"], ["import"], ["search", "hello"]]) {
    const r = await m.run(args);
    assertEquals(r.code, 1, args.join(" "));
    assertEquals(
      r.stderr,
      `chronicle: "${path}" is not a Chronicle store: it holds other tables (messages, projects, ` +
        "sessions) and no record of Chronicle's migrations, so another program made it (the " +
        "original Chronicle keeps its database at the same path). Chronicle left it untouched: " +
        "move it aside, or keep Chronicle's data in another folder. To keep both, run Chronicle " +
        "with CHRONICLE_HOME set to another folder.\n",
    );
  }
  assertEquals(await Deno.readFile(path), before, "not a byte of their database changed");
  assert((await Deno.stat(`${path}-wal`).catch(() => null)) === null, "no journal made beside it");
  const doctor = await m.run(["doctor"]);
  assertEquals(doctor.code, 1, doctor.stdout);
  assertMatch(doctor.stdout, /is not a Chronicle store/);
  // Pointed elsewhere, Chronicle works beside it.
  const moved = await m.run(["import"], { CHRONICLE_HOME: `${m.root}/data2` });
  assertEquals(moved.code, 0, moved.stderr);
});

Deno.test("an id prefix that fits several sessions lists them; scan --session takes what show takes", async () => {
  await using m = await userMachine(["codex/s1-basic", "codex/s2-errors"]);
  assertEquals((await m.run(["import"])).code, 0);
  const a = "codex:01a22bda-a5a7-79e1-a110-f0d0240e2e9b";
  const b = "codex:01a22bda-af19-7a40-a27c-f2f84a4cf4f1";
  const show = await m.run(["show", "01a22bda"]);
  assertEquals(show.code, 1);
  assertMatch(show.stderr, /^chronicle: "01a22bda" matches 2 sessions: /);
  assertStringIncludes(show.stderr, a);
  assertStringIncludes(show.stderr, b);
  assertStringIncludes(show.stderr, "give more of the id");
  for (const named of [a, a.slice("codex:".length), "01a22bda-a5", "codex:01a22bda-a5"]) {
    const r = await m.run(["scan", "--session", named, "--format", "json"]);
    assert(r.code === 0 || r.code === 1, `${named}: ${r.stderr}`);
    assertEquals(JSON.parse(r.stdout).scanned.sessions, 1, named);
  }
  const amb = await m.run(["scan", "--session", "01a22bda"]);
  assertEquals(amb.code, 2);
  assertEquals(amb.stdout, "");
  assertMatch(amb.stderr, /^chronicle scan: "01a22bda" matches 2 sessions/);
  const none = await m.run(["scan", "--session", "zzz"]);
  assertEquals([none.code, none.stdout], [2, ""]);
  assertEquals(none.stderr, 'chronicle scan: no session "zzz" (see `chronicle sessions`)\n');
});

Deno.test("a corrupt source database fails the import (exit 1) after the other sources imported, every run", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  await Deno.mkdir(`${m.home}/.local/share/opencode`, { recursive: true });
  await Deno.writeFile(
    `${m.home}/.local/share/opencode/opencode.db`,
    crypto.getRandomValues(new Uint8Array(8192)),
  );
  for (let run = 0; run < 2; run++) {
    const r = await m.run(["import"]);
    assertEquals(r.code, 1, r.stdout);
    assertMatch(r.stdout, /opencode +1 file: 1 failed/);
    assertMatch(r.stdout, /! Cannot read ".*opencode\.db": the database is corrupt/);
  }
  const list = JSON.parse((await m.run(["sessions", "--json"])).stdout);
  assertEquals(list.total, 1);
});

Deno.test("import says what this run did per source, counts that add up, removed files kept", async () => {
  await using m = await userMachine(["claude/s1-basic", "claude/s2-errors", "codex/s1-basic"]);
  const first = JSON.parse((await m.run(["import", "--json"])).stdout);
  const claude = first.sources["claude-code"];
  assertEquals([claude.units, claude.new, claude.unchanged, claude.failed], [2, 2, 0, 0]);
  const text = await m.run(["import"]);
  assertMatch(text.stdout, /claude-code +2 files: 2 unchanged; 0 operations written/);
  // info notes ("no record names the client version") are not issues
  assertEquals(first.issues, 0);
  // a log its agent deleted: its session stays, counted as no longer on disk
  for await (const e of Deno.readDir(`${m.home}/.claude/projects`)) {
    if (e.name.endsWith("s1-basic")) {
      await Deno.remove(`${m.home}/.claude/projects/${e.name}`, { recursive: true });
    }
  }
  const after = await m.run(["import", "--json"]);
  const s = JSON.parse(after.stdout);
  const c = s.sources["claude-code"];
  assertEquals([c.units, c.unchanged, c.removed], [1, 1, 1]);
  assertEquals(c.new + c.rewritten + c.appended + c.unchanged + c.failed, c.units);
  assertEquals(s.sessions, 3, "the deleted log's session is kept");
});

/** Mounts a tmpfs of `size` at a new folder (root only); null where that is not possible. */
async function tinyDisk(size: string): Promise<{ path: string; close(): Promise<void> } | null> {
  if (Deno.build.os !== "linux" || Deno.uid?.() !== 0) return null;
  const path = await Deno.makeTempDir({ prefix: "chronicle-tiny-" });
  const r = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", path],
  })
    .output().catch(() => null);
  if (!r?.success) {
    await Deno.remove(path);
    return null;
  }
  return {
    path,
    async close() {
      await new Deno.Command("umount", { args: [path] }).output();
      await Deno.remove(path, { recursive: true });
    },
  };
}

Deno.test("a full disk stops the import at once with one line, exit 1; with space, a re-import completes it", async (t) => {
  const disk = await tinyDisk("1200k");
  if (!disk) {
    t.step({ name: "skipped: needs root to mount a tmpfs", ignore: true, fn: () => {} });
    return;
  }
  await using m = await userMachine([
    "claude/s1-basic",
    "claude/s2-errors",
    "claude/s4-long",
    "claude/s6-subagent",
    "codex/s1-basic",
    "codex/s4-long",
    "codex/s8-spawn",
  ]);
  try {
    const env = { CHRONICLE_HOME: `${disk.path}/data` };
    const full = await m.run(["import"], env);
    assertEquals(full.code, 1, full.stdout + full.stderr);
    const lines = full.stderr.trimEnd().split("\n");
    assertEquals(lines.length, 1, full.stderr);
    assertMatch(
      lines[0],
      /^chronicle: the disk holding .* is full: (nothing stored yet|\d+ operations? of \d+ sessions? stored), nothing lost; the \d+ files? left hold .* of logs and need about as much space\. Free some space, then run `chronicle import` again: it goes on from there\.$/,
    );
    assert(!/Cannot store/.test(full.stdout + full.stderr), "not one line per file");

    // the same data folder on a disk with room (copied off the tiny one): the import completes
    const roomy = `${m.root}/roomy`;
    await new Deno.Command("cp", { args: ["-a", `${disk.path}/data`, roomy] }).output();
    const again = await m.run(["import"], { CHRONICLE_HOME: roomy });
    assertEquals(again.code, 0, again.stdout + again.stderr);
    const fresh = await m.run(["import", "--json"], { CHRONICLE_HOME: `${m.root}/fresh` });
    const a = JSON.parse(
      (await m.run(["sessions", "--json", "--limit", "1000"], { CHRONICLE_HOME: roomy })).stdout,
    );
    const b = JSON.parse(
      (await m.run(["sessions", "--json", "--limit", "1000"], {
        CHRONICLE_HOME: `${m.root}/fresh`,
      })).stdout,
    );
    assertEquals(JSON.parse(fresh.stdout).sessions, b.total);
    assertEquals(
      a.sessions.map((s: { id: string; op_count: number }) => [s.id, s.op_count]),
      b.sessions.map((s: { id: string; op_count: number }) => [s.id, s.op_count]),
    );
  } finally {
    await disk.close();
  }
});

Deno.test("two imports at once on a new data folder: no schema race, nothing skipped, no work done twice", async () => {
  await using m = await userMachine([
    "claude/s1-basic",
    "claude/s2-errors",
    "codex/s1-basic",
    "codex/s4-long",
  ]);
  const [a, b] = await Promise.all([m.run(["import", "--json"]), m.run(["import", "--json"])]);
  for (const r of [a, b]) {
    assertEquals(r.code, 0, r.stderr);
    assert(!/UNIQUE|locked|Cannot store/.test(r.stdout + r.stderr), r.stdout + r.stderr);
  }
  const written = (r: typeof a) =>
    Object.values(JSON.parse(r.stdout).sources as Record<string, { operations: number }>)
      .reduce((n, s) => n + s.operations, 0);
  const total = JSON.parse(a.stdout).operations;
  assertEquals(JSON.parse(b.stdout).operations, total);
  assertEquals(written(a) + written(b), total, "each operation written once, by one of them");
});

Deno.test("an import waits for the process holding the import lock, says which, and takes over a dead one's", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  await Deno.mkdir(m.data, { mode: 0o700 });
  const lock = `${m.data}/import.lock`;
  // a live holder: this test's own process
  await Deno.writeTextFile(
    lock,
    JSON.stringify({ pid: Deno.pid, command: "chronicle serve", started_at: "" }),
  );
  const running = m.run(["import"]);
  await new Promise((r) => setTimeout(r, 2500));
  await Deno.remove(lock);
  const r = await running;
  assertEquals(r.code, 0, r.stderr);
  assertStringIncludes(
    r.stderr,
    `Waiting for the import already running (pid ${Deno.pid}, chronicle serve) to finish...`,
  );
  assertMatch(r.stdout, /claude-code +1 file: 1 new/);
  assert((await Deno.stat(lock).catch(() => null)) === null, "released");
  // a holder that is gone (killed): its lock is taken over at once
  await Deno.writeTextFile(
    lock,
    JSON.stringify({ pid: 999_999_999, command: "chronicle import", started_at: "" }),
  );
  const after = await m.run(["import"]);
  assertEquals(after.code, 0);
  assertEquals(after.stderr, "");
});

Deno.test("chronicle issues lists unreadable files, issues and loss windows; one session's with --session", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  // a log with a line that is not JSON: a loss window
  const dir = `${m.home}/.claude/projects/-work-broken`;
  await Deno.mkdir(dir, { recursive: true });
  const sid = "0badc0de-1111-4222-8333-444455556666";
  const line = (o: unknown) => JSON.stringify(o) + "\n";
  await Deno.writeTextFile(
    `${dir}/${sid}.jsonl`,
    line({
      type: "user",
      sessionId: sid,
      uuid: "u1",
      timestamp: "2026-12-01T10:00:00Z",
      cwd: "/work/broken",
      message: { role: "user", content: "hello" },
    }) + "{not json at all\n" +
      line({
        type: "assistant",
        sessionId: sid,
        uuid: "a1",
        parentUuid: "u1",
        timestamp: "2026-12-01T10:00:01Z",
        message: { role: "assistant", content: [{ type: "text", text: "hi" }] },
      }),
  );
  assertEquals((await m.run(["import"])).code, 0);
  const all = await m.run(["issues"]);
  assertEquals(all.code, 0, all.stderr);
  assertMatch(
    all.stdout,
    /Loss windows \(1\):\n {2}claude-code:0badc0de-1111-4222-8333-444455556666\n {4}.*0badc0de.*\.jsonl: lines 2-2: /,
  );
  const json = JSON.parse((await m.run(["issues", "--json", "--session", "0badc0de"])).stdout);
  assertEquals(json.total_loss_windows, 1);
  assertEquals(json.loss_windows[0].session_id, `claude-code:${sid}`);
  const other = await m.run(["issues", "--session", "6e1ca488"]);
  assertEquals(other.stdout, "No import issues and no loss windows.\n");
});

Deno.test("sessions --since/--until filter by date; show uses the list's title", async () => {
  await using m = await userMachine(["claude/s1-basic", "claude/s7-resume"]);
  assertEquals((await m.run(["import"])).code, 0);
  const ids = async (...args: string[]) =>
    JSON.parse((await m.run(["sessions", "--json", ...args])).stdout).sessions.map((
      s: { id: string },
    ) => s.id);
  const all = await ids();
  assertEquals(all.length, 2);
  const late = await ids("--since", "2026-12-01");
  const early = await ids("--until", "2026-11-30");
  assertEquals([late.length, early.length], [1, 1]);
  assertEquals([...late, ...early].sort(), [...all].sort());
  assertEquals(await ids("--since", "2026-12-01", "--until", "2026-11-30"), []);
  const bad = await m.run(["sessions", "--until", "soon"]);
  assertEquals(bad.code, 2);

  const list = JSON.parse((await m.run(["sessions", "--json"])).stdout).sessions[0];
  const shown = await m.run(["show", list.id]);
  const title = (list.title ?? list.first_prompt).replace(/\s+/g, " ").trim();
  assert(shown.stdout.startsWith(title.slice(0, 60)), shown.stdout.split("\n")[0]);
  assert(!shown.stdout.startsWith("(untitled)"));
});

Deno.test("chronicle completion prints scripts for bash, zsh and fish with every command and option", async () => {
  await using m = await userMachine();
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await m.run(["completion", shell]);
    assertEquals(r.code, 0, r.stderr);
    for (
      const w of [
        "doctor",
        "issues",
        "sessions",
        shell === "fish" ? "-l since" : "--since",
        "claude-code",
      ]
    ) {
      assertStringIncludes(r.stdout, w, `${shell}: ${w}`);
    }
  }
  const bash = await new Deno.Command("bash", {
    args: [
      "-c",
      `eval "$1"; COMP_WORDS=(chronicle doc); COMP_CWORD=1; _chronicle; echo "\${COMPREPLY[@]}"`,
      "bash",
      (await m.run(["completion", "bash"])).stdout,
    ],
  }).output();
  assertEquals(new TextDecoder().decode(bash.stdout), "doctor\n");
  assertEquals((await m.run(["completion", "tcsh"])).code, 2);
});

Deno.test("chronicle install puts a launcher that runs from any folder; uninstall removes only it", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  const bin = `${m.root}/bin`;
  const inst = await m.run(["install", "--dir", "../bin"]);
  assertEquals(inst.code, 0, inst.stderr);
  assertStringIncludes(inst.stdout, `Installed ${bin}/chronicle`);
  assertStringIncludes(inst.stdout, "is not on your PATH");
  assertEquals((await Deno.stat(`${bin}/chronicle`)).mode! & 0o777, 0o755);
  await Deno.writeTextFile(`${m.cwd}/notes.txt`, `token ghp_${"a1B2c3D4e5".repeat(4)}\n`);
  const run = (args: string[]) =>
    new Deno.Command(`${bin}/chronicle`, {
      args,
      cwd: m.cwd,
      clearEnv: true,
      env: {
        ...m.env,
        PATH: Deno.env.get("PATH") ?? "",
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      },
    }).output();
  const imp = await run(["import"]);
  assertEquals(imp.code, 0, new TextDecoder().decode(imp.stderr));
  const stale = "changed after this launcher was written";
  assert(!new TextDecoder().decode(imp.stderr).includes(stale));
  // a launcher older than the checkout's deno.json (a pull changed it) says to install again,
  // and still runs
  const config = await Deno.stat(new URL("../../deno.json", import.meta.url).pathname);
  const before = new Date(config.mtime!.getTime() - 3600_000);
  await Deno.utime(`${bin}/chronicle`, before, before);
  const old = await run(["sessions"]);
  assertEquals(old.code, 0);
  assertStringIncludes(new TextDecoder().decode(old.stderr), `${stale}, and the flags`);
  assertStringIncludes(new TextDecoder().decode(old.stdout), "s1-basic");
  // a relative path is the user's folder's, not the checkout's
  const scan = await run(["scan", "notes.txt"]);
  assertEquals(scan.code, 1);
  assertStringIncludes(new TextDecoder().decode(scan.stdout), "notes.txt");
  await Deno.writeTextFile(`${m.root}/bin/other`, "#!/bin/sh\n");
  const un = await m.run(["uninstall", "--dir", bin]);
  assertEquals(un.code, 0);
  assert((await Deno.stat(`${bin}/chronicle`).catch(() => null)) === null);
  // a chronicle install did not write is left alone
  await Deno.writeTextFile(`${bin}/chronicle`, "#!/bin/sh\necho mine\n");
  assertEquals((await m.run(["uninstall", "--dir", bin])).code, 1);
  assertEquals((await m.run(["install", "--dir", bin])).code, 1);
  assertEquals(await Deno.readTextFile(`${bin}/chronicle`), "#!/bin/sh\necho mine\n");
});

Deno.test("a log its agent deleted or rewrote shorter: the store keeps its steps, and says so", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  assertEquals((await m.run(["import"])).code, 0);
  const log = [...Deno.readDirSync(`${m.home}/.claude/projects/-home-dev-projects-s1-basic`)]
    .find((e) => e.name.endsWith(".jsonl"))!;
  const path = `${m.home}/.claude/projects/-home-dev-projects-s1-basic/${log.name}`;
  const lines = (await Deno.readTextFile(path)).split("\n").filter(Boolean);
  await Deno.writeTextFile(path, lines.slice(0, 3).join("\n") + "\n");
  const shorter = await m.run(["import"]);
  assertEquals(shorter.code, 0, shorter.stderr);
  const list = await m.run(["sessions"]);
  assertMatch(list.stdout, /· \d+ kept\n/);
  const id = log.name.replace(/\.jsonl$/, "");
  const show = await m.run(["show", id]);
  assertMatch(
    show.stdout,
    /\d+ of \d+ steps are no longer in the agent's log: Chronicle kept them/,
  );
  assertStringIncludes(show.stdout, " [kept]\n");

  await Deno.remove(path);
  const gone = await m.run(["import"]);
  assertEquals(gone.code, 0, gone.stderr);
  assertStringIncludes(gone.stdout, "1 no longer on disk (kept)");
  assertStringIncludes((await m.run(["sessions"])).stdout, "· log gone (kept)");
  assertStringIncludes(
    (await m.run(["show", id])).stdout,
    "The agent's log of this session is gone: every step is Chronicle's copy.",
  );
});

Deno.test("chronicle share create, list and revoke: the link opens the session's redacted document, then nothing", async () => {
  await using m = await userMachine(["claude/s2-errors"]);
  assertEquals((await m.run(["import"])).code, 0);
  const [id] = JSON.parse((await m.run(["sessions", "--json"])).stdout).sessions.map((
    s: { id: string },
  ) => s.id);
  const made = await m.run(["share", "create", id, "--json", "--days", "3"]);
  assertEquals(made.code, 0, made.stderr);
  const { share, url, redaction } = JSON.parse(made.stdout);
  assertMatch(url, /^http:\/\/127\.0\.0\.1:4173\/share\/[A-Za-z0-9_-]{43}$/);
  assertEquals(share.session_id, id);
  const text = await m.run(["share", "create", id]);
  assertEquals(text.code, 0, text.stderr);
  assertStringIncludes(text.stdout, "Link (shown only now");
  assertStringIncludes(text.stderr, "Redaction:");
  const listed = JSON.parse((await m.run(["share", "list", "--json"])).stdout).items;
  assertEquals(listed.length, 2);
  assert(listed.every((r: { state: string }) => r.state === "live"));
  // what the link opens: the session's document as made now, redacted, its steps whole
  const store = ChronicleStore.open(`${m.data}/chronicle.db`, {
    packs: createPackFiles(packDir(m.data)),
  });
  try {
    const deps = { records: store.shareTable };
    const token = url.slice(url.lastIndexOf("/") + 1);
    const opened = openShare(deps, token)!;
    const doc = documentOf(store, id, { rules: new RuleStore(store.ruleTable).active() })!;
    assertEquals(opened.steps, doc.steps);
    assertEquals(opened.session, doc.session);
    assertEquals(opened.redaction.total, redaction.total);
    assertEquals((await m.run(["share", "revoke", share.id])).code, 0);
    assertEquals(openShare(deps, token), null);
  } finally {
    store.close();
  }
  const after = JSON.parse((await m.run(["share", "list", "--json"])).stdout).items;
  assertEquals(after.map((r: { state: string }) => r.state).sort(), ["live", "revoked"]);
});

Deno.test("chronicle export --format canonical, read in parts, writes what an export of the session loaded whole writes, redacted or not", async () => {
  await using m = await userMachine(["claude/s6-subagent", "codex/s4-long", "opencode/s2-errors"]);
  // and one of 2,601 steps: three parts of 1,000
  await writeClaudeSession(m.home, {
    sessionId: "0b16b16b-2222-4333-8444-555566667777",
    cwd: "/work/big",
    turns: [
      { user: "read the files" },
      ...Array.from({ length: 1300 }, (_, i) => ({
        tool: {
          name: "Read",
          input: { file_path: `/work/big/f${i}.ts` },
          result: `the contents of file ${i}`,
        },
      })),
    ],
  });
  assertEquals((await m.run(["import"])).code, 0);
  const ids: string[] = JSON.parse((await m.run(["sessions", "--json"])).stdout).sessions.map((
    s: { id: string },
  ) => s.id);
  assert(ids.length >= 4);
  const files = async (dir: string) => {
    const out: Record<string, string> = {};
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) {
        for (const [k, v] of Object.entries(await files(path))) out[`${e.name}/${k}`] = v;
      } else out[e.name] = sha256Hex(await Deno.readFile(path));
    }
    return out;
  };
  const store = ChronicleStore.open(`${m.data}/chronicle.db`, {
    packs: createPackFiles(packDir(m.data)),
  });
  // a rule that finds something in nearly every step and in the sessions' own fields
  new RuleStore(store.ruleTable).add({ name: "word", pattern: "the", action: "redact" });
  const trees: Record<string, string>[] = [];
  try {
    for (const redact of [false, true]) {
      const flag = redact ? ["--redact"] : [];
      const out = `${m.root}/parts-${redact}`;
      for (const id of ids) {
        const r = await m.run(["export", id, "--format", "canonical", "--out", out, ...flag]);
        assertEquals(r.code, 0, r.stderr);
      }
      const whole = `${m.root}/whole-${redact}`;
      for (const id of ids) {
        let session = store.loadSession(id)!;
        if (redact) {
          session = scanSession(session, {
            rules: new RuleStore(store.ruleTable).active(),
            readPayload: (ref) => ("sha256" in ref ? store.payloadText(ref) : null),
          }).redacted;
        }
        await exportSession(session, {
          writer: denoArtifactWriter,
          readPayload: (sha) => store.payload(sha),
        }, whole);
      }
      const expected = await files(whole);
      assert(Object.keys(expected).length > 10);
      assertEquals(await files(out), expected, `redact ${redact}`);
      assertEquals((await m.run(["verify", out])).code, 0);
      trees.push(expected);
    }
    const [plain, redacted] = trees;
    const changed = Object.keys(plain).filter((k) => k.endsWith("session.json"))
      .filter((k) => plain[k] !== redacted[k]);
    assertEquals(changed.length, ids.length, "redaction changed every session");
  } finally {
    store.close();
  }
});
