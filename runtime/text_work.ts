/**
 * @module
 * What the search text worker (text_worker.ts) does with a request: builds the search texts of
 * a search-backlog slice (core/store/backlog.ts), or compresses plain payload frames a bulk
 * import wrote (`compressPlainFrames`). Apart from the worker's wiring so a test can call it.
 */
import { type BacklogSlice, buildTexts } from "../core/store/backlog.ts";
import { compressPlainFrames } from "../core/store/payload_codec.ts";
import type { WorkerAnswer } from "./worker_calls.ts";

export type TextRequest =
  | { id: number; slice: BacklogSlice }
  | { id: number; frames: Uint8Array[] };

export type TextResponse = WorkerAnswer<{ texts: string[] } | { frames: Uint8Array[] }>;

/**
 * The answer to `request`, and the buffers that move with it. The request's own buffers are
 * given back once read ({@link letGo}): the caller is their only holder, as a worker is of what
 * came in a message.
 */
export function answerText(request: TextRequest): [TextResponse, ArrayBuffer[]] {
  try {
    if ("frames" in request) {
      const frames = compressPlainFrames(request.frames);
      letGo(request.frames);
      // the compressed frames are this worker's own: they move, not copy
      return [{ id: request.id, ok: true, frames }, frames.map((f) => f.buffer as ArrayBuffer)];
    }
    const texts = buildTexts(request.slice);
    letGo(request.slice.payloads.map((p) => p.bytes));
    return [{ id: request.id, ok: true, texts }, []];
  } catch (err) {
    return [{ id: request.id, ok: false, error: (err as Error).message }, []];
  }
}

/**
 * When the text worker collects its garbage (gc.ts): after every {@link SLICES_PER_GC} slices of
 * texts, or sooner once the slices since the last collection named {@link BYTES_PER_GC} of
 * payloads. Each slice leaves its payload bytes, decoded texts and the chunks read from them,
 * and V8 lets the heap grow well past what is live: a 114 MiB Cursor database's import peaked
 * at 333–344 MB without, 258–263 MB with one every 8 slices (a 1 GB Claude Code history:
 * 311–318 -> 280 MB; every 32 slices did not help Cursor's), for a few percent of the time
 * (300 MB: 6.6–6.8 s without, 6.9–7.2 s with). A slice of ordinary operations names a megabyte
 * or two; one of eight pasted 26 MiB prompts, a prompt or two: collected every 8 such slices,
 * that import peaked at 265–313 MiB, after each at 257–265.
 */
export class CollectionPace {
  private slices = 0;
  private bytes = 0;

  /** A slice's texts were built, its payloads `bytes` in all: whether to collect now. */
  built(bytes: number): boolean {
    this.slices++;
    this.bytes += bytes;
    if (this.slices < SLICES_PER_GC && this.bytes < BYTES_PER_GC) return false;
    this.slices = 0;
    this.bytes = 0;
    return true;
  }
}

export const SLICES_PER_GC = 8;
export const BYTES_PER_GC = 16 << 20;

/**
 * Gives back the memory of buffers read and held by nothing else, at once: a detached buffer
 * frees it then, where garbage waits for a collection, and the worker collects only between
 * slices of texts. A bulk import's plain frames are mostly compressed after its last slice, so
 * the 26 MiB frames of eight pasted prompts stayed. With this and the main thread's collection
 * (as the pass ends, import.ts's importUnits) that import peaked at 262–282 MiB against
 * 292–371 (the collection alone 289–318).
 */
function letGo(views: readonly Uint8Array[]): void {
  for (const v of views) {
    const buffer = v.buffer as ArrayBuffer;
    if (!buffer.detached) buffer.transfer(0);
  }
}
