/**
 * How fast the UI feels in daily use, in headless Chromium over the real server: a cold load of
 * the session list, opening the biggest session from the list, and per-keystroke search latency
 * (keystroke to hits painted, the palette's 120 ms debounce included). Real-client fixtures plus
 * one synthetic long session; medians over several runs, so compare runs by ratio.
 *
 *   deno run -A tests/bench/ui_feel_bench.ts [--steps N] [--runs N]
 */
import { openBrowser, serveFixtures } from "../e2e/_harness.ts";
import { LONG_SESSION, longTurns, writeClaudeSession } from "../e2e/_synthetic.ts";

const args = new Map<string, string>();
for (let i = 0; i < Deno.args.length; i += 2) args.set(Deno.args[i], Deno.args[i + 1]);
const STEPS = Number(args.get("--steps") ?? 12_000);
const RUNS = Number(args.get("--runs") ?? 5);

const home = await Deno.makeTempDir({ prefix: "chronicle-bench-feel-" });
await writeClaudeSession(home, {
  sessionId: LONG_SESSION,
  cwd: "/tmp/long",
  turns: longTurns(STEPS),
});
const fx = await serveFixtures({
  scenarios: [
    "claude/s1-basic",
    "claude/s2-errors",
    "claude/s4-long",
    "claude/s6-subagent",
    "codex/s1-basic",
    "codex/s4-long",
    "gemini/s1-basic",
    "opencode/s1-basic",
  ],
  homes: [home],
});
const id = `claude-code:${LONG_SESSION}`;
const b = await openBrowser({ fixture: fx });
const { page } = b;
const frame = () => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => r())));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Cold load: navigation start to the first session row painted.
const loads: number[] = [];
for (let i = 0; i < RUNS; i++) {
  await page.goto(fx.server.url);
  await page.waitForSelector(".sessions li a");
  await frame();
  loads.push(await page.evaluate(() => Math.round(performance.now())));
}

// Open the biggest session from the list: click to its first step painted.
const opens: number[] = [];
for (let i = 0; i < RUNS; i++) {
  await page.goto(fx.server.url);
  const link = page.locator(`.sessions li[data-id="${id}"] a`);
  await link.waitFor();
  const t0 = Date.now();
  await link.click();
  await page.waitForSelector(".op-prompt");
  await frame();
  opens.push(Date.now() - t0);
}

// Per-keystroke search: every prefix of the word is searched (typed slower than the debounce).
const WORD = "question";
const keys: number[] = [];
for (let i = 0; i < RUNS; i++) {
  await page.goto(fx.server.url);
  await page.waitForSelector(".sessions li");
  await page.keyboard.press("Control+k");
  await page.waitForFunction(() =>
    document.activeElement?.classList.contains("palette-input") ?? false
  );
  for (let n = 1; n <= WORD.length; n++) {
    const prefix = WORD.slice(0, n);
    const answered = page.waitForResponse((r) =>
      r.url().includes("/api/search") && new URL(r.url()).searchParams.get("q") === prefix
    );
    const t0 = Date.now();
    await page.keyboard.type(WORD[n - 1]);
    await answered;
    await frame();
    await frame();
    keys.push(Date.now() - t0);
  }
  await page.keyboard.press("Escape");
}
await b.close();
await fx.close();

console.log(`UI feel (${RUNS} runs, biggest session ${STEPS.toLocaleString("en-US")} messages)`);
console.log(`  cold load to first session row: median ${median(loads)} ms (first ${loads[0]} ms)`);
console.log(
  `  open the biggest session: median ${median(opens)} ms (max ${Math.max(...opens)} ms)`,
);
console.log(
  `  search per keystroke (debounce 120 ms included): median ${median(keys)} ms, p90 ${
    [...keys].sort((a, b) => a - b)[Math.floor(keys.length * 0.9)]
  } ms`,
);
Deno.exit(0);
