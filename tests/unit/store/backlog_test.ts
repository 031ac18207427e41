/**
 * The search backlog (core/store/backlog.ts): a bulk import stores every session before it
 * indexes them, the index it builds after is the one an import indexing as it goes builds,
 * and no operation is ever indexed twice or lost: a queued step rewritten by a live import, a
 * session forgotten while queued, a pass interrupted before it indexed.
 */
import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { beforeIndex, traceCollections } from "../../_helpers/gc_trace.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { type ChronicleStore, emptySummary, indexSearchBacklog } from "../../../core/store/mod.ts";
import { buildTexts } from "../../../core/store/backlog.ts";
import { readIndexedDoc } from "../../../core/store/prepare.ts";
import { indexBody } from "../../../core/store/search_text.ts";
import { createTextWorker } from "../../../runtime/text_builder.ts";
import {
  answerText,
  BYTES_PER_GC,
  CollectionPace,
  SLICES_PER_GC,
} from "../../../runtime/text_work.ts";
import { claudeSessionPath } from "../../e2e/_synthetic.ts";
import { scratch } from "./_sessions.ts";

/** From this many units a pass is a bulk import (core/store/import.ts). */
const BULK = 16;

/** Writes BULK sessions, each with a word of its own in a prompt, a command and an output. */
async function history(s: Awaited<ReturnType<typeof scratch>>, from = 0, to = BULK) {
  for (let i = from; i < to; i++) {
    await s.write(`bbbbbbbb-${i}`, [`output${i} shared words`, `second${i} result`]);
  }
}

/** Rewrites session `i`'s log in place, `from` replaced by `to` (same records, same ids). */
async function rewrite(
  s: Awaited<ReturnType<typeof scratch>>,
  i: number,
  from: string,
  to: string,
) {
  const log = claudeSessionPath(s.home, "/work/demo", `bbbbbbbb-${i}`);
  await Deno.writeTextFile(log, (await Deno.readTextFile(log)).replaceAll(from, to));
}

/** What the index holds: each operation and the size of its text (in tokens), in order. */
const indexed = (store: ChronicleStore) =>
  dbOf(store).prepare(
    `SELECT s.id AS session_id, o.line, o.block, o.kind, d.sz FROM operations_fts_docsize d
       JOIN operations o ON o.rowid = d.id JOIN sessions s ON s.num = o.session ORDER BY 1, 2, 3`,
  ).all();
const opCount = (store: ChronicleStore) =>
  store.listSessions({ limit: 100 }).items.reduce((n, x) => n + x.op_count, 0);

Deno.test("a bulk import stores every session first, then indexes them as an inline import would", async () => {
  await using a = await scratch();
  await using b = await scratch();
  await history(a);
  const later = a.open();
  const summary = await a.run(later, { searchLater: true });
  const ops = opCount(later);
  assertEquals(later.listSessions({ limit: 100 }).total, BULK, "every session is browsable");
  assertEquals(summary.indexed, 0);
  assertEquals(summary.unindexed, ops);
  const before = later.search("shared");
  assertEquals(before.total, 0, "nothing is searchable yet");
  assertEquals(before.unindexed, ops, "and search says how many steps wait");

  let left = ops;
  for (let slices = 0; left > 0; slices++) {
    left = later.indexBacklog(5);
    assert(slices < ops, "each slice takes steps off the backlog");
  }
  const after = later.search("shared");
  assertEquals(after.total, BULK);
  assertEquals(after.unindexed, 0);

  // The same logs imported by passes too small to be bulk, which index each unit as they go.
  const inline = b.open();
  for (let i = 0; i < BULK; i += BULK / 2) {
    await history(b, i, i + BULK / 2);
    assertEquals((await b.run(inline)).indexed, 0, "indexed as it went");
  }
  assertEquals(indexed(later), indexed(inline), "the same texts");
  for (const q of ["output3", "second15", "make", "fix it"]) {
    assertEquals(later.search(q).total, inline.search(q).total, q);
  }
  later.close();
  inline.close();
});

Deno.test("a bulk pass indexes its backlog before it returns, unless told to leave it", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  const seen: [number, number][] = [];
  const summary = await s.run(store, { onIndexProgress: (d, t) => seen.push([d, t]) });
  const ops = opCount(store);
  assertEquals(summary.indexed, ops);
  assertEquals(summary.unindexed, 0);
  assert(summary.browsable_seconds <= summary.seconds);
  assertEquals(seen.at(-1), [ops, ops], "the last progress call says all of them");
  assertEquals(store.search("shared").total, BULK);
  assertEquals(indexed(store).length, ops, "one text per operation");
  store.close();
});

