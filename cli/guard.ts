/**
 * `chronicle guard`: the live PreToolUse guard. `hook` (or `--offline`) decides a hook payload
 * in this process, exactly as the installed guard does; `install` / `uninstall` add or remove
 * the hook in Claude Code's settings.json (opt-in, edited in place, a backup first); `status`
 * runs the installed command on a known-bad and a known-good call and says whether it blocks.
 *
 * Exit codes: 2 only ever means "blocked" (Claude Code refuses the call). A usage error of any
 * `guard` command exits 1, so a misconfigured hook can never block every call.
 */
import {
  hasGuardHook,
  legacyGuardHooks,
  planInstall,
  planUninstall,
} from "../core/security/mod.ts";
import { denoGuardFs } from "../guard/fs.ts";
import { runHook, SELF_TEST_SESSION } from "../guard/hook.ts";
import { dataDir, ensureDataDir } from "../runtime/data_dir.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";
import { guardFileDeps } from "../guard/files.ts";

export const GUARD_HELP = `Usage: chronicle guard hook
       chronicle guard install [--dry-run] [--command CMD]
       chronicle guard uninstall [--dry-run] [--command CMD]
       chronicle guard status

The PreToolUse guard for Claude Code: before a tool call runs, it finds the files the call
would read (shell words, redirections, substitutions, globs, search folders) and scans them
and the call's input. Sensitive files (.env, private keys, cloud credentials), API keys,
passwords, tokens, credential URLs and custom redact rules block the call (exit 2, the reason
on stderr, never the secret); e-mail addresses, phone numbers and private IPs are allowed.
It decides on its own, with the custom rules in the data folder; no server is needed.

  hook         read the hook payload on stdin and decide (--offline is the same)
  install      add one PreToolUse hook to ~/.claude/settings.json (a backup goes to the
               data folder first); installs a launcher in the data folder that survives a
               moved checkout; running it again changes nothing
  uninstall    remove exactly that hook
  status       run the installed hook on a known-bad and a known-good call and report
  --dry-run    print the change without writing anything
  --command    the hook command to install or remove (default: the launcher)
  -h, --help   show this help

Exit codes: 0 allowed, 2 blocked (hook only), 1 anything else (including usage errors).
`;

export interface GuardCommandDeps {
  /** The hook command `install` writes when `--command` is absent (installs the launcher). */
  installProgram?: (io: CliIo) => Promise<string>;
  /** The command `install` would write, without writing anything. */
  expectedCommand?: (io: CliIo) => Promise<string>;
  /** Clock for backup names. */
  now?: () => Date;
}

/** Where Claude Code keeps user settings: `$CLAUDE_CONFIG_DIR` or `~/.claude`. */
export function claudeSettingsPath(env: Record<string, string | undefined>): string {
  const dir = env.CLAUDE_CONFIG_DIR ||
    (env.HOME ? `${env.HOME.replace(/\/+$/, "")}/.claude` : undefined);
  if (!dir) throw new Error("Cannot find Claude Code's settings: HOME is not set");
  return `${dir.replace(/\/+$/, "")}/settings.json`;
}

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** The guard's folder in the data folder: the bundled program and its launcher. */
export function guardHome(env: Record<string, string | undefined>): string {
  return `${dataDir(env)}/guard`;
}

function compiledSibling(): string | null {
  const exec = Deno.execPath();
  if (exec.endsWith("/deno")) return null;
  const sibling = `${exec.slice(0, exec.lastIndexOf("/"))}/chronicle-guard`;
  try {
    return Deno.statSync(sibling).isFile ? sibling : null;
  } catch {
    return null;
  }
}

/** The command `install` writes: the compiled guard beside this program, else the launcher. */
export function expectedGuardCommand(io: CliIo): Promise<string> {
  const compiled = compiledSibling();
  if (compiled) {
    const home = io.env.CHRONICLE_HOME;
    return Promise.resolve(
      (home ? `CHRONICLE_HOME=${shellQuote(home)} ` : "") + shellQuote(compiled),
    );
  }
  return Promise.resolve(shellQuote(`${guardHome(io.env)}/chronicle-guard`));
}

async function run(cmd: string, args: string[]): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/**
 * V8 flags of the installed guard: a young generation big enough that one decision never
 * collects garbage (without it every call paid a scavenge).
 */
export const GUARD_V8_FLAGS = "--min-semi-space-size=16";

/**
 * Installs the guard program where the hook can find it whatever happens to this checkout or
 * the npm cache: guard/main.ts bundled into one file in the data folder, and a launcher that
 * finds Deno (the one running now, else `deno` on PATH, else ~/.deno/bin). Returns the command.
 */
