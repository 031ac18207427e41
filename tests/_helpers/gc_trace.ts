/**
 * The order of a store's writes, its search backlog's reads and the full collections
 * (`globalThis.gc`, core/gc.ts) while an import runs: where a collection falls is what the
 * import's peak memory hangs on, and a test can say where it must fall.
 */
import type { ChronicleStore } from "../../core/store/mod.ts";

/** One event: a unit (or slice) written, a backlog slice read, a full collection. */
export type Traced = "write" | "read" | "gc";

/**
 * Runs `body` with `store`'s `applyUnit` and `readBacklog` and the runtime's `gc` recorded into
 * the returned list (each still does its work); all three are put back after.
 */
export async function traceCollections(
  store: ChronicleStore,
  body: () => Promise<unknown>,
): Promise<Traced[]> {
  const seen: Traced[] = [];
  const write = store.applyUnit;
  const read = store.readBacklog;
  const g = globalThis as { gc?: () => void };
  const gc = g.gc;
  store.applyUnit = (...args) => (seen.push("write"), write.apply(store, args));
  store.readBacklog = (...args) => (seen.push("read"), read.apply(store, args));
  g.gc = () => seen.push("gc");
  try {
    await body();
  } finally {
    store.applyUnit = write;
    store.readBacklog = read;
    g.gc = gc;
  }
  return seen;
}

/** What happened before the index first read the backlog: every event, if it never did. */
export const beforeIndex = (seen: Traced[]): Traced[] =>
  seen.includes("read") ? seen.slice(0, seen.indexOf("read")) : seen;

/**
 * Runs `fn` with the full collections core/gc.ts asks for counted (none done) instead; `kinds`
 * names each: "plain" (`collectGarbage`), or the flavor asked for ("last-resort":
 * `releaseGarbage`, the pages given back).
 */
export async function countingCollections(
  fn: (collections: () => number, kinds: () => readonly string[]) => void | Promise<void>,
): Promise<void> {
  const g = globalThis as { gc?: (options?: { flavor?: string }) => void };
  const real = g.gc;
  const kinds: string[] = [];
  g.gc = (options) => void kinds.push(options?.flavor ?? "plain");
  try {
    await fn(() => kinds.length, () => kinds);
  } finally {
    g.gc = real;
  }
}
