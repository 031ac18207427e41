/**
 * `chronicle forget` and `chronicle exclude` as a user runs them: from a folder outside the
 * checkout, with the CLI's own permissions (so SQLite cannot VACUUM: the store gives its pages
 * back with an incremental vacuum), on a HOME holding real-client fixtures and a big synthetic
 * session.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { userMachine } from "../_helpers/chronicle_cli.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { big } from "../unit/store/_sessions.ts";

const BIG = "dddddddd-0000-4000-8000-0000000000d1";

/** The bytes forgetting shrinks: the database, its log and the packs. */
async function storeBytes(data: string): Promise<number> {
  let n = 0;
  for (const f of ["chronicle.db", "chronicle.db-wal"]) {
    n += (await Deno.stat(`${data}/${f}`).catch(() => ({ size: 0 }))).size;
  }
  for await (const e of Deno.readDir(`${data}/payloads`)) {
    n += (await Deno.stat(`${data}/payloads/${e.name}`)).size;
  }
  return n;
}

/** A session of 200 calls: half their outputs kept in the database, half in a pack. */
function writeBig(home: string, cwd = "/home/dev/projects/big") {
  return writeClaudeSession(home, {
    sessionId: BIG,
    cwd,
    turns: [
      { user: "analyse the big log" },
      ...Array.from({ length: 200 }, (_, i) => ({
        tool: {
          name: "Bash",
          input: { command: `grep part${i} big.log` },
          result: big(`big-${i}`, i % 2 ? 3_000 : 9_000),
        },
      })),
    ],
  });
}

