/**
 * Runs security checks in a worker with no permissions (check_worker.ts), one session at a
 * time in order; `close()` ends the worker. The server's main thread only loads sessions and
 * payloads between two messages, so `/api/health` and every other route keep answering.
 */
import type { CheckInput, CheckSessionReport } from "./security_check.ts";

export interface CheckRunner {
  run(input: CheckInput): Promise<CheckSessionReport>;
  /** Starts the worker now (loading it costs a few hundred ms), not at the first check. */
  warm(): void;
  close(): void;
}

export function createCheckWorker(): CheckRunner {
  let worker: Worker | null = null;
  let next = 1;
  const pending = new Map<
    number,
    { resolve(r: CheckSessionReport): void; reject(e: Error): void }
  >();
  const start = () => {
    const w = new Worker(new URL("./check_worker.ts", import.meta.url), {
      type: "module",
      deno: { permissions: "none" },
    });
    w.onmessage = (
      e: MessageEvent<{ id: number; report?: CheckSessionReport; error?: string }>,
    ) => {
      const p = pending.get(e.data.id);
      pending.delete(e.data.id);
      if (e.data.report) p?.resolve(e.data.report);
      else p?.reject(new Error(`The security check failed: ${e.data.error}`));
    };
    w.onerror = (e) => {
      e.preventDefault();
      for (const p of pending.values()) {
        p.reject(new Error(`The check worker failed: ${e.message}`));
      }
      pending.clear();
      worker = null;
    };
    return w;
  };
  return {
    run(input) {
      worker ??= start();
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker!.postMessage({ id, input });
      });
    },
    warm() {
      worker ??= start();
    },
    close() {
      worker?.terminate();
      worker = null;
      for (const p of pending.values()) p.reject(new Error("The check worker was closed"));
      pending.clear();
    },
  };
}
