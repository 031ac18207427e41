import { assert, assertEquals } from "../../_helpers/assert.ts";
import { HashFilter } from "../../../core/store/hash_filter.ts";
import { sha256Hex } from "../../../core/model/mod.ts";

const hexBytes = (hex: string) => Uint8Array.from(hex.match(/../g)!, (b) => parseInt(b, 16));

Deno.test("a hash filter holds every hash added, as hex or as bytes, as it grows; others mostly not", () => {
  const filter = new HashFilter();
  const added = Array.from({ length: 60_000 }, (_, i) => sha256Hex(`added ${i}`));
  added.forEach((h, i) => i % 2 ? filter.addHex(h) : filter.addBytes(hexBytes(h)));
  assertEquals(filter.count, added.length);
  // grown past its first filter (16 KiB holds about 11,000), and no hash is lost on the way
  assert(filter.bytes > 16 << 10, `${filter.bytes} bytes`);
  assertEquals(added.filter((h) => !filter.mayHoldHex(h)), []);
  // hex in capitals too (SQL's hex() gives them)
  assertEquals(added.filter((h) => !filter.mayHoldHex(h.toUpperCase())), []);
  const others = Array.from({ length: 20_000 }, (_, i) => sha256Hex(`other ${i}`));
  const positives = others.filter((h) => filter.mayHoldHex(h)).length;
  assert(positives < others.length * 0.03, `${positives} false positives of ${others.length}`);
});

Deno.test("an empty hash filter holds nothing", () => {
  assertEquals(new HashFilter().mayHoldHex(sha256Hex("x")), false);
});
