/** The causality tiers, the recent window and the top-10 cut, one table row per behaviour. */
import {
  analyseSession,
  MAX_SOURCES,
  RECENT_WINDOW,
  type Tier,
  TIER_SCORES,
} from "../../../core/causality/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import {
  bash,
  edit,
  inlineReader,
  PROJECT,
  read,
  sessionOf,
  type Step,
  write,
} from "./_session.ts";

/** The last change's sources as [step index, tier]. */
function sourcesOfLast(steps: Step[]): [number, Tier][] {
  const report = analyseSession(sessionOf(steps), inlineReader);
  const last = report.changes[report.changes.length - 1];
  return last.sources.map((s) => [s.seq, s.tier]);
}

Deno.test("linkChanges() scores each tier with its fixed figure", async (t) => {
  const cases: { name: string; steps: Step[]; expected: [number, Tier][] }[] = [
    {
      name: "an edit after reading the same file is same_file (0.95)",
      steps: [read(`${PROJECT}/src/a.ts`), edit("src/a.ts")],
      expected: [[0, "same_file"]],
    },
    {
      name: "the same file spelled relative, absolute, with ./ and .. is one file",
      steps: [read("./src/lib/../a.ts"), edit(`${PROJECT}//src/a.ts`)],
      expected: [[0, "same_file"]],
    },
    {
      name: "a read of another file in the same folder is same_folder (0.55)",
      steps: [read("src/b.ts"), edit("src/a.ts")],
      expected: [[0, "same_folder"]],
    },
    {
      name: "a read of a file with the same base name elsewhere is same_name (0.5)",
      steps: [read("lib/a.ts"), edit("src/a.ts")],
      expected: [[0, "same_name"]],
    },
    {
      name: "a search whose results name the file is search_match (0.45)",
      steps: [
        { tool: "Grep", input: { pattern: "foo" }, result: "src/a.ts:3:foo()\nlib/c.ts:1:foo" },
        edit("src/a.ts"),
      ],
      expected: [[0, "search_match"]],
    },
    {
      name: "a search whose pattern spells the file's name is search_match",
      steps: [
        { tool: "Glob", input: { pattern: "**/a.ts" }, result: "No files found" },
        edit("src/a.ts"),
      ],
      expected: [[0, "search_match"]],
    },
    {
      name: "a listing of the folder that shows the file is search_match",
      steps: [
        { tool: "LS", input: { path: `${PROJECT}/src` }, result: "a.ts\nb.ts\n" },
        edit("src/a.ts"),
      ],
      expected: [[0, "search_match"]],
    },
    {
      name: "Gemini's grep results (File: relative to the searched folder) name the file",
      steps: [
        {
          tool: "grep_search",
          input: { pattern: "foo", dir_path: `${PROJECT}/src` },
          result: JSON.stringify([{
            functionResponse: {
              response: { output: "Found 1 match\n---\nFile: a.ts\nL3: foo\n---" },
            },
          }]),
        },
        edit("src/a.ts"),
      ],
      expected: [[0, "search_match"]],
    },
    {
      name: "an unrelated read just before is recent (0.2)",
      steps: [read("docs/x.md"), edit("src/a.ts")],
      expected: [[0, "recent"]],
    },
    {
      name: "a search that names other files is only recent",
      steps: [
        { tool: "Grep", input: { pattern: "foo" }, result: "lib/c.ts:1:foo" },
        edit("src/a.ts"),
      ],
      expected: [[0, "recent"]],
    },
    {
      name: "a read of the file in a sub-agent's thread counts like the main thread's",
      steps: [read("src/a.ts", { connection: "agent-1" }), edit("src/a.ts")],
      expected: [[0, "same_file"]],
    },
    {
      name: "reading through the shell (sed -n, cat) is a read",
      steps: [bash("sed -n '1,20p' src/a.ts"), bash("cat src/b.ts | head -5"), edit("src/a.ts")],
      expected: [[0, "same_file"], [1, "same_folder"]],
    },
    {
      name: "grep through the shell names the files of its results",
      steps: [bash("grep -rn foo .", "./src/a.ts:1:foo\n"), edit("src/a.ts")],
      expected: [[0, "search_match"]],
    },
    {
      name: "a shell command that removes the file is a change linked like an edit",
      steps: [read("src/a.ts"), bash("rm -f src/a.ts")],
      expected: [[0, "same_file"]],
    },
    {
      name: "a redirect into the file is a change",
      steps: [read("src/b.ts"), bash("echo hi > src/a.ts")],
      expected: [[0, "same_folder"]],
    },
    {
      name: "reads after the change are not its sources",
      steps: [edit("src/a.ts"), read("src/a.ts")],
      expected: [],
    },
    {
      name: "a sibling read twice counts once, at its latest read",
      steps: [read("src/b.ts"), read("src/b.ts"), edit("src/a.ts")],
      expected: [[1, "same_folder"]],
    },
    {
      name: "two searches naming the file both count",
      steps: [
        bash("grep -rn foo src", "src/a.ts:1:foo"),
        bash("grep -rn bar src", "src/a.ts:2:bar"),
        edit("src/a.ts"),
      ],
      expected: [[1, "search_match"], [0, "search_match"]],
    },
    {
      name: "a read is scored by its best tier only",
      steps: [read("src/a.ts"), edit("src/a.ts")],
      expected: [[0, "same_file"]],
    },
    {
      name: "a step that is not a read, search or listing is never a source",
      steps: [bash("python3 build.py"), write("src/a.ts")],
      expected: [],
    },
    {
      name: "stronger tiers come first, nearer sources first within a tier",
      steps: [
        read("docs/x.md"),
        read("src/b.ts"),
        read("src/a.ts"),
        read("lib/a.ts"),
        read("src/c.ts"),
        read("src/a.ts"),
        edit("src/a.ts"),
      ],
      expected: [
        [5, "same_file"],
        [2, "same_file"],
        [4, "same_folder"],
        [1, "same_folder"],
        [3, "same_name"],
        [0, "recent"],
      ],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(sourcesOfLast(c.steps), c.expected));
  }
});

