import { assertEquals } from "../../_helpers/assert.ts";
import { planJsonlResume, readJsonl } from "../../../core/sources/jsonl.ts";
import { parseTimeMs } from "../../../core/sources/_import_kit.ts";
import type { JsonlLine } from "../../../core/sources/jsonl.ts";
import { MemFs } from "../../_helpers/mem_fs.ts";

async function readAll(fs: MemFs, path: string, options = {}, from = { offset: 0, line: 1 }) {
  const state = { ...from, bytesRead: 0 };
  const lines: JsonlLine[] = [];
  await readJsonl(fs, path, state, options, (l) => lines.push(l) > 0);
  return { lines, state };
}

Deno.test("readJsonl() hands over each line with its byte range, across chunk borders", async () => {
  const fs = new MemFs();
  fs.write("/a.jsonl", '{"a":1}\n{"bb":"x"}\r\n\n{"c":[1,2]}\n');
  const { lines, state } = await readAll(fs, "/a.jsonl");
  assertEquals(lines.map((l) => [l.line, l.start, l.end, l.value ?? null, l.error ?? null]), [
    [1, 0, 7, { a: 1 }, null],
    [2, 8, 19, { bb: "x" }, null],
    [3, 20, 20, null, null],
    [4, 21, 32, { c: [1, 2] }, null],
  ]);
  assertEquals(state.offset, 33);
  assertEquals(state.line, 5);
});

Deno.test("readJsonl() stops after the line the visitor says, with the state past it", async () => {
  const fs = new MemFs();
  fs.write("/a.jsonl", '{"a":1}\n{"b":2}\n{"c":3}');
  const state = { offset: 0, line: 1, bytesRead: 0 };
  const seen: number[] = [];
  const stopped = await readJsonl(fs, "/a.jsonl", state, { closed: true }, (l) => {
    seen.push(l.line);
    return l.line < 2;
  });
  assertEquals([stopped, seen, state.offset, state.line], [true, [1, 2], 16, 3]);
  // The unterminated last line too.
  const last = { offset: 16, line: 3, bytesRead: 0 };
  assertEquals(await readJsonl(fs, "/a.jsonl", last, { closed: true }, () => false), true);
  assertEquals([last.offset, last.line], [23, 4]);
  // A read to the end was not stopped.
  const all = { offset: 0, line: 1, bytesRead: 0 };
  assertEquals(await readJsonl(fs, "/a.jsonl", all, { closed: true }, () => true), false);
  assertEquals([all.offset, all.line], [23, 4]);
});

Deno.test("readJsonl() leaves a half-written last line for the next pass", async () => {
  const fs = new MemFs();
  fs.write("/a.jsonl", '{"a":1}\n{"b":');
  const { lines, state } = await readAll(fs, "/a.jsonl", { closed: true });
  assertEquals(lines.length, 1);
  assertEquals(state.offset, 8);
  fs.append("/a.jsonl", '2}\n{"c":3}\n');
  const next = await readAll(fs, "/a.jsonl", {}, { offset: state.offset, line: state.line });
  assertEquals(next.lines.map((l) => [l.line, l.value]), [[2, { b: 2 }], [3, { c: 3 }]]);
});

Deno.test("readJsonl() accepts an unterminated last line that parses when the file is closed", async () => {
  const fs = new MemFs();
  fs.write("/a.jsonl", '{"a":1}\n{"b":2}');
  assertEquals((await readAll(fs, "/a.jsonl", { closed: true })).lines.length, 2);
  assertEquals((await readAll(fs, "/a.jsonl", { closed: false })).lines.length, 1);
});

Deno.test("readJsonl() reports garbage, invalid UTF-8 and oversize lines without stopping", async () => {
  const fs = new MemFs();
  const bad = new Uint8Array([0xff, 0xfe, 0x7b, 0x0a]);
  const text = new TextEncoder().encode('not json\n{"x":"' + "y".repeat(100) + '"}\n{"ok":true}\n');
  const all = new Uint8Array(bad.length + text.length);
  all.set(bad);
  all.set(text, bad.length);
  fs.write("/a.jsonl", all);
  const { lines } = await readAll(fs, "/a.jsonl", { maxLineBytes: 50 });
  assertEquals(lines.map((l) => l.error ?? "ok"), [
    "invalid JSON",
    "invalid JSON",
    "line longer than 50 bytes",
    "ok",
  ]);
  assertEquals(lines[3].value, { ok: true });
});