export async function installGuardProgram(io: CliIo): Promise<string> {
  const compiled = compiledSibling();
  if (compiled) return await expectedGuardCommand(io);
  const data = await ensureDataDir(dataDir(io.env));
  const home = `${data}/guard`;
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const main = new URL("../guard/main.ts", import.meta.url);
  const source = main.protocol === "file:" ? decodeURIComponent(main.pathname) : main.href;
  const bundle = `${home}/guard.js`;
  let program = bundle;
  let bundled = false;
  for (const deno of ["deno", Deno.execPath()]) {
    try {
      const r = await run(deno, ["bundle", "--quiet", source, "-o", `${bundle}.tmp`]);
      if (r.code === 0) {
        await Deno.chmod(`${bundle}.tmp`, 0o600);
        await Deno.rename(`${bundle}.tmp`, bundle);
        bundled = true;
        break;
      }
    } catch {
      // that deno cannot be run: try the next
    }
  }
  if (!bundled) program = source; // runs from the checkout: status says so if it moves
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  // the Deno running now, else one on PATH, else ~/.deno/bin; no subshell when the first is there
  const launcher = [
    "#!/bin/sh",
    "# Chronicle's PreToolUse guard, written by `chronicle guard install`: Claude Code runs it",
    "# before each tool call. It decides locally; exit 2 blocks the call.",
    `deno=${q(Deno.execPath())}`,
    '[ -x "$deno" ] || deno=$(command -v deno 2>/dev/null)',
    '[ -n "$deno" ] && [ -x "$deno" ] || deno="$HOME/.deno/bin/deno"',
    'if [ -x "$deno" ]; then',
    `  CHRONICLE_HOME=${q(data)} exec "$deno" run --quiet --no-prompt --no-config --no-lock \\`,
    `    --v8-flags=${GUARD_V8_FLAGS} \\`,
    `    --allow-read --allow-write=${q(data)} --allow-env=HOME,CHRONICLE_HOME ${q(program)}`,
    "fi",
    'echo "Chronicle guard: Deno was not found; this call was NOT checked." >&2',
    "exit 1",
    "",
  ].join("\n");
  const path = `${home}/chronicle-guard`;
  await Deno.writeTextFile(`${path}.tmp`, launcher, { mode: 0o700 });
  await Deno.chmod(`${path}.tmp`, 0o700);
  await Deno.rename(`${path}.tmp`, path);
  return shellQuote(path);
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

/**
 * The file to edit: a symlinked settings.json is edited where it points; anything but a
 * regular file, or a read-only one, is refused with a message saying so. Null when missing.
 */
async function settingsTarget(path: string): Promise<{ real: string; mode: number } | null> {
  let real = path;
  try {
    real = await Deno.realPath(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      try {
        await Deno.lstat(path);
        throw new Error(`Cannot edit "${path}": it is a symlink to a missing file`);
      } catch (inner) {
        if (inner instanceof Deno.errors.NotFound) return null;
        throw inner;
      }
    }
    throw e;
  }
  const info = await Deno.stat(real);
  if (!info.isFile) {
    throw new Error(`Cannot edit "${path}": it is not a regular file`);
  }
  const mode = (info.mode ?? 0o644) & 0o777;
  if ((mode & 0o222) === 0) {
    throw new Error(
      `Cannot edit "${path}": it is read-only (make it writable, or edit it yourself)`,
    );
  }
  return { real, mode };
}

async function writeSettings(path: string, text: string, mode: number): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.chronicle-${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, text, { mode, createNew: true });
  await Deno.chmod(tmp, mode);
  await Deno.rename(tmp, path);
}

/**
 * Applies (or, with `dryRun`, only describes) an install or uninstall of the guard hook running
 * `command`. A settings.json that is not valid JSON(C) throws a SyntaxError and is left untouched.
 * The old file is copied to `<data dir>/backups/settings-<time>.json` (0600) before any change.
 */
export async function changeGuardHook(
  env: Record<string, string | undefined>,
  options: { install: boolean; dryRun: boolean; command: string; now?: () => Date },
): Promise<HookChange> {
  const path = claudeSettingsPath(env);
  const target = await settingsTarget(path);
  const current = target ? await Deno.readTextFile(target.real) : null;
  const plan = options.install
    ? planInstall(current, options.command, path)
    : planUninstall(current, options.command, path);
  const change: HookChange = {
    changed: plan.changed,
    dry_run: options.dryRun,
    settings_path: path,
    summary: plan.summary,
    command: options.command,
  };
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
    await Deno.chmod(backup, 0o600);
    change.backup_path = backup;
  }
  await writeSettings(target?.real ?? path, plan.text, target?.mode ?? 0o600);
  return change;
}

/** A call the guard must block (a token in the command) and one it must allow. */
function selfTestPayloads(): { bad: string; good: string } {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(36));
  const token = "gh" + "p_" + Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
  const call = (command: string) =>
    JSON.stringify({
      hook_event_name: "PreToolUse",
      session_id: SELF_TEST_SESSION,
      tool_name: "Bash",
      tool_input: { command },
      cwd: "/",
    });
  return { bad: call(`echo ${token}`), good: call("true") };
}

async function runHookCommand(command: string, stdin: string): Promise<number> {
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  try {
    return (await child.status).code;
  } finally {
    clearTimeout(timer);
  }
}

