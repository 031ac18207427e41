/**
 * Opening a 50,000-step session in the browser: time to the first painted steps (cold and
 * warm browser), against the 1 s target, and how many rows the DOM holds. Headless Chromium
 * drives the real UI over the real server; the session comes through the real importer.
 *
 *   deno run -A tests/bench/ui_open_bench.ts [--steps N] [--runs N]
 */
import { FIRST_ROW_PROBE, openBrowser, serveFixtures } from "../e2e/_harness.ts";
import { LONG_SESSION, longTurns, writeClaudeSession } from "../e2e/_synthetic.ts";

const args = new Map<string, string>();
for (let i = 0; i < Deno.args.length; i += 2) args.set(Deno.args[i], Deno.args[i + 1]);
const STEPS = Number(args.get("--steps") ?? 50_000);
const RUNS = Number(args.get("--runs") ?? 7);

const home = await Deno.makeTempDir({ prefix: "chronicle-bench-ui-" });
await writeClaudeSession(home, {
  sessionId: LONG_SESSION,
  cwd: "/tmp/long",
  turns: longTurns(STEPS),
});
const fx = await serveFixtures({ scenarios: [], homes: [home] });
const id = `claude-code:${LONG_SESSION}`;
const steps = fx.store.getSession(id)!.op_count;
const b = await openBrowser({ fixture: fx });
await b.page.addInitScript(FIRST_ROW_PROBE);
const times: number[] = [];
let rows = 0;
for (let i = 0; i < RUNS; i++) {
  await b.page.goto(`${fx.server.url}sessions/${encodeURIComponent(id)}`);
  await b.page.waitForFunction(() => (globalThis as { __firstRow?: number }).__firstRow);
  times.push(await b.page.evaluate(() => (globalThis as { __firstRow?: number }).__firstRow!));
  rows = Math.max(rows, await b.page.locator(".vrow").count());
}
await b.close();
await fx.close();
const warm = times.slice(1).sort((a, b) => a - b);
const median = warm[Math.floor(warm.length / 2)];
console.log(`open a ${steps.toLocaleString("en-US")}-step session in Chromium (${RUNS} loads)`);
console.log(
  `  first paint: cold ${times[0]} ms, warm median ${median} ms, warm max ${warm.at(-1)} ms`,
);
console.log(`  rows in the DOM: at most ${rows}`);
console.log(
  `  target < 1000 ms: ${times[0] < 1000 && median < 1000 ? "met" : "NOT met"} ` +
    `(warm ratio ${(median / 1000).toFixed(2)}x)`,
);
Deno.exit(0);