Deno.test("readJsonl() reads the same lines whatever the chunk size", async () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
  const parts = [
    bom,
    enc('{"a":"é✓😀 עברית"}\r\n'),
    enc("\n   \n"),
    bom,
    enc('{"b":2}\n'),
    bom,
    bom,
    enc('{"c":3}\n'), // two marks: the line's own first one goes, the second stays
    new Uint8Array([0x7b, 0x22, 0x64, 0x22, 0x3a, 0x22, 0xe2, 0x0a]), // cut in a character
    new Uint8Array([0x80, 0x22, 0x7d, 0x0a]), // a continuation byte opens a line
    enc('{"e":"' + "z".repeat(90) + '"}\n'), // over maxLineBytes
    enc("not json\n"),
    enc('{"f":"\\n is not a line end"}\n'),
    enc('{"g":"last"}'),
  ];
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  parts.reduce((at, p) => (all.set(p, at), at + p.byteLength), 0);
  const read = async (chunk: number, stopAt = Infinity) => {
    const fs = new MemFs();
    fs.chunk = chunk;
    fs.write("/a.jsonl", all);
    const state = { offset: 0, line: 1, bytesRead: 0 };
    const lines: JsonlLine[] = [];
    const options = { closed: true, maxLineBytes: 64 };
    await readJsonl(fs, "/a.jsonl", state, options, (l) => lines.push(l) < stopAt);
    return { lines, offset: state.offset, line: state.line };
  };
  const alone = await read(1);
  assertEquals(alone.lines.map((l) => l.value ?? l.error ?? null), [
    { a: "é✓😀 עברית" },
    null,
    null,
    { b: 2 },
    "invalid JSON",
    "invalid JSON",
    "invalid JSON",
    "line longer than 64 bytes",
    "invalid JSON",
    { f: "\n is not a line end" },
    { g: "last" },
  ]);
  assertEquals([alone.offset, alone.line], [all.byteLength, 12]);
  for (const chunk of [2, 7, 16, 64, 1 << 20]) {
    assertEquals(await read(chunk), alone, `chunks of ${chunk} bytes`);
    const stopped = await read(chunk, 4);
    assertEquals([stopped.lines, stopped.offset], [
      alone.lines.slice(0, 4),
      alone.lines[3].end + 1,
    ]);
  }
});

Deno.test("readJsonl() reads a line of 1.2 MB alike in one chunk or in many", async () => {
  const long = "é".repeat(600_000); // 1.2 MB: more than a chunk of the real file system
  const text = `{"a":1}\n{"long":"${long}"}\n{"b":2}\n{"c":3}\n`;
  const read = async (chunk: number) => {
    const fs = new MemFs();
    fs.chunk = chunk;
    fs.write("/a.jsonl", text);
    return (await readAll(fs, "/a.jsonl")).lines;
  };
  const big = await read(4 << 20);
  assertEquals(big.map((l) => l.value), [{ a: 1 }, { long }, { b: 2 }, { c: 3 }]);
  assertEquals(await read(4096), big);
});

Deno.test("readJsonl() reads nothing from an empty file", async () => {
  const fs = new MemFs();
  fs.write("/a.jsonl", "");
  const { lines, state } = await readAll(fs, "/a.jsonl", { closed: true });
  assertEquals(lines, []);
  assertEquals(state.offset, 0);
});

Deno.test("planJsonlResume() tells unchanged, appended, truncated and replaced files apart", async (t) => {
  const fs = new MemFs();
  fs.write("/a.jsonl", '{"a":1}\n');
  const stat = (await fs.stat("/a.jsonl"))!;
  const { makeJsonlCheckpoint } = await import("../../../core/sources/jsonl.ts");
  const cp = await makeJsonlCheckpoint(fs, "/a.jsonl", stat, 8, 2);
  await t.step("unchanged: one stat and no read", async () => {
    fs.stats = 0;
    const plan = await planJsonlResume(fs, "/a.jsonl", cp);
    assertEquals(plan?.mode, "unchanged");
    assertEquals(fs.stats, 1);
  });
  await t.step("appended: resumes at the checkpoint", async () => {
    fs.append("/a.jsonl", '{"b":2}\n');
    const plan = await planJsonlResume(fs, "/a.jsonl", cp);
    assertEquals([plan?.mode, plan?.offset, plan?.line], ["append", 8, 2]);
  });
  await t.step("truncated: read again from zero", async () => {
    fs.write("/a.jsonl", "{}\n");
    assertEquals((await planJsonlResume(fs, "/a.jsonl", cp))?.mode, "full");
  });
  await t.step("replaced with other bytes of the same length: read again from zero", async () => {
    fs.write("/a.jsonl", '{"z":9}\n{"b":2}\n', { replace: true });
    assertEquals((await planJsonlResume(fs, "/a.jsonl", cp))?.mode, "full");
  });
  await t.step("gone or a directory: no plan", async () => {
    assertEquals(await planJsonlResume(fs, "/nope.jsonl", cp), null);
  });
});

