/**
 * Payload bytes in pack files: what goes where, that every payload reads back exactly, and
 * that failures (a unit rolled back, a pack cut short, two writers) never give wrong bytes.
 */
import { dbOf } from "../../_helpers/store_db.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  ChronicleStore,
  type CompressedSlice,
  compressPlainFrames,
  emptySummary,
  indexSearchBacklog,
  type PlainCursor,
  type PlainSlice,
} from "../../../core/store/mod.ts";
import { PACK_WRITE_SLICE } from "../../../core/store/packs.ts";
import { createTextWorker } from "../../../runtime/text_builder.ts";
import { answerText } from "../../../runtime/text_work.ts";
import { decodeFrame } from "../../../core/store/payload_codec.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { packDir } from "../../../runtime/pack_files.ts";
import { big, scratch } from "./_sessions.ts";

type Scratch = Awaited<ReturnType<typeof scratch>>;

const encoder = new TextEncoder();
/** Each payload with its frame's place (migration 27), in the columns payloads had before. */
const PLACED = `(SELECT p.sha256 AS sha256, p.size AS size, p.bytes AS bytes, f.pack AS pack,
  f.pack_offset AS pack_offset, coalesce(f.codec, p.codec) AS codec, f.stored AS stored,
  p.frame_offset AS frame_offset FROM payloads p LEFT JOIN frames f ON f.id = p.frame)`;
const place = (store: ChronicleStore, text: string) =>
  dbOf(store).prepare(`SELECT pack, pack_offset, size FROM ${PLACED} WHERE sha256 = unhex(?)`)
    .get(sha256Hex(text)) as
      | { pack: number | null; pack_offset: number | null; size: number }
      | undefined;

/** The bytes the packs hold for a store's framed payloads: each frame once. */
const framed = (store: ChronicleStore) =>
  Number(
    (dbOf(store).prepare("SELECT coalesce(sum(stored), 0) AS n FROM frames").get() as {
      n: number;
    }).n,
  );

/**
 * Takes a store's payloads back to before migration 27 (each row naming its frame's place),
 * for older tables to be made from them; the migrations from `since` on run again.
 */
const before27 = (since: number) => `
  CREATE TABLE payloads_v26 (sha256 BLOB PRIMARY KEY, size INTEGER NOT NULL,
    bytes BLOB NOT NULL, pack INTEGER, pack_offset INTEGER, codec INTEGER NOT NULL DEFAULT 0,
    stored INTEGER, frame_offset INTEGER) WITHOUT ROWID;
  INSERT INTO payloads_v26 SELECT * FROM ${PLACED};
  DROP TABLE payloads;
  DROP TABLE frames;
  ALTER TABLE payloads_v26 RENAME TO payloads;
  CREATE INDEX payloads_plain ON payloads (pack, pack_offset) WHERE codec = 3;
  DELETE FROM migrations WHERE version >= ${since} AND version IN (16, 22, 27);`;

Deno.test("a unit's payloads go to a pack in frames once they add up to 4 KiB, a smaller unit's stay in the database; all read back exactly", async () => {
  await using s = await scratch();
  const results = [big("alpha"), "short result", big("gamma é ✓ 🚀")];
  const store = await s.imported("aaaaaaaa-1", results);
  const rows = results.map((r) => place(store, r)!);
  assertEquals(rows.map((r) => r.pack), [1, 1, 1]);
  // consecutive payloads of a unit share a frame
  assertEquals(new Set(rows.map((r) => r.pack_offset)).size, 1);
  const small = "a small unit's only result";
  await s.write("bbbbbbbb-2", [small]);
  await s.run(store);
  assertEquals(place(store, small)?.pack, null);
  for (const r of [...results, small]) {
    assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
    assertEquals(store.payloadHead(sha256Hex(r), 5), encoder.encode(r).subarray(0, 5));
  }
  assertEquals(s.packBytes(), framed(store));
  const raw = encoder.encode(results[0]).byteLength + encoder.encode(results[2]).byteLength;
  assert(s.packBytes() < raw, `${s.packBytes()} bytes in the pack for ${raw} of hex`);
  if (Deno.build.os !== "windows") {
    assertEquals(Deno.statSync(packDir(s.data)).mode! & 0o777, 0o700);
    assertEquals(Deno.statSync(`${packDir(s.data)}/0001.pack`).mode! & 0o777, 0o600);
  }
  store.close();
  // A new process finds the bytes again.
  const again = s.open();
  for (const r of [...results, small]) assertEquals(again.payload(sha256Hex(r)), encoder.encode(r));
  again.close();
});

Deno.test("a payload already stored is not written again, whichever session or pass brings it", async () => {
  await using s = await scratch();
  const shared = big("shared");
  const store = await s.imported("aaaaaaaa-1", [shared]);
  const once = s.packBytes();
  assertEquals(once, framed(store));
  // another session with the same result, and the first file replaced (a full re-read)
  await s.write("bbbbbbbb-2", [shared]);
  await s.write("aaaaaaaa-1", [shared, "x"]);
  await s.run(store);
  assertEquals(s.packBytes(), once);
  assertEquals(store.payload(sha256Hex(shared)), encoder.encode(shared));
  store.close();
});

