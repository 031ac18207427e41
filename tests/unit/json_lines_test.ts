/** Gzip of JSON lines (core/json_lines.ts): packed a member a megabyte, read a member at a time. */
import { gunzipSync, gzipSync } from "node:zlib";
import { assert, assertEquals, assertThrows } from "../_helpers/assert.ts";
import { concatBytes } from "../_helpers/bytes.ts";
import { gzipMembers, jsonLines, jsonLinesPacker, MEMBER_CHARS } from "../../core/json_lines.ts";

/** The values packed as a share packs them: the bytes, and each member's size. */
function packed(values: unknown[]): { bytes: Uint8Array; sizes: number[] } {
  const packer = jsonLinesPacker({ level: 1 });
  const members: Uint8Array[] = [];
  for (const v of values) {
    const m = packer.add(v);
    if (m) members.push(m);
  }
  const last = packer.flush();
  if (last) members.push(last);
  return { bytes: concatBytes(members), sizes: members.map((m) => m.byteLength) };
}

const values = Array.from({ length: 3000 }, (_, i) => ({ n: i, text: `line ${i} `.repeat(90) }));

Deno.test("values packed over several members read back in order, from any line, as often as asked", () => {
  const { bytes } = packed(values);
  const members = [...gzipMembers(bytes)];
  assert(members.length >= 3, `${members.length} members`);
  assert(members.every((m) => m.byteLength <= 2 * MEMBER_CHARS));
  const lines = jsonLines(bytes);
  assertEquals([...lines.values()], values);
  assertEquals([...lines.values(2500)], values.slice(2500));
  assertEquals(lines.values().next().value, values[0]);
  // the members inflated one at a time are what inflating the whole gives
  assertEquals(concatBytes(members), new Uint8Array(gunzipSync(bytes)));
});

Deno.test("a member is inflated only when its lines are asked for: the first value reads before a damaged member", () => {
  const { bytes, sizes } = packed(values);
  const damaged = bytes.slice();
  // a byte of the second member's compressed data changed
  damaged[sizes[0] + 40] ^= 0xff;
  assertThrows(() => gunzipSync(damaged)); // inflated whole, nothing is read
  assertEquals(jsonLines(damaged).values().next().value, values[0]);
  assertThrows(() => [...jsonLines(damaged).values()]);
});

Deno.test("header fields are skipped; a cut, changed or foreign member is refused", () => {
  const text = new TextEncoder().encode("one line\n");
  const plain = gzipSync(text);
  // FNAME and FCOMMENT set, each a zero-ended string after the fixed header
  const named = new Uint8Array([
    ...plain.subarray(0, 3),
    plain[3] | 8 | 16,
    ...plain.subarray(4, 10),
    ...new TextEncoder().encode("name.txt\0a comment\0"),
    ...plain.subarray(10),
  ]);
  assertEquals(gunzipSync(named), gunzipSync(plain));
  assertEquals([...gzipMembers(named)].map((m) => new Uint8Array(m)), [text]);
  const crc = plain.slice();
  crc[crc.byteLength - 6] ^= 1;
  assertThrows(() => [...gzipMembers(crc)], Error, "CRC-32 or size");
  assertThrows(() => [...gzipMembers(plain.subarray(0, plain.byteLength - 3))], Error, "cut short");
  assertThrows(() => [...gzipMembers(text)], Error, "no gzip header");
});
