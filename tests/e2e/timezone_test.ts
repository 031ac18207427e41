/**
 * Times in the browser's own zone: a session that started at 00:21 UTC is on the previous day in
 * Los Angeles and later the same day in Tokyo, in the list, the overview, the inspector and the
 * date filter; each time's tooltip names the zone.
 */
import assert from "node:assert/strict";
import { openBrowser, serveFixtures } from "./_harness.ts";
import { writeClaudeSession } from "./_synthetic.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

const SESSION = "00210000-2222-4333-8444-555555555555";
const home = await moduleTempDir("chronicle-e2e-tz-");
await writeClaudeSession(home, {
  sessionId: SESSION,
  cwd: "/tmp/tz",
  start: Date.parse("2026-01-05T00:21:00Z"),
  turns: [{ user: "What time is it?", assistant: "Just past midnight, UTC." }],
});
const id = `claude-code:${SESSION}`;

const ZONES = [
  { zone: "UTC", day: "2026-01-05", time: "2026-01-05 00:21:00", offset: "UTC+00:00" },
  {
    zone: "America/Los_Angeles",
    day: "2026-01-04",
    time: "2026-01-04 16:21:00",
    offset: "UTC−08:00",
  },
  { zone: "Asia/Tokyo", day: "2026-01-05", time: "2026-01-05 09:21:00", offset: "UTC+09:00" },
  { zone: "Asia/Kolkata", day: "2026-01-05", time: "2026-01-05 05:51:00", offset: "UTC+05:30" },
];

Deno.test({
  name: "dates and times are the browser's local ones, with the zone in the tooltip",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: [], homes: [home] });
    try {
      for (const z of ZONES) {
        await t.step(`in ${z.zone}`, async () => {
          const b = await openBrowser({ fixture: fx, timezoneId: z.zone });
          const { page } = b;
          try {
            await page.goto(fx.server.url);
            const listed = page.locator(`.sessions li[data-id="${id}"] time`);
            await listed.waitFor();
            assert.equal(await listed.textContent(), z.day);
            const title = (await listed.getAttribute("title")) ?? "";
            // Chromium may name a zone by an older alias (Asia/Calcutta): the offset decides.
            assert.ok(title.startsWith(`${z.time} `), title);
            assert.ok(title.includes(`(${z.offset})`), title);
            if (z.zone !== "Asia/Kolkata") assert.ok(title.includes(z.zone), title);
            assert.ok(title.includes("2026-01-05 00:21:00 UTC"), title);

            await page.locator(`.sessions li[data-id="${id}"] a`).click();
            const started = page.locator(".overview .facts time");
            await started.waitFor();
            assert.equal(await started.textContent(), z.time);

            await page.locator(".op-prompt").first().click({ position: { x: 5, y: 5 } });
            const stepTime = page.locator(".inspector dd time");
            await stepTime.waitFor();
            assert.equal(await stepTime.textContent(), z.time);

            // The date filter is a local day: the session is on z.day and no other.
            const other = z.day === "2026-01-05" ? "2026-01-04" : "2026-01-05";
            for (const [day, n] of [[z.day, 1], [other, 0]] as const) {
              await page.getByLabel("From date").fill(day);
              await page.getByLabel("To date").fill(day);
              await page.locator(".list-count", { hasText: `${n} session` }).waitFor();
            }
            assert.deepEqual(b.problems, []);
          } finally {
            await b.close();
          }
        });
      }
    } finally {
      await fx.close();
    }
  },
});