Deno.test("a bulk import past its filter's threshold stores each payload once: the ones stored before, in it or not, are known", async () => {
  await using s = await scratch();
  // 3,040 outputs stored first, then 6,000 more asked about in one bulk import (16 logs or
  // more): half of the first ones again (a session repeating them), and new ones
  const out = (i: number) => `output ${i} ` + "x".repeat(i % 7);
  const first = Array.from({ length: 16 * 190 }, (_, i) => out(i));
  for (let i = 0; i < 16; i++) {
    await s.write(`aaaaaa${i + 10}-1`, first.slice(i * 190, i * 190 + 190));
  }
  const store = s.open();
  await s.run(store, { searchLater: true });
  const count = () =>
    Number((dbOf(store).prepare("SELECT count(*) AS n FROM payloads").get() as { n: number }).n);
  const before = count();
  const fresh = Array.from({ length: 15 * 300 }, (_, i) => out(10_000 + i));
  await s.write("bbbbbbbb-1", first.slice(0, 1_500));
  for (let i = 0; i < 15; i++) {
    await s.write(`cccccc${i + 10}-1`, fresh.slice(i * 300, i * 300 + 300));
  }
  const next = await s.run(store, { searchLater: true });
  assertEquals(next.errors, []);
  assert(count() - before >= fresh.length, `${count() - before} rows added`);
  // no bytes written twice: each plain frame holds its payloads' bytes and nothing else
  assertEquals(codecs(store), ["codec 3 in 1"]);
  const padded = dbOf(store).prepare(
    `SELECT count(*) AS n FROM frames f
     WHERE f.stored <> (SELECT coalesce(sum(size), 0) FROM payloads WHERE frame = f.id)`,
  ).get() as { n: number };
  assertEquals(Number(padded.n), 0);
  for (const t of [...first, ...fresh]) {
    assertEquals(store.payload(sha256Hex(t)), encoder.encode(t));
  }
  store.close();
});

/** Rows in the payloads table and among those a bulk import gathered apart (migration 28). */
const rowsIn = (store: ChronicleStore) =>
  ["payloads", "payloads_new"].map((t) =>
    Number((dbOf(store).prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n)
  );

Deno.test("a bulk import's new payloads gather apart and join the table every few rows and at its end; each reads back", async () => {
  await using s = await scratch({ payloadMergeRows: 7 });
  const results = Array.from({ length: 20 }, (_, i) => [big(`m${i}`), `small ${i}`]);
  for (let i = 0; i < results.length; i++) await s.write(`dddddd${i + 10}-1`, results[i]);
  const store = s.open();
  const db = dbOf(store);
  // each row merged notes how many the table held then: one number a merge
  db.exec(`CREATE TEMP TABLE merged (held INTEGER);
    CREATE TEMP TRIGGER merging AFTER DELETE ON payloads_new
    BEGIN INSERT INTO merged VALUES ((SELECT count(*) FROM main.payloads)); END`);
  assertEquals((await s.run(store, { searchLater: true })).errors, []);
  const [stored, apart] = rowsIn(store);
  assertEquals(apart, 0, "every row merged at the end");
  const merged = db.prepare("SELECT count(*) AS rows, count(DISTINCT held) AS merges FROM merged")
    .get() as { rows: number; merges: number };
  assertEquals(Number(merged.rows), stored, "every row went through payloads_new");
  assert(merged.merges > 5, `${merged.merges} merges`);
  for (const r of results.flat()) assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  assertEquals((await s.run(store)).errors, []);
  assertEquals(store.search("small").total, 20);
  store.close();
});

Deno.test("payloads a killed bulk import left apart are read, checked and forgotten as the others, and merged by the next one", async () => {
  await using s = await scratch();
  const results = Array.from({ length: 18 }, (_, i) => [big(`k${i}`), `kept apart ${i}`]);
  for (let i = 0; i < results.length; i++) await s.write(`eeeeee${i + 10}-1`, results[i]);
  const store = s.open();
  assertEquals((await s.run(store, { searchLater: true })).errors, []);
  // as a bulk import killed before its end leaves them: every row still apart
  dbOf(store).exec("INSERT INTO payloads_new SELECT * FROM payloads; DELETE FROM payloads;");
  const [, apart] = rowsIn(store);
  assert(apart > 36, `${apart} rows apart`);
  for (const r of results.flat()) assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  const health = store.health();
  assertEquals([health.payloads.inline + health.payloads.packed, health.payloads.bad], [apart, 0]);
  store.forget(["claude-code:eeeeee10-1"]);
  assertEquals(store.payload(sha256Hex(results[0][0])), null);
  for (const r of results.slice(1).flat()) {
    assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  }
  // the next bulk import (16 logs or more, one new) stores nothing twice and merges them all
  for (let i = 0; i < 17; i++) await s.write(`ffffff${i + 10}-1`, [`new ${i}`, results[1][0]]);
  assertEquals((await s.run(store)).errors, []);
  assertEquals(rowsIn(store)[1], 0);
  for (const r of results.slice(1).flat()) {
    assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  }
  assertEquals(store.payload(sha256Hex("new 3")), encoder.encode("new 3"));
  store.close();
});

Deno.test("a forgotten payload stored twice, in the table and among a bulk import's rows apart, goes from both", async () => {
  await using s = await scratch();
  const secret = big("forget-me twice");
  await s.write("00000000-gone", [secret]);
  for (let i = 0; i < 16; i++) await s.write(`eeeeee${i + 10}-1`, [big(`keep ${i}`)]);
  const store = s.open();
  assertEquals((await s.run(store, { searchLater: true })).errors, []);
  // as when another process stored it while a bulk import still held its copy apart
  dbOf(store).exec(
    `INSERT INTO payloads_new SELECT * FROM payloads WHERE sha256 = unhex('${sha256Hex(secret)}')`,
  );
  assertEquals(rowsIn(store)[1], 1);
  store.forget(["claude-code:00000000-gone"]);
  assertEquals(rowsIn(store)[1], 0);
  assertEquals(store.payload(sha256Hex(secret)), null);
  // the next bulk import's merge brings nothing back
  for (let i = 0; i < 16; i++) await s.write(`ffffff${i + 10}-1`, [`new ${i}`]);
  assertEquals((await s.run(store)).errors, []);
  assertEquals(store.payload(sha256Hex(secret)), null);
  store.close();
});

Deno.test("a unit that fails after writing its bytes leaves no row pointing at them", async () => {
  await using s = await scratch();
  const first = big("first");
  const store = await s.imported("aaaaaaaa-1", [first]);
  // The next unit's payload reaches the pack, then its operations fail to insert.
  const doomed = big("doomed");
  dbOf(store).exec(`CREATE TEMP TRIGGER doomed BEFORE INSERT ON operations
    WHEN NEW.session_id LIKE '%bbbbbbbb%' BEGIN SELECT RAISE(ABORT, 'disk full (simulated)'); END`);
  await s.write("bbbbbbbb-2", [doomed]);
  const summary = await s.run(store);
  assertEquals(summary.errors.map((e) => e.code), ["store_failed"]);
  assertEquals(place(store, doomed), undefined);
  const orphaned = s.packBytes();
  assert(orphaned > encoder.encode(first).byteLength, "the doomed bytes stay as unused space");
  // The next pass imports the file; its bytes go after the unused ones and read back exactly.
  dbOf(store).exec("DROP TRIGGER doomed");
  await s.run(store);
  const row = place(store, doomed)!;
  assertEquals(row.pack_offset, orphaned);
  assertEquals(store.payload(sha256Hex(doomed)), encoder.encode(doomed));
  assertEquals(store.payload(sha256Hex(first)), encoder.encode(first));
  store.close();
});

Deno.test("a pack changed or cut short gives a missing payload, never wrong bytes", async () => {
  await using s = await scratch();
  const result = big("cut");
  const store = await s.imported("aaaaaaaa-1", [result]);
  store.close();
  // one byte changed: the bytes no longer match their hash
  const pack = `${packDir(s.data)}/0001.pack`;
  const bytes = await Deno.readFile(pack);
  bytes[10] ^= 1;
  await Deno.writeFile(pack, bytes);
  const changed = s.open();
  assertEquals(changed.payload(sha256Hex(result)), null);
  changed.close();
  await Deno.truncate(pack, 100);
  const after = s.open();
  assertEquals(after.payload(sha256Hex(result)), null);
  // a frame cut short inflates to nothing: not even a head of it is read
  assertEquals(after.payloadHead(sha256Hex(result), 50), null);
  await Deno.remove(packDir(s.data), { recursive: true });
  const gone = s.open();
  assertEquals(gone.payload(sha256Hex(result)), null);
  after.close();
  gone.close();
});

Deno.test("packs roll over at their limit, and two stores on one folder never overlap", async () => {
  await using s = await scratch({ packLimit: 4096 * 3 });
  const one = s.open();
  const two = s.open();
  const all: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = [big(`one-${i}`), big(`two-${i}`)];
    all.push(...r);
    await s.write(`ssssssss-${i}`, r);
    await s.run(i % 2 ? two : one);
  }
  const packs = [...Deno.readDirSync(packDir(s.data))].map((e) => e.name).sort();
  assert(packs.length >= 2, `rolled over: ${packs}`);
  for (const store of [one, two]) {
    for (const r of all) assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  }
  one.close();
  two.close();
});

