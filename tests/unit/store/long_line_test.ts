import { assert, assertEquals } from "../../_helpers/assert.ts";
import { MAX_LINE_BYTES } from "../../../core/sources/jsonl.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { scratch } from "./_sessions.ts";

Deno.test("a line longer than the longest read (a 200 MB result) is a counted loss, and the lines around it are kept", async () => {
  const s = await scratch();
  await using _ = s;
  const path = await s.write("aaaaaaaa-1", ["beforeline ok", "afterline ok"]);
  // One record longer than any line read, between the session's first line and the rest.
  const lines = new TextEncoder().encode(await Deno.readTextFile(path));
  const firstEnd = lines.indexOf(10) + 1;
  const head = new TextEncoder().encode('{"type":"user","message":{"content":"');
  const long = new Uint8Array(MAX_LINE_BYTES + 64).fill(0x78);
  long.set(head);
  long.set(new TextEncoder().encode('"}}\n'), long.length - 4);
  const file = new Uint8Array(lines.length + long.length);
  file.set(lines.subarray(0, firstEnd));
  file.set(long, firstEnd);
  file.set(lines.subarray(firstEnd), firstEnd + long.length);
  await Deno.writeFile(path, file);

  const store = s.open();
  await s.run(store);
  assertEquals(store.search("beforeline").total, 1);
  assertEquals(store.search("afterline").total, 1);
  const session = store.loadSession("claude-code:aaaaaaaa-1")!;
  assertEquals(session.provenance.loss_windows.length, 1);
  assertEquals(store.totals().loss_windows, 1);
  // Nothing of the long line was stored.
  const biggest = dbOf(store).prepare("SELECT max(size) AS n FROM payloads").get() as { n: number };
  assert(biggest.n < MAX_LINE_BYTES, `a payload of ${biggest.n} bytes was stored`);
  store.close();
});
