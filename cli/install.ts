/**
 * `chronicle install` / `chronicle uninstall`: a `chronicle` launcher on PATH for a checkout.
 * The launcher finds Deno (the one that installed it, else `deno` on PATH, else ~/.deno/bin,
 * else `npx deno`), runs this checkout's main.ts with the permission flags of `deno task
 * chronicle`, from the folder the user is in. An update is a `git pull` in the checkout; a
 * moved checkout, or a deno.json newer than the launcher (its flags may have changed), says to
 * install again.
 */
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";
import { shellQuote } from "./guard.ts";
import { userPath } from "./user_cwd.ts";

export const INSTALL_HELP = `Usage: chronicle install [--dir DIR] [--dry-run]
       chronicle uninstall [--dir DIR] [--dry-run]

install writes a \`chronicle\` launcher into DIR (default ~/.local/bin) that runs this
checkout with the permissions of \`deno task chronicle\`, from whatever folder you are in.
To update Chronicle, update the checkout (git pull); the launcher runs whatever it holds,
and says to run install again when the update changed deno.json (its flags).
uninstall removes the launcher (only a file install wrote); your data folder stays.

Options:
  --dir DIR    where the launcher goes (default ~/.local/bin); it should be on your PATH
  --dry-run    print the launcher and where it would go, write nothing
  -h, --help   show this help
`;

/** Marks a file `install` wrote: `uninstall` removes nothing else. */
const MARK = "# Chronicle's launcher, written by `chronicle install`.";
const DENO_VERSION = "2.9.6";

/**
 * The launcher script, written to `self`, for a checkout (a folder holding main.ts and
 * deno.json). It runs with the flags of deno.json's chronicle task as they were when it was
 * written; once deno.json is newer than the launcher (a `git pull` changed it), each run says to
 * install it again, as the flags (permissions, V8's) may have changed with it.
 */
export function launcherScript(
  checkout: string,
  flags: string[],
  denoPath: string,
  self: string,
): string {
  const q = shellQuote;
  return [
    "#!/bin/sh",
    MARK,
    "# Remove it with `chronicle uninstall`; update Chronicle with `git pull` in its checkout.",
    `checkout=${q(checkout)}`,
    'if [ ! -f "$checkout/main.ts" ]; then',
    '  echo "chronicle: its checkout $checkout is gone; run \\`npx -y deno@' + DENO_VERSION +
    ' task chronicle install\\` in its new place" >&2',
    "  exit 1",
    "fi",
    `if [ "$checkout/deno.json" -nt ${q(self)} ]; then`,
    '  echo "chronicle: $checkout/deno.json changed after this launcher was written, and the flags' +
    ' it runs Chronicle with may have too: run \\`chronicle install\\` again" >&2',
    "fi",
    `deno=${q(denoPath)}`,
    '[ -x "$deno" ] || deno=$(command -v deno 2>/dev/null)',
    '[ -n "$deno" ] && [ -x "$deno" ] || deno="$HOME/.deno/bin/deno"',
    'if [ -x "$deno" ]; then',
    `  exec "$deno" run --quiet --config "$checkout/deno.json" ${
      flags.map(q).join(" ")
    } "$checkout/main.ts" "$@"`,
    "fi",
    `exec npx -y deno@${DENO_VERSION} run --quiet --config "$checkout/deno.json" ${
      flags.map(q).join(" ")
    } "$checkout/main.ts" "$@"`,
    "",
  ].join("\n");
}

function checkoutDir(): string | null {
  const url = new URL("../", import.meta.url);
  return url.protocol === "file:" ? decodeURIComponent(url.pathname).replace(/\/$/, "") : null;
}

/** The permission flags of `deno task chronicle`, read from the checkout's deno.json. */
async function taskFlags(checkout: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${checkout}/deno.json`));
  const command = String(config.tasks?.chronicle?.command ?? config.tasks?.chronicle ?? "");
  const words = command.split(/\s+/).filter(Boolean);
  if (words[0] !== "deno" || words[1] !== "run" || words.at(-1) !== "main.ts") {
    throw new Error("deno.json's chronicle task is not `deno run ... main.ts`");
  }
  return words.slice(2, -1);
}

function targetDir(io: CliIo, dir: string | undefined): string {
  if (dir) return userPath(io.cwd, dir);
  if (!io.env.HOME) throw new UsageError("HOME is not set: name the folder with --dir DIR");
  return `${io.env.HOME.replace(/\/+$/, "")}/.local/bin`;
}

function onPath(io: CliIo, dir: string): boolean {
  return (io.env.PATH ?? "").split(":").some((p) => p.replace(/\/+$/, "") === dir);
}

export const installCommand: Command = async (args, io) => {
  const p = parseArgs(args, { dir: { type: "string" }, "dry-run": { type: "boolean" } });
  const early = helpOrVersion(p, INSTALL_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const checkout = checkoutDir();
  if (!checkout || Deno.execPath().split("/").pop() === "chronicle") {
    io.stderr("chronicle: this is the compiled binary: put it on your PATH yourself\n");
    return 1;
  }
  const dir = targetDir(io, str(p.values.dir));
  const path = `${dir}/chronicle`;
  const script = launcherScript(checkout, await taskFlags(checkout), Deno.execPath(), path);
  if (p.values["dry-run"]) {
    io.stdout(`Dry run: would write ${path}:\n${script}`);
    return 0;
  }
  try {
    const existing = await Deno.readTextFile(path);
    if (!existing.includes(MARK)) {
      io.stderr(`chronicle: ${path} exists and is not Chronicle's launcher; nothing was changed\n`);
      return 1;
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.mkdir(dir, { recursive: true });
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, script, { mode: 0o755, createNew: true });
  await Deno.chmod(tmp, 0o755);
  await Deno.rename(tmp, path);
  io.stdout(`Installed ${path}: it runs the checkout in ${checkout}.\n`);
  if (!onPath(io, dir)) {
    io.stdout(
      `${dir} is not on your PATH: add \`export PATH="${dir}:$PATH"\` to your shell's profile.\n`,
    );
  }
  return 0;
};

export const uninstallCommand: Command = async (args, io) => {
  const p = parseArgs(args, { dir: { type: "string" }, "dry-run": { type: "boolean" } });
  const early = helpOrVersion(p, INSTALL_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const path = `${targetDir(io, str(p.values.dir))}/chronicle`;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    io.stdout(`No launcher at ${path}. Nothing to do.\n`);
    return 0;
  }
  if (!text.includes(MARK)) {
    io.stderr(`chronicle: ${path} is not Chronicle's launcher; nothing was changed\n`);
    return 1;
  }
  if (p.values["dry-run"]) {
    io.stdout(`Dry run: would remove ${path}\n`);
    return 0;
  }
  await Deno.remove(path);
  io.stdout(
    `Removed ${path}. Your data folder is untouched (delete it yourself to forget everything).\n`,
  );
  return 0;
};
