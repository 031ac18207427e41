/**
 * Accessibility and looks, page by page: axe-core (injected into the page) finds no serious or
 * critical violation on the session list, a session, a sub-agent's thread, the search palette, the
 * shortcuts overlay, replay, analytics, security and the "no such page", in light and dark, at a
 * desktop's and a phone's width; and every page is photographed at 1440, 1280 and 390 px in both
 * themes into tests/e2e/screenshots/ (look at them), with no pane wider than the screen.
 */
import assert from "node:assert/strict";
import { loadAxeSource, type Page } from "../_helpers/test_deps.ts";
import { createReplayService } from "../../server/replay_service.ts";
import { createSecurityService } from "../../server/security_service.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

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

/**
 * The page's panes that scroll sideways: a pane that scrolls up and down (the document, the
 * list, a page's main area) must fit its width, so nothing on it is cut at the right edge at a
 * phone's width (analytics' two-column cards once were). What is meant to scroll sideways (a
 * wide table, the activity grid, a diff's code lines, which keep their width) does so in a box
 * of its own.
 */
async function sidewaysPanes(page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const out: string[] = [];
    for (const e of [document.documentElement, ...document.querySelectorAll("body *")]) {
      const y = getComputedStyle(e).overflowY;
      const pane = e === document.documentElement ||
        ((y === "auto" || y === "scroll") && !e.closest(".diff-scroll, .table-scroll"));
      if (pane && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
        const name = `${e.tagName.toLowerCase()}${e.className ? "." + String(e.className) : ""}`;
        out.push(`${name} is ${e.scrollWidth} px wide in ${e.clientWidth} px`);
      }
    }
    return out;
  });
}

/**
 * Controls under another control of the same layer: a button or link another one covers at some
 * point of its box (Forget… once sat over the inspector's Close). A pane laid over the page (a
 * fixed one, a dialog) hides what is under it whole, which is not an overlap; a control within
 * another (a link in a button's label) is one control.
 */
async function coveredControls(page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const CONTROL = "button, a[href], input, select, textarea, summary, [role=button]";
    const name = (e: Element) =>
      `${e.tagName.toLowerCase()} "${
        (e.getAttribute("aria-label") ?? e.textContent ?? "").trim().slice(0, 30)
      }"`;
    /** The overlay an element is drawn in: its nearest fixed ancestor or open dialog. */
    const layer = (e: Element | null): Element | null => {
      for (; e; e = e.parentElement) {
        if (e.tagName === "DIALOG" || getComputedStyle(e).position === "fixed") return e;
      }
      return null;
    };
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    for (const e of document.querySelectorAll(CONTROL)) {
      // the part of its box its scrolling panes show (the rest is scrolled out of sight)
      const b = e.getBoundingClientRect();
      const r = { left: b.left, top: b.top, right: b.right, bottom: b.bottom };
      for (let a = e.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflow === "visible") continue;
        const c = a.getBoundingClientRect();
        r.left = Math.max(r.left, c.left);
        r.top = Math.max(r.top, c.top);
        r.right = Math.min(r.right, c.right);
        r.bottom = Math.min(r.bottom, c.bottom);
      }
      const width = r.right - r.left;
      const height = r.bottom - r.top;
      if (width < 6 || height < 6) continue;
      const over = new Set<Element>();
      for (const fx of [0.1, 0.3, 0.5, 0.7, 0.9]) {
        for (const fy of [0.2, 0.5, 0.8]) {
          const x = r.left + fx * width;
          const y = r.top + fy * height;
          if (x < 0 || y < 0 || x >= vw || y >= vh) continue;
          const other = document.elementFromPoint(x, y)?.closest(CONTROL);
          if (other && !other.contains(e) && !e.contains(other)) over.add(other);
        }
      }
      for (const o of over) {
        if (layer(o) === layer(e)) out.push(`${name(e)} is under ${name(o)}`);
      }
    }
    return out;
  });
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
    const data = await Deno.realPath(await moduleTempDir("chronicle-e2e-a11y-"));
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
                for (const cut of await sidewaysPanes(b.page)) {
                  found.push(`${p.name} ${theme} ${width}: ${cut}`);
                }
                for (const under of await coveredControls(b.page)) {
                  found.push(`${p.name} ${theme} ${width}: ${under}`);
                }
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
      assert.deepEqual(
        found,
        [],
        `serious or critical violations, panes cut, controls covered:\n${found.join("\n")}`,
      );
    } finally {
      await fx.close();
    }
  },
});
