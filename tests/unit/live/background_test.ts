/** The background pass (newest first, growing chunks, progress) and the import queue. */
import assert from "node:assert/strict";
import {
  backgroundPass,
  chunksOf,
  ImportQueue,
  ProgressTracker,
  UnitBatcher,
} from "../../../core/live/mod.ts";
import type { SourceUnit } from "../../../core/sources/types.ts";
import { emptySummary, type ImportSummary } from "../../../core/store/mod.ts";
import { FakeClock, settle, unit } from "./_fakes.ts";
import { firstPassLine } from "../../../cli/serve_import.ts";

const summary = (changed: string[] = []): ImportSummary => ({
  ...emptySummary(),
  changed_sessions: changed,
});

Deno.test("chunksOf() starts small and doubles up to the limit", () => {
  const units = Array.from({ length: 10 }, (_, i) => ({ unit: unit(`/u${i}`), size: 10 }));
  const chunks = chunksOf(units, { firstBytes: 10, maxBytes: 40, maxUnits: 100 });
  assert.deepEqual(chunks.map((c) => c.length), [1, 2, 4, 3]);
  const one = chunksOf([{ unit: unit("/huge"), size: 1e9 }], {
    firstBytes: 10,
    maxBytes: 40,
    maxUnits: 9,
  });
  assert.deepEqual(one.map((c) => c.length), [1], "a unit bigger than a chunk is a chunk");
});

Deno.test("backgroundPass() imports changed units newest first and keeps progress", async () => {
  const clock = new FakeClock();
  const mtimes: Record<string, number> = { "/old": 1, "/new": 3, "/mid": 2, "/same": 9 };
  const progress = new ProgressTracker(clock);
  const seen: string[][] = [];
  const snapshots: number[] = [];
  const result = await backgroundPass({
    discover: () => Promise.resolve({ units: Object.keys(mtimes).map((p) => unit(p)), errors: [] }),
    stat: (p) =>
      Promise.resolve({ isFile: true, isDirectory: false, size: 100, mtimeMs: mtimes[p], ino: 1 }),
    unchanged: (u) => Promise.resolve(u.path === "/same"),
    importChunk: (units: SourceUnit[]) => {
      seen.push(units.map((u) => u.path));
      clock.t += 1000;
      snapshots.push(progress.snapshot().percent);
      return Promise.resolve(summary(units.map((u) => `s${u.path}`)));
    },
    searchBacklog: () => 0,
    beforeIndex: () => Promise.reject(new Error("called with no backlog to index")),
    progress,
    first: true,
    chunks: { firstBytes: 100, maxBytes: 200, maxUnits: 10 },
  });
  assert.deepEqual(seen, [["/new"], ["/mid", "/old"]]);
  assert.equal(result.imported, 3);
  assert.equal(result.units.length, 4);
  assert.deepEqual(result.changed_sessions.sort(), ["s/mid", "s/new", "s/old"]);
  assert.deepEqual(snapshots, [0, 33]);
  const end = progress.snapshot();
  assert.equal(end.state, "idle");
  assert.equal(end.files_done, 3);
  assert.equal(end.bytes_total, 300);
  assert.equal(end.percent, 100);
  assert.equal(end.sessions, 3);
});

Deno.test("backgroundPass() indexes what its chunks stored once they are all in (having let go of what they left), a slice at a time", async () => {
  const clock = new FakeClock();
  const progress = new ProgressTracker(clock);
  const order: string[] = [];
  let backlog = 0;
  const states: string[] = [];
  await backgroundPass({
    discover: () => Promise.resolve({ units: ["/a", "/b"].map((p) => unit(p)), errors: [] }),
    stat: () =>
      Promise.resolve({ isFile: true, isDirectory: false, size: 100, mtimeMs: 1, ino: 1 }),
    unchanged: () => Promise.resolve(false),
    importChunk: (units) => {
      order.push(`import ${units.map((u) => u.path).join(",")}`);
      backlog += 5;
      return Promise.resolve(summary());
    },
    searchBacklog: () => backlog,
    beforeIndex: () => Promise.resolve(void order.push("let go")),
    indexSlice: () => {
      const p = progress.snapshot();
      states.push(`${p.state} ${p.index_done}/${p.index_total} ${p.percent}%`);
      order.push("index");
      clock.t += 1000;
      backlog = Math.max(0, backlog - 4);
      return Promise.resolve(backlog);
    },
    vacuumSlice: () => {
      order.push("vacuum");
      return Promise.resolve(order.filter((o) => o === "vacuum").length < 2 ? 1 : 0);
    },
    progress,
    first: true,
    chunks: { firstBytes: 100, maxBytes: 100, maxUnits: 1 },
  });
  assert.deepEqual(order, [
    "import /a",
    "import /b",
    "let go",
    "index",
    "index",
    "index",
    "vacuum",
    "vacuum",
  ]);
  assert.deepEqual(states, ["indexing 0/10 0%", "indexing 4/10 40%", "indexing 8/10 80%"]);
  assert.equal(progress.snapshot().state, "idle");
});

