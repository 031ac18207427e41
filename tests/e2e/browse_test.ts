/**
 * The UI in headless Chromium on real-client fixtures: list, search, open a hit, a diff, a
 * sub-agent, the inspector, keyboard use, analytics and security pages, light and dark, a
 * laptop's width; and a hostile transcript that must render as text and run nothing.
 */
import assert from "node:assert/strict";
import { createSecurityService } from "../../server/security_service.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { hostileTurns, writeClaudeSession, XSS_SESSION } from "./_synthetic.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

const home = await moduleTempDir("chronicle-e2e-home-");
await writeClaudeSession(home, { sessionId: XSS_SESSION, cwd: "/tmp/xss", turns: hostileTurns() });
// A fake key (random, in OpenAI's legacy shape) for the security check to find.
const FAKE_KEY = "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";
await writeClaudeSession(home, {
  sessionId: "33333333-4444-4555-8666-777777777777",
  cwd: "/tmp/leaky",
  turns: [{ user: `Deploy with OPENAI_API_KEY=${FAKE_KEY} please`, assistant: "Deploying." }],
});

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "a user browses, searches, opens a diff and a sub-agent, by mouse and keyboard",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({
      scenarios: ["claude/s1-basic", "claude/s2-errors", "claude/s4-long", "claude/s6-subagent"],
      homes: [home],
      security: (store) =>
        createSecurityService({
          store,
          guard: {
            status: () =>
              Promise.resolve({
                installed: false,
                settings_path: "/home/you/.claude/settings.json",
              }),
            change: () => Promise.resolve({ changed: true, summary: "Add the guard hook" }),
          },
        }),
    });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    try {
      await t.step("the list shows every session", async () => {
        await page.goto(fx.server.url);
        await page.waitForSelector(".sessions li");
        assert.equal(await page.locator(".sessions li").count(), 6);
        await screenshot(page, "01_sessions");
      });

      await t.step("Ctrl-K searches every session and Enter jumps to the step", async () => {
        await page.keyboard.press("Control+k");
        await page.waitForSelector(".palette-input");
        // The palette takes the keyboard itself: type only once it has.
        await page.waitForFunction(() =>
          document.activeElement?.classList.contains("palette-input") ?? false
        );
        // An identifier as typed, found once: the count agrees with its noun.
        await page.keyboard.type("OPENAI_API_KEY");
        await page.locator(".palette-status", { hasText: /^1 match, newest first/ }).waitFor();
        await page.locator(".hits li mark", { hasText: "OPENAI_API_KEY" }).waitFor();
        await page.locator(".palette-input").fill("");
        // One letter matches whole words only, and the palette says so.
        await page.keyboard.type("w");
        await page.locator(".palette-status", { hasText: "a one-letter word is matched whole" })
          .waitFor();
        await screenshot(page, "02_search_one_letter");
        await page.keyboard.type("irte");
        // The list answers the whole word, whatever a slow machine showed in between.
        await page.locator(".hits li mark", { hasText: /wirte/i }).first().waitFor();
        const mark = await page.locator(".hits li mark").first().textContent();
        assert.match(mark ?? "", /wirte/i);
        const status = (await page.locator(".palette-status").textContent()) ?? "";
        assert.doesNotMatch(status, /matched whole/);
        // the count agrees with its noun: "1 match", "2 matches"
        assert.match(status, /^(?:at least )?(?:1 match|(?!1 )[\d,]+ matches), newest first/);
        await screenshot(page, "02_search");
        await page.keyboard.press("Enter");
        await page.waitForSelector(".op.is-focused");
        assert.match(page.url(), /\/sessions\/claude-code%3A[^?]+\?op=op_/);
        await page.waitForSelector(".inspector");
      });

      await t.step("an edit shows as a real diff", async () => {
        const diff = page.locator(".diff").filter({ hasText: "notes.md" }).last();
        await diff.waitFor();
        assert.ok(await diff.locator(".dl-del").count() >= 1);
        assert.ok(await diff.locator(".dl-add").count() >= 1);
        assert.match((await diff.locator(".dl-add").first().textContent()) ?? "", /write docs/);
        await screenshot(page, "03_session_diff");
      });

      await t.step("a deep link opens the same session and step in a fresh page", async () => {
        const url = page.url();
        const fresh = await b.newPage();
        try {
          await fresh.goto(url);
          await fresh.waitForSelector(".op.is-focused");
          assert.equal(
            await fresh.locator(".op.is-focused").getAttribute("data-op"),
            new URL(url).searchParams.get("op"),
          );
        } finally {
          // A failure here must not leave the main page in a background tab, where the
          // browser stops animation frames and every later step would time out.
          await fresh.close();
          await page.bringToFront();
        }
      });

      await t.step("Esc closes the inspector, j/k move through the steps", async () => {
        await page.locator(".op").first().click({ position: { x: 5, y: 5 } });
        await page.waitForSelector(".inspector");
        await page.keyboard.press("Escape");
        await page.waitForSelector(".inspector", { state: "detached" });
        await page.keyboard.press("j");
        await page.waitForSelector(".op.is-focused");
        const first = await page.locator(".op.is-focused").getAttribute("data-op");
        await page.keyboard.press("j");
        await page.waitForFunction(
          (prev) => document.querySelector(".op.is-focused")?.getAttribute("data-op") !== prev,
          first,
        );
        await page.keyboard.press("k");
        await page.waitForFunction(
          (prev) => document.querySelector(".op.is-focused")?.getAttribute("data-op") === prev,
          first,
        );
      });

      await t.step("a sub-agent opens nested under the call that spawned it", async () => {
        await page.locator(".sessions li", { hasText: "sub-agent" }).first().click();
        await page.waitForSelector(".op-task");
        await page.locator(".op-task .toggle").click();
        const thread = page.locator(".op-task .subagent");
        await thread.waitFor();
        await thread.locator(".op").nth(1).waitFor();
        assert.ok(await thread.locator(".op").count() >= 3);
        assert.match((await thread.textContent()) ?? "", /README/);
        await screenshot(page, "04_subagent");
      });

      await t.step("errors are marked and counted the same in the overview", async () => {
        await page.locator(".sessions li", { hasText: "tests are failing" }).click();
        await page.waitForSelector(".op.is-error");
        const marked = await page.locator(".op.is-error").count();
        const counted = await page.locator(".stat-bad b").textContent();
        assert.equal(String(marked), counted);
        await screenshot(page, "05_errors");
      });

      await t.step("the analytics page draws its charts", async () => {
        await page.locator(".topnav a", { hasText: "Analytics" }).click();
        await page.waitForSelector(".chart .bar");
        assert.ok(await page.locator(".chart").count() >= 3);
        await screenshot(page, "06_analytics");
      });

      await t.step("the security page adds, toggles and deletes a rule", async () => {
        await page.locator(".topnav a", { hasText: "Security" }).click();
        await page.getByLabel("Rule pattern").fill("corp-*-token");
        await page.getByLabel("Rule name").fill("corp tokens");
        await page.getByRole("button", { name: "Add rule" }).click();
        const row = page.locator("table.rules tbody tr", { hasText: "corp-*-token" });
        await row.waitFor();
        await row.locator("input[type=checkbox]").uncheck();
        await page.waitForFunction(() =>
          !(document.querySelector("table.rules input[type=checkbox]") as HTMLInputElement)?.checked
        );
        await row.getByRole("button", { name: "Delete" }).click();
        await row.waitFor({ state: "detached" });
      });

      await t.step("the security check shows redacted previews, never the secret", async () => {
        await page.getByRole("button", { name: "Run check" }).click();
        const report = page.locator(".check-report");
        await report.waitFor();
        await report.locator("details summary", { hasText: "Deploy with" }).click();
        const preview = report.locator("code.preview").first();
        await preview.waitFor();
        assert.match((await preview.textContent()) ?? "", /OPENAI_API_KEY=sk-/);
        assert.ok(!((await page.content()).includes(FAKE_KEY)), "the key is not on the page");
        await screenshot(page, "07_security");
      });

      await t.step("dark mode and a laptop's width", async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.emulateMedia({ colorScheme: "dark" });
        await page.goto(fx.server.url);
        await page.locator(".sessions li", { hasText: "notes.md" }).click();
        await page.waitForSelector(".diff");
        const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        assert.notEqual(bg, "rgb(247, 247, 249)");
        const overflow = await page.evaluate(() =>
          document.documentElement.scrollWidth > document.documentElement.clientWidth
        );
        assert.equal(overflow, false, "no horizontal scrolling at 1280 px");
        await screenshot(page, "08_dark_laptop");
      });

      await t.step("nothing broke the page or the Content-Security-Policy", () => {
        assert.deepEqual(b.problems, []);
      });
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name: "a transcript holding <img onerror> and <script> renders as text and runs nothing",
  ...opts,
  fn: async () => {
    const fx = await serveFixtures({ scenarios: [], homes: [home] });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    try {
      const id = `claude-code:${XSS_SESSION}`;
      await page.goto(`${fx.server.url}sessions/${encodeURIComponent(id)}`);
      await page.waitForSelector(".op-reply");
      await page.locator(".op-exec details.tool-body summary").click();
      await page.waitForSelector(".op-exec .payload-text");
      await page.waitForTimeout(300); // give any injected handler the chance to fire
      const pane = page.locator(".session-pane");
      assert.equal(await pane.locator("img").count(), 0, "no <img> from a transcript");
      assert.equal(await pane.locator("script").count(), 0, "no <script> from a transcript");
      assert.equal(await pane.locator('a[href^="javascript"]').count(), 0, "no javascript: link");
      assert.equal(
        await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
        undefined,
      );
      const text = (await pane.textContent()) ?? "";
      assert.ok(
        text.includes(`<img src=x onerror="window.__pwned=1">`),
        "the prompt's markup is text",
      );
      assert.ok(text.includes(`<script>window.__pwned=4</script>`), "the reply's markup is text");
      assert.ok(text.includes(`<script>window.__pwned=10</script>`), "the tool output is text");
      assert.ok(text.includes(`<script>window.__pwned=11</script>`), "the diff is text");
      await screenshot(page, "09_xss_as_text");
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});
