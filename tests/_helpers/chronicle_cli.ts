/** Runs the chronicle CLI as a subprocess through `deno run`, with `deno task chronicle`'s flags. */
const ROOT = new URL("../../", import.meta.url).pathname;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");
// Deno keeps its module cache under HOME unless told otherwise; tests point HOME elsewhere.
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

/** Runs `chronicle ARGS` with only PATH, DENO_DIR and `env` in its environment. */
export async function chronicle(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, ...env },
    clearEnv: true,
    stdin: "null",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}
