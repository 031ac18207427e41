/**
 * A session growing while it is open, in headless Chromium against a real server that imports
 * live: the real Claude Code sub-agent session (fixtures/realclients/claude/s6-subagent) is
 * written again line by line in the order the CLI wrote it; its steps appear in place, the
 * sub-agent's under their call; the LIVE badge shows; a reader at the end follows new steps,
 * and a reader who scrolled up gets an "N new steps" button instead of a jump.
 */
import assert from "node:assert/strict";
import { liveServer } from "../integration/_live_server.ts";
import { realClients } from "../unit/server/_helpers.ts";
import { ensureUi, openBrowser, screenshot } from "./_harness.ts";
import { ClaudeLines } from "./_synthetic.ts";

const SID = "91cb11df-a0ab-45af-9e81-008d8283f358";
const AGENT = "agent-a7a9babf13a163ac4";
const ENC = "-home-dev-projects-s6-subagent";

Deno.test({
  name: "a session grows while open: steps in place, sub-agent under its call, LIVE, N new steps",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await ensureUi();
    const from = `${realClients()}/claude/s6-subagent/native/.claude/projects/${ENC}`;
    const main = (await Deno.readTextFile(`${from}/${SID}.jsonl`)).trimEnd().split("\n");
    const sub = (await Deno.readTextFile(`${from}/${SID}/subagents/${AGENT}.jsonl`)).trimEnd()
      .split("\n");
    const root = await Deno.makeTempDir({ prefix: "chronicle-e2e-live-" });
    const dir = `${root}/home/.claude/projects/${ENC}`;
    await Deno.mkdir(dir, { recursive: true });
    const mainPath = `${dir}/${SID}.jsonl`;
    const subPath = `${dir}/${SID}/subagents/${AGENT}.jsonl`;
    const write = async (path: string, lines: string[]) => {
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(path, lines.map((l) => l + "\n").join(""), { append: true });
    };
    await write(mainPath, main.slice(0, 6)); // the prompt and the first reply

    const srv = await liveServer({ home: `${root}/home`, data: `${root}/data` });
    const b = await openBrowser({ width: 1280, height: 800, fixture: srv });
    const { page } = b;
    const rows = () => page.locator(".timeline .vwindow > .vrow [data-op]").count();
    try {
      await page.goto(`${srv.url}sessions/${encodeURIComponent(`claude-code:${SID}`)}`);
      await page.waitForSelector(".op-prompt");
      const before = await rows();

      await t.step("a new step appears in place, and the badge says LIVE", async () => {
        await write(mainPath, main.slice(6, 7)); // the Agent call
        await page.waitForFunction(
          (n) => document.querySelectorAll(".timeline .vwindow > .vrow [data-op]").length > n,
          before,
        );
        await page.waitForSelector(".live-badge:not(.is-reconnecting)");
        assert.equal((await page.locator(".live-badge").textContent())?.trim(), "LIVE");
        const last = page.locator(".timeline .vwindow > .vrow").last();
        assert.match((await last.textContent()) ?? "", /Agent/);
        await screenshot(page, "live_01_step_in_place");
      });

      await t.step("the sub-agent's steps appear under its call, as it writes them", async () => {
        await write(subPath, sub.slice(0, 3)); // its prompt: a new file in a new folder
        const toggle = page.locator(".subagents .toggle");
        await toggle.waitFor();
        await toggle.click();
        await page.waitForSelector(".subagent [data-op]");
        const inThread = () => page.locator(".subagent [data-op]").count();
        const n = await inThread();
        await write(subPath, sub.slice(3, 5)); // its Bash call and result
        await page.waitForFunction(
          (k) => document.querySelectorAll(".subagent [data-op]").length > k,
          n,
        );
        assert.match((await page.locator(".subagent").textContent()) ?? "", /Bash/);
        await screenshot(page, "live_02_subagent_in_place");
        await write(subPath, sub.slice(5));
        await write(mainPath, main.slice(7));
        await page.waitForFunction(() =>
          [...document.querySelectorAll(".timeline .vwindow > .vrow")].some((r) =>
            /Write/.test(r.textContent ?? "")
          )
        );
      });

      const more = new ClaudeLines({
        sessionId: SID,
        cwd: "/home/dev/projects/s6-subagent",
        start: Date.parse("2026-11-30T09:48:00Z"),
      });
      const turns = (from: number, n: number) =>
        Array.from({ length: n }, (_, i) =>
          more.turn({
            tool: {
              name: "Bash",
              input: { command: `echo step ${from + i}` },
              result: `step ${from + i} done`,
            },
          })).join("");

      await t.step("a reader at the end follows the new steps", async () => {
        await page.locator(".timeline").evaluate((el) => (el.scrollTop = el.scrollHeight));
        await page.waitForTimeout(200);
        await Deno.writeTextFile(mainPath, turns(1, 30), { append: true });
        await page.waitForFunction(() =>
          [...document.querySelectorAll(".timeline .vrow")].some((r) =>
            /echo step 30\b/.test(r.textContent ?? "")
          )
        );
        const box = await page.locator(".timeline .vrow", { hasText: "echo step 30" }).last()
          .boundingBox();
        const pane = await page.locator(".timeline").boundingBox();
        assert.ok(box && pane && box.y + box.height <= pane.y + pane.height + 2, "on screen");
        assert.equal(await page.locator(".new-steps").count(), 0);
      });

      await t.step("a reader who scrolled up gets 'N new steps', not a jump", async () => {
        const pane = (await page.locator(".timeline").boundingBox())!;
        await page.mouse.move(pane.x + pane.width / 2, pane.y + pane.height / 2);
        while (await page.locator(".timeline").evaluate((el) => el.scrollTop > 0)) {
          await page.mouse.wheel(0, -5000);
          await page.waitForTimeout(50);
        }
        await Deno.writeTextFile(mainPath, turns(31, 3), { append: true });
        const button = page.locator(".new-steps");
        await button.waitFor();
        assert.equal((await button.textContent())?.trim(), "3 new steps ↓");
        const top = await page.locator(".timeline").evaluate((el) => el.scrollTop);
        assert.ok(top < 50, `stayed where the reader was (scrollTop ${top})`);
        await screenshot(page, "live_03_new_steps_button");
        await button.click();
        await page.waitForFunction(() =>
          [...document.querySelectorAll(".timeline .vrow")].some((r) =>
            /echo step 33\b/.test(r.textContent ?? "")
          )
        );
        await page.locator(".new-steps").waitFor({ state: "detached" });
        await screenshot(page, "live_04_after_new_steps");
      });

      assert.deepEqual(b.problems, [], "no console errors or CSP violations");
    } finally {
      await b.close();
      await srv.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});
