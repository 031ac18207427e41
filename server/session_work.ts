/**
 * Heavy work on one whole session runs one piece at a time: its causality and code analysis,
 * a document of it (the share dialog's preview, a download, a share), its security check.
 * Each already gives the event loop a turn between its pages, so other requests go between;
 * two of them at once would only interleave their pages (one thread: no sooner done) while
 * their memory added up. Opening the bench's 200 MiB session and its share dialog, then a
 * download, reached 502 MiB with the three side by side. A download's document is rendered as
 * it streams, so its turn lasts until the stream ends ({@link SessionWork.hold}).
 */
import { RELEASE_ABOVE, releaseGarbage } from "../core/gc.ts";
import { memoryUsage } from "node:process";
import { jsMemory } from "../core/paged.ts";

export interface SessionWork {
  /** Runs `work` once the work queued before it has ended (however it ended). */
  run<T>(work: () => Promise<T>, options?: WorkOptions): Promise<T>;
  /**
   * Runs `work` in its turn, as {@link run} does, and keeps the turn after it until the holder
   * releases it, or stops touching it for a while (a reader that stopped reading): a download's
   * document is built in the turn and streamed in it, so the next piece starts once the download
   * is rendered. The bench's 35,342-step session's Markdown download streamed beside its
   * causality and redaction preview peaked the server at 294-302 MiB, 273-276 held.
   */
  hold<T>(work: () => Promise<T>, options?: WorkOptions): Promise<HeldTurn<T>>;
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

export interface WorkOptions {
  /**
   * Work that reads a whole session and keeps nothing of it (a document of it, its security
   * check): in a process already past core/gc.ts's `RELEASE_ABOVE` resident memory, the caches
   * kept of sessions are let go and their pages given back before it starts. The bench's
   * 35,342-step session's causality and then its share peaked at 281-322 MiB with the analysis
   * kept, 284-286 without; its security check, causality and Markdown download 293-300 and
   * 286-299 (three interleaved pairs).
   */
  room?: boolean;
}

/** A turn of session work kept once its work is done ({@link SessionWork.hold}). */
export interface HeldTurn<T> {
  /** What the work gave. */
  value: T;
  /** Ends the turn (the first call; later ones do nothing). */
  release(): void;
  /** The holder is still at it: the turn is kept {@link HELD_IDLE_MS} more. */
  touch(): void;
}

/**
 * How long a held turn waits for its holder's next touch before it ends anyway: a browser reads a
 * download from loopback as fast as it is rendered, and one that stops (a paused download)
 * must not keep every other session's heavy work waiting.
 */
export const HELD_IDLE_MS = 2_000;

/**
 * `memory`: JavaScript's memory (default core/paged.ts's `jsMemory`); `resident`: the process's
 * resident memory (default node's `memoryUsage.rss`); `idleMs`: how long a held turn waits for a
 * touch (default {@link HELD_IDLE_MS}); all for tests.
 */
export function oneAtATime(
  { memory = jsMemory, resident = memoryUsage.rss, idleMs = HELD_IDLE_MS }: {
    memory?: () => number;
    resident?: () => number;
    idleMs?: number;
  } = {},
): SessionWork {
  let last: Promise<unknown> = Promise.resolve();
  const kept: (() => void)[] = [];
  // work that grew JavaScript's memory leaves what follows its garbage collected
  const collectIfGrown = (before: number) => {
    if (memory() > before + AFTER_GROWTH) releaseGarbage();
  };
  const dropKept = () => {
    for (const drop of kept) drop();
  };
  function run<T>(work: () => Promise<T>, { room = false }: WorkOptions = {}): Promise<T> {
    const piece = async () => {
      if (room && resident() > RELEASE_ABOVE) {
        dropKept();
        releaseGarbage();
      }
      const before = memory();
      try {
        return await work();
      } finally {
        collectIfGrown(before);
      }
    };
    const next = last.then(piece, piece);
    last = next.catch(() => {});
    return next;
  }
  return {
    run,
    hold: <T>(work: () => Promise<T>, options?: WorkOptions) =>
      new Promise<HeldTurn<T>>((resolve, reject) => {
        run(async () => {
          const before = memory();
          const value = await work();
          // the holder starts from the work's garbage collected (a download from its
          // document's: rendering it beside them peaked 10 MiB higher)
          collectIfGrown(before);
          // the turn goes on until released, or untouched for idleMs
          await new Promise<void>((ended) => {
            let timer: ReturnType<typeof setTimeout> | undefined;
            let held = true;
            const release = () => {
              clearTimeout(timer);
              held = false;
              ended();
            };
            const touch = () => {
              if (!held) return;
              clearTimeout(timer);
              timer = setTimeout(release, idleMs);
            };
            touch();
            resolve({ value, release, touch });
          });
        }, options).catch(reject);
      }),
    keep: (drop) => void kept.push(drop),
    dropKept,
  };
}

/**
 * How much a piece of work grows JavaScript's memory (its heap and the buffers outside it)
 * before the next piece starts from a collection that gives the emptied pages back
 * (core/gc.ts's `releaseGarbage`): a small session's work never does. On the bench's
 * 35,342-step session, its causality, security check and Markdown download asked at once, the
 * check first, peaked at 278-317 MiB over four runs without this and the check worker's own
 * collections, 262-265 over three with them. Its causality and then its Markdown download, the
 * pages kept by V8 after a plain collection: 283-285 MiB, and 232 resident between the two;
 * given back, 273-275 and 190-204.
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
