/**
 * @module
 * A TextBuilder backed by one worker without permissions (text_worker.ts), so building search
 * texts (worker) and writing them to the index (main thread) use both cores; the same worker
 * compresses a bulk import's plain payload frames (a FrameCompressor) between those slices.
 */
import type { FrameCompressor, TextBuilder } from "../core/store/import.ts";
import type { TextRequest } from "./text_work.ts";
import { workerCalls } from "./worker_calls.ts";

export interface TextWorker {
  build: TextBuilder;
  compress: FrameCompressor;
  close(): void;
}

export function createTextWorker(): TextWorker {
  const worker = new Worker(new URL("./text_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: "none" },
  });
  const call = workerCalls(
    worker,
    "search text worker",
    (a: { texts: string[] } | { frames: Uint8Array[] }) => a,
  );
  return {
    build: async (slice) => {
      // Its payloads move to the worker too (a slice is read for it alone): copied, a slice
      // of pasted 28 MiB prompts stood twice in memory, until this thread's next collection.
      const own = wholeBuffers(slice.payloads.map((p) => p.bytes));
      const a = await call((id) => ({ id, slice } satisfies TextRequest), own);
      if (!("texts" in a)) throw new TypeError("the search text worker answered no texts");
      return a.texts;
    },
    compress: async (frames) => {
      // A frame read whole into its own buffer moves to the worker: the caller is done with it.
      const a = await call((id) => ({ id, frames } satisfies TextRequest), wholeBuffers(frames));
      if (!("frames" in a)) throw new TypeError("the search text worker answered no frames");
      return a.frames;
    },
    close: () => worker.terminate(),
  };
}

/** The buffers of `views` that each view holds whole, once each: what may move to the worker. */
function wholeBuffers(views: readonly Uint8Array[]): ArrayBuffer[] {
  const own = new Set<ArrayBuffer>();
  for (const v of views) {
    if (v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) {
      own.add(v.buffer as ArrayBuffer);
    }
  }
  return [...own];
}