Deno.test("packs reach the disk before the commit that points at them, once per bulk pass", async () => {
  const syncs: string[] = [];
  await using s = await scratch({
    wrap: (p) => ({
      ...p,
      sync: (n) => {
        syncs.push(`sync ${n}`);
        p.sync(n);
      },
    }),
  });
  const store = s.open();
  const commits: string[] = [];
  const exec = dbOf(store).exec.bind(dbOf(store));
  dbOf(store).exec = (sql: string) => {
    if (sql === "COMMIT") commits.push(`commit after ${syncs.length} syncs`);
    return exec(sql);
  };
  await s.write("aaaaaaaa-1", [big("a")]);
  await s.run(store);
  assertEquals(syncs, ["sync 1"]);
  assertEquals(commits.at(-1), "commit after 1 syncs");
  // a bulk pass (16 files or more): one flush at its end, not one per unit, of the pack of
  // plain frames it wrote (2), then one of the pack it compressed them into (3)
  syncs.length = 0;
  for (let i = 0; i < 20; i++) {
    await s.write(`bbbbbbbb-${i}`, [big(`b${i}`)]);
  }
  await s.run(store);
  assertEquals(syncs, ["sync 2", "sync 3"]);
  store.close();
});

Deno.test("a store made before packs still reads its payloads, and adds new ones to packs", async () => {
  await using s = await scratch();
  const old = big("old");
  await s.write("aaaaaaaa-1", [old]);
  const before = ChronicleStore.open(`${s.data}/chronicle.db`); // no packs: bytes in the database
  await s.run(before);
  before.close();
  assertEquals(s.packBytes(), 0);
  const store = s.open();
  assertEquals(store.payload(sha256Hex(old)), encoder.encode(old));
  const added = big("added");
  await s.write("bbbbbbbb-2", [added]);
  await s.run(store);
  assertEquals(place(store, added)?.pack, 1);
  assertEquals(store.payload(sha256Hex(added)), encoder.encode(added));
  store.close();
});

