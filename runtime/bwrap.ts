/**
 * @module
 * The shell jail for confirmed replay steps: bubblewrap (`bwrap`) with no network, the host
 * read-only, the sandbox writable and mounted at the project's recorded path, a private home
 * and /tmp, a clean environment, a timeout and capped output. Without bwrap, steps are refused
 * with a message saying how to get it.
 */
import type { ProcessRunner } from "../core/git/mod.ts";
import { dirname, normalizePath } from "../core/git/mod.ts";
import type { ShellResult, ShellRunner, ShellRunOptions } from "../core/replay/mod.ts";

export interface BwrapOptions {
  /** The host's HOME: hidden behind an empty tmpfs inside the jail. */
  home?: string;
  /** Chronicle's data folder: hidden too. */
  dataDir?: string;
  /** Default 60 s. */
  timeoutMs?: number;
  /** Bytes of output kept. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Default "bwrap". */
  program?: string;
  /** Whether a path exists on the host (to choose mount points). Default Deno.lstatSync. */
  exists?: (path: string) => boolean;
}

export const HOW_TO_GET_BWRAP =
  "shell steps run only under bubblewrap, which is not installed: install it with " +
  "`apt-get install bubblewrap` (Debian, Ubuntu), `dnf install bubblewrap` (Fedora) or " +
  "`pacman -S bubblewrap` (Arch); `.ci/run` installs it";

/** Folders a tmpfs must never cover (the jail's commands need them). */
const SYSTEM = new Set([
  "/",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/proc",
  "/dev",
  "/sys",
  "/run",
  "/var",
  "/boot",
  "/opt",
  "/nix",
]);

/** Where the sandbox is mounted when the project's path cannot be used. */
const FALLBACK_MOUNT = "/tmp/project";

const JAIL_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

function hostExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bwrap argument vector for one command. Exported for tests: every flag that isolates the
 * command is visible here.
 */
export function bwrapArgs(
  command: string | string[],
  run: ShellRunOptions,
  options: BwrapOptions & { exists: (p: string) => boolean },
): { args: string[]; mount: string } {
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
  ];
  const home = options.home && !SYSTEM.has(normalizePath(options.home))
    ? normalizePath(options.home)
    : "/tmp/home";
  if (home !== "/tmp/home" && options.exists(home)) args.push("--tmpfs", home);
  else args.push("--dir", "/tmp/home");
  if (options.dataDir && options.exists(options.dataDir)) {
    args.push("--tmpfs", normalizePath(options.dataDir));
  }
  let mount = FALLBACK_MOUNT;
  const project = run.projectPath ? normalizePath(run.projectPath) : null;
  if (project && !SYSTEM.has(project)) {
    let anc = project;
    while (!options.exists(anc)) anc = dirname(anc);
    if (anc === project || (!SYSTEM.has(anc) && anc !== "/")) {
      // A tmpfs over the nearest existing folder lets bwrap make the mount point there.
      if (anc !== project && anc !== home) args.push("--tmpfs", anc);
      mount = project;
    }
  }
  const cwd = run.workdir ? `${mount}/${normalizePath(run.workdir)}` : mount;
  args.push("--bind", run.sandbox, mount, "--chdir", cwd);
  args.push(
    "--clearenv",
    "--setenv",
    "PATH",
    JAIL_PATH,
    "--setenv",
    "HOME",
    home,
    "--setenv",
    "LANG",
    "C.UTF-8",
    "--setenv",
    "TERM",
    "dumb",
    "--setenv",
    "CHRONICLE_REPLAY",
    "1",
  );
  // stderr joins stdout (as the agents show it); the command itself is passed as an argument,
  // never spliced into a script.
  if (typeof command === "string") {
    args.push("--", "/bin/bash", "-c", 'exec 2>&1; exec /bin/bash -c "$1"', "replay", command);
  } else {
    args.push("--", "/bin/bash", "-c", 'exec 2>&1; exec "$@"', "replay", ...command);
  }
  return { args, mount };
}

export function createBwrapShell(run: ProcessRunner, options: BwrapOptions = {}): ShellRunner {
  const program = options.program ?? "bwrap";
  const exists = options.exists ?? hostExists;
  let checked: Promise<{ ok: true; description: string } | { ok: false; reason: string }> | null =
    null;
  const decoder = new TextDecoder();
  return {
    available() {
      checked ??= (async () => {
        try {
          const r = await run(program, [
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--",
            "/bin/true",
          ], { env: { PATH: JAIL_PATH }, timeoutMs: 10_000 });
          if (r.code !== 0) {
            return {
              ok: false as const,
              reason: `bubblewrap cannot make a sandbox here (${
                decoder.decode(r.stderr).trim().slice(0, 300) || `exit ${r.code}`
              }): shell steps are refused`,
            };
          }
        } catch {
          return { ok: false as const, reason: HOW_TO_GET_BWRAP };
        }
        return {
          ok: true as const,
          description:
            "bubblewrap: no network, host read-only, the sandbox writable at the project's path, private home and /tmp, clean environment, " +
            `${Math.round((options.timeoutMs ?? 60_000) / 1000)} s timeout`,
        };
      })();
      return checked;
    },
    async run(command, opts): Promise<ShellResult> {
      const { args } = bwrapArgs(command, opts, { ...options, exists });
      const r = await run(program, args, {
        env: { PATH: JAIL_PATH },
        timeoutMs: options.timeoutMs ?? 60_000,
        maxOutputBytes: options.maxOutputBytes ?? 1 << 20,
      });
      return {
        code: r.code,
        output: decoder.decode(r.stdout) + decoder.decode(r.stderr),
        truncated: r.truncated,
        timedOut: r.timedOut,
      };
    },
  };
}
