/**
 * Texts bigger than the index reads, as when a user pastes a log as a prompt: each is indexed,
 * searched and shown in a hit as far as `INDEXED_TEXT_CHARS` (as a payload is as far as
 * `INDEXED_PAYLOAD_BYTES`), the same whichever way it was imported; the slices that carry them
 * to the index and to compression stop at a number of bytes, not only of rows.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import {
  type ChronicleStore,
  emptySummary,
  INDEXED_TEXT_BYTES,
  INDEXED_TEXT_CHARS,
  indexSearchBacklog,
  isUtf8Of,
  makeSnippet,
  matchPattern,
} from "../../../core/store/mod.ts";
import { BACKLOG_SLICE_BYTES, readOperations } from "../../../core/store/backlog.ts";
import { indexedText, indexedTextOf } from "../../../core/store/search_text.ts";
import type { PayloadStore } from "../../../core/store/payloads.ts";
import type { Sql } from "../../../core/store/_sql.ts";
import { COMPRESS_SLICE_BYTES } from "../../../core/store/payloads.ts";
import { promptTitle, sha256Hex } from "../../../core/model/mod.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";
import { big, scratch } from "./_sessions.ts";

const SID = "eeeeeeee-0000-4000-8000-00000000000a";

/** A pasted log of `chars` characters: its first word `first`, its last `last`. */
const pasted = (first: string, last: string, chars: number) => {
  const line = "2026-12-06 10:00:00 INFO request served in 3 ms\n";
  return `${first} ${line.repeat(Math.ceil(chars / line.length))}${last}`;
};

/** Writes a session of `n` pasted prompts, each past what the index reads. */
async function pastes(home: string, n: number, chars = INDEXED_TEXT_CHARS + 100_000) {
  await writeClaudeSession(home, {
    sessionId: SID,
    cwd: "/work/demo",
    turns: Array.from({ length: n }, (_, i) => ({
      user: pasted(`alpha${i}`, `omega${i}`, chars),
      assistant: `read paste ${i}`,
    })),
  });
}

/** Each indexed operation with the size of its text (in tokens), in order. */
const indexed = (store: ChronicleStore) =>
  dbOf(store).prepare(
    `SELECT o.line, o.block, o.kind, d.sz FROM operations_fts_docsize d
       JOIN operations o ON o.rowid = d.id ORDER BY 1, 2, 3`,
  ).all();

Deno.test("a prompt longer than the index reads is indexed as far as INDEXED_TEXT_CHARS, the same by a bulk pass and an inline one", async () => {
  await using a = await scratch();
  await using b = await scratch();
  await pastes(a.home, 4);
  await pastes(b.home, 4);
  const late = a.open();
  const inline = b.open();
  // a 17 MB log: read in slices; stored first and indexed after, or indexed as it goes
  const deferred = await a.run(late, { searchLater: true, deferSliced: true });
  assertEquals(deferred.errors, []);
  assert(deferred.unindexed > 0, "its steps wait for the index");
  // the backlog's first slice stops once its payloads pass BACKLOG_SLICE_BYTES: four 4 MiB
  // prompts and their replies are 9 rows, and 500 rows a slice would take them all
  const slice = late.readBacklog(0)!;
  const bytes = slice.payloads.reduce((n, p) => n + p.size, 0);
  assert(slice.rowids.length < deferred.unindexed, `${slice.rowids.length} rows in one slice`);
  assert(bytes >= BACKLOG_SLICE_BYTES && bytes < BACKLOG_SLICE_BYTES + (5 << 20), `${bytes}`);
  const summary = emptySummary();
  await indexSearchBacklog(late, summary);
  assertEquals([summary.errors, summary.unindexed], [[], 0]);
  const asItGoes = await b.run(inline, { searchLater: false });
  assertEquals([asItGoes.errors, asItGoes.unindexed], [[], 0]);
  assertEquals(indexed(late), indexed(inline), "the same texts, cut at the same place");
  // a phrase's candidates are read a slice at a time too, each let go before the next
  const prompts = (dbOf(late).prepare("SELECT rowid FROM operations WHERE kind = 'prompt'")
    .all() as { rowid: number }[]).map((r) => r.rowid);
  const { sql, payloads } = late as unknown as { sql: Sql; payloads: PayloadStore };
  // (each asked for twice: eight 4 MiB texts, two slices of 16 MiB and a little more)
  const asked = [...prompts, ...prompts];
  const slices = [...readOperations(sql, payloads, asked)];
  assertEquals(slices.map((s) => s.rowids.length), [4, 4]);
  assertEquals(slices.flatMap((s) => s.rowids), asked);
  for (const store of [late, inline]) {
    assertEquals(store.search("alpha2").total, 1, "its opening is found");
    assertEquals(store.search("omega2").total, 0, "past INDEXED_TEXT_CHARS it is not");
    assertEquals(store.search('"request served"').total, 4, "a phrase in each");
    const [hit] = store.search("alpha3").hits;
    assertEquals(hit.snippet.find((s) => s.match)?.text, "alpha3");
    // its session is titled from the first prompt's opening
    const [session] = store.listSessions({}).items;
    assertEquals(session.first_prompt, promptTitle(pasted("alpha0", "omega0", 10_000)));
  }
  late.close();
  inline.close();
});

