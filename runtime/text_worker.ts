/// <reference lib="deno.worker" />
/**
 * @module
 * Builds the search texts of search-backlog slices (core/store/backlog.ts) in a worker with no
 * permissions at all: it gets the stored documents and payload bytes, decodes and reads them,
 * and answers strings. The main thread writes one slice's texts to the index while this builds
 * the next one's.
 */
import { type BacklogSlice, buildTexts } from "../core/store/backlog.ts";
import type { WorkerAnswer } from "./worker_calls.ts";

export interface TextRequest {
  id: number;
  slice: BacklogSlice;
}

export type TextResponse = WorkerAnswer<{ texts: string[] }>;

self.onmessage = (e: MessageEvent<TextRequest>) => {
  const { id, slice } = e.data;
  try {
    self.postMessage({ id, ok: true, texts: buildTexts(slice) } satisfies TextResponse);
  } catch (err) {
    self.postMessage({ id, ok: false, error: (err as Error).message } satisfies TextResponse);
  }
};