Deno.test("a backlog left by an interrupted pass is indexed by the next one", async () => {
  await using s = await scratch();
  await history(s);
  let store = s.open();
  await s.run(store, { searchLater: true });
  const ops = opCount(store);
  store.close();
  store = s.open(); // as after a crash: the backlog is in the database
  const next = await s.run(store); // nothing changed on disk
  assertEquals(next.indexed, ops);
  assertEquals(store.search("shared").total, BULK);
  store.close();
});

Deno.test("a queued step rewritten by a live import is indexed once, with its new text", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  await s.run(store, { searchLater: true });
  const ops = opCount(store);
  // One log changes while its steps wait: a small pass (a live import) indexes it as it writes.
  await rewrite(s, 3, "output3", "changed3");
  const live = await s.run(store, { searchLater: true });
  assertEquals(live.sources["claude-code"].rewritten, 1);
  assertEquals(store.search("changed3").total, 1, "the live import's text is searchable at once");
  assert(store.searchBacklog() < ops, "its steps left the backlog");
  while (store.indexBacklog() > 0);
  assertEquals(store.search("changed3").total, 1, "and not indexed again");
  assertEquals(store.search("output3").total, 0, "the old text is gone");
  assertEquals(indexed(store).length, ops, "one text per operation");
  store.close();
});

Deno.test("steps of a session forgotten while they wait are skipped, and never come back", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  await s.run(store, { searchLater: true });
  const gone = store.listSessions({ limit: 100 }).items.find((x) => x.id.endsWith("bbbbbbbb-5"))!;
  store.forget([gone.id]);
  while (store.indexBacklog() > 0);
  assertEquals(store.search("output5").total, 0);
  assertEquals(store.search("output6").total, 1);
  assertEquals(indexed(store).length, opCount(store));
  store.close();
});

Deno.test("texts built in the worker, a slice ahead, index what the main thread would", async () => {
  await using a = await scratch();
  await using b = await scratch();
  await history(a);
  await history(b);
  const here = a.open();
  const there = b.open();
  await a.run(here, { searchLater: true });
  await b.run(there, { searchLater: true });
  const worker = createTextWorker();
  try {
    const s1 = emptySummary(), s2 = emptySummary();
    await indexSearchBacklog(here, s1);
    await indexSearchBacklog(there, s2, { build: worker.build });
    assertEquals(s2.indexed, s1.indexed);
    assertEquals(s2.unindexed, 0);
  } finally {
    worker.close();
  }
  assertEquals(indexed(there), indexed(here));
  here.close();
  there.close();
});

/** A bulk import of {@link history} into a store of `a`, its search backlog left waiting. */
async function leftWaiting(a: Awaited<ReturnType<typeof scratch>>) {
  await history(a);
  const store = a.open();
  await a.run(store, { searchLater: true });
  return store;
}

Deno.test("a slice's payloads move to the text worker, not copied; it builds the texts this thread would", async () => {
  await using a = await scratch();
  const store = await leftWaiting(a);
  const [here, sent] = [store.readBacklog(0)!, store.readBacklog(0)!]; // one to send, one to keep
  assert(sent.payloads.length > 0 && sent.payloads.every((p) => p.bytes.byteLength > 0));
  const worker = createTextWorker();
  try {
    assertEquals(await worker.build(sent), buildTexts(here));
  } finally {
    worker.close();
  }
  // (a slice of pasted 28 MiB prompts stood in both threads' memory until this one collected)
  assert(sent.payloads.every((p) => p.bytes.byteLength === 0), "this thread holds none of them");
  store.close();
});

Deno.test("a bulk pass collects its garbage once, after its last write and before the index reads", async () => {
  await using a = await scratch();
  await history(a);
  const store = a.open();
  // (what the bulk pass left: eight pasted 26 MiB prompts had 97 MB of dead buffers there)
  const seen = await traceCollections(store, () => a.run(store));
  assertEquals(beforeIndex(seen), [...Array(BULK).fill("write"), "gc"]);
  assert(seen.includes("read"), "and then it indexes");
  assertEquals(store.searchBacklog(), 0);
  store.close();
});

Deno.test("a pass that stores a big log's slices for the index after collects between them and once at its end", async () => {
  await using a = await scratch();
  await a.write("cccccccc-1", Array.from({ length: 30 }, (_, i) => `sliced${i} output`));
  const store = a.open();
  const seen = await traceCollections(
    store,
    () => a.run(store, { maxPassBytes: 300, deferSliced: true }),
  );
  const before = beforeIndex(seen).join(" ");
  assertMatch(before, /^(write gc )+write gc$/); // (one unit, so not bulk: it is the slices)
  assertEquals(store.searchBacklog(), 0);
  store.close();
});

Deno.test("a pass that indexes as it goes does not collect", async () => {
  await using a = await scratch();
  await history(a, 0, 3);
  const store = a.open();
  const seen = await traceCollections(store, () => a.run(store));
  assertEquals(seen, ["write", "write", "write"]); // (a live import: no collection a few seconds)
  store.close();
});

