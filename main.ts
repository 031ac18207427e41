/**
 * @module
 * Chronicle's entry point: parses arguments, builds the real dependencies and runs a command.
 * Everything else lives in cli/, core/, server/ and runtime/.
 */
import { runCli } from "./cli/main.ts";
import type { CliIo } from "./cli/io.ts";
import { resolvePathVars, userCwd } from "./cli/user_cwd.ts";

const encoder = new TextEncoder();

/**
 * Writes all of a text: `writeSync` may write less than it was given (a pipe whose reader is
 * behind), and what it did not write would be lost. `chronicle export` to a pipe lost 764 of its
 * steps' pieces (816 KB of 54 MB) before this.
 */
function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.byteLength;) at += file.writeSync(bytes.subarray(at));
}

export function denoIo(): CliIo {
  const raw = Deno.env.toObject();
  const checkout = new URL(".", import.meta.url).pathname;
  const cwd = userCwd(raw, Deno.cwd(), checkout);
  return {
    stdout: (t) => writeAll(Deno.stdout, t),
    stderr: (t) => writeAll(Deno.stderr, t),
    stdin: async () => new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer()),
    env: resolvePathVars(raw, cwd),
    cwd,
    isTerminal: Deno.stdout.isTerminal(),
  };
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args, denoIo()));
}
