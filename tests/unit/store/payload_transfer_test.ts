/** Payloads on their way from an importer to the store: shared buffers, exact bytes. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { PayloadSink, sha256Hex } from "../../../core/model/mod.ts";
import {
  COMPRESS_WHILE_PACKED_MAX,
  type PackedPayloads,
  packPayloads,
  payloadAt,
  storedAt,
} from "../../../core/store/mod.ts";
import { inflateRawSync } from "node:zlib";

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

Deno.test("compressed while packed: what pays is DEFLATE in one buffer, the rest stays as it is", () => {
  const sink = new PayloadSink();
  const log = "compiling module core/store/search.ts\n".repeat(500);
  const refs = [log, "short", "x".repeat(300)].map((t) => sink.text(t));
  const packed = packPayloads(sink.payloads, { compress: true });
  assert(packed.stored, "the worker's packing carries how each payload is stored");
  assertEquals([...packed.stored.codec], [1, 0, 1]);
  refs.forEach((ref, i) => {
    const s = storedAt(packed, i);
    const raw = payloadAt(packed, i);
    assertEquals(sha256Hex(raw), "sha256" in ref && ref.sha256);
    if (s.codec === 0) assert(s.bytes === raw || s.bytes.buffer === raw.buffer, "not copied");
    else assertEquals(new Uint8Array(inflateRawSync(s.bytes)), raw);
    if (s.codec === 1) assertEquals(s.bytes.buffer, packed.stored!.bytes.buffer);
  });
  assertEquals(packPayloads(sink.payloads).stored, undefined, "the store compresses otherwise");
});

Deno.test("a unit with more payload bytes than the packing compresses travels raw", () => {
  const sink = new PayloadSink();
  sink.text("y".repeat(COMPRESS_WHILE_PACKED_MAX / 2));
  sink.text("z".repeat(COMPRESS_WHILE_PACKED_MAX / 2));
  assert(packPayloads(sink.payloads, { compress: true }).stored, "at the limit: compressed");
  sink.text("one byte more");
  assertEquals(packPayloads(sink.payloads, { compress: true }).stored, undefined);
});
