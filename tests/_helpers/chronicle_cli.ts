/** Runs the chronicle CLI as a subprocess through `deno run`, with `deno task chronicle`'s flags. */
import { copyTree } from "./fixtures.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");
// Deno keeps its module cache under HOME unless told otherwise; tests point HOME elsewhere.
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

export interface ChronicleRunOptions {
  /** The folder the user runs the command in (default: the test's own). */
  cwd?: string;
  /** Text on standard input (default: none). */
  stdin?: string;
}

/**
 * Starts `chronicle ARGS` with only PATH, DENO_DIR and `env` in its environment, its output
 * piped: a test that reads it as it comes, or signals the process.
 */
export function spawnChronicle(
  args: string[],
  env: Record<string, string>,
  options: ChronicleRunOptions = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, ...env },
    clearEnv: true,
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs `chronicle ARGS` with only PATH, DENO_DIR and `env` in its environment. */
export async function chronicle(
  args: string[],
  env: Record<string, string>,
  options: ChronicleRunOptions = {},
) {
  const child = spawnChronicle(args, env, options);
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * A user's machine for a CLI test: a folder outside the checkout to run commands in, a HOME
 * with copies of the given real-client fixtures (`claude/s1-basic`, ...), and a data folder.
 * Removed on dispose.
 */
export async function userMachine(scenarios: string[] = []) {
  const root = await Deno.makeTempDir({ prefix: "chronicle-user-" });
  const home = `${root}/home`;
  const cwd = `${root}/work`;
  await Deno.mkdir(home);
  await Deno.mkdir(cwd);
  const fixtures = `${ROOT}fixtures/realclients`;
  for (const s of scenarios) await copyTree(`${fixtures}/${s}/native`, home);
  const env: Record<string, string> = { HOME: home, CHRONICLE_HOME: `${root}/data` };
  return {
    root,
    home,
    cwd,
    data: `${root}/data`,
    env,
    /** Runs chronicle from the user's folder with this machine's environment. */
    run: (args: string[], extra: Record<string, string> = {}, stdin?: string) =>
      chronicle(args, { ...env, ...extra }, { cwd, stdin }),
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}
