/**
 * The guard inside a real Claude Code. A scripted session reads a `.env` holding a (freshly
 * generated, fake) GitHub token, then runs a benign `ls`:
 *
 * - with Chronicle's guard installed as the PreToolUse hook and a Chronicle server up, the
 *   Read is blocked (its result is an error and the token never reaches the model server's
 *   request log) and the Bash call runs;
 * - with the server stopped, both run (fail-open), and the token does reach the model server,
 *   which shows the first check can fail.
 *
 * Uses `chronicle guard install` and `chronicle serve` when the tree has them; until then a
 * stand-in hook (guard_standin_hook.ts, same protocol) and a stand-in server that decides
 * with core/security's preToolUseCheck when it exists, else with a token regex.
 *
 * @module
 */
import type { AgentSpec, RunContext } from "./agents.ts";
import { chronicle, importAndExport, REPO_ROOT } from "./chronicle.ts";
import { drive, type DriveResult } from "./drive.ts";
import type { Scenario } from "./scenarios.ts";
import { checkSession, scriptProblems, servedOrder } from "./check.ts";

export interface GuardOutcome {
  ok: boolean;
  lines: string[];
}

const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

function fakeToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(36));
  return "ghp_" + Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

function guardScenario(id: string, token: string, blocked: boolean): Scenario {
  return {
    id,
    description: "Read a .env holding a token (the guard blocks it), then a benign ls.",
    title: "Guarded read",
    files: {
      ".env": `GITHUB_TOKEN=${token}\nDEBUG=1\n`,
      "README.md": "# guarded-app\n",
    },
    main: {
      prompt: "Check the configuration in .env, then list the files in the project.",
      turns: [
        {
          text: "Reading the configuration.",
          steps: [{
            op: "read",
            path: ".env",
            error: blocked,
            ...(blocked ? {} : { result_has: token }),
          }],
        },
        {
          steps: [{
            op: "bash",
            command: "ls -a",
            description: "List files",
            result_has: "README.md",
          }],
        },
      ],
      final: "I listed the files; the .env file could not be shown.",
    },
  };
}

interface GuardServer {
  url: string;
  mode: string;
  decisions: { tool_name: string; blocked: boolean }[];
  stop(): Promise<void>;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

type HookMode = "installer" | "guard" | "stand-in";

/**
 * How the hook gets in: `chronicle guard install` when the CLI has it; else a settings.json
 * entry written here that runs the real hook program (guard/main.ts); else the stand-in.
 */
async function hookMode(dataDir: string, home: string): Promise<HookMode> {
  const r = await chronicle({ home, dataDir }, ["guard", "--help"]);
  if (r.code === 0) return "installer";
  if (await exists(`${REPO_ROOT}/guard/main.ts`)) return "guard";
  return "stand-in";
}

const HOOK_LABEL: Record<HookMode, string> = {
  "installer": "chronicle guard install",
  "guard": "guard/main.ts, hook entry written by the suite (no `chronicle guard install` yet)",
  "stand-in": "stand-in hook (guard/main.ts not there yet)",
};

async function startRealServer(home: string, dataDir: string): Promise<GuardServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO_ROOT}/main.ts`, "serve", "--port", "0", "--no-import"],
    cwd: REPO_ROOT,
    env: { HOME: home, CHRONICLE_HOME: dataDir, DENO_DIR, PATH: "/usr/bin:/bin", NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  // Collect stderr in the background (for the error message) so the pipe never fills.
  let errText = "";
  const errDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (t) => void (errText = (errText + t).slice(-2000)) }),
  ).catch(() => {});
  let seen = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
    const m = seen.match(/http:\/\/127\.0\.0\.1:(\d+)/);
    if (m) {
      // Keep draining so the server never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return {
        url: `http://127.0.0.1:${m[1]}`,
        mode: "chronicle serve",
        decisions: [],
        stop: async () => {
          try {
            child.kill("SIGTERM");
          } catch {
            // Already gone.
          }
          await child.status;
        },
      };
    }
  }
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  await child.status;
  await errDone;
  const why = (errText.trim() || seen.trim()).split("\n")[0].slice(0, 160);
  throw new Error(`chronicle serve did not start: ${why}`);
}

type Decide = (toolName: string, toolInput: Record<string, unknown>) => Promise<{
  blocked: boolean;
  reason?: string;
}>;

