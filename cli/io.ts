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
