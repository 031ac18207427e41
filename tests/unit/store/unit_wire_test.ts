/** A prepared unit packed for the trip between threads comes back field for field. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import {
  discoverUnits,
  inProcessRunner,
  packOps,
  packUnit,
  type PreparedOp,
  type PreparedUnit,
  unpackOps,
  unpackUnit,
} from "../../../core/store/mod.ts";
import { SOURCE_IDS } from "../../../core/model/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";

/** Through structured clone, as a worker's message goes. */
const roundTrip = (u: PreparedUnit) => unpackUnit(structuredClone(packUnit(u)));

const op = (over: Partial<PreparedOp>): PreparedOp => ({
  id: "op_1",
  connection: "main",
  order: { ts_ms: 1767225600123, rank: 0, line: 3, block: 0 },
  kind: "exec",
  effect: "process",
  tool: "shell",
  target: null,
  completeness: "complete",
  model: null,
  spawns: null,
  doc: "{}",
  is_error: null,
  words: "",
  input: null,
  result: null,
  ...over,
});

Deno.test("every field of an operation survives packing, each kind of value in turn", () => {
  const ops = [
    op({}),
    op({
      id: "op_2",
      order: { ts_ms: null, rank: 1_000_123, line: 9_000_000, block: 7 },
      tool: null,
      target: "src/ünï.ts",
      model: "gpt-5.5",
      spawns: "thread:abc",
      doc: '{"text":"🚀 \\u0001 end"}',
      is_error: 1,
      words: "",
      input: 0,
      result: "inline result ✓",
    }),
    op({ id: "op_3", is_error: 0, input: "", result: { sha256: "ab".repeat(32) }, words: "a\nb" }),
    op({ id: "op_4", order: { ts_ms: 1.5, rank: 0, line: 1, block: 0 }, input: 12, result: 3 }),
  ];
  const back = unpackOps(structuredClone(packOps(ops)));
  assertEquals(back, ops);
  // One object shape, the one prepareOp makes (the same keys in the same order).
  assertEquals(back.map((o) => Object.keys(o)), ops.map((o) => Object.keys(o)));
  assertEquals(unpackOps(packOps([])), []);
});

Deno.test("every real-CLI recording's prepared units come back as they were prepared", async () => {
  const real = `${FIXTURES}/realclients`;
  const tmp = await Deno.makeTempDir();
  try {
    const fs = createDenoFs({ tempRoot: tmp });
    const run = inProcessRunner(fs);
    let ops = 0;
    for await (const agent of Deno.readDir(real)) {
      if (!agent.isDirectory) continue;
      for await (const s of Deno.readDir(`${real}/${agent.name}`)) {
        const home = `${real}/${agent.name}/${s.name}/native`;
        if (!(await Deno.stat(home).catch(() => null))?.isDirectory) continue;
        const env = { home, env: { HOME: home }, platform: "linux" as const };
        const { units } = await discoverUnits({ env, fs, sources: [...SOURCE_IDS] });
        for (const unit of units) {
          const prepared = await run(unit, 0, undefined);
          assertEquals(roundTrip(prepared), prepared, unit.path);
          ops += prepared.deltas.reduce((n, d) => n + d.operations.length, 0);
        }
      }
    }
    assert(ops > 500, `${ops} operations checked`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
