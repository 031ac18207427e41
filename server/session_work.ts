/**
 * Heavy work on one whole session runs one piece at a time: its causality and code analysis,
 * a document of it (the share dialog's preview, a download, a share), its security check.
 * Each already gives the event loop a turn between its pages, so other requests go between;
 * two of them at once would only interleave their pages (one thread: no sooner done) while
 * their memory added up. Opening the bench's 200 MiB session and its share dialog, then a
 * download, reached 502 MiB with the three side by side.
 */
import { collectGarbage } from "../core/gc.ts";
import { jsMemory } from "../core/paged.ts";

export interface SessionWork {
  /** Runs `work` once the work queued before it has ended (however it ended). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Registers what a route keeps of sessions between requests and can make again (the
   * causality's analyses): `drop` lets it all go.
   */
  keep(drop: () => void): void;
  /**
   * Lets go of everything registered: before work whose result is the user's own and stays
   * (a replay's plan), the caches make room for it.
   */
  dropKept(): void;
}

/** `memory`: JavaScript's memory (default core/paged.ts's `jsMemory`), for tests. */
export function oneAtATime({ memory = jsMemory }: { memory?: () => number } = {}): SessionWork {
  let last: Promise<unknown> = Promise.resolve();
  const kept: (() => void)[] = [];
  return {
    keep: (drop) => void kept.push(drop),
    dropKept() {
      for (const drop of kept) drop();
    },
    run<T>(work: () => Promise<T>): Promise<T> {
      const piece = async () => {
        const before = memory();
        try {
          return await work();
        } finally {
          // a piece that grew JavaScript's memory leaves the next its garbage collected
          if (memory() > before + AFTER_GROWTH) collectGarbage();
        }
      };
      const next = last.then(piece, piece);
      last = next.catch(() => {});
      return next;
    },
  };
}

/**
 * How much a piece of work grows JavaScript's memory (its heap and the buffers outside it)
 * before the next piece starts from a collection: a small session's work never does. On the
 * bench's 35,342-step session, its causality, security check and Markdown download asked at
 * once, the check first, peaked at 278-317 MiB over four runs without this and the check
 * worker's own collections, 262-265 over three with them; the causality first, 317-331 either
 * way (the analysis it keeps stays, RESULTS.md).
 */
const AFTER_GROWTH = 16 << 20;

/**
 * Drops the oldest entries of `kept` (a map in the order they were made, the oldest first) until
 * they fit `bound`: at most `bound.count` entries and `bound.steps` steps (`steps` of each), with
 * room left for `room` more steps and `adding` more entries. The newest `keep` stay whatever
 * their size. `drop` hears each entry dropped. The causality's analyses and the open replays are
 * bounded so.
 */
export function makeRoom<K, V>(
  kept: Map<K, V>,
  bound: { count: number; steps: number },
  steps: (entry: V) => number,
  { room = 0, adding = 0, keep = 0, drop }: {
    room?: number;
    adding?: number;
    keep?: number;
    drop?: (entry: V) => void;
  } = {},
): void {
  let total = room;
  for (const e of kept.values()) total += steps(e);
  for (const [key, oldest] of kept) {
    if (kept.size <= keep) break;
    if (kept.size + adding <= bound.count && total <= bound.steps) break;
    drop?.(oldest);
    kept.delete(key);
    total -= steps(oldest);
  }
}