/**
 * A store with payloads of both kinds: two sessions, one whose outputs are framed in a pack and
 * one whose output stays in the database; what reading them gives, to compare after a change.
 */
async function framedAndInline(s: Scratch) {
  const results = [big("framed one"), big("framed two")];
  const store = await s.imported("aaaaaaaa-1", results);
  const small = "an inline result";
  await s.write("bbbbbbbb-2", [small]);
  await s.run(store);
  return {
    store,
    results,
    small,
    texts: [...results, small],
    session: JSON.stringify(store.loadSession("claude-code:aaaaaaaa-1")),
    counts: store.health().payloads,
  };
}

Deno.test("migration 16 keys the payloads by hash and every payload, framed or inline, reads the same", async () => {
  await using s = await scratch();
  const { store, small, texts, session, counts } = await framedAndInline(s);
  assert(counts.inline > 0 && counts.packed > 0, JSON.stringify(counts));
  // The payloads table as version 15 left it: a rowid table beside its index of hashes.
  dbOf(store).exec(before27(16));
  dbOf(store).exec(`
    CREATE TABLE payloads_v15 (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE,
      size INTEGER NOT NULL, bytes BLOB NOT NULL, pack INTEGER, pack_offset INTEGER,
      codec INTEGER NOT NULL DEFAULT 0, stored INTEGER, frame_offset INTEGER);
    INSERT INTO payloads_v15 (sha256, size, bytes, pack, pack_offset, codec, stored, frame_offset)
      SELECT lower(hex(sha256)), size, bytes, pack, pack_offset, codec, stored, frame_offset
      FROM payloads;
    DROP TABLE payloads;
    ALTER TABLE payloads_v15 RENAME TO payloads;`);
  store.close();
  const after = s.open();
  const table = dbOf(after).prepare("SELECT sql FROM sqlite_schema WHERE name = 'payloads'")
    .get() as { sql: string };
  assert(/WITHOUT ROWID/.test(table.sql), table.sql);
  assertEquals(
    (dbOf(after).prepare(
      `SELECT count(*) AS n FROM sqlite_schema
       WHERE tbl_name = 'payloads' AND name <> 'payloads_plain'`,
    ).get() as { n: number }).n,
    1,
    "no index of hashes beside the table",
  );
  for (const t of texts) assertEquals(after.payload(sha256Hex(t)), encoder.encode(t));
  assertEquals(place(after, small)?.pack, null);
  assertEquals(JSON.stringify(after.loadSession("claude-code:aaaaaaaa-1")), session);
  const health = after.health();
  assertEquals(health.quick_check, []);
  assertEquals(health.payloads, { ...counts, checked: counts.packed, bad: 0 });
  after.close();
});

Deno.test("migration 22 keys the payloads by their 32 bytes; every payload reads the same, none is stored twice", async () => {
  await using s = await scratch();
  const { store, results, texts, session, counts } = await framedAndInline(s);
  const db = dbOf(store);
  const rows = () => (db.prepare("SELECT count(*) AS n FROM payloads").get() as { n: number }).n;
  const total = rows();
  // The payloads table as version 21 left it: keyed by the hash's 64 hex characters.
  db.exec(before27(22));
  db.exec(`
    CREATE TABLE payloads_v21 (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL,
      bytes BLOB NOT NULL, pack INTEGER, pack_offset INTEGER, codec INTEGER NOT NULL DEFAULT 0,
      stored INTEGER, frame_offset INTEGER) WITHOUT ROWID;
    INSERT INTO payloads_v21 SELECT lower(hex(sha256)), size, bytes, pack, pack_offset, codec,
      stored, frame_offset FROM payloads;
    DROP TABLE payloads;
    ALTER TABLE payloads_v21 RENAME TO payloads;
    CREATE INDEX payloads_plain ON payloads (pack, pack_offset) WHERE codec = 3;`);
  store.close();
  const after = s.open();
  const adb = dbOf(after);
  const keys = adb.prepare("SELECT DISTINCT typeof(sha256) AS t, length(sha256) AS n FROM payloads")
    .all();
  assertEquals(keys.map((k) => ({ ...k })), [{ t: "blob", n: 32 }]);
  for (const t of texts) assertEquals(after.payload(sha256Hex(t)), encoder.encode(t));
  assertEquals(JSON.stringify(after.loadSession("claude-code:aaaaaaaa-1")), session);
  assertEquals(after.health().payloads, { ...counts, checked: counts.packed, bad: 0 });
  // A session that repeats a stored output, and one new one: only the new one is added.
  const added = big("added");
  await s.write("cccccccc-3", [results[0], added]);
  await s.run(after);
  assertEquals(
    (adb.prepare("SELECT count(*) AS n FROM payloads").get() as { n: number }).n,
    // its prompt and its new output; its two commands are the first session's, as is its
    // first output
    total + 2,
  );
  assertEquals(after.payload(sha256Hex(added)), encoder.encode(added));
  assertEquals(after.search("added").total > 0, true);
  after.close();
});

