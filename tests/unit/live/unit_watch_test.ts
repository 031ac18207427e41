/** UnitWatch: debounce, polling with backoff, the -wal of a database, and a clean stop. */
import assert from "node:assert/strict";
import { filesOf, UnitWatch, type UnitWatchOptions } from "../../../core/live/mod.ts";
import type { SourceUnit } from "../../../core/sources/types.ts";
import { FakeClock, FakeFiles, FakeWatcher, settle, unit } from "./_fakes.ts";

const TIMING = { debounceMs: 10, maxDelayMs: 50, pollMinMs: 100, pollMaxMs: 800 };

function setup(extra: Partial<UnitWatchOptions> = {}) {
  const clock = new FakeClock();
  const files = new FakeFiles();
  const watcher = new FakeWatcher();
  const imports: string[][] = [];
  let release: (() => void) | null = null;
  let hold = false;
  const options: UnitWatchOptions = {
    clock,
    stat: files.stat,
    watcher,
    importUnits: (units: SourceUnit[]) => {
      imports.push(units.map((u) => u.path));
      if (!hold) return Promise.resolve();
      return new Promise<void>((r) => (release = r));
    },
    timing: TIMING,
    ...extra,
  };
  return {
    clock,
    files,
    watcher,
    imports,
    options,
    /** Lets the catch-up import of a new watch happen, and forgets it. */
    async started() {
      await clock.advance(TIMING.debounceMs);
      assert.equal(imports.length, 1, "a new watch catches up once");
      imports.length = 0;
    },
    /** Imports wait until `release()` from now on. */
    holdImports: () => (hold = true),
    release: () => {
      hold = false;
      release?.();
    },
  };
}

Deno.test("a burst of changes costs one import, after the files are quiet", async () => {
  const t = setup();
  t.files.write("/p/a.jsonl", 10);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  await t.clock.advance(0);
  for (let i = 0; i < 5; i++) {
    t.files.write("/p/a.jsonl", 20 + i);
    t.watcher.emit("/p/a.jsonl");
    await t.clock.advance(3);
  }
  assert.equal(t.imports.length, 0, "still writing");
  await t.clock.advance(10);
  assert.deepEqual(t.imports, [["/p/a.jsonl"]]);
  await w.close();
});

Deno.test("a file written without pause is imported at least every maxDelayMs", async () => {
  const t = setup();
  t.files.write("/p/a.jsonl", 10);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  await t.clock.advance(0);
  for (let i = 0; i < 40; i++) {
    t.watcher.emit("/p/a.jsonl");
    await t.clock.advance(5);
  }
  // 200 ms of writes every 5 ms: one import per 50 ms, not one at the end.
  assert.ok(t.imports.length >= 3, `${t.imports.length} imports`);
  await w.close();
});

Deno.test("a change during an import is imported again once it finished", async () => {
  const t = setup();
  t.files.write("/p/a.jsonl", 10);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  t.holdImports();
  t.watcher.emit("/p/a.jsonl");
  await t.clock.advance(20);
  assert.equal(t.imports.length, 1);
  t.watcher.emit("/p/a.jsonl");
  await t.clock.advance(20);
  assert.equal(t.imports.length, 1, "never two at once");
  t.release();
  await t.clock.advance(20);
  assert.equal(t.imports.length, 2);
  await w.close();
});

Deno.test("polling finds a change without events and backs off while the files are quiet", async () => {
  const t = setup({ watcher: undefined });
  t.files.write("/p/a.jsonl", 10);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  assert.equal(w.status().mode, "poll");
  await t.clock.advance(0);
  const intervals: number[] = [];
  for (let i = 0; i < 6; i++) {
    intervals.push(w.status().poll_ms);
    await t.clock.advance(w.status().poll_ms);
  }
  assert.deepEqual(intervals, [100, 200, 400, 800, 800, 800]);
  t.files.write("/p/a.jsonl", 99);
  await t.clock.advance(800 + TIMING.debounceMs);
  assert.deepEqual(t.imports, [["/p/a.jsonl"]]);
  assert.equal(w.status().poll_ms, 100, "fast again after a change");
  await w.close();
});

Deno.test("a database is watched with its -wal: a write to the WAL alone is a change", async () => {
  const t = setup({ watcher: undefined });
  const db = unit("/d/opencode.db", "sqlite");
  assert.deepEqual(filesOf(db), ["/d/opencode.db", "/d/opencode.db-wal"]);
  t.files.write("/d/opencode.db", 4096);
  t.files.write("/d/opencode.db-wal", 0);
  const w = new UnitWatch([db], t.options);
  await t.started();
  await t.clock.advance(0);
  t.files.write("/d/opencode.db-wal", 8192);
  await t.clock.advance(100 + TIMING.debounceMs);
  assert.deepEqual(t.imports, [["/d/opencode.db"]]);
  await w.close();
});

Deno.test("when watching fails the watch polls, and says so", async () => {
  const t = setup();
  t.watcher.fail = true;
  const errors: unknown[] = [];
  t.files.write("/p/a.jsonl", 1);
  const w = new UnitWatch([unit("/p/a.jsonl")], { ...t.options, onError: (e) => errors.push(e) });
  await t.started();
  assert.equal(w.status().mode, "poll");
  assert.equal(errors.length, 1);
  await t.clock.advance(0);
  t.files.write("/p/a.jsonl", 2);
  await t.clock.advance(100 + TIMING.debounceMs);
  assert.equal(t.imports.length, 1);
  await w.close();
});

Deno.test("a new file beside the watched ones is reported; the session's own files are not", async () => {
  const others: string[] = [];
  const t = setup({ onOtherPath: (p) => others.push(p) });
  t.files.write("/p/a.jsonl", 1);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  t.watcher.emit("/p/a.jsonl");
  t.watcher.emit("/p/agent-1.jsonl");
  assert.deepEqual(others, ["/p/agent-1.jsonl"]);
  w.setUnits([unit("/p/a.jsonl"), unit("/p/agent-1.jsonl")]);
  t.watcher.emit("/p/agent-1.jsonl");
  assert.deepEqual(others, ["/p/agent-1.jsonl"]);
  await t.clock.advance(20);
  assert.deepEqual(t.imports, [["/p/a.jsonl", "/p/agent-1.jsonl"]]);
  await w.close();
});

Deno.test("close() stops events, polling and timers, and waits for a running import", async () => {
  const t = setup();
  t.files.write("/p/a.jsonl", 1);
  const w = new UnitWatch([unit("/p/a.jsonl")], t.options);
  await t.started();
  t.holdImports();
  t.watcher.emit("/p/a.jsonl");
  await t.clock.advance(20);
  let closed = false;
  const done = w.close().then(() => (closed = true));
  await settle();
  assert.equal(closed, false, "waits for the import");
  t.release();
  await done;
  assert.equal(t.clock.pending, 0, "no timer left");
  assert.equal(t.watcher.open.size, 0, "no watch left");
  t.watcher.emit("/p/a.jsonl");
  await t.clock.advance(10_000);
  assert.equal(t.imports.length, 1);
});
