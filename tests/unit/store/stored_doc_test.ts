/** Stored operation docs leave out the row's own source file and get it back on reading. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import type { Operation } from "../../../core/model/mod.ts";
import { storedDoc, withSourceFile } from "../../../core/store/mod.ts";

const op = (callFile: string, resultFile?: string): Operation => ({
  kind: "exec",
  effect: "process",
  completeness: "complete",
  provenance: {
    epoch: 0,
    source_range: { file: callFile, lines: [3, 3], bytes: [10, 90] },
    ...(resultFile
      ? {
        completion: {
          epoch: 1,
          source_range: { file: resultFile, lines: [4, 4], bytes: [90, 200] },
        },
      }
      : {}),
  },
  replay: { replayable: true, blockers: [] },
});

Deno.test("a doc leaves out the row's own file, whichever range names it, and reads back whole", () => {
  const row = "/home/dev/.claude/projects/-p/8f2c.jsonl";
  for (
    const original of [op(row), op(row, row), op("/elsewhere.jsonl", row), op(row, "/other.jsonl")]
  ) {
    const doc = storedDoc(original, row);
    assertEquals(withSourceFile(doc, row), original);
    assertEquals(JSON.parse(doc).provenance.source_range.file === row, false);
    assert(
      !doc.includes(row) ||
        doc.split(row).length - 1 < JSON.stringify(original).split(row).length - 1,
    );
  }
  // nothing to leave out: the doc is the operation's JSON
  const foreign = op("/a.jsonl", "/b.jsonl");
  assertEquals(storedDoc(foreign, row), JSON.stringify(foreign));
});
