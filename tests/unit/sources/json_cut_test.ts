import { assert, assertEquals } from "../../_helpers/assert.ts";
import { cutMark } from "../../../core/model/cut_mark.ts";
import { JsonCutter } from "../../../core/sources/json_cut.ts";
import { rng } from "../../_helpers/rng.ts";

const enc = (t: string) => new TextEncoder().encode(t);

/** Pushes `bytes` in pieces of `piece` bytes and returns what the cutter made. */
function cutIn(bytes: Uint8Array, piece: number, keep: number, max = 1 << 20) {
  const c = new JsonCutter(max, keep);
  for (let at = 0; at < bytes.length; at += piece) c.push(bytes.subarray(at, at + piece));
  return c.finish();
}

/** Strings that stress a cut: escapes of every kind, multibyte characters, surrogate pairs. */
const PIECES = ["a", "é", "✓", "😀", "\n", '"', "\\", "\u0001", "\u2028", "ab", " ", "/"];

function text(r: () => number, length: number): string {
  let s = "";
  while (s.length < length) s += PIECES[Math.floor(r() * PIECES.length)];
  return s;
}

function value(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 2 || k < 0.4) return text(r, Math.floor(r() * 60));
  if (k < 0.5) return Math.floor(r() * 1e6) / 7;
  if (k < 0.55) return r() < 0.5 ? null : true;
  if (k < 0.75) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 4); i > 0; i--) {
    o[text(r, 1 + Math.floor(r() * 8))] = value(r, depth + 1);
  }
  return o;
}

/** Checks `cut` against `original`: the same shape, each string the original or its cut prefix. */
function sameButCut(cut: unknown, original: unknown, keep: number): number {
  if (typeof original === "string") {
    assert(typeof cut === "string");
    // the bytes of a string as the JSON holds it, escapes and all: what the cutter counts
    const held = (t: string) => enc(JSON.stringify(t)).length - 2;
    if (cut === original) {
      // kept whole: it ends before its last character or escape (up to 6 bytes) passes `keep`
      assert(held(original) < keep + 6, `${JSON.stringify(original)} was not cut`);
      return 0;
    }
    const mark = / … \[(\d+) more bytes cut on import\]$/.exec(cut);
    assert(mark, `no mark in ${JSON.stringify(cut)}`);
    const kept = cut.slice(0, mark.index);
    assert(original.startsWith(kept), "what is kept is the original's beginning");
    assert(held(kept) >= keep && held(kept) < keep + 6, "cut at the first boundary after keep");
    assertEquals(Number(mark[1]), held(original) - held(kept), "the mark counts what went");
    return 1;
  }
  if (Array.isArray(original)) {
    assert(Array.isArray(cut));
    assertEquals(cut.length, original.length);
    return original.reduce((n: number, v, i) => n + sameButCut(cut[i], v, keep), 0);
  }
  if (original !== null && typeof original === "object") {
    const keys = Object.keys(original), got = Object.keys(cut as object);
    assertEquals(got.length, keys.length);
    let n = 0;
    for (const [i, k] of keys.entries()) {
      n += sameButCut(got[i], k, keep);
      n += sameButCut(
        (cut as Record<string, unknown>)[got[i]],
        (original as Record<string, unknown>)[k],
        keep,
      );
    }
    return n;
  }
  assertEquals(cut, original);
  return 0;
}

Deno.test("JsonCutter copies a text without long strings byte for byte, in any pieces", () => {
  const source = enc('\ufeff{"a":"é✓😀 \\"q\\" \\u00e9\\\\","b":[1,2.5e3,null,true],"c":{"":""}}');
  for (const piece of [1, 2, 3, 7, 1000]) {
    const out = cutIn(source, piece, 64)!;
    assertEquals(out.bytes, source, `pieces of ${piece}`);
    assertEquals([out.texts, out.cutBytes], [0, 0]);
  }
});

Deno.test("JsonCutter cuts each long string after its first bytes and marks what went", () => {
  const long = "x".repeat(1000);
  const source = enc(JSON.stringify({ type: "user", content: long, id: "u1", more: [long, "ok"] }));
  for (const piece of [1, 5, 64, 4096]) {
    const out = cutIn(source, piece, 100)!;
    const v = JSON.parse(new TextDecoder().decode(out.bytes));
    assertEquals(v.type, "user");
    assertEquals(v.id, "u1");
    assertEquals(v.content, "x".repeat(100) + cutMark(900));
    assertEquals(v.more, ["x".repeat(100) + cutMark(900), "ok"]);
    assertEquals([out.texts, out.cutBytes], [2, 1800]);
  }
});

Deno.test("JsonCutter never cuts inside an escape or a character, whatever the pieces", () => {
  const r = rng(17);
  let cuts = 0;
  for (let round = 0; round < 300; round++) {
    const original = value(r, 0);
    const source = enc(JSON.stringify(original));
    const keep = 1 + Math.floor(r() * 24);
    const piece = 1 + Math.floor(r() * 40);
    const out = cutIn(source, piece, keep);
    assert(out, "a text far under max is never given up");
    const parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(out.bytes));
    const n = sameButCut(parsed, original, keep);
    assertEquals(out.texts, n, `round ${round}`);
    cuts += n;
  }
  assert(cuts > 300, `only ${cuts} strings were cut: the cases test little`);
});

Deno.test("JsonCutter gives up on a text whose structure alone is over max", () => {
  const numbers = enc(JSON.stringify(Array.from({ length: 1000 }, (_, i) => i)));
  assertEquals(cutIn(numbers, 100, 10, 2000), null);
  const shortStrings = enc(JSON.stringify(Array.from({ length: 1000 }, () => "abc")));
  assertEquals(cutIn(shortStrings, 7, 10, 2000), null);
  // the same under max: nothing to give up
  assertEquals(cutIn(numbers, 100, 10, 1 << 20)!.bytes, numbers);
});

Deno.test("JsonCutter leaves a text cut inside its last string unparseable, as it was", () => {
  const out = cutIn(enc('{"a":"' + "y".repeat(500)), 50, 10)!;
  let threw = false;
  try {
    JSON.parse(new TextDecoder().decode(out.bytes));
  } catch {
    threw = true;
  }
  assert(threw);
});
