import { assert, assertEquals } from "../../_helpers/assert.ts";
import { MAX_LINE_BYTES } from "../../../core/sources/jsonl.ts";
import { KEEP_TEXT_BYTES } from "../../../core/sources/json_cut.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { scratch } from "./_sessions.ts";
import { timelineRow } from "../../../server/routes/sessions.ts";

Deno.test("a line longer than the longest read (a 200 MB result) keeps its record, its long text cut and counted as a loss", async () => {
  const s = await scratch();
  await using _ = s;
  // a tool's output longer than any line read whole: one line of the log holds it
  const output = "bigstart " + "0123456789abcdef".repeat((MAX_LINE_BYTES >> 4) + 4096);
  await s.write("aaaaaaaa-1", ["beforeline ok", output, "afterline ok"]);
  const store = s.open();
  await s.run(store);
  assertEquals(store.search("beforeline").total, 1);
  assertEquals(store.search("afterline").total, 1);
  assertEquals(store.search("bigstart").total, 1, "the output's beginning is kept and found");
  const session = store.loadSession("claude-code:aaaaaaaa-1")!;
  const calls = Object.values(session.operations).filter((op) => op.kind === "exec");
  assertEquals(calls.length, 3, "the call with the long output is kept");
  const kept = calls.map((op) => store.payloadText(op.response)!).find((t) => t.startsWith("big"))!;
  assert(kept.startsWith("bigstart 0123456789abcdef"));
  assert(/ … \[\d+ more bytes cut on import\]$/.test(kept), kept.slice(-80));
  assert(kept.length < KEEP_TEXT_BYTES + 100, `${kept.length} characters kept`);
  // the call that lost part of its output says so, and replay does not run it as whole
  const [cutId, cut] = Object.entries(session.operations).find(([, op]) =>
    op.kind === "exec" && store.payloadText(op.response)!.startsWith("big")
  )!;
  assertEquals(cut.completeness, "truncated");
  assert(cut.replay.blockers.includes("incomplete"));
  assertEquals(calls.filter((op) => op.completeness === "complete").length, 2);
  // the timeline row the UI shows says how much of the result went, as its mark counts it
  const rows = store.timeline("claude-code:aaaaaaaa-1").items.map((i) => timelineRow(store, i));
  const left = Number(/\[(\d+) more bytes cut on import\]$/.exec(kept)![1]);
  assertEquals(left, output.length - KEEP_TEXT_BYTES);
  assertEquals(rows.filter((r) => r.result?.cut_bytes !== undefined).map((r) => r.op_id), [cutId]);
  assertEquals(rows.find((r) => r.op_id === cutId)!.result!.cut_bytes, left);
  assert(rows.every((r) => r.input?.cut_bytes === undefined));
  // the cut is a counted loss, on the line that held the output
  assertEquals(session.provenance.loss_windows.length, 1);
  assert(session.provenance.loss_windows[0].reason.includes("cut after"));
  assertEquals(store.totals().loss_windows, 1);
  const biggest = dbOf(store).prepare("SELECT max(size) AS n FROM payloads").get() as { n: number };
  assert(biggest.n < 2 * KEEP_TEXT_BYTES, `a payload of ${biggest.n} bytes was stored`);
  store.close();
});

Deno.test("a line over the longest read that cutting its texts cannot shorten is a counted loss, and the lines around it are kept", async () => {
  const s = await scratch();
  await using _ = s;
  const path = await s.write("aaaaaaaa-1", ["beforeline ok", "afterline ok"]);
  // One record of numbers alone, longer than any line read, between the first line and the rest.
  const lines = new TextEncoder().encode(await Deno.readTextFile(path));
  const firstEnd = lines.indexOf(10) + 1;
  const head = new TextEncoder().encode('{"type":"user","message":{"content":[');
  const long = new Uint8Array(MAX_LINE_BYTES + 64).fill(0x31);
  for (let i = head.length + 1; i < long.length - 5; i += 2) long[i] = 0x2c; // 1,1,1,...
  long.set(head);
  long.set(new TextEncoder().encode("1]}}\n"), long.length - 5);
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
  assertEquals(
    session.provenance.loss_windows[0].reason,
    `line longer than ${MAX_LINE_BYTES} bytes`,
  );
  assertEquals(store.totals().loss_windows, 1);
  // Nothing of the long line was stored.
  const biggest = dbOf(store).prepare("SELECT max(size) AS n FROM payloads").get() as { n: number };
  assert(biggest.n < MAX_LINE_BYTES, `a payload of ${biggest.n} bytes was stored`);
  store.close();
});
