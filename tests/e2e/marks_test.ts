/**
 * Naming and starring in the browser: the session header's star toggle (and `s`) and inline
 * rename (Enter saves, Escape cancels), the list's ★ and its Starred filter kept in the URL,
 * all still there after a reload, seen by a second tab; light and dark at a phone's width.
 */
import assert from "node:assert/strict";
import { seriousAxeViolations } from "./_axe.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const CLAUDE = "claude-code:6e1ca488-75fe-41b2-bc40-620dc5c6889e";
const sessionPath = (id: string) => `sessions/${encodeURIComponent(id)}`;

Deno.test({
  name: "a user stars and renames a session in the UI and finds it in the list after a reload",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: ["claude/s1-basic", "codex/s1-basic"] });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    const star = page.locator(".marks .star-toggle");
    const heading = page.locator("h1.session-title");
    const row = page.locator(`.sessions li[data-id="${CLAUDE}"]`);
    try {
      await t.step("the star toggle stars the open session and the list marks it", async () => {
        await page.goto(fx.server.url + sessionPath(CLAUDE));
        await heading.waitFor();
        assert.equal(await star.getAttribute("aria-pressed"), "false");
        assert.equal(await star.getAttribute("aria-keyshortcuts"), "s");
        await star.click();
        await page.locator('.marks .star-toggle[aria-pressed="true"]').waitFor();
        await row.locator(".star-mark").waitFor();
        assert.equal(fx.store.getSession(CLAUDE)?.starred, true);
      });

      await t.step("s unstars and stars it again from the keyboard", async () => {
        await page.locator(".session-pane").click({ position: { x: 5, y: 300 } });
        await page.keyboard.press("s");
        await page.locator('.marks .star-toggle[aria-pressed="false"]').waitFor();
        await row.locator(".star-mark").waitFor({ state: "detached" });
        await page.keyboard.press("s");
        await page.locator('.marks .star-toggle[aria-pressed="true"]').waitFor();
      });

      await t.step("Escape cancels a rename; Enter saves it", async () => {
        const recorded = (await heading.textContent())!.replace("★", "").trim();
        await page.locator(".marks .rename-open").click();
        const input = page.getByLabel("Session name");
        await input.waitFor();
        assert.equal(await input.evaluate((el) => el === document.activeElement), true);
        await input.fill("Not this one");
        await input.press("Escape");
        await heading.waitFor();
        assert.equal((await heading.textContent())!.replace("★", "").trim(), recorded);
        assert.equal(fx.store.getSession(CLAUDE)?.user_title, null, "nothing was saved");
        assert.equal(
          await page.locator(".marks .rename-open").evaluate((el) => el === document.activeElement),
          true,
          "focus goes back to Rename",
        );

        await page.locator(".marks .rename-open").click();
        await input.fill("Release notes <img src=x onerror=window.__pwned=1>");
        await input.press("Enter");
        await page.locator("h1.session-title", { hasText: "Release notes" }).waitFor();
        await page.locator(".renamed-from", { hasText: `Renamed from “${recorded}”` }).waitFor();
        await row.locator(".s-title", { hasText: "Release notes" }).waitFor();
        assert.equal(
          fx.store.getSession(CLAUDE)?.user_title,
          "Release notes <img src=x onerror=window.__pwned=1>",
        );
        assert.equal(await page.locator(".session-pane img, .sessions img").count(), 0);
        await screenshot(page, "marks_01_renamed_starred");
      });

      await t.step("the Starred filter lives in the URL and survives a reload", async () => {
        await page.locator(".starred-filter").click();
        await page.waitForURL(/[?&]starred=1/);
        await page.locator(".list-count", { hasText: "1 starred session" }).waitFor();
        assert.equal(await page.locator(".sessions li[data-id]").count(), 1);
        await page.reload();
        await page.locator(".list-count", { hasText: "1 starred session" }).waitFor();
        assert.equal(await page.locator(".starred-filter").getAttribute("aria-pressed"), "true");
        await row.locator(".s-title", { hasText: "Release notes" }).waitFor();
        await row.locator(".star-mark").waitFor();
        await page.locator("h1.session-title", { hasText: "Release notes" }).waitFor();
        assert.equal(await star.getAttribute("aria-pressed"), "true");
      });

      await t.step("another tab sees a rename made here", async () => {
        const other = await b.newPage();
        try {
          await other.goto(fx.server.url + sessionPath(CLAUDE));
          await other.locator("h1.session-title", { hasText: "Release notes" }).waitFor();
          await page.locator(".marks .rename-open").click();
          await page.getByLabel("Session name").fill("Shipped notes");
          await page.getByLabel("Session name").press("Enter");
          await other.locator("h1.session-title", { hasText: "Shipped notes" }).waitFor();
          await other.locator(`.sessions li[data-id="${CLAUDE}"] .s-title`, {
            hasText: "Shipped notes",
          }).waitFor();
        } finally {
          await other.close();
        }
      });

      await t.step("an empty name gives the session its own title back", async () => {
        await page.locator(".marks .rename-open").click();
        await page.getByLabel("Session name").fill("");
        await page.getByLabel("Session name").press("Enter");
        await page.locator(".renamed-from").waitFor({ state: "detached" });
        assert.equal(fx.store.getSession(CLAUDE)?.user_title, null);
        fx.store.markSession(CLAUDE, { title: "Release notes" }); // for the screenshots
      });

      await t.step("nothing broke the page or the Content-Security-Policy", () => {
        assert.deepEqual(b.problems, []);
        return page.evaluate(() => (globalThis as { __pwned?: number }).__pwned).then((v) =>
          assert.equal(v, undefined)
        );
      });
    } finally {
      await b.close();
    }

    for (const dark of [false, true]) {
      const theme = dark ? "dark" : "light";
      await t.step(
        `390 px, ${theme}: the header, the rename box and the filtered list fit`,
        async () => {
          const p = await openBrowser({ width: 390, height: 844, dark, fixture: fx });
          try {
            const noOverflow = () =>
              p.page.evaluate(() =>
                document.documentElement.scrollWidth <= document.documentElement.clientWidth
              );
            await p.page.goto(fx.server.url + sessionPath(CLAUDE));
            await p.page.locator("h1.session-title", { hasText: "Release notes" }).waitFor();
            assert.equal(await noOverflow(), true, "no horizontal scrolling");
            await screenshot(p.page, `marks_390_${theme}_session`);
            await p.page.locator(".marks .rename-open").click();
            await p.page.getByLabel("Session name").waitFor();
            assert.equal(await noOverflow(), true);
            await screenshot(p.page, `marks_390_${theme}_rename`);
            await p.page.getByLabel("Session name").press("Escape");
            await p.page.goto(fx.server.url + "?starred=1");
            await p.page.locator(".list-count", { hasText: "1 starred session" }).waitFor();
            assert.equal(await noOverflow(), true);
            await screenshot(p.page, `marks_390_${theme}_list`);
            assert.deepEqual(await seriousAxeViolations(p.page), []);
            assert.deepEqual(p.problems, []);
          } finally {
            await p.close();
          }
        },
      );
    }
    await fx.close();
  },
});