Deno.test("the text worker gives a slice's payload buffers back once it has built its texts", async () => {
  await using a = await scratch();
  const store = await leftWaiting(a);
  const [here, sent] = [store.readBacklog(0)!, store.readBacklog(0)!]; // one to send, one to keep
  assert(sent.payloads.length > 0 && sent.payloads.every((p) => p.bytes.byteLength > 0));
  const [answer, transfer] = answerText({ id: 7, slice: sent });
  assertEquals(answer, { id: 7, ok: true, texts: buildTexts(here) });
  assertEquals(transfer, []);
  // (garbage would wait for a collection: a slice of pasted prompts holds 24 MiB of heads)
  assert(sent.payloads.every((p) => p.bytes.buffer.byteLength === 0), "every buffer given back");
  store.close();
});

Deno.test("a backlog slice says how many bytes of payloads its operations name", async () => {
  await using a = await scratch();
  const store = await leftWaiting(a);
  const slice = store.readBacklog(0)!;
  const named = dbOf(store).prepare(
    `SELECT sum(coalesce(json_extract(doc, '$.request.size'), 0) +
      coalesce(json_extract(doc, '$.response.size'), 0)) AS n
     FROM operations WHERE rowid IN (SELECT value FROM json_each(?))`,
  ).get(JSON.stringify(slice.rowids)) as { n: number };
  assert(slice.bytes > 0);
  assertEquals(slice.bytes, named.n);
  store.close();
});

Deno.test("the text worker collects every few slices, and after slices of big payloads at once", () => {
  const small = 1 << 20; // a slice of ordinary operations: a megabyte or two
  const paced = (bytes: number[], pace = new CollectionPace()) => bytes.map((b) => pace.built(b));
  const every = Array(SLICES_PER_GC - 1).fill(false);
  assertEquals(paced(Array(2 * SLICES_PER_GC).fill(small)), [...every, true, ...every, true]);
  // a slice of a pasted 26 MiB prompt: at once, and the count starts again from it
  assertEquals(paced([small, 26 << 20, ...Array(SLICES_PER_GC).fill(small)]), [
    false,
    true,
    ...every,
    true,
  ]);
  // slices that add up to the bytes before the count does
  const third = Math.ceil(BYTES_PER_GC / 3);
  assertEquals(paced([third, third, third, small]), [false, false, true, false]);
});

Deno.test("a slice's texts are not applied to a step written again after the slice was read", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  await s.run(store, { searchLater: true });
  const slice = store.readBacklog(0, 1000)!;
  const texts = buildTexts(slice);
  // Meanwhile a live import rewrites one session's steps (indexed as it writes them) ...
  await rewrite(s, 7, "output7", "newer7");
  await s.run(store, { searchLater: true });
  // ... and a bulk pass queues another one's again, rewritten (its stamp moves on).
  await rewrite(s, 8, "output8", "later8");
  const restore = store.deferSearch();
  await s.run(store, { searchLater: true });
  restore();
  store.applyBacklogTexts(slice, texts);
  while (store.indexBacklog() > 0);
  for (const [q, n] of [["output7", 0], ["newer7", 1], ["output8", 0], ["later8", 1]] as const) {
    assertEquals(store.search(q).total, n, q);
  }
  assertEquals(indexed(store).length, opCount(store), "one text per operation");
  store.close();
});

/** The database's free pages, and all of its pages. */
const pages = (store: ChronicleStore) => {
  const n = (pragma: string) =>
    Number(Object.values(dbOf(store).prepare(`PRAGMA ${pragma}`).get() as object)[0]);
  return { free: n("freelist_count"), total: n("page_count"), size: n("page_size") };
};

/** Frees about `mb` MB of pages: a table filled, then dropped. */
function freeSome(store: ChronicleStore, mb: number) {
  const db = dbOf(store);
  db.exec("CREATE TABLE filler (b BLOB)");
  const put = db.prepare("INSERT INTO filler (b) VALUES (randomblob(?))");
  for (let i = 0; i < mb * 16; i++) put.run(64 << 10);
  db.exec("DROP TABLE filler");
}

Deno.test("free pages worth it go back to the disk a slice at a time; a few stay for the next writes", async () => {
  await using s = await scratch();
  const store = s.open();
  freeSome(store, 3); // under 8 MB: left to the next writes
  const few = pages(store).free;
  assert(few > 0, "pages were freed");
  assertEquals(store.vacuumFreePages(), 0);
  assertEquals(pages(store).free, few);
  freeSome(store, 24);
  const before = pages(store);
  const slice = Math.floor(before.free / 3);
  const left = store.vacuumFreePages(slice);
  assertEquals(left, before.free - slice, "one slice");
  let calls = 1;
  while (store.vacuumFreePages(slice) > 0) calls++;
  const after = pages(store);
  assert(calls >= 2 && calls <= 4, `${calls} calls`);
  assert(after.free < slice, `${after.free} pages left free`);
  assertEquals(after.total, before.total - (before.free - after.free), "the file lost them");
  store.close();
});

