/**
 * Replay mode in headless Chromium on a real-client session: start a replay, preview a step's
 * diff, step, auto-play at 5x, the timeline's marks, the sandbox's files and its folder path.
 */
import assert from "node:assert/strict";
import { createReplayService } from "../../server/replay_service.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "replay mode previews, steps, auto-plays, marks the timeline and lists the sandbox's files",
  ...opts,
  fn: async () => {
    const data = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-e2e-replay-" }));
    let service: ReturnType<typeof createReplayService> | null = null;
    const fx = await serveFixtures({
      scenarios: ["claude/s1-basic"],
      replay: (
        store,
      ) => (service = createReplayService(store, { dataDir: data, env: Deno.env.toObject() })),
    });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    try {
      const id = fx.store.listSessions().items[0].id;
      await page.goto(`${fx.server.url}sessions/${encodeURIComponent(id)}`);
      await page.waitForSelector(".op-reply");
      await page.getByRole("button", { name: "Replay", exact: true }).click();
      await page.getByRole("button", { name: "Start replay" }).click();
      const panel = page.getByTestId("replay-panel");
      await panel.waitFor();
      const sandbox = (await page.getByTestId("replay-sandbox").textContent())!;
      assert.ok(sandbox.startsWith(`${data}/replay/`), sandbox);
      assert.equal(await page.locator(".replay-step").count(), 3);
      // The first step is selected: its preview diff shows the file it would create.
      await page.locator(".replay-detail .dl-add", { hasText: "wirte docs" }).waitFor();
      // and the reasoning before it, read from the store with the preview
      await page.locator(".replay-detail summary", { hasText: "Reasoning before this step" })
        .click();
      const reasoning = await page.locator(".replay-detail .replay-reasoning").allTextContents();
      assert.ok(reasoning.length > 0 && reasoning.every((r) => /^(reply|thinking): \S/.test(r)));
      await screenshot(page, "20_replay_preview");

      await page.getByRole("button", { name: "Step", exact: true }).click();
      await page.locator('.replay-step[data-seq="2"] .replay-badge', { hasText: "applied" })
        .waitFor();
      await page.locator(".replay-mark.replay-applied").first().waitFor();

      await page.getByRole("button", { name: "5x" }).click();
      await page.getByRole("button", { name: "Play" }).click();
      await page.locator('.replay-step[data-seq="5"] .replay-badge', { hasText: "skipped" })
        .waitFor();
      assert.equal(
        await page.locator('.replay-step[data-seq="4"] .replay-badge').textContent(),
        "applied",
      );

      await page.locator("details summary", { hasText: "Sandbox files" }).click();
      await page.getByRole("button", { name: "notes.md" }).click();
      await page.locator(".replay-output", { hasText: "- [ ] write docs" }).waitFor();
      await screenshot(page, "21_replay_done");
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      (service as ReturnType<typeof createReplayService> | null)?.close();
      await fx.close();
      await Deno.remove(data, { recursive: true });
    }
  },
});
