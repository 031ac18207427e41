/**
 * How steps read in headless Chromium: a failed call reads as failed at a glance with its
 * reason shown, diffs keep their line numbers on one line and scroll long lines (or wrap them
 * by a toggle). Screenshots in both themes and at a phone's width go to tests/e2e/screenshots/.
 */
import assert from "node:assert/strict";
import type { Page } from "../_helpers/test_deps.ts";
import { createSecurityService } from "../../server/security_service.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { type SyntheticTurn, writeClaudeSession } from "./_synthetic.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";
import { MAX_LINE_BYTES } from "../../core/sources/jsonl.ts";
import { KEEP_TEXT_BYTES } from "../../core/sources/json_cut.ts";
import { bytes as bytesText } from "../../ui/src/format.ts";

export const RENDER_SESSION = "44444444-5555-4666-8777-888888888888";

const LONG_LINE = "const message = " + JSON.stringify("a long line ".repeat(40)) + ";";

function renderTurns(): SyntheticTurn[] {
  return [
    { user: "Fix the greeting in src/app.ts", assistant: "Looking at it." },
    {
      tool: {
        name: "Edit",
        input: {
          file_path: "/tmp/render/src/app.ts",
          old_string: "console.log('helo');",
          new_string: "console.log('hello');",
        },
        result:
          "<tool_use_error>String to replace not found in file.\nString: console.log('helo');</tool_use_error>",
        is_error: true,
      },
    },
    {
      tool: {
        name: "Bash",
        input: { command: "deno test" },
        result: 'error: Module not found "file:///tmp/render/main_test.ts".\nExit code: 1',
        is_error: true,
      },
    },
    {
      tool: {
        name: "Edit",
        input: {
          file_path: "/tmp/render/src/app.ts",
          old_string: "export function greet() {\n  return 1;\n}",
          new_string: `export function greet() {\n  ${LONG_LINE}\n  return message;\n}`,
        },
        result: "The file /tmp/render/src/app.ts has been updated.",
      },
    },
    {
      tool: {
        name: "Read",
        input: { file_path: "/tmp/render/src/app.ts" },
        result: "1\texport function greet() {\n2\t  return message; // done\n3\t}\n",
      },
    },
    {
      assistant: "Done. The function now reads:\n\n```ts\nexport const n: number = 42;\n```",
    },
    {
      tool: {
        name: "Write",
        input: {
          file_path: "/tmp/render/page.html",
          content: `<script>window.__pwned=1</script>\n<img src=x onerror="window.__pwned=2">\n`,
        },
        result: "File created successfully",
      },
    },
    {
      tool: {
        name: "TodoWrite",
        input: {
          todos: [
            { content: "Fix the greeting", status: "completed", activeForm: "Fixing" },
            { content: "Run the tests", status: "in_progress", activeForm: "Running" },
            { content: "Write the changelog", status: "pending", activeForm: "Writing" },
          ],
        },
        result: "Todos have been modified successfully.",
      },
    },
    {
      tool: {
        name: "ExitPlanMode",
        input: { plan: "## Plan\n\n1. Fix `greet`\n2. Add a test" },
        result: "User has approved your plan.",
      },
    },
    {
      tool: {
        name: "Grep",
        input: { pattern: "greet", output_mode: "content", "-n": true },
        result:
          "src/app.ts:1:export function greet() {\nsrc/main.ts:4:greet();\nsrc/main.ts:9:  greet(); // again",
      },
    },
    {
      tool: {
        name: "WebFetch",
        input: { url: "https://example.com/docs", prompt: "What does it say?" },
        result: "The page says **hello** and links to [more](https://example.com/more).",
      },
    },
    {
      tool: {
        name: "Bash",
        input: { command: "seq 1 60 | sed 's/^/row /'" },
        result: Array.from({ length: 60 }, (_, i) => `row ${i + 1}`).join("\n"),
      },
    },
  ];
}

const opts = { sanitizeOps: false, sanitizeResources: false };

const home = await moduleTempDir("chronicle-e2e-render-");
await writeClaudeSession(home, {
  sessionId: RENDER_SESSION,
  cwd: "/tmp/render",
  turns: renderTurns(),
});

