/** Heavy work on one whole session runs one piece at a time (server/session_work.ts). */
import { assertEquals, assertRejects } from "../../_helpers/assert.ts";
import { oneAtATime } from "../../../server/session_work.ts";

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
