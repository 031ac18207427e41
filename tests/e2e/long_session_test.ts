/**
 * A 50,000-step session in the browser: it opens with a few dozen rows in the DOM (never more
 * than ~500), scrolls to its middle and end, and a deep link far into it lands on the step.
 * The time to first paint is printed (the bench compares it with the 1 s target); no test
 * here asserts wall-clock time.
 */
import assert from "node:assert/strict";
import { FIRST_ROW_PROBE, openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { LONG_SESSION, longTurns, writeClaudeSession } from "./_synthetic.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

const LONG_STEPS = 50_000;
const MAX_DOM_ROWS = 500;

Deno.test({
  name: "a 50,000-step session opens with at most ~500 rows in the DOM and deep links into it",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const home = await moduleTempDir("chronicle-e2e-long-");
    await writeClaudeSession(home, {
      sessionId: LONG_SESSION,
      cwd: "/tmp/long",
      turns: longTurns(LONG_STEPS),
    });
    const fx = await serveFixtures({ scenarios: [], homes: [home] });
    const id = `claude-code:${LONG_SESSION}`;
    const summary = fx.store.getSession(id)!;
    assert.ok(summary.op_count >= LONG_STEPS, `imported ${summary.op_count} steps`);
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    const rowsInDom = () => page.locator(".vrow").count();
    try {
      await t.step("it opens and shows the first steps", async () => {
        const url = `${fx.server.url}sessions/${encodeURIComponent(id)}`;
        await page.addInitScript(FIRST_ROW_PROBE);
        for (const visit of ["cold", "warm"]) {
          await page.goto(url);
          await page.waitForSelector(".op-prompt");
          const ms = await page.evaluate(() => (globalThis as { __firstRow?: number }).__firstRow);
          console.log(`50k-step session, ${visit} browser: first steps painted at ${ms} ms`);
        }
        const rows = await rowsInDom();
        assert.ok(rows > 0 && rows <= MAX_DOM_ROWS, `${rows} rows in the DOM`);
        await screenshot(page, "10_long_top");
      });

      await t.step("scrolling to the middle and the end keeps the DOM small", async () => {
        for (const where of [0.5, 1]) {
          await page.evaluate((f) => {
            const el = document.querySelector(".vscroll")!;
            el.scrollTop = (el.scrollHeight - el.clientHeight) * f;
          }, where);
          // Rows far down the list, loaded (no placeholders left), are on screen.
          const at = Math.floor(summary.op_count * where * 0.8);
          await page.waitForFunction((min) => {
            const rows = [...document.querySelectorAll<HTMLElement>(".vrow")];
            return rows.length > 3 && Number(rows[0].dataset.index) > min &&
              !document.querySelector(".vrow .op-placeholder");
          }, at);
          const rows = await rowsInDom();
          assert.ok(rows <= MAX_DOM_ROWS, `${rows} rows in the DOM at ${where}`);
        }
        await screenshot(page, "11_long_end");
      });

      await t.step("a deep link 36,000 steps in lands on that step", async () => {
        const hit = fx.store.search("item 20000", {}).hits.find((h) => h.session_id === id)!;
        assert.ok(hit, "the search index has the step");
        await page.goto(
          `${fx.server.url}sessions/${encodeURIComponent(id)}?op=${encodeURIComponent(hit.op_id)}`,
        );
        const focused = page.locator(".op.is-focused");
        await focused.waitFor();
        assert.match((await focused.textContent()) ?? "", /20000/);
        const inView = await focused.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const s = document.querySelector(".vscroll")!.getBoundingClientRect();
          return r.top >= s.top - 1 && r.top < s.bottom;
        });
        assert.ok(inView, "the linked step is in the viewport");
        assert.ok(await rowsInDom() <= MAX_DOM_ROWS);
        await screenshot(page, "12_long_deep_link");
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});
