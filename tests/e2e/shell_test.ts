/**
 * The app shell in headless Chromium: narrow layouts as stacked views (390 px), a sub-agent's
 * step opened by URL, the keyboard (Esc, ↑↓ anywhere, no history per Tab, scroll keys, the
 * search palette's focus, j/k through sub-agent threads and not in a select, the `?` overlay),
 * filters in the URL, in-app links without a reload, and an unknown route.
 */
import assert from "node:assert/strict";
import type { Page } from "../_helpers/test_deps.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const SCENARIOS = ["claude/s1-basic", "claude/s2-errors", "claude/s4-long", "claude/s6-subagent"];

/** The session with a sub-agent, and one step inside its thread. */
function subagentStep(fx: Awaited<ReturnType<typeof serveFixtures>>) {
  for (const s of fx.store.listSessions({ limit: 100 }).items) {
    const sub = fx.store.connections(s.id).find((c) => c.kind === "subagent" && c.parent_op);
    if (!sub) continue;
    const step = fx.store.timeline(s.id, { connection: sub.id, limit: 3 }).items[2];
    return { session: s.id, parent: sub.parent_op!, op: step.op_id };
  }
  throw new Error("no sub-agent session among the fixtures");
}

const url = (fx: { server: { url: string } }, path: string) => new URL(path, fx.server.url).href;
const inViewport = (page: Page, selector: string) =>
  page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 &&
      r.bottom <= innerHeight;
  });
const noHorizontalScroll = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

