/**
 * Runs one scenario through one real agent CLI: a scratch project (a git repository holding
 * the scenario's files) and a scratch HOME, a scripted model server for the agent's wire
 * protocol, the CLI itself with a clean environment, and a record of what happened.
 *
 * @module
 */
import type { AgentSpec, RunContext } from "./agents.ts";
import type { Scenario } from "./scenarios.ts";
import { type ModelServer, type RequestLogEntry, startModelServer } from "./servers/mod.ts";
import { type ExpectedCall, translate } from "./translate.ts";
import type { NativeScript } from "./script.ts";

export interface DriveOptions {
  /** Folder that receives projects/<scenario> and home-<agent>-<scenario>. */
  root: string;
  /** Where the installed CLI's executable is. */
  bin: string;
  /** Seconds before the CLI is killed. */
  timeoutSeconds?: number;
  /** Extra setup after the agent's own (e.g. installing the guard hook). */
  beforeRun?: (ctx: RunContext) => Promise<void>;
  /** Extra environment for the CLI (e.g. CHRONICLE_URL for the guard). */
  extraEnv?: Record<string, string>;
  /** Replace the translated script (the guard scenario scripts its own calls). */
  script?: NativeScript;
  prompt?: string;
  /** Milliseconds the model server waits before each answer (see ModelServerOptions). */
  replyDelayMs?: number;
}

export interface DriveResult {
  ctx: RunContext;
  script: NativeScript;
  calls: ExpectedCall[];
  prompt: string;
  argv: string[];
  exitCode: number;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  requests: RequestLogEntry[];
}

/** Run `scenario` through `agent`; the model server lives as long as the run. */
export async function drive(
  agent: AgentSpec,
  scenario: Scenario,
  options: DriveOptions,
): Promise<DriveResult> {
  const project = `${options.root}/projects/${scenario.id}`;
  const home = `${options.root}/home-${agent.id}-${scenario.id}`;
  const tmp = `${home}/tmp`;
  for (const d of [project, home, tmp]) {
    await Deno.remove(d, { recursive: true }).catch(() => {});
    await Deno.mkdir(d, { recursive: true });
  }
  await createProject(project, scenario.files, home);
  const translated = translate(scenario, agent.id, project);
  const script = options.script ?? translated.script;
  const prompt = options.prompt ?? scenario.main.prompt;
  const server: ModelServer = await startModelServer(agent.protocol, script, {
    replyDelayMs: options.replyDelayMs,
  });
  const ctx: RunContext = {
    home,
    project,
    tmp,
    serverUrl: server.url,
    bin: options.bin,
    sessionId: crypto.randomUUID(),
    needs: scenario.needs ?? [],
  };
  try {
    await agent.setup(ctx);
    await options.beforeRun?.(ctx);
    const argv = agent.argv(ctx, prompt);
    const env = { ...baseEnv(ctx), ...agent.env(ctx), ...options.extraEnv };
    const started = performance.now();
    const timeout = options.timeoutSeconds ?? agent.timeoutSeconds ?? 180;
    const out = await runWithTimeout(argv, { cwd: project, env }, timeout);
    if (scenario.resume && out.exitCode === 0 && !out.timedOut) {
      // The CLI exited; a second process resumes its session with the next prompt.
      const again = await runWithTimeout(
        agent.resumeArgv(ctx, scenario.resume.prompt),
        { cwd: project, env },
        timeout,
      );
      out.exitCode = again.exitCode;
      out.timedOut = again.timedOut;
      out.stdout += again.stdout;
      out.stderr += again.stderr;
    }
    return {
      ctx,
      script,
      calls: translated.calls,
      prompt,
      argv,
      ...out,
      durationMs: Math.round(performance.now() - started),
      requests: server.requests,
    };
  } finally {
    await server.close();
  }
}

/** The only environment a CLI sees: nothing leaks in from the host. */
export function baseEnv(ctx: { home: string; tmp: string }): Record<string, string> {
  return {
    HOME: ctx.home,
    USER: "root",
    TMPDIR: ctx.tmp,
    PATH: [
      "/usr/local/sbin",
      "/usr/local/bin",
      "/usr/sbin",
      "/usr/bin",
      "/sbin",
      "/bin",
      dirOf(Deno.execPath()),
    ].join(":"),
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    SHELL: "/bin/bash",
    XDG_CONFIG_HOME: `${ctx.home}/.config`,
    XDG_DATA_HOME: `${ctx.home}/.local/share`,
    XDG_CACHE_HOME: `${ctx.home}/.cache`,
    XDG_STATE_HOME: `${ctx.home}/.local/state`,
    GIT_CONFIG_NOSYSTEM: "1",
    NO_UPDATE_NOTIFIER: "1",
    npm_config_update_notifier: "false",
  };
}

function dirOf(p: string): string {
  return p.slice(0, p.lastIndexOf("/"));
}

async function createProject(dir: string, files: Record<string, string>, home: string) {
  for (const [rel, text] of Object.entries(files)) {
    const path = `${dir}/${rel}`;
    await Deno.mkdir(dirOf(path), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  const git = async (...args: string[]) => {
    const r = await new Deno.Command("git", {
      args,
      cwd: dir,
      env: {
        HOME: home,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "Dev",
        GIT_AUTHOR_EMAIL: "dev@example.com",
        GIT_COMMITTER_NAME: "Dev",
        GIT_COMMITTER_EMAIL: "dev@example.com",
        GIT_AUTHOR_DATE: "2026-11-30T09:00:00Z",
        GIT_COMMITTER_DATE: "2026-11-30T09:00:00Z",
      },
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!r.success) {
      throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(r.stderr)}`);
    }
  };
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", "initial");
}

async function runWithTimeout(
  argv: string[],
  opts: { cwd: string; env: Record<string, string> },
  seconds: number,
): Promise<{ exitCode: number; timedOut: boolean; stdout: string; stderr: string }> {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, seconds * 1000);
  const out = await child.output();
  clearTimeout(timer);
  const dec = new TextDecoder();
  return {
    exitCode: out.code,
    timedOut,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}