export interface GuardStatusReport {
  installed: boolean;
  /** Set when installed: the hook really blocks the bad call and allows the good one. */
  working?: boolean;
  settings_path: string;
  command: string;
  /** One sentence: what status found. */
  detail: string;
}

/** Whether the guard hook is installed, and whether it really works when run as Claude Code does. */
export async function guardHookStatus(
  env: Record<string, string | undefined>,
  command: string,
): Promise<GuardStatusReport> {
  const path = claudeSettingsPath(env);
  const target = await settingsTarget(path).catch(() => null);
  const text = target ? await Deno.readTextFile(target.real) : null;
  if (!hasGuardHook(text, command, path)) {
    const old = legacyGuardHooks(text, command, path);
    if (old.length) {
      return {
        installed: true,
        working: false,
        settings_path: path,
        command: old[0],
        detail:
          `An earlier Chronicle guard hook is installed in ${path}; it asks a server instead of ` +
          "deciding on its own. Run `chronicle guard install` to upgrade it.",
      };
    }
    return {
      installed: false,
      settings_path: path,
      command,
      detail: `The guard hook is not installed in ${path}.`,
    };
  }
  const { bad, good } = selfTestPayloads();
  let blocked = -1;
  let allowed = -1;
  try {
    blocked = await runHookCommand(command, bad);
    allowed = await runHookCommand(command, good);
  } catch (e) {
    return {
      installed: true,
      working: false,
      settings_path: path,
      command,
      detail: `The guard hook is installed but BROKEN: it cannot be run (${(e as Error).message}).`,
    };
  }
  const working = blocked === 2 && allowed === 0;
  return {
    installed: true,
    working,
    settings_path: path,
    command,
    detail: working
      ? "The guard hook is installed and working: it blocked a call carrying a token and allowed a harmless one."
      : `The guard hook is installed but BROKEN: a call carrying a token exited ${blocked} (2 blocks), a harmless one ${allowed} (0 allows). Run \`chronicle guard install\` again.`,
  };
}

/** Runs the hook on stdin, as the installed guard does (guard/main.ts), through `io`. */
async function hook(io: CliIo): Promise<number> {
  let dir: string | null = null;
  try {
    dir = dataDir(io.env);
  } catch {
    dir = null; // no HOME: the built-in rules still decide
  }
  return await runHook({
    readStdin: async () => new TextDecoder().decode(await io.stdin()),
    fs: denoGuardFs,
    ...guardFileDeps(dir),
    stderr: io.stderr,
    home: io.env.HOME,
  });
}

/** Makes `chronicle guard` with its dependencies injected. */
export function makeGuardCommand(deps: GuardCommandDeps = {}): Command {
  const guard: Command = async (args, io) => {
    const [sub, ...rest] = args;
    const expected = () => (deps.expectedCommand ?? expectedGuardCommand)(io);
    if (sub === "install" || sub === "uninstall") {
      const p = parseArgs(rest, { "dry-run": { type: "boolean" }, command: { type: "string" } });
      const early = helpOrVersion(p, GUARD_HELP, io);
      if (early !== null) return early;
      if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
      const dryRun = p.values["dry-run"] === true;
      let command = str(p.values.command);
      if (command !== undefined && (command.includes("\n") || !command.trim())) {
        throw new UsageError("--command must be one non-empty line");
      }
      if (!command) {
        command = sub === "install" && !dryRun
          ? await (deps.installProgram ?? installGuardProgram)(io)
          : await expected();
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
        io.stderr(`chronicle guard: ${(e as Error).message}. Nothing was changed.\n`);
        return 1;
      }
      if (!change.changed) {
        io.stdout(`${change.summary}. Nothing to do.\n`);
        return 0;
      }
      if (dryRun) {
        io.stdout(`Dry run: ${change.summary}.\nHook command: ${change.command}\n`);
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
        const s = await guardHookStatus(io.env, await expected());
        io.stdout(`${s.detail}\n  settings: ${s.settings_path}\n  command:  ${s.command}\n`);
        return s.installed && !s.working ? 1 : 0;
      } catch (e) {
        io.stderr(`chronicle guard: ${(e as Error).message}\n`);
        return 1;
      }
    }
    if (sub === "hook") {
      const p = parseArgs(rest, {});
      const early = helpOrVersion(p, GUARD_HELP, io);
      if (early !== null) return early;
      return await hook(io);
    }
    const p = parseArgs(args, { offline: { type: "boolean" } });
    const early = helpOrVersion(p, GUARD_HELP, io);
    if (early !== null) return early;
    if (p.positionals.length) throw new UsageError(`unknown guard command "${p.positionals[0]}"`);
    if (!p.values.offline) {
      throw new UsageError("say what to do: hook, install, uninstall or status");
    }
    return await hook(io);
  };
  // A usage error must never exit 2: for a hook, 2 would block every call.
  return async (args, io) => {
    try {
      return await guard(args, io);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      io.stderr(`chronicle guard: ${e.message} (see chronicle guard --help)\n`);
      return 1;
    }
  };
}

/** `chronicle guard` with the real file system and the user's rules. */
export const guardCommand: Command = makeGuardCommand();
