/** Payloads on their way from an importer to the store: shared buffers, exact bytes. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { PayloadSink, sha256Hex } from "../../../core/model/mod.ts";
import { type PackedPayloads, packPayloads, payloadAt } from "../../../core/store/mod.ts";
import {
  decodeFrame,
  encodeFrame,
  FRAME_BYTES,
  frameEnds,
} from "../../../core/store/payload_codec.ts";

const unpack = (p: PackedPayloads) => p.sha256.map((sha, i) => [sha, payloadAt(p, i)]);

const encoder = new TextEncoder();

Deno.test("texts share buffers; a repeat takes no room; a long text gets its own buffer", () => {
  const sink = new PayloadSink();
  const texts = ["alpha", "βeta ✓", "", "🚀 gamma", "alpha"];
  const refs = texts.map((t) => sink.text(t));
  assertEquals(refs.map((r) => "sha256" in r && r.sha256), texts.map((t) => sha256Hex(t)));
  assertEquals(sink.payloads.size, 4);
  const buffers = new Set([...sink.payloads.values()].map((b) => b.buffer));
  assertEquals(buffers.size, 1);
  const long = "x".repeat(1 << 20);
  sink.text(long);
  assertEquals(sink.payloads.get(sha256Hex(long))!.byteLength, 1 << 20);
  for (const t of [...texts, long]) {
    assertEquals(sink.payloads.get(sha256Hex(t)), encoder.encode(t));
  }
});

Deno.test("a pass's first shared buffer is small, and each next one twice the last, up to 1 MiB", () => {
  const sink = new PayloadSink();
  const sizes = () =>
    [...new Set([...sink.payloads.values()].map((b) => b.buffer))].map((b) => b.byteLength);
  sink.text("one short prompt");
  assertEquals(sizes(), [1 << 16]);
  // 400 texts of 8-10 KB, 3.6 MB in all: they outgrow buffer after buffer
  const texts = Array.from({ length: 400 }, (_, i) => `${i} `.repeat(2000 + i));
  for (const t of texts) sink.text(t);
  const made = sizes();
  assertEquals(made.slice(0, 6), [1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 20]);
  assert(made.every((n) => n <= 1 << 20), `buffers of ${made.join(", ")} bytes`);
  for (const t of texts) assertEquals(sink.payloads.get(sha256Hex(t)), encoder.encode(t));
});

Deno.test("packing keeps buffers the payloads fill and copies slices of others", () => {
  const sink = new PayloadSink();
  sink.text("one");
  sink.text("two");
  const read = new Uint8Array(100_000); // a file chunk of which one payload is a small slice
  read.set(encoder.encode("slice of a chunk"), 5000);
  sink.bytes(read.subarray(5000, 5016));
  const own = encoder.encode("a buffer of its own");
  sink.bytes(own);
  const packed = packPayloads(sink.payloads);
  assert(!packed.buffers.some((b) => b.buffer === read.buffer), "the chunk does not travel");
  assert(packed.buffers.some((b) => b.buffer === own.buffer), "a filled buffer travels as it is");
  const total = packed.buffers.reduce((n, b) => n + b.byteLength, 0);
  assert(total < 10_000, `${total} bytes travel`);
  assertEquals(unpack(packed), [...sink.payloads]);
});

Deno.test("an empty set of payloads packs to nothing", () => {
  const packed = packPayloads(new Map());
  assertEquals([packed.sha256, packed.buffers, unpack(packed)], [[], [], []]);
});

Deno.test("consecutive payloads in frames of about 128 KiB, each inflating to its members exactly", () => {
  const log = "compiling module core/store/search.ts\n".repeat(500); // 19 KB
  const texts = [
    log,
    "short",
    "x".repeat(300),
    "y".repeat(FRAME_BYTES),
    ...Array.from({ length: 12 }, (_, i) => `${i} `.repeat(6000)),
  ];
  const payloads = texts.map((t) => encoder.encode(t));
  const ends = frameEnds(payloads.map((p) => p.byteLength));
  // the first three, then the big one alone, then the rest up to 128 KiB a frame
  assertEquals(ends.slice(0, 2), [3, 4]);
  assertEquals(ends.at(-1), texts.length);
  let first = 0;
  let stored = 0;
  ends.forEach((end, k) => {
    const members = payloads.slice(first, end);
    const size = members.reduce((n, m) => n + m.byteLength, 0);
    assert(end - first === 1 || size < 2 * FRAME_BYTES, `frame ${k}: ${size} bytes`);
    const frame = encodeFrame(members);
    stored += frame.byteLength;
    const raw = decodeFrame(frame, size);
    assert(raw, `frame ${k} inflates`);
    let at = 0;
    for (const m of members) {
      assertEquals(raw.subarray(at, at + m.byteLength), m);
      at += m.byteLength;
    }
    assertEquals(raw.byteLength, at, "nothing else in the frame");
    assertEquals(decodeFrame(frame, size + 1), null, "asked for more than it holds: no frame");
    first = end;
  });
  const raw = texts.reduce((n, t) => n + t.length, 0);
  assert(stored * 20 < raw, `${stored} bytes stored for ${raw}`);
});
