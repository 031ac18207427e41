/**
 * The live tail is generic over JSONL units: a Qwen Code chat and a Copilot CLI events file, as
 * their importers discover them in the real CLIs' fixtures, are watched in their own folders and
 * imported again when they grow, and the importer's pass from its checkpoint brings only what
 * was appended.
 */
import assert from "node:assert/strict";
import { UnitWatch } from "../../../core/live/mod.ts";
import { copilot } from "../../../core/sources/copilot/mod.ts";
import { qwen } from "../../../core/sources/qwen/mod.ts";
import type { Importer, SourceUnit } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { MemFs } from "../../_helpers/mem_fs.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { FakeClock, FakeFiles, FakeWatcher } from "./_fakes.ts";

const TIMING = { debounceMs: 10, maxDelayMs: 50, pollMinMs: 100, pollMaxMs: 800 };

const AGENTS: { importer: Importer; dir: string; appended: string }[] = [
  {
    importer: qwen,
    dir: "qwen",
    appended: JSON.stringify({
      uuid: "11111111-0000-4000-8000-000000000099",
      sessionId: "x",
      timestamp: "2026-12-02T08:00:00.000Z",
      type: "user",
      message: { role: "user", parts: [{ text: "one more thing" }] },
    }),
  },
  {
    importer: copilot,
    dir: "copilot",
    appended: JSON.stringify({
      type: "user.message",
      data: { content: "one more thing" },
      id: "11111111-0000-4000-8000-000000000098",
      timestamp: "2026-12-02T08:00:00.000Z",
      parentId: null,
    }),
  },
];

for (const a of AGENTS) {
  Deno.test(`the live watch follows a ${a.importer.displayName} session as it grows`, async () => {
    const home = `${FIXTURES}/realclients/${a.dir}/s1-basic/native`;
    const [found] = await a.importer.discover(
      { home, env: {}, platform: "linux" },
      createDenoFs(),
    );
    assert.ok(found, "the importer finds the fixture's session");
    // The same unit in memory, so the test can append to it.
    const bytes = await Deno.readFile(found.path);
    const fs = new MemFs();
    fs.write(found.path, bytes);
    const first = await a.importer.import(found, { fs, epoch: 0 });

    const clock = new FakeClock();
    const files = new FakeFiles();
    const watcher = new FakeWatcher();
    const imports: SourceUnit[][] = [];
    files.write(found.path, bytes.byteLength);
    const w = new UnitWatch([found], {
      clock,
      stat: files.stat,
      watcher,
      importUnits: (units) => {
        imports.push(units);
        return Promise.resolve();
      },
      timing: TIMING,
    });
    await clock.advance(TIMING.debounceMs);
    imports.length = 0; // the catch-up import of a new watch
    const dir = found.path.slice(0, found.path.lastIndexOf("/"));
    assert.ok([...watcher.open].some((o) => o.paths.includes(dir)), "its folder is watched");

    fs.append(found.path, a.appended + "\n");
    files.write(found.path, bytes.byteLength + a.appended.length + 1);
    watcher.emit(found.path);
    await clock.advance(TIMING.debounceMs + 1);
    assert.deepEqual(imports.map((u) => u.map((x) => x.path)), [[found.path]]);

    const next = await a.importer.import(found, {
      fs,
      epoch: 1,
      resume: { checkpoint: first.checkpoint!, state: first.state, seen: first.seen?.added },
    });
    assert.equal(next.mode, "append");
    assert.deepEqual(next.deltas[0].operations.map((o) => [o.op.kind, o.op.text]), [
      ["prompt", "one more thing"],
    ]);
    await w.close();
  });
}