async function standInDecider(): Promise<{ decide: Decide; how: string }> {
  const modPath = `${REPO_ROOT}/core/security/mod.ts`;
  if (await exists(modPath)) {
    try {
      const mod = await import(modPath);
      if (typeof mod.preToolUseCheck === "function") {
        return {
          how: "core/security preToolUseCheck",
          decide: async (tool_name, tool_input) => {
            const d = await mod.preToolUseCheck(
              { tool_name, tool_input },
              (p: string) => Deno.readFile(p).catch(() => null),
            );
            const blocked = d?.decision === "block" || d?.action === "block" || d?.block === true;
            return { blocked, reason: d?.reason };
          },
        };
      }
    } catch {
      // Fall through to the regex stand-in.
    }
  }
  const token = /\b(ghp_[A-Za-z0-9]{36}|sk-ant-[\w-]{20,}|AKIA[A-Z2-7]{16})\b/;
  return {
    how: "token regex (core/security not there yet)",
    decide: async (toolName, input) => {
      let text = JSON.stringify(input);
      const path = input.file_path ?? input.path;
      if (/^(Read|read_file|View|NotebookRead)$/.test(toolName) && typeof path === "string") {
        text = await Deno.readTextFile(path).catch(() => "");
      }
      const m = text.match(token);
      return m
        ? { blocked: true, reason: `Chronicle guard: ${toolName} would expose an api_key` }
        : { blocked: false };
    },
  };
}

async function startStandInServer(): Promise<GuardServer> {
  const { decide, how } = await standInDecider();
  const decisions: GuardServer["decisions"] = [];
  return await new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          url: `http://127.0.0.1:${port}`,
          mode: `stand-in server, ${how}`,
          decisions,
          stop: () => server.shutdown(),
        }),
    }, async (req) => {
      if (req.method !== "POST" || !req.url.endsWith("/api/security/pretooluse")) {
        return new Response("not found", { status: 404 });
      }
      const body = await req.json();
      const d = await decide(String(body.tool_name), body.tool_input ?? {});
      decisions.push({ tool_name: String(body.tool_name), blocked: d.blocked });
      return Response.json({ decision: d.blocked ? "block" : "allow", reason: d.reason });
    });
  });
}

async function installHook(ctx: RunContext, mode: HookMode, dataDir: string): Promise<void> {
  if (mode === "installer") {
    const r = await chronicle({ home: ctx.home, dataDir }, ["guard", "install"]);
    if (r.code !== 0) {
      throw new Error(`chronicle guard install exited ${r.code}: ${r.stderr.trim()}`);
    }
    return;
  }
  const program = mode === "guard"
    ? `--allow-net=127.0.0.1 --allow-read --allow-env ${REPO_ROOT}/guard/main.ts`
    : `-A ${REPO_ROOT}/tests/conformance/guard_standin_hook.ts`;
  const command = `${Deno.execPath()} run --no-prompt ${program}`;
  await Deno.mkdir(`${ctx.home}/.claude`, { recursive: true });
  await Deno.writeTextFile(
    `${ctx.home}/.claude/settings.json`,
    JSON.stringify(
      {
        hooks: {
          PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command, timeout: 10 }] }],
        },
      },
      null,
      2,
    ),
  );
}

/** The tool results the model server received, in order (from the last request). */
function resultsSeen(run: DriveResult) {
  const last = [...run.requests].reverse().find((r) => r.kind === "main");
  return last?.results ?? [];
}

