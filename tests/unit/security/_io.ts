/** An in-memory CliIo for command tests: captures stdout and stderr, feeds stdin. */
import type { CliIo } from "../../../cli/io.ts";

export function memIo(
  options: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    stdin: () => Promise.resolve(new TextEncoder().encode(options.stdin ?? "")),
    env: options.env ?? {},
    cwd: options.cwd ?? "/",
    isTerminal: false,
  };
  return { io, stdout: () => out.join(""), stderr: () => err.join("") };
}
