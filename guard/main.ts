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
import { writeAllSync } from "../core/write_all.ts";
import { guardFileDeps } from "./files.ts";
import { denoGuardFs } from "./fs.ts";
import { MAX_PAYLOAD, runHook } from "./hook.ts";

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

/**
 * Stdin to its end, read synchronously: Claude Code writes the payload and closes it. (A
 * `Response` over `Deno.stdin.readable` costs 5-40 ms of stream machinery per call; an
 * asynchronous read starts a thread pool.)
 */
export function readStdinSync(limit: number): string {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(1 << 16);
  for (;;) {
    const n = Deno.stdin.readSync(buf);
    if (n === null || n === 0) break;
    chunks.push(buf.slice(0, n));
    total += n;
    if (total > limit) break;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

/** Runs the hook with the real stdin, file system and data folder; returns the exit code. */
export function main(): Promise<number> {
  const dir = guardDataDir(safeEnv);
  const encoder = new TextEncoder();
  return runHook({
    readStdin: () => Promise.resolve(readStdinSync(MAX_PAYLOAD)),
    fs: denoGuardFs,
    ...guardFileDeps(dir),
    stderr: (text) => writeAllSync(Deno.stderr, encoder.encode(text)),
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
