/**
 * A big log is imported a slice at a time (`ImportContext.maxPassBytes`, PASS_SLICE_BYTES):
 * whatever the slice, the store ends as one pass over the whole log leaves it. Checked on every
 * real agent CLI's recordings, in slices of a few hundred bytes (a slice ends at each line).
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { copyTree, FIXTURES } from "../../_helpers/fixtures.ts";
import { difference, REAL, realHomes, sessions, settled } from "../../_helpers/store_leaves.ts";
import { ChronicleStore, importAll, inProcessRunner } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { addCursorChats } from "../../_helpers/cursor_db.ts";
import { columnsOf } from "../../_helpers/store_db.ts";
import { DatabaseSync } from "node:sqlite";

/** An import in passes of 2000 bytes whose third pass cannot be read. */
async function stopAtThirdPass(
  store: ChronicleStore,
  env: Parameters<typeof importAll>[1]["env"],
  fs: ReturnType<typeof createDenoFs>,
): Promise<void> {
  const run = inProcessRunner(fs);
  let passes = 0;
  const r = await importAll(store, {
    env,
    fs,
    maxPassBytes: 2000,
    runner: (...args) => ++passes === 3 ? Promise.reject(new Error("unreadable")) : run(...args),
  });
  assertEquals(r.errors.map((e) => e.code), ["import_failed"]);
}

