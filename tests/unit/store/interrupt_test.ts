/**
 * An import stopped part-way (Ctrl-C: `ImportOptions.signal`, `IndexBacklogOptions.signal`)
 * keeps every unit and slice it stored, says which files it did not read to their end, and the
 * next import ends where one uninterrupted import ends.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { copyTree } from "../../_helpers/fixtures.ts";
import { difference, REAL, realHomes, sessions } from "../../_helpers/store_leaves.ts";
import {
  ChronicleStore,
  emptySummary,
  importAll,
  indexSearchBacklog,
  inProcessRunner,
} from "../../../core/store/mod.ts";
import { BACKLOG_SLICE, buildTexts } from "../../../core/store/backlog.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { scratch } from "./_sessions.ts";

/**
 * What a store holds, without which pass wrote what: an import in two passes numbers the
 * second one's epoch 1 and records two epochs, where one pass records one.
 */
const held = (store: ChronicleStore) =>
  sessions(store).filter((l) => !/\.epoch = \d+$|\.provenance\.epochs\./.test(l));

const same = { only_whole: [], only_sliced: [] };

Deno.test("a pass stopped between two files keeps the first and the next pass reads the rest, for every agent", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-interrupt-" });
  try {
    let stoppedWithFilesLeft = 0;
    for (const home of await realHomes()) {
      const fs = createDenoFs({ tempRoot: tmp });
      const env = { home, env: { HOME: home }, platform: "linux" as const };
      const whole = ChronicleStore.open(":memory:");
      const a = await importAll(whole, { env, fs });
      const units = Object.values(a.sources).reduce((n, x) => n + x.units, 0);
      const store = ChronicleStore.open(":memory:");
      const stop = new AbortController();
      const b = await importAll(store, {
        env,
        fs,
        signal: stop.signal,
        onProgress: (done) => done === 1 && stop.abort(),
      });
      assertEquals(Object.values(b.sources).reduce((n, x) => n + x.units, 0), 1, home);
      if (units > 1) {
        stoppedWithFilesLeft++;
        assertEquals(b.interrupted?.remaining_paths.length, units - 1, home);
        assert(store.totals().operations < a.operations, `${home}: the rest is not read`);
      } else assertEquals(b.interrupted, undefined, `${home}: stopped after its last file`);
      const c = await importAll(store, { env, fs });
      assertEquals(c.interrupted, undefined);
      assertEquals(
        Object.values(c.sources).reduce((n, x) => n + x.new + x.unchanged, 0),
        units,
        `${home}: the rest read, the first skipped as unchanged`,
      );
      assertEquals(difference(held(whole), held(store)), same, home);
      whole.close();
      store.close();
    }
    assert(stoppedWithFilesLeft >= 2, `${stoppedWithFilesLeft} homes of several files`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a pass stopped between two slices of a big log reads on from the stored one next time", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-interrupt-" });
  try {
    const home = `${tmp}/home`;
    await copyTree(`${REAL}/claude/s4-long/native`, home);
    const fs = createDenoFs({ tempRoot: `${tmp}/scratch` });
    const env = { home, env: { HOME: home }, platform: "linux" as const };
    const whole = ChronicleStore.open(":memory:");
    await importAll(whole, { env, fs });
    const store = ChronicleStore.open(":memory:");
    const run = inProcessRunner(fs);
    const stop = new AbortController();
    let reads = 0;
    const b = await importAll(store, {
      env,
      fs,
      maxPassBytes: 2000,
      signal: stop.signal,
      // stopped while the second slice is read: the first is stored, the second dropped
      runner: (...args) => {
        if (++reads === 2) stop.abort();
        return run(...args);
      },
    });
    assertEquals(reads, 2, "no slice is read after the stop");
    assertEquals(b.interrupted?.remaining_paths.length, 1);
    const [listed] = store.listSessions({ limit: 10 }).items;
    const ops = store.timeline(listed.id, { limit: 100_000 }).items.length;
    const all = whole.listSessions({ limit: 10 }).items[0].op_count;
    assert(ops > 0 && ops < all, `${ops} of ${all} operations stored`);
    assertEquals(listed.op_count, ops, "the list counts what was stored");
    const c = await importAll(store, { env, fs, maxPassBytes: 2000 });
    assertEquals(c.sources["claude-code"].appended, 1, "read on from the slice stored");
    assertEquals(difference(held(whole), held(store)), same);
    whole.close();
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("indexing stopped part-way leaves the rest to the next import, which finds every word", async () => {
  await using a = await scratch();
  await using b = await scratch();
  // a bulk pass (16 logs) of more operations than a slice of the backlog takes (500)
  for (const s of [a, b]) {
    for (let i = 0; i < 16; i++) {
      await s.write(`dddddddd-${i}`, Array.from({ length: 80 }, (_, k) => `word${i}x${k} shared`));
    }
  }
  const store = a.open();
  const whole = b.open();
  await b.run(whole);
  await a.run(store, { searchLater: true });
  const backlog = store.searchBacklog();
  assert(backlog > 2 * BACKLOG_SLICE, `${backlog} operations to index`);
  const stop = new AbortController();
  const first = emptySummary();
  let built = 0;
  await indexSearchBacklog(store, first, {
    signal: stop.signal,
    // stopped while the first slice is written: the one built ahead of it is not
    onProgress: () => stop.abort(),
    build: (slice) => (built++, Promise.resolve(buildTexts(slice))),
  });
  assertEquals([first.errors, first.indexed, built], [[], BACKLOG_SLICE, 2]);
  assertEquals(first.unindexed, backlog - BACKLOG_SLICE, "the rest waits");
  const found = store.search("shared").total;
  assert(found > 0 && found < whole.search("shared").total, `${found} found so far`);
  const next = emptySummary();
  await indexSearchBacklog(store, next);
  assertEquals([next.errors, next.unindexed], [[], 0]);
  for (const q of ["shared", "word3x7", "word15x79", "make", "step12"]) {
    assertEquals(store.search(q).total, whole.search(q).total, q);
  }
  store.close();
  whole.close();
});
