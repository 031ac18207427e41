/**
 * @module
 * A UnitRunner backed by one read-only import worker, so parsing (worker) and writing (main
 * thread) use both cores.
 */
import type { UnitRunner } from "../core/store/import.ts";
import type { PreparedUnit } from "../core/store/prepare.ts";
import type { WorkerRequest, WorkerResponse } from "./import_worker.ts";

export interface WorkerRunner {
  runner: UnitRunner;
  close(): void;
}

export function createWorkerRunner(options: { tempRoot: string }): WorkerRunner {
  const worker = new Worker(new URL("./import_worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        read: true,
        write: [options.tempRoot],
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
  let nextId = 0;
  const waiting = new Map<
    number,
    { resolve: (r: PreparedUnit) => void; reject: (e: Error) => void }
  >();
  worker.onmessage = (e: MessageEvent<WorkerResponse>) => {
    const w = waiting.get(e.data.id);
    if (!w) return;
    waiting.delete(e.data.id);
    if (e.data.ok) w.resolve(e.data.result);
    else w.reject(new Error(e.data.error));
  };
  worker.onerror = (e) => {
    e.preventDefault();
    for (const w of waiting.values()) w.reject(new Error(`import worker failed: ${e.message}`));
    waiting.clear();
  };
  return {
    runner: (unit, epoch, resume) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        const req: WorkerRequest = { id, unit, epoch, resume, tempRoot: options.tempRoot };
        worker.postMessage(req);
      }),
    close: () => worker.terminate(),
  };
}
