/** Chains across changes and the per-session map of files touched. */
import { analyseSession, chainTo } from "../../../core/causality/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import { bash, edit, inlineReader, read, sessionOf, write } from "./_session.ts";

Deno.test("a change builds on the change whose file its source read (A read -> B changed -> B read)", () => {
  const report = analyseSession(
    sessionOf([
      read("spec.md"), // 0
      write("src/a.ts"), // 1: from the spec
      read("src/a.ts"), // 2
      edit("src/b.ts"), // 3: after reading a.ts (same folder)
      read("src/b.ts"), // 4
      edit("test/b.test.ts"), // 5: after reading b.ts (recent)
    ]),
    inlineReader,
  );
  const pairs = report.edges.map((e) => [e.from_seq, e.via_seq, e.to_seq, e.file, e.tier]);
  assertEquals(pairs, [
    [1, 2, 3, "src/a.ts", "same_folder"],
    [3, 4, 5, "src/b.ts", "recent"],
    [1, 2, 5, "src/a.ts", "recent"],
  ]);
  const chain = chainTo(report.edges, "op-5").map((e) => [e.from_seq, e.to_seq]);
  assertEquals(chain, [[1, 3], [3, 5]]);
  assertEquals(chainTo(report.edges, "op-1"), []);
});

Deno.test("a failed change starts no chain, and a read before the change does not link to it", () => {
  const report = analyseSession(
    sessionOf([
      read("src/a.ts"),
      edit("src/a.ts", { result: "String to replace not found in file.", is_error: true }),
      read("src/a.ts"),
      edit("src/a.ts"),
    ]),
    inlineReader,
  );
  assertEquals(report.changes.map((c) => c.failed), [true, false]);
  assertEquals(report.edges, []);
});

Deno.test("filesTouched() lists each file's reads, changes and mentions with the steps between", () => {
  const report = analyseSession(
    sessionOf([
      bash("ls src", "a.ts\nb.ts"), // 0: mentions both
      read("src/a.ts"), // 1
      bash("python3 -m pytest"), // 2
      bash("python3 -m pytest"), // 3
      edit("./src/a.ts"), // 4
      bash("rm src/b.ts"), // 5
      read("/elsewhere/notes.txt"), // 6
    ]),
    inlineReader,
  );
  const files = report.files.map((f) => ({
    path: f.path,
    in_project: f.in_project,
    counts: [f.reads, f.changes, f.mentions],
    events: f.events.map((e) => [e.seq, e.role, e.action ?? "", e.gap]),
  }));
  assertEquals(files, [
    {
      path: "src/a.ts",
      in_project: true,
      counts: [1, 1, 1],
      events: [[0, "list", "", 0], [1, "read", "", 0], [4, "change", "edit", 2]],
    },
    {
      path: "src/b.ts",
      in_project: true,
      counts: [0, 1, 1],
      events: [[0, "list", "", 0], [5, "change", "delete", 4]],
    },
    {
      path: "/elsewhere/notes.txt",
      in_project: false,
      counts: [1, 0, 0],
      events: [[6, "read", "", 0]],
    },
  ]);
});
