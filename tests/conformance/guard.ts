/**
 * The guard inside a real Claude Code, with no Chronicle server running. A scripted session
 * reads a `.env` holding a (freshly generated, fake) GitHub token, then runs a benign `ls`.
 * With the guard installed by `chronicle guard install` as the PreToolUse hook, the Read is
 * blocked by the guard alone (its result is an error and the token never reaches the model
 * server's request log), the Bash call runs, and the interception is in the guard's journal.
 *
 * @module
 */
import type { AgentSpec } from "./agents.ts";
import { chronicle, importAndExport } from "./chronicle.ts";
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
  const env = { CHRONICLE_HOME: dataDir, DENO_DIR };
  lines.push("hook: chronicle guard install; server: none (the guard decides on its own)");
  let run: DriveResult;
  try {
    run = await drive(agent, guardScenario("guard-on", token, true), {
      root,
      bin,
      extraEnv: env,
      beforeRun: async (ctx) => {
        const r = await chronicle({ home: ctx.home, dataDir }, ["guard", "install"]);
        if (r.code !== 0) {
          throw new Error(`chronicle guard install exited ${r.code}: ${r.stderr.trim()}`);
        }
      },
    });
  } catch (e) {
    return { ok: false, lines: [...lines, `guard run: ${(e as Error).message}`] };
  }
  const problems = scriptProblems(run.calls, run.requests);
  if (run.exitCode !== 0) problems.push(`claude exited ${run.exitCode}`);
  for (const p of problems) fail(`no server: run: ${p}`);
  const leaked = run.requests.some((r) => r.body.includes(token));
  if (leaked) fail("no server: the token reached the model server (Read not blocked)");
  const [readRes, lsRes] = resultsSeen(run);
  if (readRes?.err !== true) {
    fail(`no server: the Read result is not an error: ${JSON.stringify(readRes)}`);
  }
  if (!lsRes || lsRes.err || !lsRes.head.includes("README.md")) {
    fail(`no server: the benign ls did not run: ${JSON.stringify(lsRes)}`);
  }
  if (!leaked && readRes?.err === true && lsRes?.head.includes("README.md")) {
    lines.push(
      `no server: Read blocked (${
        JSON.stringify(readRes.head.slice(0, 80))
      }), ls ran, token absent from ${run.requests.length} requests`,
    );
  }
  // the guard journaled the interception without any server
  const journal = await Deno.readTextFile(`${dataDir}/interceptions.jsonl`).catch(() => "");
  if (!journal.includes('"action":"block"')) fail("no server: the interception was not journaled");
  else if (journal.includes(token)) fail("no server: the journal holds the token");
  else lines.push("no server: the interception is in the guard's journal, masked");

  // Chronicle shows the blocked Read as an error whose result does not hold the token.
  const importProblems = await importedAsScripted(run, root, "no server", token);
  for (const l of importProblems) fail(l);
  if (!importProblems.length) {
    lines.push("no server: Chronicle imported the blocked Read as an error, without the token");
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
