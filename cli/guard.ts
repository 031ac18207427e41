/**
 * `chronicle guard`: the live PreToolUse guard. `--offline` decides a hook payload in process;
 * `hook` asks the running server (what guard/main.ts does); `install` / `uninstall` add or
 * remove the hook in Claude Code's settings.json (opt-in, with a backup); `status` tells.
 */
import {
  type CustomRule,
  installedGuardCommand,
  type Interception,
  planInstall,
  planUninstall,
  preToolUseCheck,
  type ReadFile,
} from "../core/security/mod.ts";
import { runGuard } from "../guard/main.ts";
import { dataDir, ensureDataDir } from "../runtime/data_dir.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";
import { loadUserRules } from "./scan.ts";

export const GUARD_HELP = `Usage: chronicle guard --offline
       chronicle guard hook
       chronicle guard install [--dry-run] [--command CMD]
       chronicle guard uninstall [--dry-run]
       chronicle guard status

The PreToolUse guard for Claude Code: before a tool call runs, it scans the file the call
would read and the input it would send. API keys, passwords, tokens, credential URLs and
custom redact rules block the call (exit 2, reason on stderr, never the secret); e-mail
addresses, phone numbers and private IPs are allowed.

  --offline    read the hook payload on stdin and decide here, without the server
  hook         read the hook payload on stdin and ask the running server (fails open)
  install      add one PreToolUse hook to ~/.claude/settings.json (a backup goes to
               the data folder first); running it again changes nothing
  uninstall    remove exactly that hook
  status       say whether the hook is installed
  --dry-run    print the change without writing anything
  --command    the hook command to install (default: this program's guard)
  -h, --help   show this help
`;

export interface GuardCommandDeps {
  /** Custom rules for `--offline`. Default: the store's rules when the store exists. */
  loadRules?: (io: CliIo) => Promise<readonly CustomRule[]> | readonly CustomRule[];
  /** Logs `--offline` decisions. Default: not logged (the server logs hook decisions). */
  log?: (io: CliIo, interception: Interception) => void | Promise<void>;
  /** Reads the files a tool would read. Default: the real file system. */
  readFile?: ReadFile;
  /** The hook command `install` writes when `--command` is absent. */
  defaultCommand?: (io: CliIo) => string | Promise<string>;
  /** Clock for backup names. */
  now?: () => Date;
}

/** Reads at most `maxBytes` of a regular file; null for folders and missing files. */
export const denoReadFile: ReadFile = async (path, maxBytes) => {
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(path, { read: true });
    const info = await file.stat();
    if (!info.isFile) return null;
    const buf = new Uint8Array(Math.min(info.size, maxBytes));
    let n = 0;
    while (n < buf.length) {
      const r = await file.read(buf.subarray(n));
      if (r === null) break;
      n += r;
    }
    return buf.subarray(0, n);
  } catch {
    return null;
  } finally {
    file?.close();
  }
};

/** Where Claude Code keeps user settings: `$CLAUDE_CONFIG_DIR` or `~/.claude`. */
export function claudeSettingsPath(env: Record<string, string | undefined>): string {
  const dir = env.CLAUDE_CONFIG_DIR ||
    (env.HOME ? `${env.HOME.replace(/\/+$/, "")}/.claude` : undefined);
  if (!dir) throw new Error("Cannot find Claude Code's settings: HOME is not set");
  return `${dir.replace(/\/+$/, "")}/settings.json`;
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/**
 * The command that runs the guard: a `chronicle-guard` binary beside this program, this
 * program's `guard hook` when it is a compiled chronicle, else `deno run` of guard/main.ts
 * with only loopback network, the token file and three variables.
 */
export async function defaultGuardCommand(io: CliIo): Promise<string> {
  const env: string[] = [];
  if (io.env.CHRONICLE_HOME) env.push(`CHRONICLE_HOME=${shellQuote(io.env.CHRONICLE_HOME)}`);
  if (io.env.CHRONICLE_URL) env.push(`CHRONICLE_URL=${shellQuote(io.env.CHRONICLE_URL)}`);
  const prefix = env.length ? env.join(" ") + " " : "";
  const exec = Deno.execPath();
  const dir = exec.slice(0, exec.lastIndexOf("/"));
  // the compiled guard may read only ~/.chronicle/token (see the compile:guard task)
  if (!io.env.CHRONICLE_HOME) {
    try {
      if ((await Deno.stat(`${dir}/chronicle-guard`)).isFile) {
        return prefix + shellQuote(`${dir}/chronicle-guard`);
      }
    } catch {
      // no sibling binary
    }
  }
  const base = exec.slice(exec.lastIndexOf("/") + 1);
  if (base !== "deno") return `${prefix}${shellQuote(exec)} guard hook`;
  const main = new URL("../guard/main.ts", import.meta.url);
  const token = `${dataDir(io.env)}/token`;
  return `${prefix}${shellQuote(exec)} run --quiet --no-prompt --allow-net=127.0.0.1 ` +
    `--allow-read=${shellQuote(token)} --allow-env=HOME,CHRONICLE_HOME,CHRONICLE_URL ` +
    shellQuote(main.protocol === "file:" ? decodeURIComponent(main.pathname) : main.href);
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.(\d+)Z$/, "$1Z");
}

