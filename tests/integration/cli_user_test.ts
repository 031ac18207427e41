/**
 * The CLI as a user meets it: every command run from a folder outside the checkout (as a user
 * runs the launcher or `deno task --cwd`), on a HOME holding real-client fixtures.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { userMachine } from "../_helpers/chronicle_cli.ts";

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
