/** What core/live is given: time, file watching and file status, all injected. */
import type { FileStat } from "../sources/types.ts";

/** A timer handle, as the injected clock returns it (opaque to the engines). */
export type TimerId = unknown;

/** Wall time and timers. The runtime passes the real ones; tests drive a fake. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId): void;
}

/** One open watch; `close` releases it (and everything it holds). */
export interface Watch {
  close(): void;
}

/**
 * Watches files and folders (not recursively) and reports the paths that changed. Throws when
 * the platform cannot watch one of them; the caller then polls.
 */
export interface FileWatcher {
  watch(paths: string[], onChange: (paths: string[]) => void): Watch;
}

/** The one call polling needs: a file's status, or null when it is gone. */
export type StatFn = (path: string) => Promise<FileStat | null>;

/** The real clock, over the global timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};