Deno.test("readPass() records the stat of what it read, when the file grew between plan and read", async (t) => {
  const { readPass } = await import("../../../core/sources/_import_kit.ts");
  const { statMatches } = await import("../../../core/sources/jsonl.ts");
  const ctx = { epoch: 0, closed: false };
  await t.step("grown before the read: the next pass is one stat", async () => {
    const fs = new MemFs();
    fs.write("/a.jsonl", '{"a":1}\n');
    const plan = (await planJsonlResume(fs, "/a.jsonl", undefined))!;
    fs.append("/a.jsonl", '{"b":2}\n'); // the agent writes after the stat
    const lines: unknown[] = [];
    const out = await readPass(fs, "/a.jsonl", plan, ctx, (_, v) => lines.push(v));
    assertEquals(lines, [{ a: 1 }, { b: 2 }]);
    assertEquals(out.checkpoint.offset, 16);
    assertEquals(statMatches((await fs.stat("/a.jsonl"))!, out.checkpoint), true);
    fs.stats = 0;
    assertEquals((await planJsonlResume(fs, "/a.jsonl", out.checkpoint))?.mode, "unchanged");
    assertEquals(fs.stats, 1);
  });
  await t.step("still growing after the read: the next pass reads what came after", async () => {
    const fs = new GrowingFs();
    fs.write("/a.jsonl", '{"a":1}\n');
    const plan = (await planJsonlResume(fs, "/a.jsonl", undefined))!;
    fs.grow = ['{"b":2}\n', '{"c":3}\n'];
    const out = await readPass(fs, "/a.jsonl", plan, ctx, () => {});
    assertEquals(out.checkpoint.offset, 16, "the read saw the first append only");
    assertEquals(statMatches((await fs.stat("/a.jsonl"))!, out.checkpoint), false);
    const next = await planJsonlResume(fs, "/a.jsonl", out.checkpoint);
    assertEquals([next?.mode, next?.offset], ["append", 16]);
  });
});

/** A file an agent appends to while it is read: each read appends the next line of `grow`. */
class GrowingFs extends MemFs {
  grow: string[] = [];
  override readFrom(path: string, offset: number): AsyncIterable<Uint8Array> {
    const line = this.grow.shift();
    if (line) this.append(path, line);
    const inner = super.readFrom(path, offset);
    const after = this.grow.shift();
    const append = () => after && this.append(path, after);
    return (async function* () {
      yield* inner;
      append();
    })();
  }
}

Deno.test("parseTimeMs() reads ISO times as Date.parse does, the common form digit by digit", () => {
  // What it read before the fast path: Date.parse of anything that starts with a date.
  const oracle = (v: string) => {
    const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
    return Number.isNaN(ms) ? null : ms;
  };
  const cases = [
    "2026-01-02T10:00:00.000Z",
    "2026-12-31T23:59:59.999Z",
    "2024-02-29T12:00:00.000Z",
    "2025-02-29T12:00:00.000Z",
    "2026-04-31T00:00:00.000Z",
    "2026-02-28T00:00:00.000Z",
    "1970-01-01T00:00:00.000Z",
    "0050-06-01T00:00:00.000Z",
    "2026-13-01T00:00:00.000Z",
    "2026-00-10T00:00:00.000Z",
    "2026-01-00T00:00:00.000Z",
    "2026-01-02T24:00:00.000Z",
    "2026-01-02T10:60:00.000Z",
    "2026-01-02T10:00:60.000Z",
    "2026-0a-02T10:00:00.000Z",
    "2026-01-02T10:00:00.000z",
    "2026-01-02 10:00:00.000Z",
    "2026-01-02T10:00:00+02:00",
    "2026-01-02T10:00:00.123456Z",
    "2026-01-02",
    "[trimmed for fixture]",
  ];
  for (let t = Date.UTC(1999, 0, 1); t < Date.UTC(2101, 0, 1); t += 86_400_000 * 37 + 3_600_123) {
    cases.push(new Date(t).toISOString());
  }
  for (const v of cases) assertEquals(parseTimeMs(v), oracle(v), v);
  assertEquals([parseTimeMs(1767225600), parseTimeMs(1767225600123), parseTimeMs(null)], [
    1767225600000,
    1767225600123,
    null,
  ]);
});

