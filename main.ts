/**
 * @module
 * Chronicle's entry point: parses arguments, builds the real dependencies and runs a command.
 * Everything else lives in cli/, core/, server/ and runtime/.
 */
import { runCli } from "./cli/main.ts";
import type { CliIo } from "./cli/io.ts";
import { resolvePathVars, userCwd } from "./cli/user_cwd.ts";
import { writeAllSync } from "./core/write_all.ts";

const encoder = new TextEncoder();

export function denoIo(): CliIo {
  const raw = Deno.env.toObject();
  const checkout = new URL(".", import.meta.url).pathname;
  const cwd = userCwd(raw, Deno.cwd(), checkout);
  return {
    // all of it: writeSync may write less than it is given (core/write_all.ts)
    stdout: (t) => writeAllSync(Deno.stdout, encoder.encode(t)),
    stderr: (t) => writeAllSync(Deno.stderr, encoder.encode(t)),
    stdin: async () => new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer()),
    env: resolvePathVars(raw, cwd),
    cwd,
    isTerminal: Deno.stdout.isTerminal(),
  };
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args, denoIo()));
}
