/**
 * The search palette looks in an agent's, a project's or some days' sessions: it opens on the
 * session list's filters, its own selects narrow or widen it, the counts follow, and it fits a
 * phone's width in both themes.
 */
import assert from "node:assert/strict";
import type { Page } from "../_helpers/test_deps.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";
import { seriousAxeViolations } from "./_axe.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { writeClaudeSession } from "./_synthetic.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const home = await moduleTempDir("chronicle-e2e-scope-");
const sessions = [
  { id: "aaaaaaaa-1111-4111-8111-111111111111", cwd: "/tmp/alpha-proj", n: 2 },
  { id: "bbbbbbbb-2222-4222-8222-222222222222", cwd: "/tmp/beta-proj", n: 1 },
];
for (const s of sessions) {
  await writeClaudeSession(home, {
    sessionId: s.id,
    cwd: s.cwd,
    turns: Array.from({ length: s.n }, (_, i) => ({
      user: `look for the scopeword, take ${i}`,
      assistant: "Looking.",
    })),
  });
}

/** Opens the palette with Ctrl-K and types `text` once the palette has the keyboard. */
async function searchFor(page: Page, text: string) {
  await page.keyboard.press("Control+k");
  await page.waitForFunction(() =>
    document.activeElement?.classList.contains("palette-input") ?? false
  );
  await page.keyboard.type(text);
}

const status = (page: Page, count: RegExp) =>
  page.locator(".palette-status", { hasText: count }).waitFor();

Deno.test({
  name:
    "the search palette narrows to an agent, a project or days, and opens on the list's filters",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: ["codex/s1-basic"], homes: [home] });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    const project = page.locator('select[aria-label="Search in project"]');
    const agent = page.locator('select[aria-label="Search in agent"]');
    try {
      await t.step("every session, then one project's, then an agent's", async () => {
        await page.goto(fx.server.url);
        await page.waitForSelector(".sessions li");
        await searchFor(page, "scopeword");
        await status(page, /^3 matches, newest first/);
        await project.selectOption("/tmp/alpha-proj");
        await status(page, /^2 matches, newest first/);
        const projects = await page.locator(".hits li .hit-top .muted").allTextContents();
        assert.deepEqual(projects, ["alpha-proj", "alpha-proj"]);
        await agent.selectOption("codex");
        await status(page, /^No matches in these sessions/);
        assert.equal(await page.locator(".hits li").count(), 0);
      });

      await t.step("days narrow it too, and All sessions widens it again", async () => {
        await agent.selectOption("");
        await page.locator('input[aria-label="Search to date"]').fill("2000-01-01");
        await status(page, /^No matches in these sessions/);
        await page.locator(".palette-filters button", { hasText: "All sessions" }).click();
        await status(page, /^3 matches, newest first/);
        assert.equal(await project.inputValue(), "");
        assert.equal(await page.locator(".palette-filters button").count(), 0);
        assert.deepEqual(await seriousAxeViolations(page), []);
        await page.keyboard.press("Escape");
        await page.waitForSelector(".palette", { state: "detached" });
      });

      await t.step("the palette opens on the session list's filters", async () => {
        await page.goto(`${fx.server.url}?project=${encodeURIComponent("/tmp/beta-proj")}`);
        await page.waitForSelector(".sessions li");
        await searchFor(page, "scopeword");
        await status(page, /^1 match, newest first/);
        assert.equal(await project.inputValue(), "/tmp/beta-proj");
        // Enter in the search box opens the hit
        await page.keyboard.press("Enter");
        await page.waitForSelector(".op.is-focused");
        assert.match(page.url(), /bbbbbbbb-2222/);
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }

    for (const dark of [false, true]) {
      await t.step(`at a phone's width, ${dark ? "dark" : "light"}`, async () => {
        const fx = await serveFixtures({ scenarios: [], homes: [home] });
        const phone = await openBrowser({ fixture: fx, width: 390, height: 844, dark });
        try {
          await phone.page.goto(fx.server.url);
          await phone.page.waitForSelector(".sessions li");
          await searchFor(phone.page, "scopeword");
          await phone.page.locator('select[aria-label="Search in project"]')
            .selectOption("/tmp/alpha-proj");
          await status(phone.page, /^2 matches/);
          const fits = await phone.page.evaluate(() => {
            const p = document.querySelector(".palette")!;
            return p.scrollWidth <= p.clientWidth && p.getBoundingClientRect().right <= 390;
          });
          assert.ok(fits, "the palette and its filters fit 390 px");
          await screenshot(phone.page, `search_scope_390_${dark ? "dark" : "light"}`);
          assert.deepEqual(phone.problems, []);
        } finally {
          await phone.close();
          await fx.close();
        }
      });
    }
  },
});

Deno.test({
  name: "while a first import still runs, the palette counts so far and says how far it is",
  ...opts,
  fn: async () => {
    const fx = await serveFixtures({
      scenarios: [],
      homes: [home],
      importProgress: () => ({
        state: "importing",
        first: true,
        files_total: 2,
        files_done: 1,
        bytes_total: 2000,
        bytes_done: 800,
        sessions: 2,
        index_total: 0,
        index_done: 0,
        percent: 40,
        eta_s: 3,
        started_at: 1,
        finished_at: null,
      }),
    });
    const b = await openBrowser({ fixture: fx });
    try {
      await b.page.goto(fx.server.url);
      await b.page.waitForSelector(".sessions li");
      await searchFor(b.page, "scopeword");
      // the hits indexed so far are a floor, not the count
      await status(b.page, /^3 matches so far, newest first/);
      await b.page.locator(".search-indexing", { hasText: "still being built (40% imported)" })
        .waitFor();
      await b.page.locator(".palette-input").fill("zzzqnothing");
      await status(b.page, /^No matches yet · [\d.]+ ms$/);
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});