async function openSession(page: Page, url: string): Promise<void> {
  const id = `claude-code:${RENDER_SESSION}`;
  await page.goto(`${url}sessions/${encodeURIComponent(id)}`);
  await page.waitForSelector(".op-edit");
}

Deno.test({
  name: "failed calls read as failed and diffs keep line numbers on one line",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: [], homes: [home] });
    const b = await openBrowser({ fixture: fx, width: 1280, height: 900 });
    const { page } = b;
    try {
      await openSession(page, fx.server.url);

      await t.step("a failed edit shows Failed and its reason, not an applied diff", async () => {
        const failed = page.locator(".op-edit.is-error");
        assert.equal(await failed.count(), 1);
        assert.equal(await failed.locator(".badge-failed").isVisible(), true);
        const reason = failed.locator(".fail-reason");
        assert.equal(await reason.isVisible(), true, "the reason is shown without a click");
        assert.match((await reason.textContent()) ?? "", /String to replace not found in file/);
        assert.doesNotMatch((await reason.textContent()) ?? "", /tool_use_error/);
        // Its diff is the attempted change, folded and labelled as not applied.
        assert.equal(await failed.locator(".diff").isVisible(), false);
        assert.match(
          (await failed.locator(".attempted > summary").textContent()) ?? "",
          /not applied/,
        );
        await failed.locator(".attempted > summary").click();
        assert.match((await failed.locator(".diff-head").textContent()) ?? "", /not applied/);
      });

      await t.step("a failed command shows its reason too", async () => {
        const failed = page.locator(".op-exec.is-error");
        assert.equal(await failed.locator(".badge-failed").isVisible(), true);
        assert.match(
          (await failed.locator(".fail-reason").textContent()) ?? "",
          /Module not found/,
        );
      });

      await t.step(
        "the applied edit's long line scrolls; its line numbers stay on one line",
        async () => {
          const ok = page.locator(".op-edit:not(.is-error)");
          const diff = ok.locator(".diff");
          assert.equal(await diff.isVisible(), true);
          const lay = await diff.evaluate((el) => {
            const scroll = el.querySelector(".diff-scroll") as HTMLElement;
            const lns = [...el.querySelectorAll("td.ln")] as HTMLElement[];
            const line = parseFloat(getComputedStyle(lns[0]).lineHeight);
            return {
              overflows: scroll.scrollWidth > scroll.clientWidth,
              tallestLn: Math.max(...lns.map((c) => c.getBoundingClientRect().height)),
              line,
            };
          });
          assert.equal(lay.overflows, true, "the long line scrolls sideways");
          assert.ok(
            lay.tallestLn < lay.line * 1.5,
            `a line number cell is one line (${lay.tallestLn}px)`,
          );
          await screenshot(page, "r01_failed_and_diff_light");

          await diff.locator("button", { hasText: "Wrap" }).click();
          const wrapped = await diff.evaluate((el) => {
            const scroll = el.querySelector(".diff-scroll") as HTMLElement;
            return scroll.scrollWidth > scroll.clientWidth;
          });
          assert.equal(wrapped, false, "wrapped lines fit");
          assert.equal(
            await diff.locator("button", { hasText: "Wrap" }).getAttribute("aria-pressed"),
            "true",
          );
          await diff.locator("button", { hasText: "Wrap" }).click();
        },
      );

      await t.step("dark theme and a phone's width", async () => {
        await page.emulateMedia({ colorScheme: "dark" });
        await screenshot(page, "r01_failed_and_diff_dark");
        await page.setViewportSize({ width: 390, height: 844 });
        await openSession(page, fx.server.url);
        await page.locator(".op-edit.is-error").scrollIntoViewIfNeeded();
        await screenshot(page, "r01_failed_and_diff_dark_390");
        await page.emulateMedia({ colorScheme: "light" });
        await screenshot(page, "r01_failed_and_diff_light_390");
        const ln = await page.locator(".op-edit:not(.is-error) td.ln").first().evaluate((c) =>
          c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight)
        );
        assert.ok(ln < 1.5, "line numbers stay on one line at 390 px");
        // a write's path beside "+8 −0 · new content" and the toggle was broken every few
        // letters; it takes a line of its own above them
        const path = await page.locator(".op-write .diff-path").first().evaluate((c) =>
          c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight)
        );
        assert.ok(path < 1.5, `a diff's path stays on one line at 390 px (${path} lines)`);
      });

      await t.step(
        "code is highlighted in diffs, reads and code blocks, and stays text",
        async () => {
          await page.setViewportSize({ width: 1280, height: 900 });
          await openSession(page, fx.server.url);
          const ok = page.locator(".op-edit:not(.is-error) .diff");
          assert.ok(await ok.locator(".hljs-keyword").count() > 0, "the diff is highlighted");
          const read = page.locator(".op-read");
          await read.locator("details.tool-body > summary").click();
          const table = read.locator(".code-lines");
          assert.deepEqual(await table.locator("td.ln").allTextContents(), ["1", "2", "3"]);
          assert.ok(await table.locator(".hljs-comment").count() === 1, "the read is highlighted");
          const fence = page.locator(".op-reply pre.code").last();
          assert.ok(await fence.locator(".hljs-type, .hljs-keyword").count() > 0);
          const html = page.locator(".op-write .diff");
          assert.ok(await html.locator(".hljs-tag").count() > 0, "the HTML write is highlighted");
          const tags = await page.locator(".hl *").evaluateAll((els) => [
            ...new Set(els.map((e) => e.tagName)),
          ]);
          assert.ok(
            tags.every((x) => ["SPAN", "TABLE", "TBODY", "TR", "TD", "CODE"].includes(x)),
            `${tags}`,
          );
          assert.equal(await page.locator(".session-pane img, .session-pane script").count(), 0);
          assert.equal(
            await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
            undefined,
          );
          assert.match((await html.textContent()) ?? "", /<script>window.__pwned=1<\/script>/);
          await read.scrollIntoViewIfNeeded();
          await screenshot(page, "r02_highlight_light");
          await page.emulateMedia({ colorScheme: "dark" });
          await screenshot(page, "r02_highlight_dark");
          await page.emulateMedia({ colorScheme: "light" });
        },
      );

      await t.step(
        "to-do lists, plans, search hits and web fetches are drawn for what they are",
        async () => {
          const todo = page.locator(".op-plan .todos");
          assert.match((await todo.locator(".tool-view-head").textContent()) ?? "", /1 of 3 done/);
          assert.deepEqual(
            await todo.locator("li").evaluateAll((els) => els.map((e) => e.className)),
            ["todo todo-completed", "todo todo-in_progress", "todo todo-pending"],
          );
          assert.match(
            (await todo.locator("li").nth(1).textContent()) ?? "",
            /in progress:.*Run the tests/,
          );
          const plan = page.locator(".op-plan .tool-view.plan");
          assert.equal(await plan.locator("h2", { hasText: "Plan" }).count(), 1);
          const hits = page.locator(".op-search .search-hits");
          assert.match(
            (await hits.locator(".tool-view-head").textContent()) ?? "",
            /3 matches in 2 files/,
          );
          assert.deepEqual(
            await hits.locator(".hit-file").first().locator("td.ln").allTextContents(),
            ["1"],
          );
          assert.equal(
            await hits.locator(".hit-file code.path").nth(1).textContent(),
            "src/main.ts",
          );
          const web = page.locator(".op-web .tool-view.web");
          assert.equal(await web.locator('a[href="https://example.com/docs"]').count(), 1);
          assert.equal(await web.locator(".web-answer strong").textContent(), "hello");
          await todo.scrollIntoViewIfNeeded();
          await screenshot(page, "r07_tool_views_light");
          await page.emulateMedia({ colorScheme: "dark" });
          await page.setViewportSize({ width: 390, height: 844 });
          await todo.scrollIntoViewIfNeeded();
          await screenshot(page, "r07_tool_views_dark_390");
          await page.emulateMedia({ colorScheme: "light" });
          await page.setViewportSize({ width: 1280, height: 900 });
        },
      );

      await t.step("a large output can be searched, wrapped and copied", async () => {
        const run = page.locator(".op-exec:not(.is-error)");
        await run.locator("details.tool-body > summary").click();
        const find = run.locator("input.find");
        await find.fill("row 1");
        // row 1, row 10..19
        assert.equal(await run.locator(".code-lines tr").count(), 11);
        assert.match((await run.locator(".payload-tools").textContent()) ?? "", /11 of 60 lines/);
        assert.equal(await run.locator(".code-lines mark").first().textContent(), "row 1");
        await run.scrollIntoViewIfNeeded();
        await screenshot(page, "r03_find_in_output");
        await find.fill("");
        assert.equal(await run.locator(".code-lines tr").count(), 60);
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await run.locator("button", { hasText: "Copy" }).click();
        await run.locator("button", { hasText: "Copied" }).waitFor();
        const clip = await page.evaluate(() => navigator.clipboard.readText());
        assert.equal(clip.split("\n").length, 60);
      });

      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

