/** The real SourceFs: its streamed reads, and the one buffer they share from file to file. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { concatBytes } from "../../_helpers/bytes.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";

async function chunks(it: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of it) out.push(c);
  return out;
}

function bytesOf(n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
}

Deno.test("reads from an offset, chunk by chunk, each file's own bytes", async () => {
  await withTempDir("chronicle-deno-fs-", async (dir) => {
    const big = bytesOf(2_500_000, 1); // three chunks of a megabyte at most
    const small = bytesOf(10, 2);
    await Deno.writeFile(`${dir}/big`, big);
    await Deno.writeFile(`${dir}/small`, small);
    const fs = createDenoFs({ blocking: true });
    const read = async (path: string, offset: number) => {
      const copies: Uint8Array[] = [];
      for await (const c of fs.readFrom(path, offset)) copies.push(c.slice());
      return concatBytes(copies);
    };
    assertEquals(await read(`${dir}/big`, 0), big);
    assertEquals(await read(`${dir}/small`, 0), small);
    assertEquals(await read(`${dir}/big`, 2_000_001), big.subarray(2_000_001));
    assertEquals(await read(`${dir}/small`, 4), small.subarray(4));
    assertEquals(await read(`${dir}/small`, 10), new Uint8Array(0));
  });
});

Deno.test("the next file is read into the last one's buffer; a read in progress keeps its own", async () => {
  await withTempDir("chronicle-deno-fs-", async (dir) => {
    await Deno.writeFile(`${dir}/a`, bytesOf(300_000, 3));
    await Deno.writeFile(`${dir}/b`, bytesOf(200_000, 4));
    await Deno.writeFile(`${dir}/c`, bytesOf(400_000, 5));
    const fs = createDenoFs({ blocking: true });
    const [a] = await chunks(fs.readFrom(`${dir}/a`, 0));
    const [b] = await chunks(fs.readFrom(`${dir}/b`, 0));
    assert(a.buffer === b.buffer, "a smaller file after a bigger one: the same buffer");
    assertEquals(b, bytesOf(200_000, 4));
    // a bigger file than the buffer kept gets a buffer of its size, kept for the next
    const [c] = await chunks(fs.readFrom(`${dir}/c`, 0));
    assert(c.buffer !== a.buffer);
    assertEquals(c, bytesOf(400_000, 5));
    // two reads at once: the second cannot take the buffer the first is reading into
    const first = fs.readFrom(`${dir}/c`, 0)[Symbol.asyncIterator]();
    const one = (await first.next()).value as Uint8Array;
    assert(one.buffer === c.buffer, "the first read took the kept buffer");
    const [two] = await chunks(fs.readFrom(`${dir}/a`, 0));
    assert(two.buffer !== one.buffer, "the second read has a buffer of its own");
    assertEquals(one, bytesOf(400_000, 5));
    assertEquals(two, bytesOf(300_000, 3));
    assert((await first.next()).done);
  });
});