Deno.test("chronicle forget: lists without --yes, forgets with it, the store shrinks, no import brings it back", async () => {
  await using m = await userMachine(["claude/s1-basic", "codex/s1-basic"]);
  await writeBig(m.home);
  assertEquals((await m.run(["import"])).code, 0);
  const before = await storeBytes(m.data);

  // no --yes: what would go, and nothing changes (exit 2)
  const asked = await m.run(["forget", BIG.slice(0, 8)]);
  assertEquals(asked.code, 2, asked.stderr);
  assertMatch(asked.stdout, /^Would forget 1 session \(201 steps, 401 payloads of [\d.]+ \w+\):/);
  assertStringIncludes(asked.stdout, `claude-code:${BIG}`);
  assertStringIncludes(asked.stderr, "add --yes to do it");
  const dry = await m.run(["forget", BIG.slice(0, 8), "--dry-run", "--json"]);
  assertEquals(dry.code, 0);
  assertEquals(JSON.parse(dry.stdout).dry_run, true);
  assertEquals(await storeBytes(m.data), before);

  const done = await m.run(["forget", BIG.slice(0, 8), "--yes", "--json"]);
  assertEquals(done.code, 0, done.stderr);
  const out = JSON.parse(done.stdout);
  assertEquals(out.sessions.map((s: { id: string }) => s.id), [`claude-code:${BIG}`]);
  assertEquals(out.reclaim.pages, "incremental"); // the CLI's permissions: no VACUUM
  assertEquals(out.reclaim.packs_compacted, 1);
  const after = await storeBytes(m.data);
  assert(after < before / 2, `${before} -> ${after}`);
  assertEquals(out.store_bytes.after, after);
  assert(out.store_bytes.before >= before, "measured by the command as this test did");

  // the same log again, then grown: still forgotten
  assertEquals((await m.run(["import"])).code, 0);
  await writeBig(m.home);
  const again = await m.run(["import", "--full", "--json"]);
  assertEquals(again.code, 0, again.stderr);
  const sessions = JSON.parse((await m.run(["sessions", "--json"])).stdout);
  assertEquals(sessions.sessions.length, 2);
  assert(!JSON.stringify(sessions).includes(BIG));
  const listed = await m.run(["forget", "--list"]);
  assertStringIncludes(listed.stdout, `claude-code:${BIG}`);
  assertStringIncludes(listed.stdout, "/home/dev/projects/big");
  const text = await m.run(["forget", "6e1c", "--yes"]);
  assertMatch(text.stdout, /^Forgot 1 session \(\d+ steps, .*\n.*\n/);
  assertMatch(text.stdout, /The store went from [\d.]+ \w+ to [\d.]+ \w+ \([\d.]+ \w+ freed\)/);
});

Deno.test("chronicle forget --project forgets its sessions and keeps new ones out; a relative path is the user's folder's", async () => {
  await using m = await userMachine(["claude/s1-basic", "claude/s2-errors"]);
  assertEquals((await m.run(["import"])).code, 0);
  const r = await m.run(["forget", "--project", "/home/dev/projects/s1-basic", "--yes"]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stdout, /^Forgot 1 session in \/home\/dev\/projects\/s1-basic/);
  assertStringIncludes(r.stdout, "is on the exclude list");
  const list = JSON.parse((await m.run(["exclude", "list", "--json"])).stdout);
  assertEquals(list.projects, ["/home/dev/projects/s1-basic"]);
  // a new session in that project (below it) is not imported; elsewhere it is
  await writeBig(m.home, "/home/dev/projects/s1-basic/sub");
  const imp = JSON.parse((await m.run(["import", "--json"])).stdout);
  assertEquals(imp.sessions, 1);
  // relative: resolved against the folder the command runs in
  const rel = await m.run(["forget", "--project", "nowhere", "--dry-run"]);
  assertEquals(rel.code, 0);
  assertStringIncludes(rel.stdout, `No session in ${m.cwd}/nowhere to forget.`);
});

Deno.test("chronicle exclude add, list and remove; a log it names is not imported; a bad list is one line and stops the import", async () => {
  await using m = await userMachine(["claude/s1-basic", "codex/s1-basic"]);
  const add = await m.run(["exclude", "add", "~/.codex/**", "--project", "proj"]);
  assertEquals(add.code, 0, add.stderr);
  assertStringIncludes(add.stdout, "Excluded (log files): ~/.codex/**");
  assertStringIncludes(add.stdout, `Excluded (project): ${m.cwd}/proj`);
  const file = `${m.data}/exclude.json`;
  assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
  assertEquals(JSON.parse(await Deno.readTextFile(file)), {
    version: 1,
    paths: ["~/.codex/**"],
    projects: [`${m.cwd}/proj`],
  });
  const imp = JSON.parse((await m.run(["import", "--json"])).stdout);
  assertEquals(imp.sessions, 1);
  assertEquals(imp.sources.codex.excluded, 1);
  assertMatch((await m.run(["import"])).stdout, /codex +0 files: none; 1 excluded \(not read\)/);
  const listed = await m.run(["exclude", "list"]);
  assertMatch(listed.stdout, /Log files:\n {2}~\/\.codex\/\*\*\nProjects:\n/);

  const rm = await m.run(["exclude", "remove", "~/.codex/**"]);
  assertEquals(rm.code, 0, rm.stderr);
  assertEquals(JSON.parse((await m.run(["import", "--json"])).stdout).sessions, 2);
  const missing = await m.run(["exclude", "remove", "/not/there"]);
  assertEquals(missing.code, 1);
  assertMatch(missing.stderr, /^chronicle: "\/not\/there" is not in the exclude list's paths/);
  const relative = await m.run(["exclude", "add", "*.jsonl"]); // the user's folder's
  assertEquals(relative.code, 0, relative.stderr);
  assertStringIncludes(relative.stdout, `${m.cwd}/*.jsonl`);

  // a file broken by hand: one line, nothing imported, nothing rewritten
  const broken = '{"version": 1, "paths": ["logs/*"]}';
  await Deno.writeTextFile(file, broken);
  const stopped = await m.run(["import"]);
  assertEquals(stopped.code, 1);
  assertEquals(
    stopped.stderr,
    `chronicle: The exclude list ${file} is not valid: "paths"[0] "logs/*": it must start with /, ~/ or **/; fix it (nothing was imported)\n`,
  );
  const edit = await m.run(["exclude", "add", "/x"]);
  assertEquals(edit.code, 1);
  assertEquals(edit.stderr.split("\n").length, 2);
  assertEquals(await Deno.readTextFile(file), broken);
});

Deno.test("forget and exclude usage errors are one line, exit 2; completion knows them", async () => {
  await using m = await userMachine();
  const cases: [string[], string][] = [
    [["forget"], "forget needs session IDs or --project PATH"],
    [["forget", "abc", "--project", "/p"], "give session IDs or --project PATH, not both"],
    [["forget", "abc", "--yes", "--dry-run"], "--yes and --dry-run disagree"],
    [["exclude"], "exclude needs list, add or remove"],
    [["exclude", "add"], "exclude add needs a GLOB or --project PATH"],
  ];
  for (const [args, line] of cases) {
    const r = await m.run(args);
    assertEquals(r.code, 2, args.join(" "));
    assertStringIncludes(r.stderr, `chronicle: ${line}\n`);
  }
  const bash = await new Deno.Command("bash", {
    args: [
      "-c",
      `eval "$1"; COMP_WORDS=(chronicle exclude a); COMP_CWORD=2; _chronicle; echo "\${COMPREPLY[@]}"`,
      "bash",
      (await m.run(["completion", "bash"])).stdout,
    ],
  }).output();
  assertEquals(new TextDecoder().decode(bash.stdout), "add\n");
  const script = (await m.run(["completion", "bash"])).stdout;
  assertMatch(script, /forget\) opts="--dry-run --help --json --list --project --yes"/);
});