Deno.test("a bulk pass that indexed a backlog gives the free pages back to the disk", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  freeSome(store, 24); // as an index build's merged segments leave them
  assert(pages(store).free * pages(store).size > 20e6);
  const summary = await s.run(store);
  assertEquals(summary.unindexed, 0);
  assert(pages(store).free * pages(store).size < 8e6, `${pages(store).free} pages left free`);
  assertEquals(store.search("shared").total, BULK);
  // a pass with nothing to index leaves the pages as they are
  freeSome(store, 24);
  const free = pages(store).free;
  await s.run(store);
  assertEquals(pages(store).free, free);
  store.close();
});

Deno.test("a vacuum kept waiting by another writer leaves the pages to the next writes", async () => {
  await using s = await scratch();
  const store = s.open();
  freeSome(store, 24);
  const free = pages(store).free;
  dbOf(store).exec("PRAGMA busy_timeout = 0"); // the store's own wait is seconds
  const other = new DatabaseSync(`${s.data}/chronicle.db`);
  other.exec("BEGIN IMMEDIATE");
  try {
    assertEquals(store.vacuumFreePages(), 0, "nothing left to do now");
    assertEquals(pages(store).free, free);
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
  while (store.vacuumFreePages() > 0);
  assert(pages(store).free < free / 4, "the next calls give them back");
  store.close();
});

Deno.test("a vacuum that fails for another reason is a warning of the import", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  store.vacuumFreePages = () => {
    throw new Error("disk I/O error");
  };
  const summary = await s.run(store);
  assertEquals(summary.unindexed, 0, "the index is complete all the same");
  assertEquals(summary.errors.map((e) => [e.code, e.severity]), [["vacuum_failed", "warning"]]);
  store.close();
});

Deno.test("a pass that meets a log read in slices stores it as a bulk pass when asked (chronicle import); every way indexes the same texts", async () => {
  await using a = await scratch();
  await using b = await scratch();
  for (const s of [a, b]) {
    await s.write("cccccccc-1", Array.from({ length: 30 }, (_, i) => `sliced${i} output`));
  }
  const late = a.open();
  const inline = b.open();
  // slices of 300 bytes: the one log is read in many; one pass of one unit is not bulk
  const sliced = { maxPassBytes: 300, searchLater: true };
  const deferred = await a.run(late, { ...sliced, deferSliced: true });
  assertEquals(deferred.errors, []);
  assert(deferred.unindexed > 0, "its steps wait for the index");
  assertEquals(late.search("sliced7").total, 0);
  const asItGoes = await b.run(inline, sliced);
  assertEquals([asItGoes.errors, asItGoes.unindexed], [[], 0]);
  assertEquals(opCount(late), opCount(inline));
  // the index built after holds what the inline one holds
  const summary = emptySummary();
  await indexSearchBacklog(late, summary);
  assertEquals([summary.errors, summary.unindexed], [[], 0]);
  assertEquals(indexed(late), indexed(inline));
  for (const q of ["sliced7", "output", "make"]) {
    assertEquals(late.search(q).total, inline.search(q).total, q);
  }
  assertEquals(late.stats(), inline.stats());
  // and what one pass indexes: a call a slice began keeps its input's words when the next
  // slice brings its result (the input read back from the store)
  await using c = await scratch();
  await c.write("cccccccc-1", Array.from({ length: 30 }, (_, i) => `sliced${i} output`));
  const whole = c.open();
  await c.run(whole);
  assertEquals(indexed(inline), indexed(whole));
  late.close();
  inline.close();
  whole.close();
});

Deno.test("a prompt kept once, in its request payload, is read once for search: its phrase text is its text", async () => {
  await using s = await scratch();
  await history(s);
  const store = s.open();
  await s.run(store, { searchLater: true });
  const slice = store.readBacklog(0)!;
  const texts = buildTexts(slice, false);
  const bodies = buildTexts(slice);
  let prompts = 0;
  slice.docs.forEach((doc, i) => {
    if (doc?.kind !== "prompt") return;
    assertEquals(JSON.parse(doc.doc).text, null, "its doc leaves its text to its payload");
    const { op, textIsInput } = readIndexedDoc(
      doc,
      (sha) => store.payloadText({ sha256: sha, size: 0 }),
    );
    assert(textIsInput);
    assertEquals(texts[i], op.text, "once, not once more from its input");
    assertEquals(bodies[i], indexBody(op.text!));
    prompts++;
  });
  assert(prompts > 0, "the slice holds prompts");
  store.close();
});