Deno.test("migration 27 gives each frame a row, a payload alone in a pack a frame of one; every payload reads the same", async () => {
  await using s = await scratch();
  const { store, texts, session, counts } = await framedAndInline(s);
  const db = dbOf(store);
  db.exec(before27(27));
  // a payload stored alone and raw at the end of the pack, as before frames (migration 15)
  const alone = big("stored alone");
  const bytes = encoder.encode(alone);
  const pack = `${packDir(s.data)}/0001.pack`;
  const end = Deno.statSync(pack).size;
  Deno.writeFileSync(pack, bytes, { append: true });
  db.prepare(
    `INSERT INTO payloads (sha256, size, bytes, pack, pack_offset, codec)
     VALUES (unhex(?), ?, X'', 1, ?, 0)`,
  ).run(sha256Hex(alone), bytes.length, end);
  const places = Number(
    (db.prepare(
      "SELECT count(*) AS n FROM (SELECT DISTINCT pack, pack_offset FROM payloads WHERE pack NOT NULL)",
    ).get() as { n: number }).n,
  );
  store.close();
  const after = s.open();
  const adb = dbOf(after);
  assertEquals(
    Number((adb.prepare("SELECT count(*) AS n FROM frames").get() as { n: number }).n),
    places,
  );
  assert(places >= 2, `${places} places`);
  for (const t of [...texts, alone]) assertEquals(after.payload(sha256Hex(t)), encoder.encode(t));
  assertEquals(after.payloadHead(sha256Hex(alone), 5), bytes.subarray(0, 5));
  assertEquals({ ...place(after, alone) }, { pack: 1, pack_offset: end, size: bytes.length });
  assertEquals(JSON.stringify(after.loadSession("claude-code:aaaaaaaa-1")), session);
  const packed = counts.packed + 1;
  assertEquals(after.health().payloads, { ...counts, packed, checked: packed, bad: 0 });
  after.close();
});

Deno.test("a bulk import's plain frames written before migration 27 are compressed by the next import after it", async () => {
  await using s = await scratch();
  const { store, results } = await inPlainFrames(s, "eeeeeeee");
  assertEquals(codecs(store), ["codec 3 in 1"]);
  dbOf(store).exec(before27(27));
  store.close();
  const after = s.open();
  assertEquals(codecs(after), ["codec 3 in 1"]);
  assertEquals((await s.run(after)).errors, []);
  assertEquals(codecs(after), ["codec 2 in 2"]);
  assertEquals(packFiles(s.data), ["0002.pack"]);
  for (const r of results.flat()) assertEquals(after.payload(sha256Hex(r)), encoder.encode(r));
  after.close();
});

Deno.test("error statistics count a failed command whose output is in a pack", async () => {
  await using s = await scratch();
  const failing = "make: *** [step1] Error 2\nExit code 2\n" + big("log");
  const store = await s.imported("aaaaaaaa-1", [big("fine"), failing]);
  assertEquals(place(store, failing)?.pack, 1);
  const stats = store.stats();
  assertEquals(stats.tools.find((t) => t.tool === "Bash")?.errors, 1);
  store.close();
});

Deno.test("a big unit's payloads are stored in Zstandard frames, a small unit's compressed alone when that pays; all read back exactly", async () => {
  await using s = await scratch();
  const log = "compiling module core/store/search.ts\n".repeat(5_000); // 190 KB, compresses ~100x
  const hex = big("hex", 40_000); // compresses to about half
  const store = await s.imported("aaaaaaaa-1", [log, hex]);
  const row = (text: string) =>
    dbOf(store).prepare(
      `SELECT size, codec, stored, pack, pack_offset, frame_offset, length(bytes) AS inline
       FROM ${PLACED} WHERE sha256 = unhex(?)`,
    ).get(sha256Hex(text)) as Record<string, number | null>;
  const alone = row(log); // bigger than a frame: a frame of its own
  assertEquals([alone.size, alone.codec, alone.pack, alone.frame_offset], [log.length, 2, 1, 0]);
  assert(alone.stored! < log.length / 50, `${alone.stored} bytes stored`);
  const next = row(hex);
  assertEquals([next.codec, next.pack], [2, 1]);
  assertEquals(next.pack_offset, alone.pack_offset! + alone.stored!, "the next frame");
  assert(next.stored! < hex.length * 0.7, `${next.stored} bytes stored for ${hex.length}`);
  assertEquals(s.packBytes(), framed(store));
  // a unit under 4 KiB of payloads: in the database, DEFLATE when it pays
  const short = "compiling module core/store/queries.ts\n".repeat(60);
  await s.write("bbbbbbbb-2", [short, "ok"]);
  await s.run(store);
  const inline = row(short);
  assertEquals([inline.codec, inline.pack], [1, null]);
  assert(inline.inline! < short.length / 10, `${inline.inline} bytes stored`);
  assertEquals([row("ok").codec, row("ok").inline], [0, 2]);
  for (const text of [log, hex, short, "ok"]) {
    assertEquals(store.payload(sha256Hex(text)), encoder.encode(text));
  }
  assertEquals(store.payloadHead(sha256Hex(log), 38), encoder.encode(log.slice(0, 38)));
  assertEquals(store.payloadHead(sha256Hex(hex), 9), encoder.encode(hex.slice(0, 9)));
  assertEquals(store.search("search.ts").total, 1, "the whole output is searchable");
  store.close();
});

