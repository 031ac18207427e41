/**
 * The guard table (tests/unit/security/_guard_rows.ts) through the guard as Claude Code runs
 * it: `chronicle guard install` writes the launcher, and every row is a new process started
 * through `sh -c` with the hook payload on stdin. Exit 2 blocks, 0 allows; the reason on stderr
 * never holds the secret. No Chronicle server runs.
 */
import { assert, assertEquals } from "../_helpers/assert.ts";
import { makeGuardProject } from "../unit/security/_guard_project.ts";
import { guardRows } from "../unit/security/_guard_rows.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

async function run(cmd: string, args: string[], stdin: string, env: Record<string, string>) {
  const child = new Deno.Command(cmd, {
    args,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("every row of the guard table, through the installed guard command, a process per call", async (t) => {
  const p = await makeGuardProject();
  const data = `${p.root}/data`;
  const env = {
    HOME: p.home,
    CHRONICLE_HOME: data,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR,
  };
  try {
    const install = await run(
      Deno.execPath(),
      ["run", "-A", `${ROOT}/main.ts`, "guard", "install"],
      "",
      env,
    );
    assertEquals(install.code, 0, install.stderr);
    const launcher = `${data}/guard/chronicle-guard`;
    const counts = { blocked: 0, allowed: 0 };
    for (const row of guardRows(p)) {
      const label = `${row.agent} ${row.tool} ${JSON.stringify(row.input).slice(0, 90)}`;
      await t.step(`${row.block ? "blocks" : "allows"}: ${label}`, async () => {
        const payload = JSON.stringify({
          session_id: "table",
          transcript_path: `${p.home}/t.jsonl`,
          cwd: row.cwd ?? p.proj,
          hook_event_name: "PreToolUse",
          tool_name: row.tool,
          tool_input: row.input,
        });
        const r = await run("sh", ["-c", launcher], payload, env);
        assertEquals(r.code, row.block ? 2 : 0, r.stderr);
        assertEquals(r.stdout, "");
        assert(!r.stderr.includes(p.token), "the reason never holds the secret");
        counts[row.block ? "blocked" : "allowed"]++;
      });
    }
    console.log(
      `guard table through the installed guard: ${counts.blocked} blocked, ${counts.allowed} allowed`,
    );
  } finally {
    await p.cleanup();
  }
});
