/**
 * Forgetting sessions: everything a session owns leaves the store, the files shrink (packs
 * compacted, database vacuumed), a shared payload stays, statistics drop, and no import (the
 * same log, an appended one, a rewritten one, a canonical export) brings the session back.
 * Compaction never loses a live payload, whatever step a crash stops it at.
 */
import { existsSync } from "node:fs";
import { dbOf } from "../../_helpers/store_db.ts";
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { ChronicleStore, PACK_MIN_BYTES, type PackFiles } from "../../../core/store/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { createPackFiles, packDir } from "../../../runtime/pack_files.ts";
import { ClaudeLines, claudeSessionPath, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { big, scratch } from "./_sessions.ts";

const encoder = new TextEncoder();
const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const id = (native: string) => `claude-code:${native}`;

/** Text that does not compress: `n` characters from a hash chain. */
const noise = (seed: string, n: number) => big(seed, n);

/** The data folder's bytes: the database with its log, and the packs. */
/** Where a payload's frame is in the packs. */
const frameOf = (store: ChronicleStore, text: string) =>
  dbOf(store).prepare(
    `SELECT f.pack, f.pack_offset, f.stored FROM payloads p JOIN frames f ON f.id = p.frame
     WHERE p.sha256 = unhex(?)`,
  ).get(sha256Hex(text)) as { pack: number; pack_offset: number; stored: number };

/** Whether a frame's bytes are all zeros (scrubbed), or gone with their pack (compacted). */
function zeroed(data: string, f: { pack: number; pack_offset: number; stored: number }) {
  const name = `${packDir(data)}/${String(f.pack).padStart(4, "0")}.pack`;
  if (!existsSync(name)) return true;
  return Deno.readFileSync(name).subarray(f.pack_offset, f.pack_offset + f.stored)
    .every((b) => b === 0);
}

function folderBytes(data: string): { db: number; packs: number } {
  let db = 0;
  for (const f of ["chronicle.db", "chronicle.db-wal"]) {
    try {
      db += Deno.statSync(`${data}/${f}`).size;
    } catch { /* none */ }
  }
  let packs = 0;
  try {
    for (const e of Deno.readDirSync(packDir(data))) {
      packs += Deno.statSync(`${packDir(data)}/${e.name}`).size;
    }
  } catch { /* none */ }
  return { db, packs };
}

/** Writes a session in `cwd` with a prompt and one Bash call per result. */
function writeSession(home: string, sid: string, results: string[], cwd = "/work/demo") {
  return writeClaudeSession(home, {
    sessionId: sid,
    cwd,
    turns: [
      { user: `fix it, session ${sid}` },
      ...results.map((result, i) => ({
        tool: { name: "Bash", input: { command: `make step${i} ${sid}` }, result },
      })),
    ],
  });
}

/** Appends one more turn (a call and its result) to a session's log. */
async function appendTurn(home: string, sid: string, result: string, cwd = "/work/demo") {
  const lines = new ClaudeLines({ sessionId: sid, cwd, start: Date.parse("2026-01-06T10:00:00Z") });
  await Deno.writeTextFile(
    claudeSessionPath(home, cwd, sid),
    lines.turn({ tool: { name: "Bash", input: { command: "make again" }, result } }),
    { append: true },
  );
}

Deno.test("forget() deletes a session and all it owns; the database file and the packs shrink", async () => {
  await using s = await scratch();
  // A: 120 results kept in the database (under 4 KiB each) and 6 in a pack; B: a little
  const inline = Array.from({ length: 120 }, (_, i) => noise(`a-inline-${i}`, 3000));
  const packed = Array.from({ length: 6 }, (_, i) => noise(`a-packed-${i}`, PACK_MIN_BYTES * 4));
  await writeSession(s.home, A, [...inline, ...packed]);
  await writeSession(s.home, B, [noise("b-0", 2000), noise("b-1", PACK_MIN_BYTES * 2)]);
  const store = s.open();
  await s.run(store);
  const share = dbOf(store);
  share.prepare(
    `INSERT INTO shares (id, token_sha256, session_id, title, created_at, expires_at, findings,
       document) VALUES ('sh1', 'x', ?, 't', '2026-01-01', '2099-01-01', 0, X'00')`,
  ).run(id(A));
  const before = folderBytes(s.data);
  // (operations name their session by its number)
  const numA =
    (share.prepare("SELECT num FROM sessions WHERE id = ?").get(id(A)) as { num: number })
      .num;
  const opsOf = (num: number) =>
    (share.prepare("SELECT count(*) AS n FROM operations WHERE session = ?").get(num) as {
      n: number;
    }).n;
  assertEquals(opsOf(numA), 127);
  const statsBefore = store.stats();
  assertEquals(statsBefore.sessions, 2);
  assert(store.search("a-inline-7").total > 0);

  const out = store.forget([id(A)], { now: () => new Date("2026-02-01T00:00:00Z") });
  assertEquals(out.dry_run, false);
  assertEquals(out.sessions.map((x) => [x.id, x.operations]), [[id(A), out.operations]]);
  assertEquals(out.operations, 127); // the prompt and 126 calls with their results
  assertEquals(out.payloads, 1 + 126 * 2); // its prompt, every input and result were A's own
  assertEquals(out.shares, 1);
  assert(out.reclaim !== null);
  assertEquals(out.reclaim.packs_compacted, 1);
  assertEquals([out.reclaim.pages, out.reclaim.db_free_bytes], ["incremental", 0]);

  // nothing of A is left
  assertEquals(store.getSession(id(A)), null);
  assertEquals(store.loadSession(id(A)), null);
  // (op_files: the paths of its logs, which name its project and its id)
  assertEquals(opsOf(numA), 0, "operations");
  for (const t of ["op_files", "connections", "usage", "epochs", "session_stats"]) {
    const n = share.prepare(`SELECT count(*) AS n FROM ${t} WHERE session_id = ?`).get(id(A)) as {
      n: number;
    };
    assertEquals(n.n, 0, t);
  }
  assertEquals((share.prepare("SELECT count(*) AS n FROM shares").get() as { n: number }).n, 0);
  assertEquals(store.search("a-inline-7").total, 0);
  for (const r of [...inline, ...packed]) assertEquals(store.payload(sha256Hex(r)), null);
  const sources = share.prepare("SELECT sessions FROM sources").all() as { sessions: string }[];
  assert(sources.every((r) => !r.sessions.includes(A)), "no unit names it any more");
  assertEquals(store.forgottenSessions(), [{
    id: id(A),
    source: "claude-code",
    project_path: "/work/demo",
    title: null,
    forgotten_at: "2026-02-01T00:00:00.000Z",
  }]);

  // statistics drop, and the kept ones still agree with the operations
  const stats = store.stats();
  assertEquals(stats.sessions, 1);
  assertEquals(stats, store.stats({}, { fromOperations: true }));
  assertEquals(stats.tools.find((t) => t.tool === "Bash")?.count, 2);

  // B is whole, its packed payload included
  assertEquals(store.loadSession(id(B))?.timeline.length, 3);
  assertEquals(store.payload(sha256Hex(noise("b-1", PACK_MIN_BYTES * 2)))?.byteLength, 8192);
  assertEquals(store.health().quick_check, []);
  assertEquals(store.health().payloads.bad, 0);

  const after = folderBytes(s.data);
  assert(after.db < before.db - 300_000, `database ${before.db} -> ${after.db}`);
  assert(after.packs < before.packs / 4, `packs ${before.packs} -> ${after.packs}`);
  assertEquals(out.reclaim.pack_bytes_before, before.packs);
  assertEquals(out.reclaim.pack_bytes_after, after.packs);
  store.close();
});

Deno.test("a forgotten session is not imported again: the same log, an appended one, a rewritten one", async () => {
  await using s = await scratch();
  await writeSession(s.home, A, ["one", "two"]);
  await writeSession(s.home, B, ["other"]);
  const store = s.open();
  await s.run(store);
  store.forget([id(A)]);
  const same = await s.run(store);
  assertEquals(same.sessions, 1);
  assertEquals(store.getSession(id(A)), null);

  await appendTurn(s.home, A, "three");
  const appended = await s.run(store);
  assertEquals(appended.sources["claude-code"].appended, 1);
  assertEquals(store.getSession(id(A)), null);
  assertEquals(appended.changed_sessions, []);

  await writeSession(s.home, A, ["rewritten", "from", "the start"]);
  const rewritten = await s.run(store);
  assertEquals(rewritten.sources["claude-code"].rewritten, 1);
  assertEquals(store.getSession(id(A)), null);
  assertEquals(store.search("rewritten").total, 0);
  assertEquals(store.totals().sessions, 1);

  // a new process, same answer
  store.close();
  const again = s.open();
  await writeSession(s.home, A, ["once more"]);
  await s.run(again);
  assertEquals(again.getSession(id(A)), null);
  assertEquals(again.stats().sessions, 1);
  again.close();
});

Deno.test("a payload two sessions share stays when one is forgotten, and goes with the second", async () => {
  await using s = await scratch();
  const sharedBig = noise("shared-big", PACK_MIN_BYTES * 3);
  const sharedSmall = "a small result both sessions printed";
  await writeSession(s.home, A, [sharedBig, sharedSmall, noise("a-own", PACK_MIN_BYTES * 3)]);
  await writeSession(s.home, B, [sharedBig, sharedSmall]);
  const store = s.open();
  await s.run(store);
  // A, read first, holds the shared payloads in its frame, with its own
  const own = noise("a-own", PACK_MIN_BYTES * 3);
  const frame = frameOf(store, own);
  assertEquals(frameOf(store, sharedBig), frame);
  const first = store.forget([id(A)]);
  assertEquals(first.payloads, 5); // A's prompt, its own result and its three commands
  for (const text of [sharedBig, sharedSmall]) {
    assertEquals(store.payload(sha256Hex(text)), encoder.encode(text));
  }
  // what stays of A's frame was written again elsewhere, and the frame's bytes are zeroed
  const moved = frameOf(store, sharedBig);
  assert(moved.pack !== frame.pack || moved.pack_offset !== frame.pack_offset, "moved");
  assert(zeroed(s.data, frame), "A's frame is scrubbed, or its pack compacted away");
  assertEquals(store.health().payloads.bad, 0);
  assertEquals(store.payload(sha256Hex(noise("a-own", PACK_MIN_BYTES * 3))), null);
  const second = store.forget([id(B)]);
  assertEquals(second.payloads, 5);
  for (const text of [sharedBig, sharedSmall]) assertEquals(store.payload(sha256Hex(text)), null);
  const left = dbOf(store).prepare("SELECT count(*) AS n FROM payloads").get() as { n: number };
  assertEquals(left.n, 0);
  assertEquals(store.stats().sessions, 0);
  assertEquals(store.stats().tools, []);
  store.close();
});

Deno.test("a dry run says what would go and changes nothing", async () => {
  await using s = await scratch();
  const store = await s.imported(A, [big("x"), "y"]);
  const before = folderBytes(s.data);
  const plan = store.forget([id(A)], { dryRun: true });
  assertEquals(plan.dry_run, true);
  assertEquals(plan.reclaim, null);
  assertEquals(plan.sessions.map((x) => x.id), [id(A)]);
  assertEquals(plan.payloads, 5);
  assert(store.getSession(id(A)) !== null);
  assertEquals(store.forgottenSessions(), []);
  assertEquals(store.payload(sha256Hex(big("x"))), encoder.encode(big("x")));
  assertEquals(folderBytes(s.data).packs, before.packs);
  const unknown = assertThrows(() => store.forget(["claude-code:nope"]));
  assert(unknown.message.startsWith('no session "claude-code:nope"'), unknown.message);
  store.close();
});

Deno.test("a pack that stays has the forgotten payloads' bytes zeroed; new payloads go to the last pack", async () => {
  await using s = await scratch();
  const keep = Array.from({ length: 5 }, (_, i) => noise(`keep-${i}`, PACK_MIN_BYTES * 3));
  const secret = noise("forget-me", PACK_MIN_BYTES * 3);
  await writeSession(s.home, B, keep);
  await writeSession(s.home, A, [secret]);
  const store = s.open();
  await s.run(store);
  // the secret's unit is a frame of its own (the prompt, the command, the result)
  const frame = frameOf(store, secret);
  assert(!zeroed(s.data, frame));
  const out = store.forget([id(A)]);
  assertEquals(out.reclaim?.packs_compacted, 0); // a sixth of it was dead: kept
  assertEquals(out.reclaim?.scrubbed_bytes, frame.stored);
  assert(zeroed(s.data, frame), "the forgotten bytes are gone from the pack");
  for (const k of keep) assertEquals(store.payload(sha256Hex(k)), encoder.encode(k));
  store.close();
});

Deno.test("compaction moves live payloads to a new pack; other connections read them and never append to the removed pack", async () => {
  await using s = await scratch();
  const keep = noise("keep", PACK_MIN_BYTES * 3);
  const gone = Array.from({ length: 4 }, (_, i) => noise(`gone-${i}`, PACK_MIN_BYTES * 3));
  await writeSession(s.home, B, [keep]);
  await writeSession(s.home, A, gone);
  // another connection (a running server) that wrote pack 1 and keeps it open
  const other = s.open();
  await s.run(other);
  assertEquals(other.payload(sha256Hex(keep)), encoder.encode(keep));
  const store = s.open();
  const out = store.forget([id(A)]);
  assertEquals(out.reclaim?.packs_compacted, 1);
  const names = () => [...Deno.readDirSync(packDir(s.data))].map((e) => e.name).sort();
  assertEquals(names(), ["0002.pack"]);
  assertEquals(other.payload(sha256Hex(keep)), encoder.encode(keep));
  // the other connection imports: its payloads go to pack 2, not to a new pack 1
  const later = noise("later", PACK_MIN_BYTES * 3);
  await writeSession(s.home, "cccccccc-0000-4000-8000-000000000003", [later]);
  await s.run(other);
  assertEquals(names(), ["0002.pack"]);
  for (const st of [store, other]) {
    assertEquals(st.payload(sha256Hex(later)), encoder.encode(later));
    assertEquals(st.payload(sha256Hex(keep)), encoder.encode(keep));
  }
  // everything forgotten: an empty pack keeps the number, so 1 and 2 never come back
  store.forget(store.listSessions().items.map((x) => x.id));
  assertEquals(names(), ["0003.pack"]);
  assertEquals(Deno.statSync(`${packDir(s.data)}/0003.pack`).size, 0);
  store.close();
  other.close();
});

Deno.test("a crash at any step of compaction never loses a live payload", async (t) => {
  const failing = (when: "sync" | "remove") => (p: PackFiles): PackFiles => ({
    ...p,
    // the store syncs a pack before its commit, removes an old one after it
    sync: (n) => {
      if (when === "sync" && n > 1) throw new Error("power cut before the commit");
      p.sync(n);
    },
    remove: (n) => {
      if (when === "remove") throw new Error("power cut after the commit");
      p.remove(n);
    },
  });
  for (const when of ["sync", "remove"] as const) {
    await t.step(`a crash at ${when}`, async () => {
      await using s = await scratch({ wrap: failing(when) });
      const keep = noise("keep", PACK_MIN_BYTES * 3);
      await writeSession(s.home, B, [keep]);
      await writeSession(s.home, A, [noise("g1", PACK_MIN_BYTES * 3), noise("g2", 20_000)]);
      const store = s.open();
      await s.run(store);
      let crashed = false;
      try {
        store.forget([id(A)]);
      } catch {
        crashed = true;
      }
      assert(crashed);
      store.close();
      // the session is forgotten (its commit came first); the live payload reads back
      const after = ChronicleStore.open(`${s.data}/chronicle.db`, {
        packs: createPackFiles(packDir(s.data)),
      });
      assertEquals(after.getSession(id(A)), null);
      assertEquals(after.payload(sha256Hex(keep)), encoder.encode(keep));
      assertEquals(after.health().payloads.bad, 0);
      // the next forget finishes the job: dead packs and leftovers go
      await writeSession(s.home, "cccccccc-0000-4000-8000-000000000003", ["small"]);
      await s.run(after);
      after.forget([id("cccccccc-0000-4000-8000-000000000003")]);
      assertEquals(after.payload(sha256Hex(keep)), encoder.encode(keep));
      const packs = [...Deno.readDirSync(packDir(s.data))].map((e) => e.name);
      assertEquals(packs.length, 1, `${packs}`);
      after.close();
    });
  }
});

Deno.test("a canonical export of a forgotten session is not imported", async () => {
  await using s = await scratch();
  const store = await s.imported(A, ["one"]);
  const session = store.loadSession(id(A))!;
  store.forget([id(A)]);
  const outcome = store.putCanonicalSession(session, new Map(), { sessionSha256: "0".repeat(64) });
  assertEquals(outcome, "forgotten");
  assertEquals(store.getSession(id(A)), null);
  store.close();
});

Deno.test("forget works on a store without packs (in memory)", () => {
  const store = ChronicleStore.open(":memory:");
  const out = store.forget([]);
  assertEquals(out.sessions, []);
  assertEquals(out.reclaim?.packs_compacted, 0);
  store.close();
});

Deno.test("a store made before auto_vacuum is vacuumed where SQLite may (and is incremental after), else keeps its pages free", async () => {
  await using s = await scratch();
  await writeSession(s.home, A, Array.from({ length: 60 }, (_, i) => noise(`old-${i}`, 3000)));
  await writeSession(s.home, B, ["kept"]);
  const made = ChronicleStore.open(`${s.data}/chronicle.db`, { autoVacuum: false });
  await s.run(made);
  made.close();
  const store = s.open(); // this version's: it asks for auto_vacuum, which a VACUUM applies
  const mode = () =>
    (dbOf(store).prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum;
  assertEquals(mode(), 0);
  const before = folderBytes(s.data).db;
  // Deno lets SQLite VACUUM only in a process with every permission (`-A`; Chronicle's tasks
  // and `deno task test` never have them): then the store shrinks and becomes incremental;
  // else its freed pages stay, zeroed, and the forget says so.
  const all = Deno.permissions.querySync({ name: "ffi" }).state === "granted";
  const out = store.forget([id(A)]).reclaim;
  if (all) {
    assertEquals(out?.pages, "vacuum");
    assert(folderBytes(s.data).db < before - 150_000);
    assertEquals(mode(), 2);
    assertEquals(store.forget([id(B)]).reclaim?.pages, "incremental");
  } else {
    assertEquals(out?.pages, "none");
    assertEquals(mode(), 0);
    assert((out?.db_free_bytes ?? 0) > 150_000, JSON.stringify(out));
  }
  store.close();
});
