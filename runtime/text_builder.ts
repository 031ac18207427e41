/**
 * @module
 * A TextBuilder backed by one worker without permissions (text_worker.ts), so building search
 * texts (worker) and writing them to the index (main thread) use both cores.
 */
import type { TextBuilder } from "../core/store/import.ts";
import type { TextRequest, TextResponse } from "./text_worker.ts";

export interface TextWorker {
  build: TextBuilder;
  close(): void;
}

export function createTextWorker(): TextWorker {
  const worker = new Worker(new URL("./text_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: "none" },
  });
  let nextId = 0;
  const waiting = new Map<
    number,
    { resolve: (texts: string[]) => void; reject: (e: Error) => void }
  >();
  worker.onmessage = (e: MessageEvent<TextResponse>) => {
    const w = waiting.get(e.data.id);
    if (!w) return;
    waiting.delete(e.data.id);
    if (e.data.ok) w.resolve(e.data.texts);
    else w.reject(new Error(e.data.error));
  };
  worker.onerror = (e) => {
    e.preventDefault();
    for (const w of waiting.values()) {
      w.reject(new Error(`search text worker failed: ${e.message}`));
    }
    waiting.clear();
  };
  return {
    build: (slice) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, slice } satisfies TextRequest);
      }),
    close: () => worker.terminate(),
  };
}
