/**
 * An empty store explains itself: each agent's row says where Chronicle looked (and whether each
 * folder is there), how many logs it found, and how to point Chronicle elsewhere; from
 * `GET /api/doctor` over a scratch HOME, on a laptop and at 390 px.
 */
import assert from "node:assert/strict";
import { buildDoctorReport } from "../../core/doctor/mod.ts";
import { doctorProbes } from "../../cli/doctor.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

Deno.test({
  name: "an empty store says where it looked for each agent and how to look elsewhere",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const home = await moduleTempDir("chronicle-e2e-empty-");
    await Deno.mkdir(`${home}/.codex/sessions`, { recursive: true });
    const env = { HOME: home, CHRONICLE_HOME: `${home}/.chronicle` };
    const io = {
      stdout: () => {},
      stderr: () => {},
      stdin: () => Promise.resolve(new Uint8Array()),
      env,
      cwd: home,
      isTerminal: false,
    };
    const fx = await serveFixtures({
      scenarios: [],
      homes: [home],
      doctor: ({ verifyPacks }) => buildDoctorReport(doctorProbes(io, { verifyPacks })),
    });
    try {
      for (const width of [1440, 390]) {
        const b = await openBrowser({ fixture: fx, width, height: 900 });
        const { page } = b;
        try {
          await page.goto(fx.server.url);
          await page.locator("h1", { hasText: "No sessions yet" }).waitFor();
          const table = page.locator(".agent-roots");
          await table.waitFor();
          const codex = table.locator('tr[data-agent="codex"]');
          assert.match((await codex.textContent()) ?? "", /\.codex\/sessions\s*exists/);
          assert.match((await codex.textContent()) ?? "", /0 logs/);
          const claude = table.locator('tr[data-agent="claude-code"]');
          assert.match((await claude.textContent()) ?? "", /\.claude\/projects\s*not there/);
          assert.ok(await table.locator("tbody tr").count() >= 5, "every agent has a row");
          const how = (await page.locator(".empty-store").textContent()) ?? "";
          assert.match(how, /CODEX_HOME/);
          assert.match(how, /chronicle import/);
          assert.ok(await page.locator(".empty-store h1").isVisible());
          await screenshot(page, `empty_store_${width}`);
          assert.deepEqual(b.problems, []);
        } finally {
          await b.close();
        }
      }
    } finally {
      await fx.close();
    }
  },
});
