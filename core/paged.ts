/**
 * Long work on one whole session done a page at a time: a generator yields between pages, and
 * is run either at once (`drain`) or with a turn of the event loop between pages
 * (`drainInTurns`, with `pagedTurns`), so a server answers other requests meanwhile.
 */
import { memoryUsage } from "node:process";
import { collectGarbage, RELEASE_ABOVE, releaseGarbage } from "./gc.ts";

/**
 * Steps a paged piece of work does between two turns (a session's load, its causality facts,
 * its code, its export document, its security check): a page of a big session's steps takes a
 * few tens of milliseconds.
 */
export const PAGE_STEPS = 1000;

/** Runs paged work to its end at once. */
export function drain<T>(work: Generator<void, T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/** Runs paged work to its end, awaiting `turn` between its pages. */
export async function drainInTurns<T>(
  work: Generator<void, T>,
  turn: () => Promise<unknown>,
): Promise<T> {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    await turn();
  }
}

/**
 * Turns of the event loop for long work a server does a page at a time (a big session's load,
 * its causality facts, its export document, its security check): requests go between the
 * pages, and the pages' garbage is collected (their payload texts, read, decoded, parsed and
 * redacted, are large strings and buffers that only a full collection frees) at a turn where
 * JavaScript's memory (its heap and the buffers outside it) has grown by `growthMiB` since the
 * last collection, and at least every 8 turns. On the bench's 35,342-step session (200 MiB of
 * log): its causality peaked the server at 387 MiB with no collection and 250 every 8 turns;
 * its Markdown download at 305 every 8 turns, 259 with both rules (RESULTS.md).
 */
export function pagedTurns(growthMiB = 24): () => Promise<void> {
  const collect = collectOnGrowth({ growthMiB, every: 8 });
  return () => {
    collect();
    return new Promise((resolve) => setTimeout(resolve, 0));
  };
}

/**
 * A full collection when JavaScript's memory (`memory`, default {@link jsMemory}) has grown
 * `growthMiB` since the last one, or (with `every`) at the `every`th call since; one that gives
 * the emptied pages back (core/gc.ts's `releaseGarbage`) in a process past `releaseAbove`
 * resident memory (`resident`, default node's `memoryUsage.rss`; default core/gc.ts's
 * `RELEASE_ABOVE`).
 */
export function collectOnGrowth(
  {
    growthMiB = 24,
    every = Infinity,
    memory = jsMemory,
    resident = memoryUsage.rss,
    releaseAbove = RELEASE_ABOVE,
  }: {
    growthMiB?: number;
    every?: number;
    memory?: () => number;
    resident?: () => number;
    releaseAbove?: number;
  } = {},
): () => void {
  let after = memory();
  let calls = 0;
  // resident memory after the last collection that gave pages back
  let released = 0;
  return () => {
    if (++calls >= every || memory() > after + growthMiB * 2 ** 20) {
      const now = resident();
      if (now > releaseAbove && now > released + RISE_MIB * 2 ** 20) {
        releaseGarbage();
        released = resident();
      } else collectGarbage();
      after = memory();
      calls = 0;
    }
  };
}

/**
 * How far resident memory rises past its level after the last collection that gave pages back
 * before the next one does: while a big session's work keeps the process past `RELEASE_ABOVE`,
 * giving pages back at every collection took its causality, preview and download asked at once
 * from 16-19 s to 23-27 s; once it rose 32 MiB, 17-20 s (252-257 MiB at peak, 260-264 without).
 */
const RISE_MIB = 32;

/** JavaScript's memory: its heap and the buffers outside it (payloads read, inflated frames). */
export function jsMemory(): number {
  const m = memoryUsage();
  return m.heapUsed + m.external;
}
