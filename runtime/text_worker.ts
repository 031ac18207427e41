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
import { answerText, CollectionPace, type TextRequest } from "./text_work.ts";
import { collectGarbage } from "../core/gc.ts";

const pace = new CollectionPace();

self.onmessage = (e: MessageEvent<TextRequest>) => {
  const request = e.data;
  const [answer, transfer] = answerText(request);
  self.postMessage(answer, transfer);
  if (answer.ok && "slice" in request && pace.built(request.slice.bytes)) collectGarbage();
};
