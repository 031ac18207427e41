/**
 * The import worker reads a big log's next slice (a big database's next part) as soon as it has
 * answered the last, before the store asks for it (runtime/import_worker.ts, `ahead`). What the
 * store asks for is what it gets, read ahead or not: checked on every real agent CLI's
 * recordings, in slices of a few hundred bytes, against one pass over each in this thread.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { difference, realHomes, sessions } from "../../_helpers/store_leaves.ts";
import {
  ChronicleStore,
  importAll,
  inProcessRunner,
  type UnitRunner,
} from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { createWorkerRunner } from "../../../runtime/worker_runner.ts";

/**
 * Imports every real recording twice, once whole in this thread and once in slices through the
 * import worker, its asks made by `ask` (given the worker's runner); compares what each store
 * holds. Returns how many passes the worker had read ahead.
 */
async function whereAsked(ask: (run: UnitRunner) => UnitRunner): Promise<number> {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-worker-" });
  const worker = createWorkerRunner({ tempRoot: tmp });
  try {
    for (const home of await realHomes()) {
      const fs = createDenoFs({ tempRoot: tmp });
      const env = { home, env: { HOME: home }, platform: "linux" as const };
      const whole = ChronicleStore.open(":memory:");
      const sliced = ChronicleStore.open(":memory:");
      try {
        const a = await importAll(whole, { env, fs, maxPassBytes: 1 << 30 });
        const b = await importAll(sliced, {
          env,
          fs,
          maxPassBytes: 300,
          runner: ask(worker.runner),
        });
        assertEquals(difference(sessions(whole), sessions(sliced)), {
          only_whole: [],
          only_sliced: [],
        }, home);
        assertEquals([b.sources, b.errors], [a.sources, a.errors], home);
      } finally {
        whole.close();
        sliced.close();
      }
    }
    return worker.readAhead();
  } finally {
    worker.close();
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test("the import worker reads each next slice before it is asked for, and the store ends as one pass leaves it", async () => {
  const early = await whereAsked((run) => run);
  // Claude Code's, Codex's, Gemini CLI's, Qwen Code's and Copilot CLI's logs in slices of
  // 300 bytes, OpenCode's and Cursor's databases a session a part: over a thousand read-ons
  assert(early >= 1000, `${early} passes read ahead`);
});

Deno.test("the import worker answers an ask that is not the slice it read ahead with what was asked", async () => {
  // every read-on asks for slices of another size than the last: never the pass read ahead
  // (Claude Code's seen records, which that pass moved on, are then read from the store)
  const asks = new Map<string, number>();
  const early = await whereAsked((run) => (unit, epoch, resume, max) => {
    const n = asks.get(unit.path) ?? 0;
    asks.set(unit.path, n + 1);
    return run(unit, epoch, resume, max === undefined ? max : max + 100 * (n % 2));
  });
  assertEquals(early, 0);
  assert(asks.size > 0);
});

Deno.test("an import stopped after a slice leaves the worker's read-ahead to no later import: the next one reads on as in this thread", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-worker-" });
  const worker = createWorkerRunner({ tempRoot: tmp });
  const fs = createDenoFs({ tempRoot: tmp });
  /** The sessions after an import whose third ask fails (the worker has read that slice ahead), then another. */
  const stoppedThenOn = async (home: string, run: UnitRunner) => {
    const env = { home, env: { HOME: home }, platform: "linux" as const };
    const store = ChronicleStore.open(":memory:");
    try {
      let asks = 0;
      await importAll(store, {
        env,
        fs,
        maxPassBytes: 300,
        runner: (...args) => ++asks === 3 ? Promise.reject(new Error("unreadable")) : run(...args),
      });
      await importAll(store, { env, fs, maxPassBytes: 300, runner: run });
      return sessions(store);
    } finally {
      store.close();
    }
  };
  try {
    for (const home of await realHomes()) {
      // the same in this thread, where nothing is read ahead: the later import's epoch included
      assertEquals(
        difference(
          await stoppedThenOn(home, inProcessRunner(fs)),
          await stoppedThenOn(home, worker.runner),
        ),
        { only_whole: [], only_sliced: [] },
        home,
      );
    }
  } finally {
    worker.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
