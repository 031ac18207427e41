/**
 * @module
 * A TextBuilder backed by one worker without permissions (text_worker.ts), so building search
 * texts (worker) and writing them to the index (main thread) use both cores.
 */
import type { TextBuilder } from "../core/store/import.ts";
import type { TextRequest } from "./text_worker.ts";
import { workerCalls } from "./worker_calls.ts";

export interface TextWorker {
  build: TextBuilder;
  close(): void;
}

export function createTextWorker(): TextWorker {
  const worker = new Worker(new URL("./text_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: "none" },
  });
  const call = workerCalls(worker, "search text worker", (a: { texts: string[] }) => a.texts);
  return {
    build: (slice) => call((id) => ({ id, slice } satisfies TextRequest)),
    close: () => worker.terminate(),
  };
}
