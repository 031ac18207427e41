/** Heavy work on one whole session runs one piece at a time (server/session_work.ts). */
import { assertEquals, assertRejects } from "../../_helpers/assert.ts";
import { oneAtATime } from "../../../server/session_work.ts";
import { countingCollections } from "../../_helpers/gc_trace.ts";

const turn = () => new Promise((r) => setTimeout(r, 0));

Deno.test("work queued behind other work starts once it ends, however it ends", async () => {
  const work = oneAtATime();
  const log: string[] = [];
  const piece = (name: string, fail = false) => async () => {
    log.push(`${name} starts`);
    for (let i = 0; i < 3; i++) await turn(); // pages, with turns between
    log.push(`${name} ends`);
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
  const a = work.run(piece("a", true));
  const b = work.run(piece("b"));
  const c = work.run(piece("c"));
  await assertRejects(() => a, Error, "a failed");
  assertEquals([await b, await c], ["b", "c"]);
  assertEquals(log, ["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]);
});

Deno.test("a piece of work that grew memory leaves the next a collection; a small one does not", async () => {
  await countingCollections(async (collections) => {
    let used = 100 << 20;
    const work = oneAtATime({ memory: () => used });
    await work.run(async () => {
      await turn();
      used += 4 << 20;
    });
    assertEquals(collections(), 0, "4 MiB");
    // 32 MiB still held when the piece ends (a built document): the piece grew memory
    await work.run(async () => {
      await turn();
      used += 32 << 20;
    });
    assertEquals(collections(), 1, "32 MiB");
    // a failed piece that grew memory is collected after too
    await assertRejects(() =>
      work.run(async () => {
        used += 32 << 20;
        await turn();
        throw new Error("stopped");
      })
    );
    assertEquals(collections(), 2);
  });
});

Deno.test("what is kept of sessions is let go when asked, every keeper's", () => {
  const work = oneAtATime();
  const dropped: string[] = [];
  work.keep(() => dropped.push("analyses"));
  work.keep(() => dropped.push("other"));
  assertEquals(dropped, []);
  work.dropKept();
  assertEquals(dropped, ["analyses", "other"]);
});

Deno.test("a held turn keeps the next piece waiting until it is released, or left untouched", async () => {
  const log: string[] = [];
  const work = oneAtATime({ idleMs: 30 });
  const held = await work.hold(() => (log.push("download built"), Promise.resolve("doc")));
  assertEquals(held.value, "doc");
  const next = work.run(() => (log.push("causality"), Promise.resolve()));
  // touched as its reader reads: the next waits
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 10));
    held.touch();
  }
  assertEquals(log, ["download built"]);
  held.release();
  held.release();
  held.touch(); // after the end: nothing
  await next;
  assertEquals(log, ["download built", "causality"]);
  // a holder that stops touching: the turn ends by itself
  const idle = await work.hold(() => Promise.resolve(1));
  await work.run(() => (log.push("after the idle hold"), Promise.resolve()));
  assertEquals(log.at(-1), "after the idle hold");
  idle.release();
  // work that fails holds nothing
  await assertRejects(() => work.hold(() => Promise.reject(new Error("no session"))), Error);
  await work.run(() => (log.push("after a failed hold"), Promise.resolve()));
  assertEquals(log.at(-1), "after a failed hold");
});

Deno.test("work asking for room lets the kept caches go first, only in a process already big", async () => {
  let resident = 150 << 20;
  const work = oneAtATime({ resident: () => resident });
  const dropped: string[] = [];
  work.keep(() => dropped.push("analyses"));
  await work.run(() => Promise.resolve(), { room: true });
  assertEquals(dropped, [], "a small process keeps its caches");
  resident = 260 << 20;
  await work.run(() => Promise.resolve());
  assertEquals(dropped, [], "work that does not ask keeps them");
  const seen: string[] = [];
  await work.run(() => (seen.push(`while ${dropped.length} dropped`), Promise.resolve()), {
    room: true,
  });
  assertEquals(seen, ["while 1 dropped"], "let go before the work starts");
  const held = await work.hold(() => Promise.resolve(), { room: true });
  held.release();
  assertEquals(dropped, ["analyses", "analyses"]);
});
