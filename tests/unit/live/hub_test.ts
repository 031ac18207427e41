/** LiveHub over a real store: what viewers are sent, once each, in order, and resuming by id. */
import assert from "node:assert/strict";
import {
  formatEventId,
  LiveHub,
  type LiveSink,
  type LiveSource,
  parseEventId,
} from "../../../core/live/mod.ts";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { ClaudeLines, claudeSessionPath, type SyntheticTurn } from "../../e2e/_synthetic.ts";
import { FakeClock, settle } from "./_fakes.ts";

const SID = "4a1b0000-0000-4000-8000-0000000000aa";
const ID = `claude-code:${SID}`;

interface Sent {
  event: string;
  data: Record<string, unknown>;
  id?: string;
}

class RecordingSink implements LiveSink {
  sent: Sent[] = [];
  closed = false;
  readies = 0;
  send(event: string, data: unknown, id?: string): boolean {
    if (this.closed) return false;
    this.sent.push({ event, data: data as Record<string, unknown>, id });
    return true;
  }
  ready(): Promise<void> {
    this.readies++;
    return Promise.resolve();
  }
  close(): void {
    this.closed = true;
  }
  ops(): string[] {
    return this.sent.filter((s) => s.event === "ops").flatMap((s) =>
      (s.data.ops as { op_id: string }[]).map((o) => o.op_id)
    );
  }
  lastId(): string | undefined {
    return this.sent.filter((s) => s.id).at(-1)?.id;
  }
}

