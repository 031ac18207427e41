/**
 * @module
 * A TextBuilder backed by one worker without permissions (text_worker.ts), so building search
 * texts (worker) and writing them to the index (main thread) use both cores; the same worker
 * compresses a bulk import's plain payload frames (a FrameCompressor) between those slices.
 */
import type { FrameCompressor, TextBuilder } from "../core/store/import.ts";
import type { TextRequest } from "./text_worker.ts";
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
      const a = await call((id) => ({ id, slice } satisfies TextRequest));
      if (!("texts" in a)) throw new TypeError("the search text worker answered no texts");
      return a.texts;
    },
    compress: async (frames) => {
      // A frame read whole into its own buffer moves to the worker: the caller is done with it.
      const own = frames.filter((f) => f.byteOffset === 0 && f.byteLength === f.buffer.byteLength)
        .map((f) => f.buffer as ArrayBuffer);
      const a = await call((id) => ({ id, frames } satisfies TextRequest), own);
      if (!("frames" in a)) throw new TypeError("the search text worker answered no frames");
      return a.frames;
    },
    close: () => worker.terminate(),
  };
}