Deno.test("a log imported in slices is stored as one pass over it stores it, for every agent", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    let sliced = 0;
    for (const home of await realHomes()) {
      const fs = createDenoFs({ tempRoot: tmp });
      const env = { home, env: { HOME: home }, platform: "linux" as const };
      const whole = ChronicleStore.open(":memory:");
      const slices = ChronicleStore.open(":memory:");
      const a = await importAll(whole, { env, fs, maxPassBytes: 1 << 30 });
      let passes = 0;
      const run = inProcessRunner(fs);
      const b = await importAll(slices, {
        env,
        fs,
        maxPassBytes: 300,
        runner: (...args) => (passes++, run(...args)),
      });
      assertEquals(difference(sessions(whole), sessions(slices)), {
        only_whole: [],
        only_sliced: [],
      }, home);
      assertEquals(b.sources, a.sources, `${home}: the same files, sessions and operations`);
      assertEquals(b.errors, a.errors, home);
      const units = Object.values(b.sources).reduce((n, x) => n + x.units, 0);
      if (passes > units) sliced++;
      assertEquals(b.bytes_read, a.bytes_read, `${home}: every byte read once`);
      // A worker that no longer holds the seen records a slice kept for the next (a worker
      // started since) says so; the slice is read again with the store's keys, to the same end.
      const lost = ChronicleStore.open(":memory:");
      let asked = 0;
      const c = await importAll(lost, {
        env,
        fs,
        maxPassBytes: 300,
        runner: (unit, epoch, resume, max) => {
          const kept = resume?.seen && !(resume.seen instanceof Uint8Array);
          if (kept) asked++;
          return run(unit, epoch, kept ? { ...resume, seen: { kept: -1 } } : resume, max);
        },
      });
      assertEquals(difference(sessions(whole), sessions(lost)), {
        only_whole: [],
        only_sliced: [],
      }, `${home}: seen records read again from the store`);
      assertEquals([c.sources, c.errors], [a.sources, a.errors], home);
      if (home.includes("claude")) assert(asked > 0, `${home}: slices asked for kept records`);
      whole.close();
      slices.close();
      lost.close();
    }
    // the recordings of Claude Code, Codex, Gemini CLI, Qwen Code and Copilot CLI (whose passes
    // take slices)
    assert(sliced >= 24, `${sliced} recordings read in slices`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a sliced read that stops half-way leaves its sessions settled, and the next import reads on", async () => {
  const home = `${REAL}/claude/s4-long/native`;
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const fs = createDenoFs({ tempRoot: tmp });
    const env = { home, env: { HOME: home }, platform: "linux" as const };
    const whole = ChronicleStore.open(":memory:");
    await importAll(whole, { env, fs });
    const store = ChronicleStore.open(":memory:");
    // the third slice cannot be read: two are stored, each saying more is to come
    await stopAtThirdPass(store, env, fs);
    const [listed] = store.listSessions({ limit: 10 }).items;
    const ops = store.timeline(listed.id, { limit: 100_000 }).items.length;
    assert(ops > 0 && ops < whole.listSessions({ limit: 10 }).items[0].op_count, `${ops} stored`);
    assertEquals(listed.op_count, ops, "the list counts what the slices stored");
    assertEquals(store.stats().operations, ops, "so do the statistics");
    assert(listed.first_prompt, "and the first prompt is there");
    // the next import reads on from the second slice, in slices, to the end
    await importAll(store, { env, fs, maxPassBytes: 2000 });
    assertEquals(difference(settled(whole), settled(store)), { only_whole: [], only_sliced: [] });
    whole.close();
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a log that goes away after its first slice leaves its sessions settled", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const home = `${tmp}/home`;
    await copyTree(`${REAL}/claude/s4-long/native`, home);
    const fs = createDenoFs({ tempRoot: `${tmp}/scratch` });
    const env = { home, env: { HOME: home }, platform: "linux" as const };
    const store = ChronicleStore.open(":memory:");
    const run = inProcessRunner(fs);
    // the log is removed once its first slice is read: the next slice finds it gone
    await importAll(store, {
      env,
      fs,
      maxPassBytes: 2000,
      runner: async (unit, ...rest) => {
        const r = await run(unit, ...rest);
        await Deno.remove(unit.path).catch(() => {});
        return r;
      },
    });
    const [listed] = store.listSessions({ limit: 10 }).items;
    const ops = store.timeline(listed.id, { limit: 100_000 }).items.length;
    assert(ops > 0, "the first slice is stored");
    assertEquals(listed.op_count, ops, "the list counts what the slice stored");
    assertEquals(store.stats().operations, ops, "so do the statistics");
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

// ------------------------------------------------------------ a database read in parts

/** The file access (scratch in `<tmp>/scratch`) and environment an import of `home` takes. */
function importOf(tmp: string, home: string) {
  const fs = createDenoFs({ tempRoot: `${tmp}/scratch` });
  return { fs, env: { home, env: { HOME: home }, platform: "linux" as const } };
}

/** A session's operations as the store holds them: id and kind, in timeline order. */
const opsOf = (store: ChronicleStore, sid: string) =>
  store.timeline(sid, { limit: 100_000 }).items.map((o) => `${o.op_id}:${o.op.kind}`);

/** The epochs a session's rows were read in. */
const epochsOf = (store: ChronicleStore, sid: string) =>
  store.loadSession(sid)!.provenance.epochs.map((e) => e.ordinal);

/** Every session a first read of the home stores, `store` holds the same of. */
async function assertAsFirstRead(store: ChronicleStore, home: ReturnType<typeof importOf>) {
  const fresh = ChronicleStore.open(":memory:");
  try {
    await importAll(fresh, home);
    const listed = new Map(store.listSessions({ limit: 100 }).items.map((s) => [s.id, s]));
    for (const s of fresh.listSessions({ limit: 100 }).items) {
      assertEquals(
        opsOf(store, s.id),
        opsOf(fresh, s.id),
        `${s.id} holds what a first read stores`,
      );
      assertEquals(listed.get(s.id)?.op_count, s.op_count, s.id);
    }
  } finally {
    fresh.close();
  }
}

/**
 * A Cursor home: the constructed fixture's global database with `chats` chats added; with the
 * file access (scratch in `<tmp>/scratch`) and environment an import of it takes.
 */
async function cursorHome(tmp: string, chats: number) {
  const home = `${tmp}/home`;
  const dir = `${home}/.config/Cursor/User/globalStorage`;
  await Deno.mkdir(dir, { recursive: true });
  const db = `${dir}/state.vscdb`;
  await Deno.copyFile(`${FIXTURES}/peers/cursor/constructed/globalStorage_state.vscdb`, db);
  addCursorChats(db, { count: chats, turns: 3, resultWords: 40 });
  return { home, db, ...importOf(tmp, home) };
}

/**
 * Changes a database as Cursor might between two imports: a chat gone, two grown (the first
 * of them in the first parts a read in parts stores), one new.
 */
function changeChats(db: string): void {
  const kv = new DatabaseSync(db);
  kv.exec(`DELETE FROM cursorDiskKV WHERE key LIKE '%comp-big-000001%'`);
  kv.close();
  addCursorChats(db, { from: 0, count: 1, turns: 5, resultWords: 40, seed: 9 }); // grown
  addCursorChats(db, { from: 3, count: 1, turns: 5, resultWords: 40, seed: 9 }); // grown
  addCursorChats(db, { from: 6, count: 1, turns: 2, resultWords: 40 }); // new
}

/**
 * Two stores of one home: `whole` reads each database in one part, `parts` in parts of
 * `maxPassBytes`. `compare` imports into both and holds them to the same sessions, summary and
 * bytes read (a database copied once), no copy left, and, before each next part, every listed
 * session counted as stored (a part's sessions are whole); it returns how many parts it took.
 */
function readsOfOneHome(tmp: string, home: string, maxPassBytes: number) {
  const scratch = `${tmp}/scratch`;
  const { fs, env } = importOf(tmp, home);
  const whole = ChronicleStore.open(":memory:");
  const parts = ChronicleStore.open(":memory:");
  const run = inProcessRunner(fs);
  let passes = 0;
  const runner = (...a: Parameters<typeof run>) => {
    if (passes++) {
      for (const s of parts.listSessions({ limit: 100 }).items) {
        const ops = parts.timeline(s.id, { limit: 100_000 }).items.length;
        assertEquals(s.op_count, ops, `${s.id} counted before the read's end`);
      }
    }
    return run(...a);
  };
  return {
    whole,
    parts,
    async compare(what: string): Promise<number> {
      passes = 0;
      const a = await importAll(whole, { env, fs, maxPassBytes: 1 << 30 });
      const b = await importAll(parts, { env, fs, maxPassBytes, runner });
      assertEquals(difference(sessions(whole), sessions(parts)), {
        only_whole: [],
        only_sliced: [],
      }, what);
      assertEquals(b.sources, a.sources, `${what}: the same files, sessions and operations`);
      assertEquals(b.errors, a.errors, what);
      assertEquals(b.bytes_read, a.bytes_read, `${what}: the database copied once`);
      assertEquals([...Deno.readDirSync(scratch)], [], `${what}: no copy is left`);
      return passes;
    },
    close() {
      whole.close();
      parts.close();
    },
  };
}

Deno.test("a database read in parts is stored as one read of it stores it, and read again so", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const { home, db } = await cursorHome(tmp, 6);
    const reads = readsOfOneHome(tmp, home, 2000);
    assert(await reads.compare("a first read") >= 6, "a chat a part");
    changeChats(db);
    // a read again in parts replaces each part's chats; its last part keeps the rows of the
    // chat that is gone (no longer on disk), as one read does
    await reads.compare("a read again");
    const gone = reads.parts.listSessions({ limit: 100 }).items.find((s) =>
      s.id === "cursor:comp-big-000001"
    );
    assert(gone, "the chat gone from the database stays in the archive");
    reads.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a database read in parts that stops half-way reads on, or again once it changed", async () => {
  for (const changed of [false, true]) {
    const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
    try {
      const { db, fs, env } = await cursorHome(tmp, 6);
      const store = ChronicleStore.open(":memory:");
      // the third part cannot be read: two are stored, the second saying more is to come
      await stopAtThirdPass(store, env, fs);
      const stored = store.listSessions({ limit: 100 }).items.length;
      assert(stored >= 2 && stored < 8, `${stored} chats stored by two parts`);
      // unchanged, the next import reads on after the second part (in the copy it kept);
      // changed, it reads the database again from its start
      if (changed) changeChats(db);
      await importAll(store, { env, fs, maxPassBytes: 2000 });
      const whole = ChronicleStore.open(":memory:");
      await importAll(whole, { env, fs });
      assertEquals(
        difference(settled(whole), settled(store)),
        { only_whole: [], only_sliced: [] },
        changed ? "changed" : "unchanged",
      );
      assertEquals([...Deno.readDirSync(`${tmp}/scratch`)], [], "no copy is left");
      whole.close();
      store.close();
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  }
});

/**
 * An OpenCode home whose database holds s4-long's session `copies` times over (ids given a
 * copy's suffix), the second copy a sub-agent of the first: roots of one or two sessions.
 */
async function opencodeHome(tmp: string, copies: number): Promise<string> {
  const home = `${tmp}/home`;
  const dir = `${home}/.local/share/opencode`;
  await copyTree(`${REAL}/opencode/s4-long/native/.local/share/opencode`, dir);
  const db = new DatabaseSync(`${dir}/opencode.db`);
  try {
    const suffixed = ["id", "session_id", "message_id"];
    for (let k = 1; k < copies; k++) {
      for (const t of ["session", "message", "part"]) {
        const names = columnsOf(db, t);
        const values = names.map((c) =>
          suffixed.includes(c)
            ? `${c} || '~${k}'`
            : c === "parent_id"
            ? (k === 2 ? `(SELECT id || '~1' FROM session LIMIT 1)` : "NULL")
            : c === "time_created"
            ? `${c} + ${k}`
            : c
        );
        db.exec(
          `INSERT INTO "${t}" (${names.join(", ")}) SELECT ${values.join(", ")} FROM "${t}"
           WHERE ${t === "session" ? "id" : "session_id"} NOT LIKE '%~%'`,
        );
      }
    }
  } finally {
    db.close();
  }
  return home;
}

Deno.test("an OpenCode database read in parts of whole root sessions is stored as one read stores it", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const reads = readsOfOneHome(tmp, await opencodeHome(tmp, 5), 300);
    // five sessions, the second a sub-agent of the first: four roots, four parts
    assertEquals(await reads.compare("opencode"), 4);
    assertEquals(reads.whole.listSessions({ limit: 10 }).items.length, 4);
    reads.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a database read again reads only the chats that changed, and keeps the rest as they are", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const { db, fs, env } = await cursorHome(tmp, 6);
    const store = ChronicleStore.open(":memory:");
    await importAll(store, { env, fs });
    changeChats(db); // chat 1 gone, 0 and 3 grown, 6 new
    const again = await importAll(store, { env, fs });
    const id = (n: number) => `cursor:comp-big-${String(n).padStart(6, "0")}`;
    const read = [0, 3, 6].reduce((n, c) => n + opsOf(store, id(c)).length, 0);
    assertEquals(again.sources.cursor.operations, read, "only the changed chats are written");
    assertEquals(epochsOf(store, id(2)), [0], "an unchanged chat is not read again");
    assertEquals(epochsOf(store, id(3)), [1], "a grown one is");
    const listed = new Map(store.listSessions({ limit: 100 }).items.map((s) => [s.id, s]));
    assertEquals(listed.get(id(1))?.kept_count, listed.get(id(1))?.op_count, "the gone chat kept");
    for (const c of [0, 2, 3, 4, 5, 6]) {
      assertEquals(listed.get(id(c))?.kept_count, 0, `${id(c)} is on disk`);
    }
    // what it holds of the chats on disk is what a first read of the changed database stores
    await assertAsFirstRead(store, { env, fs });
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("an OpenCode database read again reads only the root sessions that changed", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-slices-" });
  try {
    const home = await opencodeHome(tmp, 5);
    const { fs, env } = importOf(tmp, home);
    const store = ChronicleStore.open(":memory:");
    await importAll(store, { env, fs });
    const [root] = store.listSessions({ limit: 10 }).items.map((s) => s.id).filter((id) =>
      !id.includes("~")
    );
    // the third copy grows by a part, and its session row says so
    const db = new DatabaseSync(`${home}/.local/share/opencode/opencode.db`);
    const native = root.slice("opencode:".length);
    db.exec(`UPDATE session SET time_updated = time_updated + 1 WHERE id = '${native}~3';
      INSERT INTO part SELECT id || 'x', message_id, session_id, time_created + 1, time_updated,
        data FROM part WHERE session_id = '${native}~3' ORDER BY time_created DESC LIMIT 1;`);
    db.close();
    const again = await importAll(store, { env, fs });
    const grown = `${root}~3`;
    assertEquals(
      again.sources.opencode.operations,
      opsOf(store, grown).length,
      "only the grown session is written",
    );
    assertEquals(
      [epochsOf(store, grown), epochsOf(store, `${root}~4`), epochsOf(store, root)],
      [[1], [0], [0]],
    );
    await assertAsFirstRead(store, { env, fs });
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
