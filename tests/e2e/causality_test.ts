/**
 * Causality and "code at this moment" in headless Chromium: select a change by its ⛓ badge,
 * see its sources by tier and the background dimmed, jump to a source and back, open the code
 * after the change (a real git repository made here, and a real-client session whose project
 * is gone), in light and dark and at 390 px.
 */
import assert from "node:assert/strict";
import { createGitEngine, gitEnv } from "../../core/git/mod.ts";
import { denoProcessRunner } from "../../runtime/process_runner.ts";
import { git } from "../_helpers/git.ts";
import { openBrowser, screenshot, serveFixtures } from "./_harness.ts";
import { writeClaudeSession } from "./_synthetic.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const SID = "5e55e55e-0000-4000-8000-00000000c0de";

/** A git project and a Claude Code session in it: read, edit, commit, edit again (uncommitted). */
async function gitSession(scratch: string): Promise<string> {
  const project = `${scratch}/shop`;
  await Deno.mkdir(`${project}/src`, { recursive: true });
  await Deno.writeTextFile(`${project}/src/cart.py`, "def total(items):\n    return sum(items)\n");
  await Deno.writeTextFile(`${project}/src/tax.py`, "RATE = 0.2\n");
  await Deno.writeTextFile(`${project}/README.md`, "# Shop\n");
  await git(project, ["init", "-q", "-b", "main"], "2026-01-05T09:00:00Z");
  await git(project, ["add", "-A"], "2026-01-05T09:00:00Z");
  await git(project, ["commit", "-q", "-m", "Start the shop"], "2026-01-05T09:00:00Z");
  const home = `${scratch}/home`;
  await writeClaudeSession(home, {
    sessionId: SID,
    cwd: project,
    turns: [
      { user: "Add tax to the cart total" },
      {
        tool: {
          name: "Read",
          input: { file_path: `${project}/src/tax.py` },
          result: "1\tRATE = 0.2\n2\t",
        },
      },
      {
        tool: {
          name: "Read",
          input: { file_path: `${project}/src/cart.py` },
          result: "1\tdef total(items):\n2\t    return sum(items)\n3\t",
        },
      },
      {
        tool: {
          name: "Edit",
          input: {
            file_path: `${project}/src/cart.py`,
            old_string: "    return sum(items)\n",
            new_string: "    from tax import RATE\n    return sum(items) * (1 + RATE)\n",
          },
          result: "The file has been updated successfully.",
        },
      },
      {
        tool: {
          name: "Write",
          input: {
            file_path: `${project}/src/test_cart.py`,
            content: "def test_total():\n    pass\n",
          },
          result: "File created successfully at: src/test_cart.py",
        },
      },
      { assistant: "Added tax; a test file is started." },
    ],
  });
  return home;
}

