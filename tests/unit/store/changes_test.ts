/** Change stamps: what a live view of a session is sent, and what it is not sent again. */
import assert from "node:assert/strict";
import { ChronicleStore, importAll, type ImportOptions } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { ClaudeLines, claudeSessionPath, type SyntheticTurn } from "../../e2e/_synthetic.ts";

const SID = "5e55a0aa-0000-4000-8000-00000000c0de";
const ID = `claude-code:${SID}`;

async function setup() {
  const home = await Deno.makeTempDir({ prefix: "chronicle-changes-test-" });
  const path = claudeSessionPath(home, "/work/demo", SID);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const options: ImportOptions = {
    env: { home, env: {}, platform: "linux" },
    fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
  };
  const store = ChronicleStore.open(":memory:");
  let lines = new ClaudeLines({ sessionId: SID, cwd: "/work/demo" });
  return {
    store,
    path,
    append: (...turns: SyntheticTurn[]) =>
      Deno.writeTextFile(path, turns.map((t) => lines.turn(t)).join(""), { append: true }),
    /** Writes the file anew (another inode), from the first turn. */
    rewrite: async (...turns: SyntheticTurn[]) => {
      lines = new ClaudeLines({ sessionId: SID, cwd: "/work/demo" });
      await Deno.writeTextFile(`${path}.new`, turns.map((t) => lines.turn(t)).join(""));
      await Deno.rename(`${path}.new`, path);
    },
    run: () => importAll(store, options),
    changes: (stamp: number, rowid = Infinity, limit?: number) =>
      store.sessionChanges(ID, { after: { stamp, rowid }, limit })!,
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

const bash = (i: number): SyntheticTurn => ({
  tool: { name: "Bash", input: { command: `make step${i}` }, result: `step ${i} ok` },
});

Deno.test("sessionChanges() after stamp 0 is the whole session, in timeline order", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, bash(1), bash(2), { assistant: "Done." });
  await t.run();
  const c = t.changes(0);
  const timeline = t.store.timeline(ID, { limit: 100 });
  assert.deepEqual(c.ops.map((o) => o.op_id), timeline.items.map((i) => i.op_id));
  assert.deepEqual(c.ops.map((o) => o.seq), timeline.items.map((i) => i.seq));
  assert.deepEqual(c.ops.map((o) => o.index), timeline.items.map((i) => i.seq));
  assert.equal(c.totals.all, timeline.total);
  assert.equal(c.more, false);
  assert.equal(c.next.stamp, t.store.changeClock());
  assert.equal(t.changes(c.next.stamp).ops.length, 0);
});

Deno.test("an appended turn is the only change after the clock of the previous import", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, bash(1));
  await t.run();
  const before = t.store.changeClock();
  const total = t.store.timeline(ID).total;
  await t.append(bash(2));
  await t.run();
  const c = t.changes(before);
  assert.equal(c.ops.length, 1);
  assert.equal(c.ops[0].op.kind, "exec");
  assert.equal(c.ops[0].seq, total);
  assert.equal(c.totals.all, total + 1);
  assert.equal(c.reset_stamp, 0);
  assert.ok(c.stamp > before);
});

Deno.test("a call whose result arrives later is sent again, complete", async () => {
  await using t = await setup();
  const lines = new ClaudeLines({ sessionId: SID, cwd: "/work/demo" });
  const [call, result] = lines.turn(bash(7)).trimEnd().split("\n");
  await Deno.writeTextFile(t.path, lines.turn({ user: "go" }) + call + "\n");
  await t.run();
  const before = t.store.changeClock();
  const first = t.changes(0).ops.find((o) => o.op.kind === "exec")!;
  assert.equal(first.op.completeness, "incomplete");
  await Deno.writeTextFile(t.path, result + "\n", { append: true });
  await t.run();
  const c = t.changes(before);
  assert.deepEqual(c.ops.map((o) => [o.op_id, o.op.completeness]), [[first.op_id, "complete"]]);
});

Deno.test("a file replaced by the same content sends nothing and resets nothing", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, bash(1));
  await t.run();
  const bytes = await Deno.readFile(t.path);
  const before = t.store.changeClock();
  await Deno.writeFile(`${t.path}.new`, bytes);
  await Deno.rename(`${t.path}.new`, t.path);
  const summary = await t.run();
  assert.equal(summary.sources["claude-code"].full, 1, "read again from zero");
  assert.ok(t.store.changeClock() > before);
  const c = t.changes(before);
  assert.deepEqual(c.ops, []);
  assert.equal(c.reset_stamp, 0);
});

Deno.test("a file replaced by one where only a call's model differs sends that call", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, bash(1), bash(2));
  await t.run();
  const text = await Deno.readTextFile(t.path);
  const before = t.store.changeClock();
  // The model is a column, not part of the stored doc: a change to it alone is still news. (The
  // same length, so no later record's byte range moves.)
  const at = text.indexOf('"model":"claude-opus-4-8"');
  const edited = text.slice(0, at) + '"model":"claude-opus-4-9"' + text.slice(at + 25);
  await Deno.writeTextFile(`${t.path}.new`, edited);
  await Deno.rename(`${t.path}.new`, t.path);
  assert.equal((await t.run()).sources["claude-code"].full, 1, "read again from zero");
  const c = t.changes(before);
  assert.deepEqual(c.ops.map((o) => [o.op.model, o.op.summary]), [[
    "claude-opus-4-9",
    "make step1",
  ]]);
  assert.equal(c.reset_stamp, 0);
});

Deno.test("a file rewritten without its operations: they change (now kept), nothing resets", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, bash(1), bash(2), bash(3));
  await t.run();
  const before = t.store.changeClock();
  const old = t.store.timeline(ID).items.map((i) => i.op_id);
  await t.rewrite({ user: "start over" });
  assert.deepEqual((await t.run()).changed_sessions, [ID]);
  const summary = await t.run();
  assert.deepEqual(summary.changed_sessions, [], "nothing changed on a second pass");
  const changes = t.store.sessionChanges(ID, { after: { stamp: before, rowid: Infinity } })!;
  assert.ok(changes.reset_stamp <= before, "nothing was lost: no reset");
  assert.deepEqual(
    changes.ops.filter((o) => o.kept).map((o) => o.op_id).sort(),
    [...old].sort(),
  );
  assert.equal(t.store.timeline(ID).total, old.length + 1);
});

Deno.test("batches resume after the last operation sent: nothing lost, nothing twice", async () => {
  await using t = await setup();
  await t.append({ user: "fix the build" }, ...Array.from({ length: 6 }, (_, i) => bash(i)));
  await t.run();
  const seen: string[] = [];
  let cursor = { stamp: 0, rowid: Infinity };
  for (let round = 0; round < 10; round++) {
    const c = t.store.sessionChanges(ID, { after: cursor, limit: 3 })!;
    seen.push(...c.ops.map((o) => o.op_id));
    cursor = c.next;
    if (!c.more) break;
  }
  const all = t.store.timeline(ID, { limit: 100 }).items.map((i) => i.op_id);
  assert.deepEqual([...seen].sort(), [...all].sort());
  assert.equal(new Set(seen).size, seen.length);
});

Deno.test("sessionChanges() is null for a session the store does not have", () => {
  const store = ChronicleStore.open(":memory:");
  try {
    assert.equal(
      store.sessionChanges("claude-code:nope", { after: { stamp: 0, rowid: 0 } }),
      null,
    );
    assert.equal(store.changeClock(), 0);
  } finally {
    store.close();
  }
});