Deno.test("health() reports quick_check ok and names a pack payload that no longer matches its hash", async () => {
  await using s = await scratch();
  const result = big("health");
  const store = await s.imported("aaaaaaaa-1", [result]);
  const fine = store.health();
  assertEquals(fine.quick_check, []);
  // the result, the prompt and the command, in one frame
  assertEquals([fine.payloads.checked, fine.payloads.bad], [fine.payloads.packed, 0]);
  assert(fine.payloads.packed >= 2, `${fine.payloads.packed} in the pack`);
  store.close();
  const pack = `${packDir(s.data)}/0001.pack`;
  const bytes = await Deno.readFile(pack);
  bytes[10] ^= 0xff;
  await Deno.writeFile(pack, bytes);
  const again = s.open();
  const bad = again.health();
  // a frame changed loses every payload in it, each named
  assertEquals([bad.payloads.checked, bad.payloads.bad], [
    fine.payloads.packed,
    fine.payloads.packed,
  ]);
  assert(bad.payloads.bad_sha256.includes(sha256Hex(result)));
  assertEquals(again.health({ verifyPacks: false }).payloads.checked, 0);
  again.close();
});

/** Each framed payload's codec and pack, and the pack files there are. */
const codecs = (store: ChronicleStore) =>
  (dbOf(store).prepare(
    "SELECT DISTINCT codec, pack FROM frames ORDER BY codec, pack",
  ).all() as { codec: number; pack: number }[]).map((r) => `codec ${r.codec} in ${r.pack}`);
const packFiles = (data: string) => [...Deno.readDirSync(packDir(data))].map((e) => e.name).sort();

/** Nineteen sessions to keep and one to forget, a big result each, imported in plain frames. */
async function keptAndSecret(s: Scratch) {
  const keep = Array.from({ length: 19 }, (_, i) => big(`keep-${i}`));
  const secret = big("forget-me");
  for (let i = 0; i < keep.length; i++) await s.write(`ffffffff-${i}`, [keep[i]]);
  await s.write("ffffffff-secret", [secret]);
  const store = s.open();
  await s.run(store, { searchLater: true });
  return { store, keep, secret };
}

/**
 * Twenty sessions (`prefix-0` ...) of two results each, imported in bulk: in plain frames, of
 * several payloads each (a session's results share its unit's frames), not compressed yet.
 */
async function inPlainFrames(s: Scratch, prefix: string) {
  const results = Array.from({ length: 20 }, (_, i) => [big(`a${i}`, 50_000), big(`b${i}`)]);
  for (let i = 0; i < results.length; i++) await s.write(`${prefix}-${i}`, results[i]);
  const store = s.open();
  await s.run(store, { searchLater: true });
  return { store, results };
}

/**
 * The store opened again after an import stopped part-way through compressing: the next
 * import compresses the rest into the one new pack, and every payload reads back exactly.
 */
async function compressedByNextImport(s: Scratch, texts: readonly string[]) {
  const again = s.open();
  for (const r of texts) assertEquals(again.payload(sha256Hex(r)), encoder.encode(r));
  assertEquals((await s.run(again)).errors, []);
  assertEquals(codecs(again), ["codec 2 in 2"]);
  assertEquals(packFiles(s.data), ["0002.pack"]);
  for (const r of texts) assertEquals(again.payload(sha256Hex(r)), encoder.encode(r));
  return again;
}

Deno.test("a bulk import's frames are written plain, read at once, and compressed once its search backlog is indexed; their pack is removed", async () => {
  await using s = await scratch();
  const results = Array.from({ length: 20 }, (_, i) => big(`plain-${i} zebrafish`));
  for (let i = 0; i < results.length; i++) await s.write(`cccccccc-${i}`, [results[i]]);
  const store = s.open();
  const stored = await s.run(store, { searchLater: true });
  assertEquals([stored.errors, stored.sessions], [[], 20]);
  // browsable: every payload reads back from its plain frame, whole and as a head
  assertEquals(codecs(store), ["codec 3 in 1"]);
  for (const r of results) {
    assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
    assertEquals(store.payloadHead(sha256Hex(r), 7), encoder.encode(r).subarray(0, 7));
  }
  const plain = s.packBytes();
  assertEquals(store.health().payloads.bad, 0);
  // the next import indexes the backlog (its texts read from the plain frames), then compresses
  const next = await s.run(store);
  assertEquals(next.errors, []);
  assertEquals(codecs(store), ["codec 2 in 2"]);
  assertEquals(packFiles(s.data), ["0002.pack"]);
  assert(s.packBytes() < plain, `${s.packBytes()} bytes compressed, ${plain} plain`);
  for (const r of results) assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  assertEquals(store.search("zebrafish").total, 20);
  const health = store.health();
  assertEquals([health.payloads.checked, health.payloads.bad], [health.payloads.packed, 0]);
  // later writes go to the last pack, never to a removed one's number
  await s.write("dddddddd-1", [big("after")]);
  await s.run(store);
  assertEquals(place(store, big("after"))?.pack, 2);
  store.close();
});

Deno.test("the text worker compresses plain frames into frames holding the same bytes, and gives the plain ones back", async () => {
  await using s = await scratch();
  const { store } = await inPlainFrames(s, "ffffffff");
  const slice = store.readPlainFrames()!;
  const plain = slice.frames.map((f) => f.bytes.slice());
  const [answer, transfer] = answerText({ id: 3, frames: slice.frames.map((f) => f.bytes) });
  assert(answer.ok && "frames" in answer, "frames answered");
  assertEquals(answer.frames.map((f, i) => decodeFrame(f, plain[i].byteLength)), plain);
  assertEquals(transfer, answer.frames.map((f) => f.buffer));
  // (garbage would wait for a collection, which came only with a slice of texts: the frames of
  // eight pasted 26 MiB prompts were compressed after the last of them)
  assert(
    slice.frames.every((f) => f.bytes.buffer.byteLength === 0),
    "every plain frame given back",
  );
  store.close();
});