Deno.test({
  name: "at 390 px the list, the session and the inspector are stacked views with a way back",
  ...opts,
  fn: async () => {
    const fx = await serveFixtures({ scenarios: SCENARIOS });
    const b = await openBrowser({ fixture: fx, width: 390, height: 844 });
    const { page } = b;
    try {
      await page.goto(fx.server.url);
      await page.waitForSelector(".sessions li");
      assert.ok(await inViewport(page, ".search-button"), "search is on screen");
      assert.ok(await inViewport(page, ".theme-button"), "the theme toggle is on screen");
      assert.ok(await inViewport(page, ".sessions li"), "the list fills the screen");
      assert.ok(await noHorizontalScroll(page));
      await screenshot(page, "shell_390_list");

      await page.locator(".sessions li a").nth(1).click();
      await page.waitForSelector(".op");
      assert.equal(await page.locator(".list-pane").isVisible(), false, "the list gives way");
      assert.ok(await inViewport(page, ".back-link"));
      assert.ok(await noHorizontalScroll(page));
      await screenshot(page, "shell_390_session");

      await page.locator(".op").first().click({ position: { x: 5, y: 5 } });
      await page.waitForSelector(".inspector");
      assert.ok(await inViewport(page, ".inspector-close"), "the inspector can be closed");
      await screenshot(page, "shell_390_inspector");
      await page.locator(".inspector-close").click();
      await page.waitForSelector(".inspector", { state: "detached" });

      await page.locator(".back-link").click();
      await page.waitForSelector(".sessions li");
      assert.equal(new URL(page.url()).pathname, "/");
      // The back link went back in history: the browser's forward returns to the session.
      await page.goForward();
      await page.waitForSelector(".op");

      await page.locator(".search-button").click();
      await page.waitForSelector(".palette-input");
      assert.ok(await inViewport(page, ".palette-input"));
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name: "a sub-agent's step opened by URL or from a search hit fills the inspector",
  ...opts,
  fn: async () => {
    const fx = await serveFixtures({ scenarios: SCENARIOS });
    const target = subagentStep(fx);
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    try {
      await page.goto(
        url(fx, `/sessions/${encodeURIComponent(target.session)}?op=${target.op}`),
      );
      const focused = page.locator(`.subagent .op.is-focused[data-op="${target.op}"]`);
      await focused.waitFor();
      await page.locator(".inspector .facts-list").waitFor({ timeout: 5000 });
      assert.match((await page.locator(".inspector").textContent()) ?? "", /thread/);
      assert.equal(await page.locator(".inspector [role=status]").count(), 0);
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name: "the keyboard reaches everything without a click first",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: SCENARIOS });
    const target = subagentStep(fx);
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    const focusedOp = () =>
      page.evaluate(() => document.querySelector(".op.is-focused")?.getAttribute("data-op"));
    try {
      await t.step("↑↓ move through sessions with nothing focused", async () => {
        await page.goto(fx.server.url);
        await page.waitForSelector(".sessions li");
        const ids = await page.locator(".sessions li").evaluateAll((els) =>
          els.map((e) => e.getAttribute("data-id"))
        );
        await page.keyboard.press("ArrowDown");
        await page.waitForSelector(`.sessions li.is-selected[data-id="${ids[0]}"]`);
        await page.keyboard.press("ArrowDown");
        await page.waitForSelector(`.sessions li.is-selected[data-id="${ids[1]}"]`);
        await page.keyboard.press("ArrowUp");
        await page.waitForSelector(`.sessions li.is-selected[data-id="${ids[0]}"]`);
      });

      await t.step("Tab adds no history entry", async () => {
        const before = await page.evaluate(() => history.length);
        for (let i = 0; i < 25; i++) await page.keyboard.press("Tab");
        assert.equal(await page.evaluate(() => history.length), before);
      });

      await t.step("PageDown, Space and End scroll the conversation unclicked", async () => {
        await page.goto(url(fx, "/"));
        const long = page.locator(".sessions li", { hasText: /steps/ });
        await long.first().waitFor();
        // The longest session: sort by length through the URL.
        await page.goto(url(fx, "/?sort=op_count"));
        await page.locator(".sessions li a").first().click();
        await page.waitForSelector(".op");
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const top = () => page.locator(".session-pane .vscroll").evaluate((el) => el.scrollTop);
        assert.equal(await top(), 0);
        await page.keyboard.press("PageDown");
        await page.waitForFunction(() =>
          document.querySelector(".session-pane .vscroll")!.scrollTop > 0
        );
        const afterPage = await top();
        await page.keyboard.press(" ");
        await page.waitForFunction(
          (y) => document.querySelector(".session-pane .vscroll")!.scrollTop > y,
          afterPage,
        );
        await page.keyboard.press("End");
        await page.waitForFunction(() => {
          const el = document.querySelector(".session-pane .vscroll")!;
          return el.scrollTop + el.clientHeight >= el.scrollHeight - 30;
        });
      });

      await t.step("Home right after End goes to the start, and stays there", async () => {
        const top = () => page.locator(".session-pane .vscroll").evaluate((el) => el.scrollTop);
        await page.keyboard.press("End");
        await page.keyboard.press("Home");
        // End follows the end for a few frames while rows are measured; Home ends that.
        await page.waitForTimeout(500);
        assert.equal(await top(), 0);
      });

      await t.step("Esc closes the inspector after j/k", async () => {
        await page.keyboard.press("Home");
        await page.keyboard.press("j");
        await page.waitForSelector(".inspector");
        await page.keyboard.press("j");
        await page.waitForFunction(() =>
          document.querySelector(".op.is-focused")?.getAttribute("data-op") ===
            new URL(location.href).searchParams.get("op")
        );
        await page.keyboard.press("Escape");
        await page.waitForSelector(".inspector", { state: "detached" });
        assert.equal(new URL(page.url()).searchParams.get("op"), null);
      });

      await t.step("j/k do nothing while a select has focus", async () => {
        await page.keyboard.press("j");
        // Settled: the step marked is the one the URL names.
        await page.waitForFunction(() =>
          document.querySelector(".op.is-focused")?.getAttribute("data-op") ===
            new URL(location.href).searchParams.get("op")
        );
        const before = await focusedOp();
        await page.getByLabel("Sort by").focus();
        await page.keyboard.press("j");
        await page.waitForTimeout(150);
        assert.equal(await focusedOp(), before);
        await page.evaluate(() => (document.activeElement as HTMLElement).blur());
      });

      await t.step("j walks into an open sub-agent thread and out again", async () => {
        await page.goto(url(fx, `/sessions/${encodeURIComponent(target.session)}`));
        await page.waitForSelector(".op-task");
        await page.locator(`.op[data-op="${target.parent}"] .toggle`).click();
        // The thread's rows come a page at a time: all of them (its head says how many) before
        // they are counted below.
        await page.waitForFunction(() => {
          const thread = document.querySelector(".subagent");
          const head = thread?.querySelector(".subagent-head")?.textContent ?? "";
          const steps = /(\d+) steps/.exec(head);
          return steps !== null && thread!.querySelectorAll(".op").length === Number(steps[1]);
        });
        await page.locator(`.op[data-op="${target.parent}"]`).click({ position: { x: 5, y: 5 } });
        await page.waitForSelector(`.op.is-focused[data-op="${target.parent}"]`);
        /** Presses a key and waits for the selection to move (a loaded machine renders late). */
        const step = async (key: string) => {
          const before = await focusedOp();
          await page.keyboard.press(key);
          await page.waitForFunction(
            (prev) => document.querySelector(".op.is-focused")?.getAttribute("data-op") !== prev,
            before,
          );
        };
        const inThread = () =>
          page.evaluate(() =>
            document.querySelector(".op.is-focused")?.closest(".subagent") !== null
          );
        await step("j");
        assert.ok(await inThread(), "j enters the thread");
        const threadSteps = await page.locator(".subagent .op").count();
        for (let i = 0; i < threadSteps; i++) await step("j");
        assert.equal(await inThread(), false, "j leaves the thread after its last step");
        await step("k");
        assert.ok(await inThread(), "k goes back into it");
        // A key as soon as the last one shows: each step's address comes back to the view after
        // the selection has moved on, and must not take the selection back to it (it did, one
        // run in three of the walk above).
        const order = await page.locator(".timeline .op[data-op]").evaluateAll((els) =>
          els.map((el) => el.getAttribute("data-op"))
        );
        const from = order.indexOf((await focusedOp()) ?? null);
        const n = Math.min(12, order.length - 1 - from);
        for (let i = 0; i < n; i++) await step("j");
        assert.equal(await focusedOp(), order[from + n], `${n} j: ${n} steps on`);
        for (let i = 0; i < n; i++) await step("k");
        await page.waitForTimeout(300);
        assert.equal(await focusedOp(), order[from], `${n} k: back where it was`);
      });

      await t.step("the search palette keeps focus and the active hit in sight", async () => {
        await page.locator(".search-button").focus();
        await page.keyboard.press("Enter");
        await page.waitForFunction(() =>
          document.activeElement?.classList.contains("palette-input") ?? false
        );
        await page.keyboard.type("the");
        // the hits of "the", not of "th" (a loaded machine may answer a prefix first)
        await page.locator('.hits[data-query="the"] li').nth(8).waitFor();
        const n = await page.locator(".hits li").count();
        for (let i = 0; i < n - 1; i++) await page.keyboard.press("ArrowDown");
        // every key handled and drawn (a loaded machine renders late): the input names the hit
        // drawn active
        await page.waitForFunction(() => {
          const active = document.querySelector(".hits li.is-active");
          return !!active && active.id === document.querySelector(".palette-input")
                ?.getAttribute("aria-activedescendant");
        });
        const visible = await page.locator(".hits li.is-active").evaluate((el) => {
          const box = el.closest(".hits")!.getBoundingClientRect();
          const r = el.getBoundingClientRect();
          return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        });
        assert.ok(visible, "the active hit is scrolled into view");
        assert.equal(
          await page.locator(".palette-input").getAttribute("aria-activedescendant"),
          await page.locator(".hits li.is-active").getAttribute("id"),
        );
        for (let i = 0; i < 12; i++) await page.keyboard.press("Tab");
        assert.ok(
          await page.evaluate(() => !!document.activeElement?.closest(".palette")),
          "Tab stays inside the dialog",
        );
        await page.keyboard.press("Escape");
        await page.waitForSelector(".palette", { state: "detached" });
        // focus returns to the search button (waited for: a loaded machine renders late)
        await page.waitForFunction(() =>
          document.activeElement?.classList.contains("search-button") ?? false
        );
      });

      await t.step("? lists every shortcut and Esc closes it", async () => {
        await page.keyboard.press("?");
        const overlay = page.locator(".shortcuts");
        await overlay.waitFor();
        const text = (await overlay.textContent()) ?? "";
        for (const k of ["Ctrl K", "j", "k", "Esc", "PageDown", "End", "?", "↑"]) {
          assert.ok(text.includes(k), `the overlay names ${k}`);
        }
        await screenshot(page, "shell_shortcuts");
        await page.keyboard.press("Escape");
        await overlay.waitFor({ state: "detached" });
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name: "filters live in the URL, in-app links do not reload, and an unknown route says so",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: SCENARIOS });
    const b = await openBrowser({ fixture: fx, height: 300 });
    const { page } = b;
    try {
      await t.step("a filter survives a reload and a link", async () => {
        await page.goto(fx.server.url);
        await page.waitForSelector(".sessions li");
        const all = await page.locator(".sessions li").count();
        await page.getByLabel("Sort by").selectOption("op_count");
        await page.getByLabel("Filter sessions by text").fill("sub-agent");
        await page.waitForFunction(() => location.search.includes("text=sub-agent"));
        await page.waitForFunction(
          (n) => document.querySelectorAll(".sessions li").length < n,
          all,
        );
        const shown = await page.locator(".sessions li").count();
        await page.reload();
        await page.waitForSelector(".sessions li");
        assert.equal(await page.getByLabel("Filter sessions by text").inputValue(), "sub-agent");
        assert.equal(await page.getByLabel("Sort by").inputValue(), "op_count");
        assert.equal(await page.locator(".sessions li").count(), shown);
        // Opening a session keeps the filters in its URL.
        await page.locator(".sessions li a").first().click();
        await page.waitForSelector(".op");
        assert.match(page.url(), /text=sub-agent/);
      });

      await t.step(
        "a text with no word in it filters nothing, and the count says why",
        async () => {
          await page.goto(fx.server.url);
          await page.waitForSelector(".sessions li");
          const all = fx.store.listSessions({ limit: 100 }).total;
          await page.getByLabel("Filter sessions by text").fill("::");
          await page.waitForFunction(() => location.search.includes("text=%3A%3A"));
          await page.locator(".list-count", { hasText: "no word in the text to filter by" })
            .waitFor();
          assert.match((await page.locator(".list-count").textContent())!, new RegExp(`^${all} `));
          await page.getByLabel("Filter sessions by text").fill("");
          await page.waitForFunction(() =>
            !document.querySelector(".list-count")!.textContent!.includes("no word")
          );
        },
      );

      await t.step("a deep link scrolls the list to its session", async () => {
        const last = fx.store.listSessions({ limit: 100 }).items.at(-1)!;
        await page.goto(url(fx, `/sessions/${encodeURIComponent(last.id)}`));
        const row = page.locator(`.sessions li[data-id="${last.id}"]`);
        await row.waitFor();
        await page.waitForFunction((id) => {
          const el = document.querySelector(`.sessions li[data-id="${id}"]`)!;
          const box = el.closest(".sessions")!.getBoundingClientRect();
          const r = el.getBoundingClientRect();
          return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        }, last.id);
      });

      await t.step("a step's # link routes in the page", async () => {
        await page.evaluate(() => ((globalThis as { __kept?: number }).__kept = 1));
        const link = page.locator(".op .op-link").first();
        await link.waitFor();
        const op = await link.evaluate((a) => a.closest(".op")!.getAttribute("data-op"));
        await link.click();
        await page.waitForSelector(`.op.is-focused[data-op="${op}"]`);
        assert.equal(await page.evaluate(() => (globalThis as { __kept?: number }).__kept), 1);
      });

      await t.step("an unknown route is a 'no such page', not the list", async () => {
        await page.goto(url(fx, "/no/such/page"));
        await page.locator("h1", { hasText: "No such page" }).waitFor();
        assert.equal(await page.locator(".sessions").count(), 0);
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});