Deno.test("linkChanges() looks back over exactly the last 8 reads, searches and listings", async (t) => {
  const others = Array.from({ length: RECENT_WINDOW }, (_, i) => read(`docs/y${i}.md`));
  await t.step("the 9th source back is not linked", () => {
    const got = sourcesOfLast([read("docs/x.md"), ...others, edit("src/a.ts")]);
    assertEquals(got.map(([seq]) => seq), [8, 7, 6, 5, 4, 3, 2, 1]);
    assertEquals(got.every(([, tier]) => tier === "recent"), true);
  });
  await t.step("the 8th source back is linked, with its distance", () => {
    const steps = [read("docs/x.md"), ...others.slice(1), edit("src/a.ts")];
    const report = analyseSession(sessionOf(steps), inlineReader);
    const first = report.changes[0].sources.find((s) => s.seq === 0)!;
    assertEquals([first.tier, first.evidence.distance], ["recent", 8]);
  });
  await t.step("steps that are not sources do not use up the window", () => {
    const steps = [
      read("docs/x.md"),
      ...Array.from({ length: 12 }, () => bash("python3 -m pytest")),
      edit("src/a.ts"),
    ];
    assertEquals(sourcesOfLast(steps), [[0, "recent"]]);
  });
});

Deno.test("linkChanges() keeps the top 10, the nearest first", () => {
  const steps = [...Array.from({ length: 12 }, () => read("src/a.ts")), edit("src/a.ts")];
  const got = sourcesOfLast(steps);
  assertEquals(got.length, MAX_SOURCES);
  assertEquals(got.map(([seq]) => seq), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
});

Deno.test("linkChanges() reaches past repeated reads of one sibling to the others", () => {
  const steps = [
    read("src/c.ts"),
    ...Array.from({ length: 12 }, () => read("src/b.ts")),
    edit("src/a.ts"),
  ];
  assertEquals(sourcesOfLast(steps), [[12, "same_folder"], [0, "same_folder"]]);
});

Deno.test("a source carries its score, evidence and failure", () => {
  const report = analyseSession(
    sessionOf([
      read("src/a.ts", { result: "File does not exist.", is_error: true }),
      { tool: "Grep", input: { pattern: "foo", path: "src" }, result: "src/a.ts:9:  foo()" },
      edit("src/a.ts"),
    ]),
    inlineReader,
  );
  const [change] = report.changes;
  assertEquals(change.files, ["src/a.ts"]);
  assertEquals(change.kind, "edit");
  assertEquals(change.sources.map((s) => [s.score, s.failed]), [
    [TIER_SCORES.same_file, true],
    [TIER_SCORES.search_match, false],
  ]);
  assertEquals(change.sources[1].evidence, {
    changed: "src/a.ts",
    path: "src/a.ts",
    key: `${PROJECT}/src/a.ts`,
    match: "src/a.ts:9:  foo()",
    via: "result",
  });
});

Deno.test("analyseSession() is deterministic", () => {
  const steps = [
    read("src/b.ts"),
    bash("grep -rn x .", "./src/a.ts:1:x\n./lib/a.ts:2:x"),
    read("lib/a.ts"),
    edit("src/a.ts"),
    read("src/a.ts"),
    edit("lib/a.ts"),
  ];
  const a = analyseSession(sessionOf(steps), inlineReader);
  const b = analyseSession(sessionOf(steps), inlineReader);
  assertEquals(JSON.stringify(a), JSON.stringify(b));
});

Deno.test("a session without a project keeps absolute paths and links them", () => {
  const report = analyseSession(
    sessionOf([read("/srv/x/a.ts"), edit("/srv/x/a.ts")], { project: null }),
    inlineReader,
  );
  assertEquals(report.changes[0].files, ["/srv/x/a.ts"]);
  assertEquals(report.changes[0].sources[0].tier, "same_file");
});