/** Words (runs without spaces, slashes or hyphens: where a line may break) in the page's tables that the layout broke over two lines. */
const BROKEN_WORDS = `(() => {
  const out = [];
  for (const td of document.querySelectorAll(".table td, .table th")) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.textContent.matchAll(/[^\\s\/-]+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
  }
  return out;
})()`;

Deno.test({
  name: "security tables never break a word in the middle, and keep each time on one line",
  ...opts,
  fn: async (t) => {
    const leakHome = await moduleTempDir("chronicle-e2e-leak-");
    await writeClaudeSession(leakHome, {
      sessionId: "55555555-6666-4777-8888-999999999999",
      cwd: "/tmp/leaky-project-with-a-long-name",
      turns: [{
        user: "Deploy with OPENAI_API_KEY=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 now",
        assistant: "Deploying.",
      }],
    });
    const fx = await serveFixtures({
      scenarios: [],
      homes: [leakHome],
      security: (store) =>
        createSecurityService({
          store,
          guard: {
            status: () => Promise.resolve({ installed: false, settings_path: "/x/settings.json" }),
            change: () => Promise.resolve({ changed: true, summary: "Add the guard hook" }),
          },
        }),
    });
    for (let i = 0; i < 3; i++) {
      fx.store.ruleTable.logInterception({
        at: new Date(Date.parse("2026-01-05T10:00:00Z") + i * 3600_000).toISOString(),
        tool: "Read",
        file: "/home/someone/projects/a-rather-long-project-name/config/production.secrets.env",
        rules: ["openai_api_key", "generic_password_assignment"],
        sample:
          "OPENAI_API_KEY=sk-••••••••••••••••••••••••••••••••••••••••••••••••••• and more text",
        action: i === 0 ? "block" : "flag",
      });
    }
    const b = await openBrowser({ fixture: fx, width: 1280, height: 900 });
    const { page } = b;
    try {
      for (
        const [width, dark] of [[1280, false], [390, false], [390, true], [1280, true]] as const
      ) {
        await t.step(`${width} px, ${dark ? "dark" : "light"}`, async () => {
          await page.setViewportSize({ width, height: 900 });
          await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
          await page.goto(`${fx.server.url}security`);
          await page.locator(".table td", { hasText: "production.secrets.env" }).first().waitFor();
          await page.locator("button", { hasText: "Run check" }).click();
          await page.locator(".check-session").first().waitFor();
          await page.locator(".check-session summary").first().click();
          assert.deepEqual(await page.evaluate(BROKEN_WORDS), []);
          // A time wrapped over two lines is one inline element with two boxes.
          const times = await page.locator(".table time").evaluateAll((els) =>
            els.map((e) => new Set([...e.getClientRects()].map((r) => Math.round(r.top))).size)
          );
          assert.equal(times.length, 3);
          assert.ok(times.every((n) => n === 1), `times on one line: ${times}`);
          await screenshot(page, `r04_security_${width}_${dark ? "dark" : "light"}`);
        });
      }
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name:
    "tokens show input, output and cache apart with an estimated cost; unknown models tokens only",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: ["gemini/s1-basic"], homes: [home] });
    const b = await openBrowser({ fixture: fx, width: 1280, height: 900 });
    const { page } = b;
    try {
      await t.step("a priced model's session shows its cost as an estimate", async () => {
        const gemini = fx.store.listSessions({ source: "gemini" }).items[0];
        await page.goto(`${fx.server.url}sessions/${encodeURIComponent(gemini.id)}`);
        const card = page.locator(".stat", { hasText: "est. cost" });
        await card.waitFor();
        assert.match((await card.textContent()) ?? "", /(≈ \$\d+\.\d\d|< \$0\.01)/);
        assert.match(
          (await card.getAttribute("title")) ?? "",
          /Estimated at list prices of \d{4}-/,
        );
        const line = page.locator(".tokens-line li").first();
        assert.match(
          (await line.textContent()) ?? "",
          /gemini-2\.5-flash: .* in · .* out · .* cache read · .* cache write/,
        );
      });

      await t.step("an unknown model shows tokens only", async () => {
        await openSession(page, fx.server.url);
        const card = page.locator(".stat", { hasText: "est. cost" });
        assert.match((await card.textContent()) ?? "", /^–/);
        assert.match(
          (await card.getAttribute("title")) ?? "",
          /No price for claude-opus-4-8: tokens only/,
        );
        await screenshot(page, "r05_tokens_unknown_model");
      });

      await t.step(
        "analytics estimate per project and per day, each a link to its sessions",
        async () => {
          await page.goto(`${fx.server.url}analytics`);
          const perProject = page.locator("section.card", {
            hasText: "Estimated cost per project",
          });
          await perProject.locator("tbody tr").first().waitFor();
          assert.equal(await perProject.locator("tbody tr").count(), 2);
          const perDay = page.locator("section.card", { hasText: "Estimated cost per day" });
          assert.ok(await perDay.locator("tbody tr").count() >= 1);
          await perProject.scrollIntoViewIfNeeded();
          await screenshot(page, "r06_analytics_cost_light");
          await page.emulateMedia({ colorScheme: "dark" });
          await page.setViewportSize({ width: 390, height: 844 });
          await perProject.scrollIntoViewIfNeeded();
          await screenshot(page, "r06_analytics_cost_dark_390");
          await page.emulateMedia({ colorScheme: "light" });
          await page.setViewportSize({ width: 1280, height: 900 });
          const link = perProject.locator("tbody tr a", { hasText: "render" });
          assert.equal(await link.getAttribute("href"), "/?project=%2Ftmp%2Frender");
          await link.click();
          await page.waitForSelector(".sessions li");
          assert.doesNotMatch(page.url(), /analytics/);
        },
      );
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name:
    "analytics: a real time axis, a heatmap, tools by what they do, each day a link to its sessions",
  ...opts,
  fn: async (t) => {
    const fx = await serveFixtures({ scenarios: ["gemini/s1-basic"], homes: [home] });
    const b = await openBrowser({ fixture: fx, width: 1280, height: 900 });
    const { page } = b;
    try {
      const started = Date.now();
      await page.goto(`${fx.server.url}analytics`);
      await page.locator(".day-bars g[data-day]").first().waitFor();
      console.log(`analytics first view: ${Date.now() - started} ms (goto to charts drawn)`);

      await t.step("idle days are gaps and the labels carry the year", async () => {
        // 2026-01-05 (the synthetic session) to the Gemini fixture's day: every day between.
        const days = await page.locator(".day-bars").evaluate((svg) =>
          Number(svg.getAttribute("viewBox")!.split(" ")[2])
        );
        assert.ok(days > 30, `${days} days on the axis`);
        assert.equal(await page.locator(".day-bars g[data-day]").count(), 2);
        const labels = await page.locator(".day-axis span").allTextContents();
        assert.equal(labels[0], "2026-01-05");
        assert.ok(labels.every((l) => /^\d{4}-\d{2}-\d{2}$/.test(l)), labels.join());
        assert.match(
          (await page.locator(".day-bars").getAttribute("aria-label")) ?? "",
          /steps on 2 of \d+ days from 2026-01-05/,
        );
      });

      await t.step("the heatmap has a cell a day and marks the active ones", async () => {
        const cells = await page.locator(".heat rect").count();
        assert.ok(cells >= 7 * 4, `${cells} cells`);
        assert.equal(await page.locator(".heat rect[data-day]").count(), 2);
      });

      await t.step("tools are grouped by kind, native names on hover", async () => {
        const read = page.locator(".hbars li", { hasText: /^Read/ });
        const names = (await read.getAttribute("title")) ?? "";
        assert.match(names, /\bRead 1\b/);
        assert.match(names, /\bread_file 1\b/);
        assert.match((await read.locator(".hb-value").textContent()) ?? "", /^2/);
      });

      await t.step("chart text stays readable at 390 px", async () => {
        await page.setViewportSize({ width: 390, height: 844 });
        const sizes = await page.locator(".hb-label, .hb-value, .day-axis span:visible, .y-max")
          .evaluateAll((els) => els.map((e) => parseFloat(getComputedStyle(e).fontSize)));
        assert.ok(sizes.length > 5 && sizes.every((s) => s >= 12), sizes.join());
        await screenshot(page, "r08_analytics_light_390");
        await page.emulateMedia({ colorScheme: "dark" });
        await screenshot(page, "r08_analytics_dark_390");
        await page.setViewportSize({ width: 1280, height: 900 });
        await screenshot(page, "r08_analytics_dark");
        await page.emulateMedia({ colorScheme: "light" });
        await screenshot(page, "r08_analytics_light");
      });

      await t.step("a day's bar goes to that day's sessions", async () => {
        await page.locator('.day-bars g[data-day="2026-01-05"] rect').first().click();
        await page.waitForURL(/from=2026-01-05&to=2026-01-05/);
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

/**
 * Runs `check` on one Claude Code session of its own (written to a fresh home and imported), its
 * page open at 390 px, as a step in light and then in dark; no console problems in either.
 */
async function sessionInBothThemes(
  t: Deno.TestContext,
  session: { prefix: string; sessionId: string; turns: SyntheticTurn[] },
  check: (page: Page, theme: "light" | "dark") => Promise<void>,
): Promise<void> {
  const dir = await moduleTempDir(session.prefix);
  await writeClaudeSession(dir, {
    sessionId: session.sessionId,
    cwd: "/tmp/long-lines",
    turns: session.turns,
  });
  const fx = await serveFixtures({ scenarios: [], homes: [dir] });
  const b = await openBrowser({ fixture: fx, width: 390, height: 844 });
  const url = `${fx.server.url}sessions/${encodeURIComponent(`claude-code:${session.sessionId}`)}`;
  try {
    for (const theme of ["light", "dark"] as const) {
      await t.step(theme, async () => {
        await b.page.emulateMedia({ colorScheme: theme });
        await b.page.goto(url);
        await check(b.page, theme);
      });
    }
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
    await fx.close();
  }
}

Deno.test({
  name: "an output cut on import reads as truncated, with how much went, at 390 px in both themes",
  ...opts,
  fn: async (t) => {
    // one line longer than any read whole: its output is kept to its first MiB
    const output = "cutstart " + "0123456789abcdef".repeat((MAX_LINE_BYTES >> 4) + 4096);
    const left = output.length - KEEP_TEXT_BYTES;
    await sessionInBothThemes(t, {
      prefix: "chronicle-e2e-cut-",
      sessionId: "66666666-7777-4888-9999-aaaaaaaaaaaa",
      turns: [
        { user: "Show the log" },
        { tool: { name: "Bash", input: { command: "cat huge.log" }, result: output } },
        { tool: { name: "Bash", input: { command: "wc -l huge.log" }, result: "1 huge.log" } },
      ],
    }, async (page, theme) => {
      const cutRow = page.locator(".vrow", { hasText: "cat huge.log" });
      await cutRow.waitFor();
      assert.equal(await cutRow.locator(".badge-warn", { hasText: "truncated" }).count(), 1);
      const whole = page.locator(".vrow", { hasText: "wc -l huge.log" });
      assert.equal(await whole.locator(".badge-warn", { hasText: "truncated" }).count(), 0);
      await cutRow.getByText("cat huge.log").first().click();
      const note = page.getByRole("complementary", { name: "Inspector" })
        .locator(".payload-label .cut-note");
      await note.waitFor();
      assert.equal((await note.textContent())?.trim(), `· ${bytesText(left)} more cut on import`);
      await screenshot(page, `r09_cut_output_390_${theme}`);
    });
  },
});

Deno.test({
  name:
    "a long prompt shows its opening and the rest on request; one cut on import says how much went",
  ...opts,
  fn: async (t) => {
    // a pasted log: far longer than a row lays out, ending in a word only "Show all" reveals
    const pasted = "pasted " + "lorem ipsum dolor sit amet ".repeat(2_000) + "pastedend";
    // longer than any line read whole: kept to its first MiB, the rest counted
    const huge = "hugeprompt " + "0123456789abcdef".repeat((MAX_LINE_BYTES >> 4) + 4096);
    // a pasted log of 5,000 lines, too long for Markdown: shown as lines, 2,000 at a time
    const numbered = Array.from(
      { length: 5_000 },
      (_, i) => `numbered line ${i} of a pasted log, padded to some length`,
    ).join("\n");
    await sessionInBothThemes(t, {
      prefix: "chronicle-e2e-long-prompt-",
      sessionId: "77777777-8888-4999-aaaa-bbbbbbbbbbbb",
      turns: [{ user: "a short question" }, { user: pasted }, { user: huge }, { user: numbered }],
    }, async (page, theme) => {
      const short = page.locator(".op-prompt", { hasText: "a short question" });
      const long = page.locator(".op-prompt", { hasText: "pasted lorem" });
      const cut = page.locator(".op-prompt", { hasText: "hugeprompt" });
      await cut.waitFor();
      // the short prompt is whole and unmarked
      assert.equal(await short.locator(".prose-more, .badge-warn, .cut-note").count(), 0);
      // the long one shows its opening, says how much that is, and shows all when asked
      assert.equal(await long.getByText("pastedend").count(), 0);
      const more = long.locator(".prose-more");
      const shown = (await long.locator(".md").textContent())!.length;
      assert.ok(shown < pasted.length / 4, `${shown} of ${pasted.length} characters laid out`);
      assert.equal(
        (await more.textContent())?.replace(/\s+/g, " "),
        `Showing ${bytesText(shown)} of ${bytesText(pasted.length)} Show all`,
      );
      assert.equal(await long.locator(".badge-warn").count(), 0, "whole, not truncated");
      // the one cut on import is truncated, with how much went, and shows its opening too
      assert.equal(await cut.locator(".badge-warn").textContent(), "truncated");
      assert.equal(
        await cut.locator(".cut-note").textContent(),
        `${bytesText(huge.length - KEEP_TEXT_BYTES)} more cut on import`,
      );
      assert.equal(await cut.locator(".prose-more").count(), 1);
      await screenshot(page, `r10_long_prompt_390_${theme}`);
      // the page brought the opening only: "Show all" asks the server for the rest
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().includes("/text?op=")),
        more.getByRole("button", { name: "Show all" }).click(),
      ]);
      assert.equal(answer.status(), 200);
      await long.getByText("pastedend").waitFor();
      assert.equal(await long.locator(".prose-more").count(), 0);
      // a text too long for Markdown shows as plain lines, with a find box, as an output does
      await cut.locator(".prose-more").getByRole("button", { name: "Show all" }).click();
      await cut.locator(".payload .find").waitFor();
      assert.equal(await cut.locator(".prose-more").count(), 0);
      const opId = await page.locator(".op-prompt", { hasText: "numbered line 0 " })
        .getAttribute("data-op");
      const lines = page.locator(`.op-prompt[data-op="${opId}"]`);
      await lines.scrollIntoViewIfNeeded();
      await lines.locator(".prose-more").getByRole("button", { name: "Show all" }).click();
      // (LINES_SHOWN of payload_block.tsx: 2,000)
      const moreLines = lines.locator("button.more-lines");
      await moreLines.waitFor();
      assert.equal(await lines.locator(".code-lines tr").count(), 2_000);
      assert.equal(
        (await moreLines.textContent())?.replace(/\s+/g, " "),
        "Show 2,000 more lines (3,000 left)",
      );
      await moreLines.click();
      assert.equal(await lines.locator(".code-lines tr").count(), 4_000);
      // find reads every line, shown or not
      await lines.locator("input.find").fill("line 4999 ");
      assert.equal(await lines.locator(".code-lines tr").count(), 1);
      assert.equal(await lines.locator("button.more-lines").count(), 0);
    });
  },
});