Deno.test({
  name:
    "a change's sources are shown by tier, a source is one click away, and the code at a step opens",
  ...opts,
  fn: async () => {
    const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-e2e-cz-" }));
    const home = await gitSession(scratch);
    const fx = await serveFixtures({
      scenarios: ["claude/s4-long"],
      homes: [home],
      git: createGitEngine(denoProcessRunner, { env: gitEnv(Deno.env.toObject()) }),
    });
    const b = await openBrowser({ fixture: fx });
    const { page } = b;
    try {
      const long = fx.store.listSessions().items.find((s) => s.id !== `claude-code:${SID}`)!;
      const session = fx.store.loadSession(long.id)!;
      const editOp = Object.entries(session.operations).find(([, o]) =>
        o.kind === "edit" && o.target?.endsWith("src/config.py")
      )![0];
      const url = `${fx.server.url}sessions/${encodeURIComponent(long.id)}`;
      await page.goto(url);
      await page.waitForSelector(".op-reply");
      await page.locator(".cz-badge").first().waitFor();
      // The first change's badge selects it; a deep link to the edit of src/config.py too.
      await page.locator(".cz-badge").first().click();
      await page.getByRole("region", { name: "Causality" }).getByText("Why this changed").waitFor();
      await page.goto(`${url}?op=${editOp}`);
      await page.locator(`.op[data-op="${editOp}"]`).waitFor();
      const panel = page.getByRole("region", { name: "Causality" });
      await panel.getByText("Why this changed").waitFor();
      const heads = await panel.locator(".cz-group-head").allTextContents();
      assert.deepEqual(
        heads.map((h) =>
          h.trim().slice(0, 4)
        ),
        ["0.95", "0.55", "0.45", "0.20"],
      );
      assert.ok(await page.locator(".op.cz-source.cz-tier-same_file").count() >= 1);
      assert.ok(
        await page.locator(".op.cz-background").count() >= 1,
        "background steps are dimmed",
      );
      // It builds on the edit of src/app.py, which the agent read back before this change.
      await panel.locator(".cz-chain", { hasText: "src/app.py" }).waitFor();
      await screenshot(page, "30_causality_sources");

      // Jump to the strongest source: the read of src/config.py.
      const changeUrl = page.url();
      await panel.locator(".cz-group.cz-tier-same_file .cz-source-link").first().click();
      await page.waitForURL((u) => u.href !== changeUrl);
      // (the step is focused as the page moves, and marked a source once the panel has the
      // change's sources again: waited for, not read at once)
      const focused = page.locator(".op.is-focused.cz-source");
      await focused.waitFor();
      assert.match((await focused.textContent())!, /src\/config\.py/);
      await page.getByRole("region", { name: "Causality" }).getByText(
        "A likely source of the change",
      )
        .waitFor();
      await screenshot(page, "31_causality_jumped");
      await page.getByRole("button", { name: "← Back to the change" }).click();
      await page.getByRole("region", { name: "Causality" }).getByText("Why this changed").waitFor();

      // Files touched, in the inspector.
      await page.locator(".cz-files summary", { hasText: "Files touched (10)" }).waitFor();

      // Code after the edit: the project is gone, the recorded text is shown and marked.
      await page.getByRole("button", { name: "Code at this moment" }).click();
      const dialog = page.getByRole("dialog", { name: "Code at this moment" });
      await dialog.locator(".tt-notice", { hasText: "no longer exists" }).waitFor();
      await dialog.getByRole("button", { name: "src/config.py" }).click();
      await dialog.locator(".tt-session .code", { hasText: 'os.environ.get("DEBUG")' }).waitFor();
      await dialog.getByRole("tab", { name: "This change" }).click();
      await dialog.locator(".dl-add", { hasText: "import os" }).waitFor();
      await screenshot(page, "32_code_gone_project");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // A session in a real repository: the commit it started from, the file after the edit.
      await page.goto(`${fx.server.url}sessions/${encodeURIComponent(`claude-code:${SID}`)}`);
      const cart = page.locator(".op", { hasText: "cart.py" }).filter({
        has: page.locator(".cz-badge"),
      })
        .first();
      await cart.locator(".cz-badge").click();
      await page.getByRole("region", { name: "Causality" }).locator(".cz-group.cz-tier-same_file")
        .waitFor();
      await page.getByRole("button", { name: "Code at this moment" }).click();
      await dialog.locator(".tt-commit", { hasText: "Start the shop" }).waitFor();
      assert.equal(await dialog.locator(".tt-notice").count(), 0);
      await dialog.getByRole("button", { name: "src/cart.py" }).click();
      await dialog.locator(".tt-session .code", { hasText: "return sum(items) * (1 + RATE)" })
        .waitFor();
      assert.equal(
        await dialog.locator(".tt-entry", { hasText: "test_cart.py" }).count(),
        0,
        "written later",
      );
      await screenshot(page, "33_code_at_moment_light");
      await dialog.getByRole("button", { name: "next change ▶" }).click();
      await dialog.locator(".tt-entry.tt-added", { hasText: "src/test_cart.py" }).waitFor();
      await dialog.getByRole("tab", { name: "What the session changed" }).click();
      await dialog.locator(".tt-summary", { hasText: "src/cart.py" }).waitFor();
      await screenshot(page, "34_session_changes");
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
    }

    // Dark, and a phone.
    for (
      const view of [{ dark: true, name: "35_causality_dark" }, {
        width: 390,
        height: 844,
        name: "36_causality_390",
      }]
    ) {
      const v = await openBrowser({ ...view, fixture: fx });
      try {
        await v.page.goto(`${fx.server.url}sessions/${encodeURIComponent(`claude-code:${SID}`)}`);
        const cart = v.page.locator(".op", { hasText: "cart.py" }).filter({
          has: v.page.locator(".cz-badge"),
        })
          .first();
        await cart.locator(".cz-badge").click();
        await v.page.getByRole("region", { name: "Causality" }).getByText("Why this changed")
          .waitFor();
        await screenshot(v.page, view.name);
        await v.page.getByRole("button", { name: "Code at this moment" }).click();
        const d = v.page.getByRole("dialog", { name: "Code at this moment" });
        await d.getByRole("button", { name: "src/cart.py" }).click();
        await d.locator(".tt-session").first().waitFor();
        await screenshot(v.page, `${view.name}_code`);
        assert.deepEqual(v.problems, []);
      } finally {
        await v.close();
      }
    }
    await fx.close();
    await Deno.remove(scratch, { recursive: true });
  },
});
