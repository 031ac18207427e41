/// <reference lib="deno.worker" />
/**
 * @module
 * Builds the search texts of search-backlog slices (core/store/backlog.ts) in a worker with no
 * permissions at all: it gets the stored documents and payload bytes, decodes and reads them,
 * and answers strings. The main thread writes one slice's texts to the index while this builds
 * the next one's. Between slices it compresses the plain payload frames a bulk import wrote
 * (`compressPlainFrames`): the main thread, busy with the index, only writes them. What it does
 * with a request is text_work.ts.
 */
import { answerText, type TextRequest } from "./text_work.ts";
import { collectGarbage } from "../core/gc.ts";

/**
 * A full garbage collection after this many slices' texts (gc.ts). Each slice leaves its payload
 * bytes, decoded texts and the chunks read from them, and V8 lets the heap grow well past what is
 * live: a 114 MiB Cursor database's import peaked at 333–344 MB without, 258–263 MB with one
 * every 8 slices (a 1 GB Claude Code history: 311–318 -> 280 MB; every 32 slices did not help
 * Cursor's), for a few percent of the time (300 MB: 6.6–6.8 s without, 6.9–7.2 s with).
 */
const SLICES_PER_GC = 8;
let built = 0;

self.onmessage = (e: MessageEvent<TextRequest>) => {
  const [answer, transfer] = answerText(e.data);
  self.postMessage(answer, transfer);
  if (answer.ok && "texts" in answer && ++built % SLICES_PER_GC === 0) collectGarbage();
};
