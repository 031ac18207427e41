/**
 * The archive in the browser: "Forget…" on a session asks first (what would go, Cancel focused,
 * Escape closes), then forgets it and goes back to the list without it; the Archive page edits
 * the exclude list from the keyboard (written to the data folder's file) and lists what was
 * forgotten. Photographed at 1440 and 390 px, light and dark, with no serious axe violation.
 */
import assert from "node:assert/strict";
import { loadAxeSource, type Page } from "../_helpers/test_deps.ts";
import { serveArchive } from "../../cli/serve_archive.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

const axeSource = await loadAxeSource();

async function seriousAxe(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const r = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    return (r.violations as { id: string; impact: string; help: string }[]).map((v) =>
      `${v.id} (${v.impact}) ${v.help}`
    );
  });
  return found.filter((v) => / \((serious|critical)\) /.test(v));
}

Deno.test({
  name: "a session is forgotten after a confirm step; the Archive page edits the exclude list",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const data = await Deno.makeTempDir({ prefix: "chronicle-e2e-archive-" });
    const fx = await serveFixtures({
      scenarios: ["claude/s1-basic", "claude/s2-errors", "codex/s1-basic"],
      archive: (store, events) => serveArchive({ dir: data, store, importer: null, events }),
    });
    const victim = fx.store.listSessions({}).items.find((s) => s.source === "claude-code")!;
    try {
      const b = await openBrowser({ fixture: fx, width: 1440, height: 900 });
      const { page } = b;
      try {
        await page.goto(`${fx.server.url}sessions/${encodeURIComponent(victim.id)}`);
        await page.locator(".session-title").waitFor();
        await page.getByRole("button", { name: "Forget…" }).click();
        const dialog = page.getByRole("alertdialog", { name: "Forget this session?" });
        await dialog.waitFor();
        await dialog.getByText(/its \d+ steps, .* of tool inputs and outputs/).waitFor();
        assert.equal(
          await page.evaluate(() => document.activeElement?.textContent?.trim()),
          "Cancel",
          "Cancel has the focus",
        );
        assert.deepEqual(await seriousAxe(page), []);
        await screenshot(page, "forget_dialog_1440");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
        assert.ok(fx.store.getSession(victim.id), "Escape forgets nothing");

        await page.getByRole("button", { name: "Forget…" }).click();
        await dialog.getByRole("button", { name: "Forget session" }).click();
        await page.waitForURL((u) => !u.pathname.startsWith("/sessions/"));
        assert.equal(fx.store.getSession(victim.id), null);
        // the list hears of it (the server's "import" event) and shows the two left
        await page.waitForFunction(() => document.querySelectorAll("ul.sessions li").length === 2);
        assert.equal(await page.locator(`ul.sessions li[data-id="${victim.id}"]`).count(), 0);

        // the Archive page: exclude a project from the keyboard, then stop excluding it
        await page.getByRole("link", { name: "Archive" }).click();
        await page.getByRole("heading", { name: "Archive", level: 1 }).waitFor();
        await page.locator(".forgotten-list li", { hasText: victim.id }).waitFor();
        const input = page.getByLabel("Project folder to exclude");
        await input.fill("/home/dev/projects/secret");
        await input.press("Enter");
        await page.getByText("/home/dev/projects/secret", { exact: true }).waitFor();
        const file = JSON.parse(await Deno.readTextFile(`${data}/exclude.json`));
        assert.deepEqual(file, {
          version: 1,
          paths: [],
          projects: ["/home/dev/projects/secret"],
        });
        // a bad glob: one line, the list unchanged
        const glob = page.getByLabel("Log files to exclude (glob)");
        await glob.fill("logs/*");
        await glob.press("Enter");
        await page.getByRole("alert").filter({ hasText: "must start with /, ~/ or **/" })
          .waitFor();
        await glob.fill("~/.claude/projects/-tmp-*");
        await glob.press("Enter");
        await page.getByText("~/.claude/projects/-tmp-*", { exact: true }).waitFor();
        assert.deepEqual(await seriousAxe(page), []);
        await screenshot(page, "archive_1440");
        await page.getByRole("button", { name: "Remove /home/dev/projects/secret" })
          .click();
        await page.getByText("/home/dev/projects/secret", { exact: true }).waitFor({
          state: "detached",
        });
        assert.deepEqual(
          JSON.parse(await Deno.readTextFile(`${data}/exclude.json`)).projects,
          [],
        );
        assert.deepEqual(b.problems.filter((p) => !p.includes("400")), []);
      } finally {
        await b.close();
      }
      // a phone, light and dark
      for (const dark of [false, true]) {
        const small = await openBrowser({ fixture: fx, width: 390, height: 844, dark });
        try {
          const p = small.page;
          await p.goto(`${fx.server.url}archive`);
          await p.getByRole("heading", { name: "Forgotten sessions" }).waitFor();
          const wide = await p.evaluate(() =>
            document.documentElement.scrollWidth > document.documentElement.clientWidth
          );
          assert.equal(wide, false, "no sideways scrolling at 390 px");
          assert.deepEqual(await seriousAxe(p), []);
          await screenshot(p, `archive_390_${dark ? "dark" : "light"}`);
          const other = fx.store.listSessions({}).items[0];
          await p.goto(`${fx.server.url}sessions/${encodeURIComponent(other.id)}`);
          await p.getByRole("button", { name: "Forget…" }).click();
          await p.getByRole("alertdialog").getByText(/of tool inputs and outputs/).waitFor();
          assert.deepEqual(await seriousAxe(p), []);
          await screenshot(p, `forget_dialog_390_${dark ? "dark" : "light"}`);
          await p.getByRole("button", { name: "Cancel" }).click();
          assert.ok(fx.store.getSession(other.id));
        } finally {
          await small.close();
        }
      }
    } finally {
      await fx.close();
      await Deno.remove(data, { recursive: true });
    }
  },
});
