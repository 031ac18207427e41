/// <reference lib="deno.worker" />
/**
 * @module
 * Builds the search texts of search-backlog slices (core/store/backlog.ts) in a worker with no
 * permissions at all: it gets the stored documents and payload bytes, decodes and reads them,
 * and answers strings. The main thread writes one slice's texts to the index while this builds
 * the next one's. Between slices it compresses the plain payload frames a bulk import wrote
 * (`compressPlainFrames`): the main thread, busy with the index, only writes them.
 */
import { type BacklogSlice, buildTexts } from "../core/store/backlog.ts";
import { compressPlainFrames } from "../core/store/payload_codec.ts";
import type { WorkerAnswer } from "./worker_calls.ts";

export type TextRequest =
  | { id: number; slice: BacklogSlice }
  | { id: number; frames: Uint8Array[] };

export type TextResponse = WorkerAnswer<{ texts: string[] } | { frames: Uint8Array[] }>;

self.onmessage = (e: MessageEvent<TextRequest>) => {
  const request = e.data;
  try {
    if ("frames" in request) {
      const frames = compressPlainFrames(request.frames);
      // the compressed frames are this worker's own: they move, not copy
      self.postMessage(
        { id: request.id, ok: true, frames } satisfies TextResponse,
        frames.map((f) => f.buffer as ArrayBuffer),
      );
    } else {
      const texts = buildTexts(request.slice);
      self.postMessage({ id: request.id, ok: true, texts } satisfies TextResponse);
    }
  } catch (err) {
    self.postMessage(
      { id: request.id, ok: false, error: (err as Error).message } satisfies TextResponse,
    );
  }
};