async function setup() {
  const home = await Deno.makeTempDir({ prefix: "chronicle-hub-test-" });
  const path = claudeSessionPath(home, "/work/demo", SID);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const store = ChronicleStore.open(":memory:");
  const lines = new ClaudeLines({ sessionId: SID, cwd: "/work/demo" });
  const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
  const source: LiveSource = {
    changeClock: () => store.changeClock(),
    sessionChanges: (id, o) => store.sessionChanges(id, o),
    sessionDetail: (id) => store.sessionDetail(id),
    rows: (ops) => ops,
  };
  const clock = new FakeClock();
  const viewers: [string, number][] = [];
  const hub = new LiveHub({
    source,
    clock,
    batch: 3,
    onViewers: (id, n) => viewers.push([id, n]),
  });
  return {
    store,
    hub,
    viewers,
    path,
    /** Appends turns, imports, and tells the hub, as the server does. */
    async grow(...turns: SyntheticTurn[]) {
      await Deno.writeTextFile(path, turns.map((t) => lines.turn(t)).join(""), { append: true });
      const s = await importAll(store, { env: { home, env: {}, platform: "linux" }, fs });
      hub.notify(s.changed_sessions);
      await settle();
    },
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

const bash = (i: number): SyntheticTurn => ({
  tool: { name: "Bash", input: { command: `echo ${i}` }, result: `${i}` },
});

Deno.test("a viewer is sent the session, then each new operation once, in timeline order", async () => {
  await using t = await setup();
  await t.grow({ user: "start" });
  const sink = new RecordingSink();
  t.hub.subscribe(ID, sink, { stamp: t.store.changeClock(), rowid: Infinity });
  await settle();
  assert.deepEqual(sink.sent.map((s) => s.event), ["session"]);
  await t.grow(bash(1), bash(2));
  await t.grow(bash(3));
  const timeline = t.store.timeline(ID, { limit: 100 }).items.map((i) => i.op_id);
  assert.deepEqual(sink.ops(), timeline.slice(1));
  const ids = sink.sent.filter((s) => s.id).map((s) => parseEventId(s.id)!.stamp);
  assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "ids grow");
});

Deno.test("a burst is sent in batches, waiting for the client between them", async () => {
  await using t = await setup();
  await t.grow({ user: "start" });
  const sink = new RecordingSink();
  t.hub.subscribe(ID, sink, { stamp: t.store.changeClock(), rowid: Infinity });
  await t.grow(...Array.from({ length: 10 }, (_, i) => bash(i)));
  const batches = sink.sent.filter((s) => s.event === "ops");
  assert.deepEqual(batches.map((b) => (b.data.ops as unknown[]).length), [3, 3, 3, 1]);
  assert.deepEqual(batches.map((b) => b.data.more), [true, true, true, false]);
  assert.ok(sink.readies >= 4, "it waits for the client before every batch");
  assert.equal(new Set(sink.ops()).size, 10);
});

Deno.test("a viewer back with the last id it got is sent exactly what it missed", async () => {
  await using t = await setup();
  await t.grow({ user: "start" }, bash(0));
  const first = new RecordingSink();
  const leave = t.hub.subscribe(ID, first, { stamp: 0, rowid: Infinity });
  await settle();
  // It leaves in the middle of a burst, after one batch of it: its last id is inside a stamp.
  let readies = 0;
  first.ready = () => {
    // Before the burst's first batch, then before its second: it leaves there.
    if (++readies === 2) {
      first.closed = true;
      leave();
    }
    return Promise.resolve();
  };
  await t.grow(...Array.from({ length: 7 }, (_, i) => bash(10 + i)));
  assert.match(first.lastId()!, /^\d+\.\d+$/);
  const back = new RecordingSink();
  t.hub.subscribe(ID, back, parseEventId(first.lastId())!);
  await settle();
  const all = t.store.timeline(ID, { limit: 100 }).items.map((i) => i.op_id);
  assert.deepEqual([...first.ops(), ...back.ops()].sort(), [...all].sort());
  assert.equal(new Set([...first.ops(), ...back.ops()]).size, all.length, "nothing twice");
});

Deno.test("a log rewritten without its operations sends them again, marked kept, then what follows", async () => {
  await using t = await setup();
  await t.grow({ user: "start" }, bash(1), bash(2));
  const before = t.store.timeline(ID).items.map((i) => i.op_id);
  const sink = new RecordingSink();
  t.hub.subscribe(ID, sink, { stamp: t.store.changeClock(), rowid: Infinity });
  await settle();
  await Deno.writeTextFile(
    t.path,
    new ClaudeLines({ sessionId: SID, cwd: "/work/demo" }).turn({ user: "again" }),
  );
  await t.grow();
  const sent = sink.sent.filter((s) => s.event === "ops").flatMap((s) =>
    s.data.ops as { op_id: string; kept?: true }[]
  );
  assert.deepEqual(
    sent.filter((o) => o.kept).map((o) => o.op_id).sort(),
    [...before].sort(),
    "the archive keeps them; the viewer learns they are no longer on disk",
  );
  assert.equal(sent.filter((o) => !o.kept).length, 1, "the new prompt");
  assert.ok(!sink.sent.some((s) => s.event === "reset" || s.event === "gone"));
});

Deno.test("a log emptied keeps its session: its operations come again marked kept; written again, the new turn follows", async () => {
  await using t = await setup();
  await t.grow({ user: "start" }, bash(1));
  const stored = t.store.timeline(ID).total;
  const sink = new RecordingSink();
  t.hub.subscribe(ID, sink, { stamp: t.store.changeClock(), rowid: Infinity });
  await settle();
  await Deno.truncate(t.path, 0);
  await t.grow();
  t.hub.notify([ID]);
  await settle();
  const kept = () =>
    sink.sent.filter((s) => s.event === "ops").flatMap((s) =>
      s.data.ops as { op_id: string; kept?: true }[]
    );
  assert.equal(kept().filter((o) => o.kept).length, t.store.timeline(ID).total);
  assert.ok(!sink.sent.some((s) => s.event === "gone"), "the session is not gone");
  await Deno.writeTextFile(
    t.path,
    new ClaudeLines({ sessionId: SID, cwd: "/work/demo" }).turn({ user: "again" }),
  );
  await t.grow();
  assert.equal(kept().filter((o) => !o.kept).length, 1, "the new prompt");
  assert.equal(t.store.getSession(ID)?.kept_count, stored);
});

Deno.test("two viewers of one session: the watch starts with the first and stops with the last", async () => {
  await using t = await setup();
  await t.grow({ user: "start" });
  const a = new RecordingSink(), b = new RecordingSink();
  const after = { stamp: t.store.changeClock(), rowid: Infinity };
  const leaveA = t.hub.subscribe(ID, a, after);
  const leaveB = t.hub.subscribe(ID, b, after);
  await t.grow(bash(1));
  assert.deepEqual(a.ops(), b.ops());
  assert.equal(a.ops().length, 1);
  leaveA();
  leaveB();
  leaveB();
  assert.deepEqual(t.viewers, [[ID, 1], [ID, 2], [ID, 1], [ID, 0]]);
  assert.equal(t.hub.viewing().size, 0);
});

Deno.test("event ids are cursors: whole stamps and stamps cut at a row", () => {
  assert.equal(formatEventId({ stamp: 12, rowid: Infinity }), "12");
  assert.equal(formatEventId({ stamp: 12, rowid: 340 }), "12.340");
  assert.deepEqual(parseEventId("12"), { stamp: 12, rowid: Infinity });
  assert.deepEqual(parseEventId(" 12.340 "), { stamp: 12, rowid: 340 });
  for (const bad of ["", "x", "-1", "1.2.3", "1e5", null, undefined, "9".repeat(20)]) {
    assert.equal(parseEventId(bad), null, String(bad));
  }
});

Deno.test("a rename or a star reaches a viewer as a new session summary, no step sent again", async () => {
  await using t = await setup();
  await t.grow({ user: "start" }, bash(0));
  const sink = new RecordingSink();
  t.hub.subscribe(ID, sink, { stamp: t.store.changeClock(), rowid: Infinity });
  await settle();
  assert.deepEqual(sink.sent.map((s) => s.event), ["session"]);
  t.store.markSession(ID, { title: "Named", starred: true });
  t.hub.notify([ID], { live: false }); // as PATCH /api/sessions/:id does
  await settle();
  assert.deepEqual(sink.sent.map((s) => s.event), ["session", "session"]);
  const summary = sink.sent[1].data.session as { user_title: string; starred: boolean };
  assert.deepEqual([summary.user_title, summary.starred], ["Named", true]);
});
