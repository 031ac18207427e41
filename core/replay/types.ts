/** The adapters replay runs on (injected: a worker-backed sandbox, a bubblewrap shell) and its results. */

export interface SandboxEntry {
  /** Relative to the sandbox root. */
  path: string;
  type: "file" | "dir" | "symlink";
  size: number;
}

/**
 * The sandbox's files. Every path is relative to the sandbox root and is resolved and checked
 * before any read or write: `..`, absolute paths and symlinks that lead out are refused with
 * ChronicleError("outside"). The real one lives in a worker allowed only the sandbox.
 */
export interface SandboxFiles {
  /** The sandbox folder (absolute). */
  readonly root: string;
  /** A file's bytes; null when it does not exist. */
  read(path: string): Promise<Uint8Array | null>;
  /** Writes a file, making its folders. */
  write(path: string, bytes: Uint8Array, options?: { executable?: boolean }): Promise<void>;
  /** Makes a symlink, only when its target stays inside the sandbox. */
  symlink(path: string, target: string): Promise<"created" | "refused">;
  /** Removes a file; false when there was none. */
  remove(path: string): Promise<boolean>;
  /** Every entry under the root (recursively), `.git` left out, sorted by path. */
  list(): Promise<SandboxEntry[]>;
  close(): void;
}

export interface ShellResult {
  /** Exit code; null when killed (a timeout). */
  code: number | null;
  /** stdout and stderr as one stream, as the agents show it. */
  output: string;
  truncated: boolean;
  timedOut: boolean;
}

export interface ShellRunOptions {
  /** The sandbox folder (absolute). */
  sandbox: string;
  /** Where the sandbox appears inside the jail: the project's recorded path, when usable. */
  projectPath: string | null;
  /** Working folder relative to the project root ("" for the root). */
  workdir: string;
}

/** Runs confirmed shell steps in a jail (bubblewrap: no network, host read-only). */
export interface ShellRunner {
  /** Whether commands can run here, and how they are isolated; else how to get the jail. */
  available(): Promise<{ ok: true; description: string } | { ok: false; reason: string }>;
  run(command: string | string[], options: ShellRunOptions): Promise<ShellResult>;
}

export type StepStatus = "pending" | "applied" | "skipped" | "blocked" | "diverged" | "failed";

/** One step's outcome, as the CLI's JSON and the API report it. */
export interface StepResult {
  seq: number;
  kind: string;
  target: string | null;
  status: StepStatus;
  detail: string;
  /** File steps: the unified diff the step made (or would have made). */
  diff?: string;
  /** Shell steps: the exit code and the captured output. */
  exit_code?: number | null;
  output?: string;
}