/** A pass over `paths` (one unit a chunk) that records what it did, stopped by `stop`. */
function stoppablePass(paths: string[], stop: AbortController, at: (step: string) => void) {
  const order: string[] = [];
  let backlog = 0;
  const step = (name: string) => {
    order.push(name);
    at(name);
  };
  const run = backgroundPass({
    discover: () => Promise.resolve({ units: paths.map((p) => unit(p)), errors: [] }),
    stat: () =>
      Promise.resolve({ isFile: true, isDirectory: false, size: 100, mtimeMs: 1, ino: 1 }),
    unchanged: () => Promise.resolve(false),
    importChunk: (units) => {
      step(`import ${units.map((u) => u.path).join(",")}`);
      backlog += 5;
      return Promise.resolve(summary([`s${units[0].path}`]));
    },
    searchBacklog: () => backlog,
    statsSlice: () => (step("stats"), Promise.resolve(0)),
    indexSlice: () => {
      step("index");
      backlog = Math.max(0, backlog - 4);
      return Promise.resolve(backlog);
    },
    compressSlice: () => (step("compress"), Promise.resolve(false)),
    vacuumSlice: () => (step("vacuum"), Promise.resolve(0)),
    progress: new ProgressTracker(new FakeClock()),
    first: true,
    chunks: { firstBytes: 100, maxBytes: 100, maxUnits: 1 },
    signal: stop.signal,
  });
  return { run, order };
}

Deno.test("backgroundPass() stopped begins no chunk or slice after it, and says what it imported", async () => {
  // stopped while the second of three chunks is imported
  const a = new AbortController();
  const mid = stoppablePass(["/a", "/b", "/c"], a, (s) => s === "import /b" && a.abort());
  const r = await mid.run;
  assert.deepEqual(mid.order, ["import /a", "import /b"]);
  assert.deepEqual([r.stopped, r.imported, r.changed], [true, 2, 3]);
  assert.deepEqual(r.changed_sessions.sort(), ["s/a", "s/b"]);
  // stopped while the index is built: every file imported, the rest of the index left
  const b = new AbortController();
  const late = stoppablePass(["/a", "/b"], b, (s) => s === "index" && b.abort());
  const l = await late.run;
  assert.deepEqual(late.order, ["import /a", "import /b", "stats", "index"]);
  assert.deepEqual([l.stopped, l.imported, l.changed], [true, 2, 2]);
  // not stopped: every phase
  const c = await stoppablePass(["/a"], new AbortController(), () => {}).run;
  assert.deepEqual([c.stopped, c.imported, c.changed], [false, 1, 1]);
});

Deno.test("the server's first-pass line says how far a stopped pass got", () => {
  const times = { started_at: 1000, finished_at: 4300 };
  const result = {
    units: [],
    imported: 99,
    changed: 158,
    changed_sessions: Array.from({ length: 99 }, (_, i) => `s${i}`),
    errors: [],
    stopped: true,
  };
  assert.equal(
    firstPassLine(result, times),
    "Stopped: 99 of 158 new or changed files imported (99 sessions) in 3.3 s; the next start imports the rest.\n",
  );
  assert.equal(
    firstPassLine({ ...result, imported: 158, changed_sessions: ["s"] }, times),
    "Imported 158 new or changed files (1 session) in 3.3 s.\n",
    "stopped after its last file: every file imported",
  );
  assert.equal(
    firstPassLine({ ...result, imported: 1, changed: 1, stopped: false }, times),
    "Imported 1 new or changed file (99 sessions) in 3.3 s.\n",
  );
});

Deno.test("the progress estimate is the time left at the rate so far", () => {
  const clock = new FakeClock();
  const p = new ProgressTracker(clock);
  p.begin(true);
  assert.equal(p.snapshot().state, "discovering");
  p.planned(4, 400);
  assert.equal(p.snapshot().eta_s, null, "no rate yet");
  clock.t += 2000;
  p.done(1, 100, ["a"]);
  const s = p.snapshot();
  assert.equal(s.percent, 25);
  assert.equal(s.eta_s, 6);
});

Deno.test("the queue runs one job at a time, urgent ones before waiting background work", async () => {
  const q = new ImportQueue();
  const order: string[] = [];
  let release!: () => void;
  const first = q.run(() => new Promise<void>((r) => (release = r)).then(() => order.push("bg1")));
  const bg2 = q.run(() => Promise.resolve(order.push("bg2")));
  const live = q.run(() => Promise.resolve(order.push("live")), { urgent: true });
  assert.equal(q.size, 3);
  release();
  await Promise.all([first, bg2, live]);
  assert.deepEqual(order, ["bg1", "live", "bg2"]);
  await q.idle();
  assert.equal(q.size, 0);
});

Deno.test("units asked for while an import waits join it", async () => {
  const q = new ImportQueue();
  const calls: string[][] = [];
  let release!: () => void;
  const busy = q.run(() => new Promise<void>((r) => (release = r)));
  const b = new UnitBatcher(q, (units) => {
    calls.push(units.map((u) => u.path));
    return Promise.resolve();
  });
  const one = b.request([unit("/a")]);
  const two = b.request([unit("/b"), unit("/a")]);
  release();
  await Promise.all([busy, one, two]);
  await settle();
  assert.deepEqual(calls, [["/a", "/b"]]);
  // With the queue idle the job starts at once; the next request is a job of its own.
  await b.request([unit("/c")]);
  await b.request([unit("/d")]);
  assert.deepEqual(calls, [["/a", "/b"], ["/c"], ["/d"]]);
});
