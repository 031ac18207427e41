/**
 * The HTML export opened in headless Chromium from file:// with the network off: it renders
 * every step with no request and no console error (CSP violations are console errors), folds
 * with `<details>` and no script, runs nothing from a hostile transcript, and stays usable for
 * a long session; screenshots in light, dark and at 390 px. The share page, served by the
 * real server, renders the same way.
 */
import assert from "node:assert/strict";
import { type DocStep, documentOf, renderHtml } from "../../core/export/mod.ts";
import { createSecurityService } from "../../server/security_service.ts";
import { ChronicleStore, importAll } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { realClients } from "../unit/server/_helpers.ts";
import { type Fixture, openBrowser, screenshot, SCREENSHOTS, serveFixtures } from "./_harness.ts";
import {
  hostileTurns,
  LONG_SESSION,
  longTurns,
  writeClaudeSession,
  XSS_SESSION,
} from "./_synthetic.ts";
import { moduleTempDir } from "../_helpers/temp_dir.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const home = await moduleTempDir("chronicle-e2e-export-");
await writeClaudeSession(home, { sessionId: XSS_SESSION, cwd: "/tmp/xss", turns: hostileTurns() });
await writeClaudeSession(home, {
  sessionId: LONG_SESSION,
  cwd: "/tmp/long",
  turns: longTurns(5000),
});
const store = ChronicleStore.open(":memory:");
const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
for (
  const h of [
    home,
    `${realClients()}/claude/s6-subagent/native`,
    `${realClients()}/codex/s2-errors/native`,
  ]
) {
  await importAll(store, { env: { home: h, env: {}, platform: "linux" }, fs });
}

function steps(list: DocStep[]): number {
  return list.reduce(
    (n, s) => n + 1 + (s.threads ?? []).reduce((m, t) => m + steps(t.steps), 0),
    0,
  );
}

async function writeExport(id: string, name: string) {
  const doc = documentOf(store, id, { thinking: true })!;
  const path = `${home}/${name}.html`;
  await Deno.writeTextFile(path, renderHtml(doc));
  return { path, doc, expected: steps(doc.steps) };
}

/** A server only for the browser to sign in to; the files themselves open offline. */
let signIn: Fixture | null = null;

/** Opens a file offline; fails on any request other than the file itself. */
async function openOffline(path: string, options: { width?: number; dark?: boolean } = {}) {
  signIn ??= await serveFixtures({ scenarios: [] });
  const b = await openBrowser({
    width: options.width ?? 1280,
    height: 900,
    dark: options.dark,
    fixture: signIn,
  });
  // Leave the signed-in app (it keeps asking its server) before the network goes.
  await b.page.goto("about:blank");
  await b.page.context().setOffline(true);
  b.problems.length = 0;
  const requests: string[] = [];
  b.page.on("request", (r) => requests.push(r.url()));
  await b.page.goto(`file://${path}`, { waitUntil: "load" });
  return { ...b, requests };
}

Deno.test({
  name: "the HTML export renders fully from file:// with the network off",
  ...opts,
  fn: async (t) => {
    const sub = store.listSessions({ limit: 10 }).items.find((s) =>
      s.project_path?.includes("s6-subagent")
    )!;
    const { path, expected } = await writeExport(sub.id, "subagent");
    for (
      const [label, o] of [["light", {}], ["dark", { dark: true }], ["390px", {
        width: 390,
        dark: false,
      }]] as const
    ) {
      await t.step(label, async () => {
        const b = await openOffline(path, o);
        try {
          assert.deepEqual(b.requests, [`file://${path}`]);
          assert.equal(await b.page.locator("li.step").count(), expected);
          assert.equal(await b.page.locator("h1").count(), 1);
          // Nothing needs script: details open on a click by themselves.
          const tool = b.page.locator(".tool > details").first();
          assert.equal(await tool.getAttribute("open"), null);
          await tool.locator(":scope > summary").click();
          assert.equal(await tool.getAttribute("open"), "");
          const thread = b.page.locator("details.thread").first();
          await thread.locator(":scope > summary").click();
          assert(await thread.locator("li.step").first().isVisible());
          // The page is as wide as the screen: nothing forces a sideways scroll.
          const overflow = await b.page.evaluate(() =>
            document.documentElement.scrollWidth - innerWidth
          );
          assert(overflow <= 0, `${overflow}px sideways scroll`);
          const bg = await b.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          assert.equal(bg, label === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)");
          await Deno.mkdir(SCREENSHOTS, { recursive: true });
          await b.page.screenshot({ path: `${SCREENSHOTS}export_${label}.png`, fullPage: true });
          assert.deepEqual(b.problems, []);
        } finally {
          await b.close();
        }
      });
    }
  },
});

Deno.test({
  name: "a hostile transcript's HTML export shows its markup as text and runs nothing",
  ...opts,
  fn: async () => {
    const xss = store.listSessions({ limit: 10 }).items.find((s) => s.id.endsWith(XSS_SESSION))!;
    const { path } = await writeExport(xss.id, "hostile");
    const b = await openOffline(path);
    try {
      assert.equal(
        await b.page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
        undefined,
      );
      assert.equal(await b.page.locator("main script, main img, main iframe").count(), 0);
      const text = await b.page.locator("main").innerText();
      assert(text.includes('<img src=x onerror="window.__pwned=3">'), "markup shown as text");
      assert.equal(await b.page.locator('a[href^="javascript:"]').count(), 0);
      assert.deepEqual(b.requests, [`file://${path}`]);
      await screenshot(b.page, "export_hostile");
    } finally {
      await b.close();
    }
  },
});

