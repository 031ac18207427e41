/** What a CLI command may touch: its streams and environment, injected so tests run in process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard input as bytes (read on demand). */
  stdin(): Promise<Uint8Array>;
  env: Record<string, string | undefined>;
  cwd: string;
  /** True when stdout is a terminal (progress bars, colours). */
  isTerminal: boolean;
}

/** A command: returns its exit code (0 ok, 1 findings or failure, 2 usage error). */
export type Command = (args: string[], io: CliIo) => Promise<number>;

/**
 * True when output may carry colour: stdout is a terminal and `NO_COLOR` is not set to a
 * non-empty value (no-color.org).
 */
export function colorOn(io: CliIo): boolean {
  return io.isTerminal && !io.env.NO_COLOR;
}

/**
 * How a starred session is marked: `★` on a terminal (yellow when colour is on), `*` when the
 * output goes to a file or a pipe, so scripts and `grep` see plain ASCII.
 */
export function starMark(io: CliIo): string {
  if (!io.isTerminal) return "*";
  return colorOn(io) ? "\x1b[33m★\x1b[0m" : "★";
}

/** `1 file`, `2 files`: a count and its word. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
