/**
 * What the guard must catch, and what it must let through, as a table: tool calls of Claude
 * Code, Codex, Gemini CLI, OpenCode and MCP servers against a real project on disk. Each row
 * says whether the call is blocked. The counts are printed for the issue's closing note.
 */
import { assertEquals } from "../../_helpers/assert.ts";
import { preToolUseCheck } from "../../../core/security/mod.ts";
import { denoGuardFs } from "../../../guard/fs.ts";
import { makeGuardProject } from "./_guard_project.ts";
import { guardRows, type Row } from "./_guard_rows.ts";

const p = await makeGuardProject();
const { proj, home } = p;

const ROWS: Row[] = guardRows(p);

const counts = { blocked: 0, allowed: 0, byAgent: {} as Record<string, number> };

Deno.test({
  name: "the guard blocks what would leak a secret and lets ordinary work through",
  sanitizeResources: false,
  async fn(t) {
    for (const row of ROWS) {
      const label = `${row.agent} ${row.tool} ${JSON.stringify(row.input).slice(0, 90)}`;
      await t.step(
        `${row.block ? "blocks" : "allows"}: ${label}${row.why ? ` (${row.why})` : ""}`,
        async () => {
          const d = await preToolUseCheck(
            { tool_name: row.tool, tool_input: row.input, cwd: row.cwd ?? proj, session_id: "s" },
            denoGuardFs,
            { home },
          );
          assertEquals(
            d.decision,
            row.block ? "block" : "allow",
            d.reason ?? `(no reason; read ${JSON.stringify(d.files)})`,
          );
          if (row.block) {
            assertEquals(d.reason?.includes(p.token), false, "the reason never holds the secret");
            assertEquals(JSON.stringify(d.interception).includes(p.token), false);
          }
        },
      );
      counts[row.block ? "blocked" : "allowed"]++;
      counts.byAgent[row.agent] = (counts.byAgent[row.agent] ?? 0) + 1;
    }
    console.log(
      `guard table: ${ROWS.length} payloads, ${counts.blocked} blocked, ${counts.allowed} allowed; ` +
        Object.entries(counts.byAgent).map(([a, n]) => `${a} ${n}`).join(", "),
    );
  },
});

Deno.test("the guard table has at least 60 payloads of both kinds, across the agents", () => {
  assertEquals(ROWS.length >= 60, true);
  assertEquals(ROWS.filter((r) => r.block).length >= 25, true);
  assertEquals(ROWS.filter((r) => !r.block).length >= 25, true);
  assertEquals(new Set(ROWS.map((r) => r.agent)).size, 5);
});

Deno.test("an .env file is blocked by its name even when nothing in it looks like a secret", async () => {
  for (
    const input of [{ tool_name: "Read", tool_input: { file_path: `${proj}/.env.staging` } }, {
      tool_name: "Bash",
      tool_input: { command: "cat .env.staging" },
    }]
  ) {
    const d = await preToolUseCheck({ ...input, cwd: proj }, denoGuardFs, { home });
    assertEquals([d.decision, d.rules], ["block", ["sensitive_path"]]);
  }
});

Deno.test("a path rule blocks a file by name, and an allow path rule lets a template through", async () => {
  const rules = [
    {
      id: "r1",
      name: "release notes",
      pattern: "path:**/notes.md",
      action: "redact",
      enabled: true,
    },
    { id: "r2", name: "our env", pattern: "path:.env", action: "allow", enabled: true },
  ] as const;
  const read = (file: string) =>
    preToolUseCheck(
      { tool_name: "Read", tool_input: { file_path: `${proj}/${file}` }, cwd: proj },
      denoGuardFs,
      { rules: [...rules] },
    );
  assertEquals((await read("notes.md")).decision, "block");
  // allowed by name, but its content still holds a token: still blocked, by content
  const env = await read(".env");
  assertEquals([env.decision, env.rules], ["block", ["api_key"]]);
});

Deno.test("a call that cannot be checked in time is blocked, not waved through", async () => {
  const d = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: `${proj}/big.log` }, cwd: proj },
    denoGuardFs,
    {
      budgetMs: 5,
      rules: [{
        id: "a",
        name: "adversarial",
        pattern: "*a*a*a*b",
        action: "redact",
        enabled: true,
      }],
    },
  );
  assertEquals([d.decision, d.rules], ["block", ["guard_budget"]]);
});

Deno.test("cleanup", async () => {
  await p.cleanup();
});
