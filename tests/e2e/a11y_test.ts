/**
 * Accessibility and looks, page by page: axe-core (injected into the page) finds no serious or
 * critical violation on the session list, a session, a sub-agent's thread, the search palette, the
 * shortcuts overlay, replay, analytics, security and the "no such page", in light and dark, at a
 * desktop's and a phone's width; and every page is photographed at 1440, 1280 and 390 px in both
 * themes into tests/e2e/screenshots/ (look at them).
 */
import assert from "node:assert/strict";
import { loadAxeSource, type Page } from "../_helpers/test_deps.ts";
import { createReplayService } from "../../server/replay_service.ts";
import { createSecurityService } from "../../server/security_service.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const axeSource = await loadAxeSource();

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Serious and critical axe-core violations on the page as it is now. */
async function axe(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) {
    // Evaluated through the debugging protocol, which the page's CSP (script-src 'self') allows.
    await page.evaluate(axeSource);
  }
  const found = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const r = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations as Violation[];
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical");
}

const describe = (where: string, vs: Violation[]) =>
  vs.map((v) =>
    `${where}: ${v.id} (${v.impact}) ${v.help}\n` +
    v.nodes.slice(0, 4).map((n) => `    ${n.target.join(" ")}: ${n.failureSummary ?? ""}`)
      .join("\n")
  );

Deno.test({
  name: "every page has no serious axe-core violation in either theme, and is photographed",
  ...opts,
  fn: async (t) => {
    const data = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-e2e-a11y-" }));
    const fx = await serveFixtures({
      scenarios: [
        "claude/s1-basic",
        "claude/s2-errors",
        "claude/s4-long",
        "claude/s6-subagent",
        "codex/s1-basic",
        "gemini/s1-basic",
        "opencode/s2-errors",
      ],
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
      replay: (store) => createReplayService(store, { dataDir: data, env: Deno.env.toObject() }),
    });
    const sessions = fx.store.listSessions({ limit: 100 }).items;
    const withSub = sessions.find((s) =>
      fx.store.connections(s.id).some((c) => c.kind === "subagent" && c.parent_op)
    )!;
    const sub = fx.store.connections(withSub.id).find((c) => c.kind === "subagent")!;
    const subStep = fx.store.timeline(withSub.id, { connection: sub.id, limit: 2 }).items[1];
    const errors = sessions.find((s) => s.error_count > 0)!;
    const at = (path: string) => new URL(path, fx.server.url).href;

    /** Each page: how to reach it from a fresh load, and what shows it is ready. */
    const pages: { name: string; go: (page: Page) => Promise<void> }[] = [
      {
        name: "list",
        go: async (page) => {
          await page.goto(at("/"));
          await page.waitForSelector(".sessions li");
        },
      },
      {
        name: "session",
        go: async (page) => {
          await page.goto(at(`/sessions/${encodeURIComponent(errors.id)}`));
          await page.waitForSelector(".op.is-error");
          await page.locator(".stat-cards").waitFor();
        },
      },
      {
        name: "subagent",
        go: async (page) => {
          await page.goto(at(`/sessions/${encodeURIComponent(withSub.id)}?op=${subStep.op_id}`));
          await page.locator(".subagent .op.is-focused").waitFor();
          await page.locator(".inspector .facts-list").waitFor();
        },
      },
      {
        name: "search",
        go: async (page) => {
          await page.goto(at("/"));
          await page.waitForSelector(".sessions li");
          await page.keyboard.press("Control+k");
          await page.locator(".palette-input").fill("README");
          await page.locator(".hits li mark").first().waitFor();
        },
      },
      {
        name: "shortcuts",
        go: async (page) => {
          await page.goto(at("/"));
          await page.waitForSelector(".sessions li");
          await page.keyboard.press("?");
          await page.locator(".shortcuts").waitFor();
        },
      },
      {
        name: "replay",
        go: async (page) => {
          await page.goto(at(`/sessions/${encodeURIComponent(sessions.at(-1)!.id)}`));
          await page.waitForSelector(".op-reply");
          await page.getByRole("button", { name: "Replay", exact: true }).click();
          await page.getByRole("button", { name: "Start replay" }).waitFor();
        },
      },
      {
        name: "analytics",
        go: async (page) => {
          await page.goto(at("/analytics"));
          await page.waitForSelector(".chart");
        },
      },
      {
        name: "security",
        go: async (page) => {
          await page.goto(at("/security"));
          await page.getByRole("button", { name: "Run check" }).click();
          await page.locator(".check-report").waitFor();
        },
      },
      {
        name: "not_found",
        go: async (page) => {
          await page.goto(at("/no/such/page"));
          await page.locator("h1", { hasText: "No such page" }).waitFor();
        },
      },
    ];

    const found: string[] = [];
    try {
      for (const dark of [false, true]) {
        for (const width of [1440, 1280, 390]) {
          const theme = dark ? "dark" : "light";
          await t.step(`${theme} at ${width} px`, async () => {
            const b = await openBrowser({ fixture: fx, width, height: 900, dark });
            try {
              for (const p of pages) {
                await p.go(b.page);
                await b.page.waitForTimeout(150); // let fonts and late rows settle
                await screenshot(b.page, `a11y_${p.name}_${theme}_${width}`);
                if (width !== 1280) {
                  found.push(...describe(`${p.name} ${theme} ${width}`, await axe(b.page)));
                }
              }
              assert.deepEqual(b.problems, []);
            } finally {
              await b.close();
            }
          });
        }
      }
      assert.deepEqual(found, [], `serious or critical violations:\n${found.join("\n")}`);
    } finally {
      await fx.close();
    }
  },
});