export async function runGuardChecks(
  agent: AgentSpec,
  bin: string,
  root: string,
): Promise<GuardOutcome> {
  const lines: string[] = [];
  let ok = true;
  const fail = (msg: string) => {
    ok = false;
    lines.push(msg);
  };
  const token = fakeToken();
  const dataDir = `${root}/data-guard`;
  const serverHome = `${root}/home-guard-server`;
  await Deno.mkdir(serverHome, { recursive: true });
  const mode = await hookMode(dataDir, serverHome);

  // 1. Server up: the Read is blocked, the token never reaches the model, ls runs.
  // The real server when it can decide, else the stand-in (and say why).
  let server: GuardServer;
  let why = "";
  try {
    server = await startRealServer(serverHome, dataDir);
  } catch (e) {
    why = ` (${(e as Error).message})`;
    server = await startStandInServer();
  }
  lines.push(`hook: ${HOOK_LABEL[mode]}`, `server: ${server.mode}${why}`);
  const env = { CHRONICLE_URL: server.url, CHRONICLE_HOME: dataDir, DENO_DIR };
  let blockedRun: DriveResult;
  try {
    blockedRun = await drive(agent, guardScenario("guard-on", token, true), {
      root,
      bin,
      extraEnv: env,
      beforeRun: (ctx) => installHook(ctx, mode, dataDir),
    });
  } catch (e) {
    await server.stop();
    return { ok: false, lines: [...lines, `guard run: ${(e as Error).message}`] };
  }
  await server.stop();
  const problems = scriptProblems(blockedRun.calls, blockedRun.requests);
  if (blockedRun.exitCode !== 0) problems.push(`claude exited ${blockedRun.exitCode}`);
  for (const p of problems) fail(`server up: run: ${p}`);
  const leaked = blockedRun.requests.some((r) => r.body.includes(token));
  if (leaked) fail("server up: the token reached the model server (Read not blocked)");
  const [readRes, lsRes] = resultsSeen(blockedRun);
  if (readRes?.err !== true) {
    fail(`server up: the Read result is not an error: ${JSON.stringify(readRes)}`);
  }
  if (!lsRes || lsRes.err || !lsRes.head.includes("README.md")) {
    fail(`server up: the benign ls did not run: ${JSON.stringify(lsRes)}`);
  }
  if (!leaked && readRes?.err === true && lsRes?.head.includes("README.md")) {
    lines.push(
      `server up: Read blocked (${
        JSON.stringify(readRes.head.slice(0, 80))
      }), ls ran, token absent from ${blockedRun.requests.length} requests`,
    );
  }

  // Chronicle shows the blocked Read as an error whose result does not hold the token.
  const importProblems = await importedAsScripted(blockedRun, root, "server up", token);
  for (const l of importProblems) fail(l);
  if (!importProblems.length) {
    lines.push("server up: Chronicle imported the blocked Read as an error, without the token");
  }

  // 2. Server stopped: the hook fails open, both calls run.
  const openRun = await drive(agent, guardScenario("guard-off", token, false), {
    root,
    bin,
    extraEnv: { ...env, CHRONICLE_URL: server.url }, // nothing listens there any more
    beforeRun: (ctx) => installHook(ctx, mode, dataDir),
  });
  const problems2 = scriptProblems(openRun.calls, openRun.requests);
  if (openRun.exitCode !== 0) problems2.push(`claude exited ${openRun.exitCode}`);
  for (const p of problems2) fail(`server down: run: ${p}`);
  const [readRes2, lsRes2] = resultsSeen(openRun);
  const reached = openRun.requests.some((r) => r.body.includes(token));
  if (readRes2?.err !== false || !reached) {
    fail(`server down: the Read did not run (fail-open broken): ${JSON.stringify(readRes2)}`);
  }
  if (!lsRes2 || lsRes2.err || !lsRes2.head.includes("README.md")) {
    fail(`server down: the benign ls did not run: ${JSON.stringify(lsRes2)}`);
  }
  if (readRes2?.err === false && reached && lsRes2?.head.includes("README.md")) {
    lines.push("server down: both calls ran (fail-open), the token reached the model as expected");
  }
  return { ok, lines };
}

/** Import a guard run with Chronicle and compare it with its script; problems as lines. */
async function importedAsScripted(
  run: DriveResult,
  root: string,
  label: string,
  token: string,
): Promise<string[]> {
  const tag = run.ctx.home.split("/").pop();
  const imported = await importAndExport(
    { home: run.ctx.home, dataDir: `${root}/data-${tag}` },
    `${root}/export-${tag}`,
    (rows) => rows.find((r) => r.native_id === run.ctx.sessionId) ?? "no session for the run",
  );
  if (!imported.exported) return [`${label}: chronicle: ${imported.error}`];
  const out = await checkSession(servedOrder(run.calls, run.requests), imported.exported);
  const problems = out.mismatches.map((m) => `${label}: chronicle: ${m}`);
  const session = imported.exported.session;
  for (
    const op of Object.values(session.operations ?? {}) as { response?: { sha256?: string } }[]
  ) {
    const sha = op.response?.sha256;
    const bytes = sha ? await imported.exported.payload(sha) : undefined;
    if (bytes && new TextDecoder().decode(bytes).includes(token)) {
      problems.push(`${label}: chronicle: a tool result holds the token`);
    }
  }
  return problems;
}