Deno.test("frames around a payload bigger than one write to a pack follow each other in it, each payload reading back exactly", async () => {
  await using s = await scratch();
  const results = [
    big("before", 200_000),
    ...Array.from({ length: 6 }, (_, i) => big(`small ${i}`)),
    big("huge", PACK_WRITE_SLICE + 300_000), // written as it is, not through the write buffer
    big("after", 200_000),
    big("last"),
  ];
  await s.write("eeeeeeee-0", results);
  // enough sessions for a bulk pass, whose frames are written plain
  for (let i = 1; i < 20; i++) await s.write(`eeeeeeee-${i}`, [big(`filler ${i}`)]);
  const store = s.open();
  const frames = () =>
    dbOf(store).prepare("SELECT pack, pack_offset, stored FROM frames ORDER BY pack, pack_offset")
      .all() as { pack: number; pack_offset: number; stored: number }[];
  // (compared by hash: a failed comparison of 8 MiB of bytes takes minutes to print its diff)
  const readBack = () => {
    for (const r of results) {
      const bytes = store.payload(sha256Hex(r));
      assertEquals(bytes && sha256Hex(bytes), sha256Hex(r), r.slice(0, 12));
    }
  };
  const noGaps = () => {
    const all = frames();
    for (let i = 1; i < all.length; i++) {
      if (all[i].pack !== all[i - 1].pack) continue;
      assertEquals(all[i].pack_offset, all[i - 1].pack_offset + all[i - 1].stored, `frame ${i}`);
    }
    return all;
  };
  assertEquals((await s.run(store, { searchLater: true })).errors, []);
  assertEquals(codecs(store), ["codec 3 in 1"]);
  const plain = noGaps();
  assertEquals(plain.at(-1)!.pack_offset + plain.at(-1)!.stored, s.packBytes());
  readBack();
  // compressed by the next import, through the same writes
  assertEquals((await s.run(store)).errors, []);
  assertEquals(codecs(store), ["codec 2 in 2"]);
  noGaps();
  readBack();
  assertEquals(store.health().payloads.bad, 0);
  store.close();
});

Deno.test("plain frames compressed part-way (a killed import) are read either way, and the next import compresses the rest", async () => {
  await using s = await scratch();
  const { store, results } = await inPlainFrames(s, "eeeeeeee");
  const frames = Number(
    (dbOf(store).prepare(
      "SELECT count(*) AS n FROM frames WHERE codec = 3",
    ).get() as { n: number }).n,
  );
  assert(frames > 4, `${frames} plain frames`);
  // two slices of two frames compressed, as the import does them, then the process dies
  let at: PlainCursor | null = null;
  for (let i = 0; i < 2; i++) {
    const slice: PlainSlice = store.readPlainFrames(at, 2)!;
    const compressed = compressPlainFrames(slice.frames.map((f) => f.bytes));
    store.applyCompressedFrames([{ slice, compressed }]);
    at = slice.next;
  }
  assert(store.readPlainFrames(at, 2) !== null, "plain frames are left");
  assertEquals(codecs(store), ["codec 2 in 2", "codec 3 in 1"]);
  store.close(); // killed here
  (await compressedByNextImport(s, results.flat())).close();
});

Deno.test("slices of compressed frames stored in one transaction read back; the next slices after them too", async () => {
  await using s = await scratch();
  const { store, results } = await inPlainFrames(s, "abababab");
  // three slices of two frames compressed, then stored at once, as the import stores them
  const held: CompressedSlice[] = [];
  let at: PlainCursor | null = null;
  for (let i = 0; i < 3; i++) {
    const slice: PlainSlice = store.readPlainFrames(at, 2)!;
    held.push({ slice, compressed: compressPlainFrames(slice.frames.map((f) => f.bytes)) });
    at = slice.next;
  }
  // nothing stored yet: every payload reads from its plain frame
  assertEquals(codecs(store), ["codec 3 in 1"]);
  store.applyCompressedFrames(held);
  assertEquals(codecs(store), ["codec 2 in 2", "codec 3 in 1"]);
  for (const r of results.flat()) assertEquals(store.payload(sha256Hex(r)), encoder.encode(r));
  store.close(); // killed here
  const again = await compressedByNextImport(s, results.flat());
  const health = again.health({ verifyPacks: true });
  assertEquals([health.payloads.checked, health.payloads.bad], [health.payloads.packed, 0]);
  again.close();
});

Deno.test("forgetting a session whose payloads are in plain frames scrubs them; the rest are compressed as usual", async () => {
  await using s = await scratch();
  const { store, keep, secret } = await keptAndSecret(s);
  assertEquals(codecs(store), ["codec 3 in 1"]);
  store.forget(["claude-code:ffffffff-secret"]);
  assertEquals(store.payload(sha256Hex(secret)), null);
  const pack = await Deno.readFile(`${packDir(s.data)}/0001.pack`).catch(() => new Uint8Array());
  assert(!new TextDecoder().decode(pack).includes("forget-me"), "the secret's bytes are scrubbed");
  assertEquals((await s.run(store)).errors, []);
  assertEquals(codecs(store), ["codec 2 in 2"]);
  for (const k of keep) assertEquals(store.payload(sha256Hex(k)), encoder.encode(k));
  store.close();
});