Deno.test("a backlog slice reads a prompt bigger than the index reads only as far as INDEXED_TEXT_BYTES, and indexes what the whole would", async () => {
  await using a = await scratch();
  await using b = await scratch();
  const chars = INDEXED_TEXT_BYTES + (1 << 20); // one character a byte: past the head read
  await pastes(a.home, 1, chars);
  await pastes(b.home, 1, chars);
  const late = a.open();
  const inline = b.open();
  const deferred = await a.run(late, { searchLater: true, deferSliced: true });
  assertEquals(deferred.errors, []);
  const slice = late.readBacklog(0)!;
  const read = slice.payloads.map((p) => p.bytes.byteLength).sort((x, y) => y - x);
  assertEquals(read[0], INDEXED_TEXT_BYTES, "its head, not its 13 MiB");
  const summary = emptySummary();
  await indexSearchBacklog(late, summary);
  assertEquals([summary.errors, summary.unindexed], [[], 0]);
  const asItGoes = await b.run(inline, { searchLater: false });
  assertEquals([asItGoes.errors, asItGoes.unindexed], [[], 0]);
  assertEquals(indexed(late), indexed(inline), "the same text, cut at the same place");
  for (const store of [late, inline]) {
    assertEquals(store.search("alpha0").total, 1);
    assertEquals(store.search('"request served"').total, 1, "a phrase checked on the head");
    assertEquals(store.search("omega0").total, 0);
  }
  late.close();
  inline.close();
});

Deno.test("a slice of plain frames to compress stops once it passes COMPRESS_SLICE_BYTES", async () => {
  await using s = await scratch();
  // payloads of 3 MiB are frames of their own: a slice of 32 frames would be 96 MiB
  const results = Array.from({ length: 6 }, (_, i) => big(`huge-${i} zebrafish`, 3 << 20));
  await s.write("cccccccc-1", results);
  const store = s.open();
  const stored = await s.run(store, { searchLater: true, deferSliced: true });
  assertEquals(stored.errors, []);
  const sizes: number[] = [];
  for (let slice = store.readPlainFrames(); slice; slice = store.readPlainFrames(slice.next)) {
    sizes.push(slice.frames.reduce((n, f) => n + f.bytes.byteLength, 0));
  }
  assert(sizes.length > 1, `${sizes.length} slices`);
  for (const n of sizes.slice(0, -1)) {
    assert(n >= COMPRESS_SLICE_BYTES && n < COMPRESS_SLICE_BYTES + (3 << 20) + 4096, `${n}`);
  }
  // and every frame is compressed in the end, each payload reading back
  const next = await s.run(store);
  assertEquals(next.errors, []);
  assertEquals(store.readPlainFrames(), null);
  for (const r of results) assertEquals(new TextDecoder().decode(store.payload(sha256Hex(r))!), r);
  store.close();
});

