/**
 * @module
 * The PreToolUse hook program Claude Code runs before each tool call (guard/hook.ts does the
 * work). It decides in this process, reads its rules from the data folder and appends what it
 * intercepts to the journal there; it needs no server and opens no socket. Its permissions:
 * read (the files tools would read), write to the data folder, two environment variables.
 *
 * A watchdog bounds the whole run: if the decision has not come in time (a hung read), the call
 * is blocked, never waved through.
 */
import { guardFileDeps } from "./files.ts";
import { denoGuardFs } from "./fs.ts";
import { runHook } from "./hook.ts";

/** Milliseconds the engine has for a decision; the watchdog fires a second later. */
export const GUARD_BUDGET_MS = 2500;

/** The data folder: `$CHRONICLE_HOME` or `~/.chronicle`. */
export function guardDataDir(env: (name: string) => string | undefined): string | null {
  const explicit = env("CHRONICLE_HOME");
  if (explicit) return explicit.replace(/\/+$/, "");
  const home = env("HOME");
  return home ? `${home.replace(/\/+$/, "")}/.chronicle` : null;
}

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // not permitted: treat as unset
  }
}

/** Runs the hook with the real stdin, file system and data folder; returns the exit code. */
export function main(): Promise<number> {
  const dir = guardDataDir(safeEnv);
  const encoder = new TextEncoder();
  return runHook({
    readStdin: () => new Response(Deno.stdin.readable).text(),
    fs: denoGuardFs,
    ...guardFileDeps(dir),
    stderr: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
    home: safeEnv("HOME"),
    budgetMs: GUARD_BUDGET_MS,
  });
}

if (import.meta.main) {
  const watchdog = setTimeout(() => {
    Deno.stderr.writeSync(
      new TextEncoder().encode(
        "Chronicle blocked this tool call: checking it did not finish in time, so it was blocked to be safe.\n",
      ),
    );
    Deno.exit(2);
  }, GUARD_BUDGET_MS + 1000);
  Deno.unrefTimer(watchdog);
  Deno.exit(await main());
}
