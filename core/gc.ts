/**
 * A full garbage collection, where the runtime offers one (V8's `--expose-gc`, which every task
 * that runs Chronicle passes); elsewhere nothing.
 *
 * Why: V8 lets a heap grow well past what is live before it collects, and the import's big
 * steps each leave a step's garbage behind them (lines, records, rows, payload buffers). Each
 * place that calls this says what it measured:
 *
 * - between the slices of a big log, in the import worker and in the thread that stores them
 *   (core/store/import.ts, runtime/import_worker.ts): one 202 MiB session in 12 MiB slices
 *   peaked at 317-355 MB without, 232-234 MB with (8 MiB slices: 285-288 MB with one in the
 *   worker alone); a log that fits one pass (nearly every log) never calls it;
 * - once a pass that left a search backlog ends, before the index reads it or the server's next
 *   chunk comes (`importUnits`); a pass that indexes as it goes never calls it;
 * - while a line over `LONG_LINE_BYTES` is read: its parts once joined, its string once parsed
 *   (core/sources/jsonl.ts);
 * - every few slices of search texts, in the text worker (runtime/text_worker.ts);
 * - every few pages of a big session the server loads or analyses (core/paged.ts's `pagedTurns`),
 *   and in the check worker as its memory grows (server/check_worker.ts); after a piece of heavy
 *   session work that grew memory 16 MiB, and before one that asks for room, the pages are given
 *   back too ({@link releaseGarbage}, server/session_work.ts);
 * - as bytes go by ({@link collectEvery}): every 16 MiB a text stream sends (a download, a share
 *   page, `session.json`: core/text_stream.ts), every 16 MiB of lines a share packs (making a
 *   share of a 35,342-step session: 294-299 MiB without, 274-277 with), every 64 MiB of
 *   payloads a canonical export writes (core/artifacts), every 32 MiB of payloads a canonical
 *   import stores (the store's `putCanonicalPages`: a 35,342-step export peaked at 268 MiB with
 *   64, 261 with 32), every 32 MiB of a stored session hashed to compare it with an export (the
 *   store's `canonicalSkip`); and once an import of exports has read a session's `session.json`
 *   (`importArtifacts`: its unchanged re-import 279 MiB without, 253 with).
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Resident memory past which a process of Chronicle's gives the pages its collections empty back
 * to the system (core/paged.ts's `collectOnGrowth`), and the server's work that asks for room
 * lets its caches go first (server/session_work.ts): a server that read ordinary sessions stays
 * under 150 MiB; one that did heavy work on the bench's 35,342-step session, 190-275. Paged work
 * on that session collecting so: its causality peaked at 212 MiB against 229-232 and its
 * Markdown download at 197 against 217, in the same time; giving pages back from 160 MiB took
 * another 15-20 MiB off and 30% more time.
 */
export const RELEASE_ABOVE = 192 << 20;

/**
 * A full collection that gives the pages it empties back to the system (V8's last-resort
 * collection, which also shrinks the young generation): after a full collection V8 keeps its
 * emptied pages for its own next allocations, where the allocator behind buffers, SQLite and
 * workers cannot use them; it gives them back only when it finds the process idle. A heap
 * filled to 1.5 GB and emptied stayed at 1.3 GB resident after `gc()`, 70 MiB after this.
 * Dearer than {@link collectGarbage} (the next pages are the system's to map again): for the
 * ends of pieces of heavy work in a server (server/session_work.ts), a share's document before
 * it is packed (core/shares: making the bench's 35,342-step session's share peaked at 266-273 MiB without,
 * 217 with), and paged work only once resident memory is high and rising (core/paged.ts).
 */
export function releaseGarbage(): void {
  (globalThis as { gc?: (options?: object) => void }).gc?.({
    type: "major",
    execution: "sync",
    flavor: "last-resort",
  });
}

/**
 * A counter of bytes (or characters) gone by that collects each time `every` more have: for
 * work that streams something big without turns of its own.
 */
export function collectEvery(every: number): (n: number) => void {
  let since = 0;
  return (n) => {
    if ((since += n) < every) return;
    since = 0;
    collectGarbage();
  };
}