Deno.test("a frame compressed before a session in it was forgotten is not written: the forgotten bytes stay off the disk", async () => {
  await using s = await scratch();
  const { store, keep, secret } = await keptAndSecret(s);
  // every frame read and compressed (as a worker does, while the store goes on)...
  const slice = store.readPlainFrames(null, 1000)!;
  const compressed = compressPlainFrames(slice.frames.map((f) => f.bytes));
  const own = slice.frames.findIndex((f) => new TextDecoder().decode(f.bytes).includes(secret));
  assert(own >= 0, "the secret's frame is in the slice");
  // ...then the secret's session forgotten, then the compressed frames stored
  store.forget(["claude-code:ffffffff-secret"]);
  store.applyCompressedFrames([{ slice, compressed }]);
  const contains = (hay: Uint8Array, needle: Uint8Array) => {
    outer: for (let i = 0; i + needle.length <= hay.length; i++) {
      for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  };
  for (const name of packFiles(s.data)) {
    const bytes = await Deno.readFile(`${packDir(s.data)}/${name}`);
    assert(!contains(bytes, compressed[own]), `${name} holds the secret's frame compressed`);
    assert(!new TextDecoder().decode(bytes).includes("forget-me"), `${name} holds the secret`);
  }
  assertEquals(store.payload(sha256Hex(secret)), null);
  for (const k of keep) assertEquals(store.payload(sha256Hex(k)), encoder.encode(k));
  // the next pass compresses what is left plain
  assertEquals((await s.run(store)).errors, []);
  assertEquals(codecs(store).filter((c) => c.startsWith("codec 3")), []);
  for (const k of keep) assertEquals(store.payload(sha256Hex(k)), encoder.encode(k));
  store.close();
});

Deno.test("a frame whose staying payload cannot be read goes whole with a forgotten session in it; a compression of it read before is not written", async () => {
  await using s = await scratch();
  // the first session's frame holds its own output and one the later sessions repeat
  const shared = "an output every session repeats";
  await s.write("00000000-gone", [big("forget-me"), shared]);
  for (let i = 0; i < 17; i++) await s.write(`eeeeee${i + 10}-1`, [big(`keep ${i}`), shared]);
  const store = s.open();
  assertEquals((await s.run(store, { searchLater: true })).errors, []);
  const frameOf = (text: string) =>
    dbOf(store).prepare(`SELECT frame, frame_offset FROM payloads WHERE sha256 = unhex(?)`)
      .get(sha256Hex(text)) as { frame: number; frame_offset: number };
  assertEquals(frameOf(shared).frame, frameOf(big("forget-me")).frame, "one frame holds both");
  const slice = store.readPlainFrames(null, 1000)!;
  const compressed = compressPlainFrames(slice.frames.map((f) => f.bytes));
  const own = slice.frames.findIndex((f) => f.id === frameOf(shared).frame);
  // the shared output's bytes damaged in the pack: what stays of the frame cannot be moved
  const frame = slice.frames[own];
  const file = await Deno.open(`${packDir(s.data)}/${String(frame.pack).padStart(4, "0")}.pack`, {
    write: true,
  });
  await file.seek(frame.offset + frameOf(shared).frame_offset, Deno.SeekMode.Start);
  await file.write(encoder.encode("X"));
  file.close();
  store.forget(["claude-code:00000000-gone"]);
  store.applyCompressedFrames([{ slice, compressed }]);
  for (const name of packFiles(s.data)) {
    const bytes = new TextDecoder().decode(await Deno.readFile(`${packDir(s.data)}/${name}`));
    assert(!bytes.includes("forget-me"), `${name} holds the forgotten output`);
  }
  // its bytes were lost: it reads as missing, as it did before the forget
  assertEquals(store.payload(sha256Hex(shared)), null);
  assertEquals(store.payload(sha256Hex(big("keep 3"))), encoder.encode(big("keep 3")));
  assertEquals(store.health().payloads.bad, 0);
  store.close();
});

Deno.test("the search text worker compresses plain frames as the store would, between its slices of texts", async () => {
  await using a = await scratch();
  await using b = await scratch();
  const results = Array.from({ length: 20 }, (_, i) => [big(`w${i}`, 60_000), big(`v${i}`)]);
  for (const s of [a, b]) {
    for (let i = 0; i < results.length; i++) await s.write(`abababab-${i}`, results[i]);
  }
  const here = a.open();
  const there = b.open();
  await a.run(here, { searchLater: true });
  await b.run(there, { searchLater: true });
  assertEquals(codecs(there), ["codec 3 in 1"]);
  const worker = createTextWorker();
  try {
    const s1 = emptySummary(), s2 = emptySummary();
    await indexSearchBacklog(here, s1);
    let sent = 0;
    await indexSearchBacklog(there, s2, {
      build: worker.build,
      compress: (frames) => {
        sent += frames.length;
        return worker.compress(frames);
      },
    });
    assertEquals([s2.errors, s2.indexed, s2.unindexed], [[], s1.indexed, 0]);
    assert(sent > 0, "the worker compressed the frames");
  } finally {
    worker.close();
  }
  // the same frames, byte for byte, in the same places
  assertEquals(codecs(there), ["codec 2 in 2"]);
  assertEquals(packFiles(b.data), ["0002.pack"]);
  assertEquals(
    await Deno.readFile(`${packDir(b.data)}/0002.pack`),
    await Deno.readFile(`${packDir(a.data)}/0002.pack`),
  );
  const rows = (store: ChronicleStore) =>
    dbOf(store).prepare(`SELECT * FROM ${PLACED} ORDER BY sha256`).all();
  assertEquals(rows(there), rows(here));
  for (const r of results.flat()) assertEquals(there.payload(sha256Hex(r)), encoder.encode(r));
  here.close();
  there.close();
});