Deno.test({
  name: "a 5,000-step session's HTML export opens and scrolls to its end",
  ...opts,
  fn: async () => {
    const long = store.listSessions({ limit: 10 }).items.find((s) => s.id.endsWith(LONG_SESSION))!;
    const { path, expected } = await writeExport(long.id, "long");
    const size = (await Deno.stat(path)).size;
    const b = await openOffline(path);
    try {
      const loaded = await b.page.evaluate(() =>
        performance.getEntriesByType("navigation")[0].duration
      );
      assert.equal(await b.page.locator("li.step").count(), expected);
      await b.page.locator("footer").scrollIntoViewIfNeeded();
      assert(await b.page.locator("footer").isVisible());
      console.log(
        `long export: ${expected} steps, ${(size / 1e6).toFixed(1)} MB, loaded in ${
          Math.round(loaded)
        } ms`,
      );
      await screenshot(b.page, "export_long_end");
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
    }
  },
});

Deno.test({
  name: "a share page from the real server renders under its CSP with no console error",
  ...opts,
  fn: async () => {
    const fx = await serveFixtures({ scenarios: ["claude/s6-subagent"] });
    const b = await openBrowser({ width: 390, height: 900, dark: true, fixture: fx });
    try {
      const id = fx.store.listSessions().items[0].id;
      const res = await fetch(`${fx.server.url}api/sessions/${encodeURIComponent(id)}/shares`, {
        method: "POST",
        headers: { "x-chronicle-token": fx.token, "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(res.status, 201);
      const { path } = await res.json();
      await b.page.goto(`${fx.server.url.replace(/\/$/, "")}${path}`);
      assert(await b.page.locator("li.step").count() > 5);
      assert.equal(await b.page.locator(".banner").count(), 1);
      await screenshot(b.page, "share_page_390_dark");
      assert.deepEqual(b.problems, []);
      const missing = await b.page.goto(`${fx.server.url}share/nope`);
      assert.equal(missing?.status(), 404);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});

Deno.test({
  name: "export e2e teardown",
  ...opts,
  fn: async () => {
    store.close();
    await signIn?.close();
  },
});

Deno.test({
  name: "from the session view a user sees what redaction finds, adds a rule, shares and revokes",
  ...opts,
  fn: async (t) => {
    const leaky = await moduleTempDir("chronicle-e2e-leaky-");
    // A fake key in OpenAI's legacy shape and a project name for a custom rule to take.
    const key = "sk-" + "O4FWiXsd9tNNHVrtjy4R" + "T3BlbkFJ" + "1bMQCPua2KlzFiEImFDA";
    await writeClaudeSession(leaky, {
      sessionId: "44444444-5555-4666-8777-888888888888",
      cwd: "/tmp/leaky",
      turns: [
        {
          user: `Deploy acme-internal-billing with OPENAI_API_KEY=${key}`,
          assistant: "Deploying.",
        },
      ],
    });
    const fx = await serveFixtures({
      scenarios: [],
      homes: [leaky],
      security: (store) =>
        createSecurityService({
          store,
          guard: {
            status: () => Promise.resolve({ installed: false, settings_path: "/x/settings.json" }),
            change: () => Promise.resolve({ changed: false }),
          },
        }),
    });
    const b = await openBrowser({ width: 1280, height: 900, fixture: fx });
    const { page } = b;
    try {
      const id = fx.store.listSessions().items[0].id;
      await page.goto(`${fx.server.url}sessions/${encodeURIComponent(id)}`);
      await t.step("the dialog shows the key found, masked", async () => {
        await page.click(".share-open");
        await page.waitForSelector(".redaction-box");
        const text = await page.locator(".redaction-box").innerText();
        // The prompt and the title made from it.
        assert(text.includes("2 findings will be replaced"), text);
        assert(text.includes("api_key"), text);
        assert(!text.includes(key.slice(3, 20)), "the key itself is never shown");
      });
      await t.step("a rule added in the dialog is found at once", async () => {
        await page.fill("#share-rule", "acme-internal-*");
        await page.click(".rule-form button");
        await page.waitForFunction(() =>
          document.querySelector(".redaction-box")?.textContent?.includes("4 findings")
        );
        await screenshot(page, "share_dialog");
      });
      let url = "";
      await t.step("a share link is made and opens as a redacted page", async () => {
        await page.click("text=Create link");
        await page.waitForSelector(".share-url");
        url = await page.inputValue(".share-url");
        assert(/\/share\/[A-Za-z0-9_-]{43}$/.test(url), url);
        const shared = await b.page.context().newPage();
        await shared.goto(url);
        const body = await shared.locator("main").innerText();
        assert(!body.includes(key) && !body.includes("acme-internal-billing"), "redacted");
        await shared.close();
      });
      await t.step("revoking from the list ends the link at once", async () => {
        await page.locator(".share-list button", { hasText: "Revoke" }).click();
        await page.waitForSelector(".share-list .share-revoked");
        const res = await fetch(url);
        assert.equal(res.status, 404);
        await res.body?.cancel();
      });
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await fx.close();
    }
  },
});
