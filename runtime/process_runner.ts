/**
 * @module
 * The real ProcessRunner over `Deno.Command`: an argument vector, captured and capped output,
 * an optional timeout that kills the child. Core engines (git, replay) take it injected.
 */
import type { ProcessRunner, RunOptions, RunResult } from "../core/git/runner.ts";

const DEFAULT_MAX = 64 << 20;

/** Reads a stream to its end, keeping at most `max` bytes; the rest is drained and dropped. */
async function capped(
  stream: ReadableStream<Uint8Array>,
  max: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let cut = false;
  for await (const chunk of stream) {
    if (kept >= max) {
      cut = true;
      continue;
    }
    const room = max - kept;
    if (chunk.byteLength > room) cut = true;
    const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    chunks.push(part);
    kept += part.byteLength;
  }
  const bytes = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, cut };
}

export const denoProcessRunner: ProcessRunner = async (
  program: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> => {
  const max = options.maxOutputBytes ?? DEFAULT_MAX;
  const child = new Deno.Command(program, {
    args: [...args],
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.env !== undefined,
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, options.timeoutMs);
  try {
    const feeding = options.stdin
      ? (async () => {
        const w = child.stdin.getWriter();
        try {
          await w.write(options.stdin!);
          await w.close();
        } catch { /* the child closed its input early */ }
      })()
      : Promise.resolve();
    const [out, err, status] = await Promise.all([
      capped(child.stdout, max),
      capped(child.stderr, max),
      child.status,
      feeding,
    ]);
    return {
      code: status.signal ? null : status.code,
      signal: status.signal ?? null,
      stdout: out.bytes,
      stderr: err.bytes,
      truncated: out.cut || err.cut,
      timedOut,
    };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
};
