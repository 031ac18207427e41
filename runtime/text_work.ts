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
