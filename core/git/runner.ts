/**
 * The one way core engines run an external program: an argument vector, never a shell string.
 * `runtime/process_runner.ts` is the real one; tests pass fakes.
 */

export interface RunOptions {
  /** Working folder of the child. Default: the caller's. */
  cwd?: string;
  /** The child's whole environment (nothing is inherited when given). */
  env?: Record<string, string>;
  /** Bytes written to the child's standard input, then closed. Default: none (null stdin). */
  stdin?: Uint8Array;
  /** Bytes kept of each of stdout and stderr; the rest is read and dropped. Default 64 MiB. */
  maxOutputBytes?: number;
  /** Kill the child (SIGKILL) after this many milliseconds. Default: no limit. */
  timeoutMs?: number;
}

export interface RunResult {
  /** Exit code; null when the child was killed by a signal (a timeout included). */
  code: number | null;
  signal: string | null;
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** True when stdout or stderr was longer than `maxOutputBytes` and was cut. */
  truncated: boolean;
  timedOut: boolean;
}

/** Runs `program` with `args`. Rejects only when the program cannot be started at all. */
export type ProcessRunner = (
  program: string,
  args: readonly string[],
  options?: RunOptions,
) => Promise<RunResult>;
