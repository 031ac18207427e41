/**
 * core/gc.ts's `releaseGarbage` gives the pages a full collection empties back to the system,
 * where `collectGarbage` leaves them with V8: run in a process of its own, with the flag every
 * task that runs Chronicle passes (`--expose-gc`).
 */
import { assert } from "../_helpers/assert.ts";

const script = `
import { collectGarbage, releaseGarbage } from "${new URL("../../core/gc.ts", import.meta.url)}";
const rss = () => Deno.memoryUsage().rss / 2 ** 20;
let kept = [];
for (let i = 0; i < 40; i++) kept.push(Array.from({ length: 100_000 }, (_, j) => ({ j, s: "x" + j })));
const full = rss();
kept = [];
collectGarbage();
const collected = rss();
releaseGarbage();
console.log(JSON.stringify({ full, collected, released: rss() }));
`;

Deno.test("releaseGarbage gives emptied pages back; collectGarbage keeps them", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", script],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert(out.success, "the script ran");
  const m = JSON.parse(new TextDecoder().decode(out.stdout));
  assert(m.full - m.collected < (m.full - 60) / 2, `collected: ${JSON.stringify(m)}`);
  assert(m.released < m.collected - 150, `released: ${JSON.stringify(m)}`);
});