Deno.test("isUtf8Of() compares a payload with a text a megabyte at a time, as decoding it whole would", () => {
  const encoder = new TextEncoder();
  const texts = [
    "",
    "plain",
    "é😀 mixed",
    // past the megabyte compared at once, characters of 2, 3 and 4 bytes across its seams
    "ab".repeat(300_000) + "é€😀".repeat(200_000) + "end",
    "€".repeat((1 << 20) / 3 + 1) + "x",
  ];
  for (const t of texts) {
    const bytes = encoder.encode(t);
    assert(isUtf8Of(bytes, t), `${t.length} characters`);
    if (t.length) {
      assert(!isUtf8Of(bytes, t.slice(0, -1) + "?"), "its last character changed");
      assert(!isUtf8Of(bytes, t.slice(1)), "one character short");
      assert(!isUtf8Of(bytes.subarray(0, bytes.length - 1), t), "a byte short");
    }
  }
  // bytes that are not UTF-8 compare as they decode (each bad byte a U+FFFD)
  const bad = new Uint8Array(3 << 20).fill(0xff);
  assert(isUtf8Of(bad, "\uFFFD".repeat(3 << 20)));
  assert(!isUtf8Of(bad, "\uFFFD".repeat((3 << 20) - 1) + "x"));
});

Deno.test("makeSnippet() lays out only the text about the first match, as laying out all of it did", () => {
  /** makeSnippet as it flattened the whole text first. */
  const whole = (text: string, pattern: RegExp | null, width = 160) => {
    const flat = text.replace(/\s+/g, " ");
    if (!pattern) return [{ text: flat.slice(0, width), match: false }];
    pattern.lastIndex = 0;
    const first = flat.search(pattern);
    const from = Math.max(0, (first < 0 ? 0 : first) - Math.floor(width / 3));
    const window = flat.slice(from, from + width);
    const out: { text: string; match: boolean }[] = [];
    if (from > 0) out.push({ text: "…", match: false });
    let last = 0;
    for (const m of window.matchAll(pattern)) {
      if (m.index! > last) out.push({ text: window.slice(last, m.index), match: false });
      out.push({ text: m[0], match: true });
      last = m.index! + m[0].length;
    }
    if (last < window.length) out.push({ text: window.slice(last), match: false });
    if (from + width < flat.length) out.push({ text: "…", match: false });
    return out;
  };
  const words = "the parser reads\na session\tof  agent steps; error_code 42 in src/import.ts"
    .split(
      " ",
    );
  let seed = 3;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 300; i++) {
    const n = [3, 20, 200, 2_000][next(4)];
    const text = Array.from({ length: n }, () => words[next(words.length)]).join(
      next(2) ? " " : "\n  ",
    );
    for (const q of ["session", "pars", '"agent steps"', "error_code", "src/import", "absent"]) {
      assertEquals(makeSnippet(text, matchPattern(q)), whole(text, matchPattern(q)), q);
    }
    assertEquals(makeSnippet(text, null), whole(text, null));
  }
});

Deno.test("indexedTextOf() reads the characters decoding the whole head read, from a quarter of it when they are one byte each", () => {
  const old = (b: Uint8Array) =>
    indexedText(new TextDecoder().decode(b.subarray(0, INDEXED_TEXT_BYTES)));
  const enc = (t: string) => new TextEncoder().encode(t);
  const n = INDEXED_TEXT_CHARS;
  const ascii = enc("a".repeat(n + 10));
  const cases: [string, Uint8Array][] = [
    ["ASCII past the cap", ascii],
    ["ASCII of the cap exactly", ascii.subarray(0, n)],
    ["a shorter text", enc("é€😀".repeat(5))],
    // a character of 2, 3 or 4 bytes across the cap's byte: the head cannot say
    ...[2, 3, 4].map((k): [string, Uint8Array] => {
      const b = ascii.slice();
      b.set(enc(["é", "€", "😀"][k - 2]), n - 1);
      return [`a ${k}-byte character at the cap`, b];
    }),
    // invalid bytes: one within the head, one as its last byte
    ...[n >> 1, n - 1].map((at): [string, Uint8Array] => {
      const b = ascii.slice();
      b[at] = 0xff;
      return [`an invalid byte at ${at}`, b];
    }),
    ["every character 3 bytes", enc("€".repeat(n + 1))],
  ];
  for (const [what, bytes] of cases) {
    const t = indexedTextOf(bytes);
    assert(t === old(bytes), what);
  }
});
