/**
 * `chronicle rename`, `star` and `unstar` as a user meets them: run from a folder outside the
 * checkout, ids as `show` takes them, the name and star in `sessions`, `show`, search and
 * exports, kept through another import, and every mistake one line.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { userMachine } from "../_helpers/chronicle_cli.ts";

const CLAUDE = "claude-code:6e1ca488-75fe-41b2-bc40-620dc5c6889e";
const CODEX = "codex:01a22bda-a5a7-79e1-a110-f0d0240e2e9b";

Deno.test("a user renames and stars sessions by prefix; list, show, search and export show it", async () => {
  await using m = await userMachine(["claude/s1-basic", "codex/s1-basic"]);
  assertEquals((await m.run(["import"])).code, 0);

  // a native id prefix, as show takes it; the words are joined and kept on one line
  const renamed = await m.run(["rename", "6e1ca488", "Notes", "and\nTODO", "\x1b[31mred"]);
  assertEquals(renamed.code, 0, renamed.stderr);
  assertEquals(renamed.stdout, `Renamed ${CLAUDE}: "Notes and TODO [31mred"\n`);
  const starred = await m.run(["star", "6e1ca488", "codex:01a22bda"]);
  assertEquals(starred.code, 0, starred.stderr);
  assertEquals(
    starred.stdout.split("\n").map((l) => l.slice(0, 60)),
    [`Starred * ${CLAUDE}  Notes`, `Starred * ${CODEX}  Create a not`, ""]
      .map((l) => l.slice(0, 60)),
  );

  // not a terminal: the star is a plain *
  const list = await m.run(["sessions", "--starred"]);
  assertEquals(list.code, 0);
  assertStringIncludes(list.stdout, `${CLAUDE}\n`);
  assertStringIncludes(list.stdout, "\n  * Notes and TODO [31mred\n");
  assert(!list.stdout.includes("\x1b"), "no escape reaches the terminal");
  const json = JSON.parse((await m.run(["sessions", "--json"])).stdout);
  const byId = Object.fromEntries(
    json.sessions.map((s: { id: string }) => [s.id, s]),
  ) as Record<string, { user_title: string | null; starred: boolean; title: string | null }>;
  assertEquals(byId[CLAUDE].user_title, "Notes and TODO [31mred");
  assertEquals(byId[CLAUDE].starred, true);
  assertEquals(byId[CLAUDE].title, null, "the agent's title is left as it was");

  const show = await m.run(["show", CLAUDE]);
  assertMatch(show.stdout, /^\* Notes and TODO \[31mred\n/);
  assertStringIncludes(show.stdout, '\n  renamed from "Create a notes.md file');
  assertMatch(show.stdout, /\n {2}starred \d{4}-\d{2}-\d{2}T/);

  const search = await m.run(["search", "notes", "--starred", "--source", "claude-code"]);
  assertEquals(search.code, 0, search.stderr);
  assertStringIncludes(search.stdout, "· * Notes and TODO [31mred\n");

  const md = await m.run(["export", CLAUDE, "--format", "md"]);
  assertEquals(md.code, 0, md.stderr);
  assertMatch(md.stdout, /^# Notes and TODO \\\[31mred\n/, md.stdout.slice(0, 80));

  // another import of changed logs keeps both
  assertEquals((await m.run(["import"])).code, 0);
  const again = JSON.parse((await m.run(["sessions", "--starred", "--json"])).stdout);
  assertEquals(again.total, 2);

  // clear and unstar
  const cleared = await m.run(["rename", CLAUDE, "--clear"]);
  assertMatch(cleared.stdout, /^Cleared the name of claude-code:\S+: it shows as "Create a notes/);
  assertEquals((await m.run(["rename", CLAUDE, "Again"])).code, 0);
  assertEquals((await m.run(["rename", CLAUDE, ""])).code, 0, "an empty title clears too");
  assertEquals((await m.run(["unstar", CLAUDE, "--json"])).code, 0);
  const after = JSON.parse((await m.run(["sessions", "--json"])).stdout).sessions as {
    id: string;
    user_title: string | null;
    starred: boolean;
  }[];
  assertEquals(
    after.map((s) => [s.id, s.user_title, s.starred]).sort(),
    [[CLAUDE, null, false], [CODEX, null, true]],
  );
  assertEquals(
    (await m.run(["sessions", "--starred", "--source", "claude-code"])).stdout,
    "No starred sessions. Star one with `chronicle star ID`.\n",
  );
});

Deno.test("rename, star and unstar: usage errors exit 2, unknown or ambiguous ids exit 1, one line each", async (t) => {
  await using m = await userMachine(["codex/s1-basic", "codex/s2-errors"]);
  assertEquals((await m.run(["import"])).code, 0);
  const usage: { args: string[]; line: string }[] = [
    { args: ["rename"], line: "rename takes a session id and a title (or --clear)" },
    {
      args: ["rename", "01a22bda-a5a7"],
      line: "rename takes a title after the session id (or --clear)",
    },
    { args: ["rename", "01a22bda-a5a7", "x", "--clear"], line: "--clear takes no title" },
    {
      args: ["rename", "01a22bda-a5a7", "x".repeat(201)],
      line: "a session's name is at most 200 characters (this one has 201)",
    },
    { args: ["star"], line: "star takes one or more session ids" },
    { args: ["unstar", "--bogus"], line: 'unknown option "--bogus"' },
  ];
  for (const c of usage) {
    await t.step(c.args.join(" ").slice(0, 60), async () => {
      const r = await m.run(c.args);
      assertEquals(r.code, 2);
      assertEquals(r.stdout, "");
      assertEquals(
        r.stderr,
        `chronicle: ${c.line}\nRun "chronicle ${c.args[0]} --help" for usage.\n`,
      );
    });
  }
  await t.step("an unknown id changes nothing, the known ones included", async () => {
    const r = await m.run(["star", "01a22bda-a5a7", "nope"]);
    assertEquals(r.code, 1);
    assertEquals(r.stderr, 'chronicle: no session "nope" (see `chronicle sessions`)\n');
    assertEquals(JSON.parse((await m.run(["sessions", "--starred", "--json"])).stdout).total, 0);
  });
  await t.step("an ambiguous prefix lists the sessions it fits", async () => {
    const r = await m.run(["rename", "01a22bda", "Both?"]);
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /^chronicle: "01a22bda" matches 2 sessions: .*give more of the id\n$/);
  });
  await t.step("--help names the commands, completion offers them", async () => {
    for (const cmd of ["rename", "star", "unstar"]) {
      assertMatch((await m.run([cmd, "--help"])).stdout, new RegExp(`^Usage: chronicle ${cmd} ID`));
    }
    const bash = (await m.run(["completion", "bash"])).stdout;
    for (const w of ["rename", "star", "unstar", "--starred", "--clear"]) {
      assertStringIncludes(bash, w);
    }
  });
});