Deno.test("readJsonl() reads an over-long line with its long texts cut, alike in any chunks", async () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const all = enc(
    '{"a":1}\n' +
      `{"id":"u1","text":"${"é".repeat(60)}","n":[1,2]}\n` + // 150 bytes, over maxLineBytes
      `[${"1,".repeat(60)}1]\n` + // over it, and no text to cut
      '{"b":"' + "w".repeat(120) + '"}\n' +
      '{"c":3}\n{"d":"' + "v".repeat(120), // over it, unterminated: left for the next pass
  );
  const read = async (chunk: number) => {
    const fs = new MemFs();
    fs.chunk = chunk;
    fs.write("/a.jsonl", all);
    const state = { offset: 0, line: 1, bytesRead: 0 };
    const lines: JsonlLine[] = [];
    const options = { closed: true, maxLineBytes: 100, keepTextBytes: 16 };
    await readJsonl(fs, "/a.jsonl", state, options, (l) => lines.push(l) > 0);
    return { lines, offset: state.offset, line: state.line };
  };
  const alone = await read(1);
  const cut = (n: number) =>
    `line longer than 100 bytes: 1 text cut after 16 bytes, ${n} bytes left out`;
  assertEquals(alone.lines.map((l) => [l.value ?? null, l.error ?? null, l.cut ?? null]), [
    [{ a: 1 }, null, null],
    [
      { id: "u1", text: "é".repeat(8) + " … [104 more bytes cut on import]", n: [1, 2] },
      null,
      cut(104),
    ],
    [null, "line longer than 100 bytes", null],
    [{ b: "w".repeat(16) + " … [104 more bytes cut on import]" }, null, cut(104)],
    [{ c: 3 }, null, null],
  ]);
  // the unfinished last line, over-long, waits for its end
  assertEquals([alone.offset, alone.line], [alone.lines.at(-1)!.end + 1, 6]);
  for (const chunk of [2, 7, 16, 64, 1 << 20]) {
    assertEquals(await read(chunk), alone, `chunks of ${chunk} bytes`);
  }
});

Deno.test("readJsonl() decodes a long line as it comes, alike in any chunks, and cuts it alike when it grows too long", async () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const all = new Uint8Array([
    ...enc('{"a":1}\n'),
    // long, with characters of 2, 3 and 4 bytes that chunks cut anywhere, and a CR before its LF
    ...enc(`{"id":"u1","text":"${"é€😀x".repeat(10)}","n":[1,2]}\r\n`),
    ...enc(`{"b":"${"w".repeat(40)}"}\n`), // long, plain ASCII
    // long, then over maxLineBytes: cut as a line read as bytes is
    ...enc(`{"c":"${"é".repeat(90)}"}\n`),
    // long, with an invalid byte: read as a whole line decodes it (U+FFFD)
    ...enc('{"d":"'),
    0xff,
    ...enc(`${"v".repeat(40)}"}\n`),
    ...enc(`{"e":"${"€".repeat(20)}"}`), // long, unterminated: parsed as the file is closed
  ]);
  const read = async (chunk: number, longLineBytes?: number) => {
    const fs = new MemFs();
    fs.chunk = chunk;
    fs.write("/a.jsonl", all);
    const state = { offset: 0, line: 1, bytesRead: 0 };
    const lines: JsonlLine[] = [];
    const options = { closed: true, maxLineBytes: 150, keepTextBytes: 16, longLineBytes };
    await readJsonl(fs, "/a.jsonl", state, options, (l) => lines.push(l) > 0);
    return { lines, offset: state.offset, line: state.line };
  };
  // a threshold no line passes: every line read as bytes, as before
  const asBytes = await read(1 << 20);
  assertEquals(asBytes.lines.map((l) => l.value), [
    { a: 1 },
    { id: "u1", text: "é€😀x".repeat(10), n: [1, 2] },
    { b: "w".repeat(40) },
    { c: "é".repeat(8) + " … [164 more bytes cut on import]" },
    { d: "\ufffd" + "v".repeat(40) },
    { e: "€".repeat(20) },
  ]);
  assertEquals(
    asBytes.lines[3].cut,
    "line longer than 150 bytes: 1 text cut after 16 bytes, 164 bytes left out",
  );
  for (const chunk of [1, 2, 3, 7, 16, 64, 1 << 20]) {
    assertEquals(await read(chunk, 20), asBytes, `chunks of ${chunk} bytes`);
  }
});