/** The outcome of an install or uninstall, as the CLI prints it and the API returns it. */
export interface HookChange {
  changed: boolean;
  dry_run: boolean;
  settings_path: string;
  summary: string;
  command?: string;
  backup_path?: string;
  /** The settings file content after the change (what a dry run would write). */
  settings?: string;
}

async function writeSettings(path: string, text: string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  let mode = 0o644;
  try {
    mode = (await Deno.stat(path)).mode! & 0o777;
  } catch {
    // new file
  }
  const tmp = `${path}.chronicle-${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, text, { mode });
  if (Deno.build.os !== "windows") await Deno.chmod(tmp, mode);
  await Deno.rename(tmp, path);
}

/**
 * Applies (or, with `dryRun`, only describes) an install or uninstall of the guard hook. A
 * settings.json that is not valid JSON throws a SyntaxError and is left untouched. The old file
 * is copied to `<data dir>/backups/settings-<time>.json` (0600) before any change.
 */
export async function changeGuardHook(
  env: Record<string, string | undefined>,
  options: { install: boolean; dryRun: boolean; command?: string; now?: () => Date },
): Promise<HookChange> {
  const path = claudeSettingsPath(env);
  const current = await readOptional(path);
  const plan = options.install
    ? planInstall(current, options.command ?? "", path)
    : planUninstall(current, path);
  const change: HookChange = {
    changed: plan.changed,
    dry_run: options.dryRun,
    settings_path: path,
    summary: plan.summary,
  };
  if (options.install) change.command = installedGuardCommand(plan.text || null, path) ?? undefined;
  if (!plan.changed) return change;
  change.settings = plan.text;
  if (options.dryRun) return change;
  if (current !== null) {
    const dir = await ensureDataDir(dataDir(env));
    await Deno.mkdir(`${dir}/backups`, { recursive: true, mode: 0o700 });
    const base = `${dir}/backups/settings-${stamp((options.now ?? (() => new Date()))())}`;
    let backup = `${base}.json`;
    for (let n = 1;; n++) {
      try {
        await Deno.writeTextFile(backup, current, { mode: 0o600, createNew: true });
        break;
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists) || n > 100) throw e;
        backup = `${base}-${n}.json`;
      }
    }
    if (Deno.build.os !== "windows") await Deno.chmod(backup, 0o600);
    change.backup_path = backup;
  }
  await writeSettings(path, plan.text);
  return change;
}

/** Whether the guard hook is in Claude Code's settings, and its command. */
export async function guardHookStatus(env: Record<string, string | undefined>) {
  const path = claudeSettingsPath(env);
  const command = installedGuardCommand(await readOptional(path), path);
  return { installed: command !== null, settings_path: path, command };
}

/** Makes `chronicle guard` with its dependencies injected. */
export function makeGuardCommand(deps: GuardCommandDeps = {}): Command {
  return async (args, io) => {
    const [sub, ...rest] = args;
    if (sub === "install" || sub === "uninstall") {
      const p = parseArgs(rest, {
        "dry-run": { type: "boolean" },
        ...(sub === "install" ? { command: { type: "string" as const } } : {}),
      });
      const early = helpOrVersion(p, GUARD_HELP, io);
      if (early !== null) return early;
      if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
      const dryRun = p.values["dry-run"] === true;
      let command = str(p.values.command);
      if (sub === "install" && !command) {
        command = await (deps.defaultCommand ?? defaultGuardCommand)(io);
      }
      if (command !== undefined && command.includes("\n")) {
        throw new UsageError("--command must be one line");
      }
      let change: HookChange;
      try {
        change = await changeGuardHook(io.env, {
          install: sub === "install",
          dryRun,
          command,
          now: deps.now,
        });
      } catch (e) {
        if (e instanceof SyntaxError) {
          io.stderr(`chronicle guard: ${e.message}. Nothing was changed.\n`);
          return 1;
        }
        throw e;
      }
      if (!change.changed) {
        io.stdout(`${change.summary}. Nothing to do.\n`);
        return 0;
      }
      if (dryRun) {
        io.stdout(`Dry run: ${change.summary}.\n`);
        if (change.command) io.stdout(`Hook command: ${change.command}\n`);
        io.stdout(`The file would become:\n${change.settings}`);
        return 0;
      }
      io.stdout(`${change.summary}.\n`);
      if (change.command) io.stdout(`Hook command: ${change.command}\n`);
      if (change.backup_path) io.stdout(`Backup of the previous file: ${change.backup_path}\n`);
      return 0;
    }
    if (sub === "status") {
      const p = parseArgs(rest, {});
      const early = helpOrVersion(p, GUARD_HELP, io);
      if (early !== null) return early;
      try {
        const s = await guardHookStatus(io.env);
        io.stdout(
          s.installed
            ? `The guard hook is installed in ${s.settings_path}:\n  ${s.command}\n`
            : `The guard hook is not installed (${s.settings_path}).\n`,
        );
        return 0;
      } catch (e) {
        if (e instanceof SyntaxError) {
          io.stderr(`chronicle guard: ${e.message}\n`);
          return 1;
        }
        throw e;
      }
    }
    if (sub === "hook") {
      const p = parseArgs(rest, {});
      const early = helpOrVersion(p, GUARD_HELP, io);
      if (early !== null) return early;
      return await runGuard({
        env: (name) => io.env[name],
        readStdin: async () => new TextDecoder().decode(await io.stdin()),
        readTextFile: (path) => Deno.readTextFile(path),
        fetch,
        stderr: io.stderr,
      }, AbortSignal.timeout(3000));
    }
    const p = parseArgs(args, { offline: { type: "boolean" } });
    const early = helpOrVersion(p, GUARD_HELP, io);
    if (early !== null) return early;
    if (p.positionals.length) throw new UsageError(`unknown guard command "${p.positionals[0]}"`);
    if (!p.values.offline) {
      throw new UsageError("say what to do: --offline, hook, install, uninstall or status");
    }
    return await offline(io, deps);
  };
}

/** Decides the hook payload on stdin in process. Exit 2 on block; 0 otherwise (fails open). */
async function offline(io: CliIo, deps: GuardCommandDeps): Promise<number> {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(new TextDecoder().decode(await io.stdin()));
  } catch {
    io.stderr("chronicle guard: the hook payload on stdin is not JSON; allowing the call\n");
    return 0;
  }
  if (!payload || typeof payload.tool_name !== "string") return 0;
  if (payload.hook_event_name !== undefined && payload.hook_event_name !== "PreToolUse") return 0;
  let rules: readonly CustomRule[] = [];
  try {
    rules = await (deps.loadRules ?? loadUserRules)(io);
  } catch {
    rules = []; // the built-in rules still apply
  }
  const decision = await preToolUseCheck(
    {
      tool_name: payload.tool_name,
      tool_input: payload.tool_input ?? {},
      cwd: typeof payload.cwd === "string" ? payload.cwd : io.cwd,
      session_id: typeof payload.session_id === "string" ? payload.session_id : undefined,
    },
    deps.readFile ?? denoReadFile,
    { rules },
  );
  try {
    await deps.log?.(io, decision.interception);
  } catch {
    // logging never changes the decision
  }
  if (decision.decision === "block") {
    io.stderr(decision.reason + "\n");
    return 2;
  }
  return 0;
}

/** `chronicle guard` with the real file system and the user's rules. */
export const guardCommand: Command = makeGuardCommand();
