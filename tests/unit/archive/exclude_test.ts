/** The exclude list: what the file may hold (strictly), how edits go, what its entries match. */
import { assert, assertEquals, assertMatch, assertThrows } from "../../_helpers/assert.ts";
import {
  compileExclude,
  EMPTY_EXCLUDE,
  type ExcludeList,
  excludeListText,
  parseExcludeList,
  withEntry,
  withoutEntry,
} from "../../../core/archive/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";

const WHERE = "/d/exclude.json";

Deno.test("parseExcludeList() takes a valid file and reads back what excludeListText() writes", () => {
  const list: ExcludeList = {
    paths: ["~/.claude/projects/-tmp-*", "/var/logs/**/agent-*.jsonl", "**/scratch"],
    projects: ["/home/me/acme", "~/private", "/"],
  };
  assertEquals(parseExcludeList(excludeListText(list), WHERE), list);
  assertEquals(parseExcludeList('{"version":1}', WHERE), EMPTY_EXCLUDE);
  assertEquals(parseExcludeList('{"version":1,"paths":[]}', WHERE), EMPTY_EXCLUDE);
});

Deno.test("parseExcludeList() refuses a bad file with one line naming the entry", async (t) => {
  const cases: { name: string; text: string; says: string }[] = [
    { name: "not JSON", text: "{version: 1}", says: "it is not JSON" },
    { name: "not an object", text: "[]", says: "it must be a JSON object" },
    { name: "unknown key", text: '{"version":1,"path":[]}', says: 'unknown key "path"' },
    { name: "no version", text: '{"paths":[]}', says: '"version" must be 1' },
    { name: "another version", text: '{"version":2}', says: '"version" must be 1' },
    {
      name: "paths not a list",
      text: '{"version":1,"paths":"/a"}',
      says: '"paths" must be a list',
    },
    { name: "a number", text: '{"version":1,"paths":[1]}', says: '"paths"[0] is not a string' },
    {
      name: "relative glob",
      text: '{"version":1,"paths":["/a/*","logs/*"]}',
      says: '"paths"[1] "logs/*": it must start with /, ~/ or **/',
    },
    {
      name: "glob of wildcards only",
      text: '{"version":1,"paths":["/**"]}',
      says: "needs at least one character other than",
    },
    {
      name: "empty glob",
      text: '{"version":1,"paths":[""]}',
      says: '"paths"[0] "": it is empty',
    },
    {
      name: "control character",
      text: '{"version":1,"paths":["/a\\nb"]}',
      says: "control character",
    },
    {
      name: "twice",
      text: '{"version":1,"projects":["/a","/a"]}',
      says: '"projects"[1] "/a" is there twice',
    },
    {
      name: "relative project",
      text: '{"version":1,"projects":["src"]}',
      says: "absolute folder",
    },
    {
      name: "trailing slash",
      text: '{"version":1,"projects":["/a/b/"]}',
      says: "must not end with /",
    },
    {
      name: "dot dot",
      text: '{"version":1,"projects":["/a/../b"]}',
      says: "written plainly",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const e = assertThrows(
        () => parseExcludeList(c.text, WHERE),
        ChronicleError,
      ) as ChronicleError;
      assertEquals(e.code, "invalid_config");
      assert(e.message.startsWith(`The exclude list ${WHERE} is not valid: `), e.message);
      assert(e.message.includes(c.says), e.message);
      assert(!e.message.includes("\n"), "one line");
    });
  }
});

Deno.test("withEntry() adds once and refuses a bad entry; withoutEntry() needs it there", () => {
  let list = withEntry(EMPTY_EXCLUDE, "paths", "/a/*.jsonl");
  assertEquals(withEntry(list, "paths", "/a/*.jsonl"), list);
  list = withEntry(list, "projects", "/home/me/acme");
  assertEquals(list, { paths: ["/a/*.jsonl"], projects: ["/home/me/acme"] });
  assertMatch(assertThrows(() => withEntry(list, "projects", "acme")).message, /absolute folder/);
  assertEquals(withoutEntry(list, "paths", "/a/*.jsonl").paths, []);
  assertMatch(assertThrows(() => withoutEntry(list, "paths", "/b")).message, /is not in the excl/);
});

Deno.test("compiled rules: globs over log paths and the folders above them, projects and below", async (t) => {
  const rules = compileExclude({
    paths: [
      "~/.claude/projects/-home-me-secret*",
      "/logs/**/agent-*.jsonl",
      "**/scratch",
      "/x/?.jsonl",
    ],
    projects: ["/home/me/acme", "~/private"],
  }, { home: "/home/me/" });
  const units: [string, boolean][] = [
    ["/home/me/.claude/projects/-home-me-secret/s1.jsonl", true],
    ["/home/me/.claude/projects/-home-me-secret-2/a/b.jsonl", true],
    ["/home/me/.claude/projects/-home-me-open/s1.jsonl", false],
    ["/logs/agent-1.jsonl", true],
    ["/logs/deep/er/agent-1.jsonl", true],
    ["/logs/deep/main.jsonl", false],
    ["/any/where/scratch/s.jsonl", true],
    ["/any/where/scratchpad/s.jsonl", false],
    ["/x/a.jsonl", true],
    ["/x/ab.jsonl", false],
  ];
  for (const [path, excluded] of units) {
    await t.step(`unit ${path}`, () => assertEquals(rules.unit(path), excluded));
  }
  const projects: [string, boolean][] = [
    ["/home/me/acme", true],
    ["/home/me/acme/", true],
    ["/home/me/acme/web", true],
    ["/home/me/acme-2", false],
    ["/home/me/private/notes", true],
    ["/home/me", false],
  ];
  for (const [path, excluded] of projects) {
    await t.step(`project ${path}`, () => assertEquals(rules.project(path), excluded));
  }
  assertEquals(rules.empty, false);
  const none = compileExclude({ paths: ["~/a"], projects: ["~"] }, { home: "" });
  assertEquals([none.empty, none.unit("/a"), none.project("/")], [true, false, false]);
  assertEquals(compileExclude({ paths: [], projects: ["/"] }, { home: "" }).project("/x"), true);
});

Deno.test("a glob that backtracking would make slow is matched in linear time", () => {
  const rules = compileExclude({ paths: [`/${"*a".repeat(30)}b`], projects: [] }, { home: "" });
  const path = `/${"a".repeat(5_000)}`;
  const t0 = performance.now();
  assertEquals(rules.unit(path), false);
  assert(performance.now() - t0 < 2_000, `${performance.now() - t0} ms`);
});
