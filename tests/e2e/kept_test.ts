/**
 * Steps the agent's log no longer holds (it was rewritten shorter, or deleted) stay in the
 * store, and the UI says so: a note above the session, "kept" on each such step, the count in
 * the list. Light and dark, at 1440 and 390 px.
 */
import assert from "node:assert/strict";
import { importAll } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { realClients } from "../unit/server/_helpers.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

Deno.test({
  name: "a session whose log was rewritten shorter shows its kept steps",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "chronicle-e2e-kept-" });
    await new Deno.Command("cp", {
      args: ["-R", `${realClients()}/claude/s4-long/native/.`, home],
    }).output();
    const dir = `${home}/.claude/projects/-home-dev-projects-s4-long`;
    const log = [...Deno.readDirSync(dir)].find((e) => e.name.endsWith(".jsonl"))!.name;
    const fx = await serveFixtures({ scenarios: [], homes: [home] });
    try {
      const lines = (await Deno.readTextFile(`${dir}/${log}`)).split("\n").filter(Boolean);
      await Deno.writeTextFile(`${dir}/${log}`, lines.slice(0, 20).join("\n") + "\n");
      await importAll(fx.store, {
        env: { home, env: { HOME: home }, platform: "linux" },
        fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
      });
      const s = fx.store.listSessions().items[0];
      assert.ok(s.kept_count > 0 && s.kept_count < s.op_count, JSON.stringify(s));
      for (const [width, dark] of [[1440, false], [390, true], [390, false]] as const) {
        const b = await openBrowser({ fixture: fx, width, height: 900, dark });
        try {
          await b.page.goto(`${fx.server.url}sessions/${encodeURIComponent(s.id)}`);
          const note = b.page.locator(".kept-note");
          await note.waitFor();
          assert.match(
            (await note.textContent()) ?? "",
            new RegExp(`${s.kept_count} of ${s.op_count} steps are no longer in the agent's log`),
          );
          await b.page.locator(".badge-kept").first().waitFor();
          const listed = await b.page.locator("li.is-selected .s-bottom").textContent();
          assert.match(listed ?? "", new RegExp(`${s.kept_count} kept`));
          await screenshot(b.page, `kept-${width}-${dark ? "dark" : "light"}`);
        } finally {
          await b.close();
        }
      }
    } finally {
      await fx.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});
