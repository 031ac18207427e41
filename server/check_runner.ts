/**
 * Runs security checks in a worker with no permissions (check_worker.ts), one session at a
 * time in order; `close()` ends the worker. The server's main thread only loads sessions and
 * payloads between two messages, so `/api/health` and every other route keep answering. The
 * worker starts with the first check and stops once no check has come for `idleMs`.
 */
import type { CheckInput, CheckSessionReport } from "./security_check.ts";

export interface CheckRunner {
  run(input: CheckInput): Promise<CheckSessionReport>;
  /** Whether the worker is started now. */
  readonly running: boolean;
  close(): void;
}

/**
 * How long the worker stays started after its last check. Started at the server's start and
 * kept, it held 10-14 MiB of an idle server's 84 MiB resident, and after a check of the bench's
 * 35,342-step session 64 MiB more, which only its end gives back (a last-resort collection in
 * the worker gave none): the check, causality and Markdown download of that session in a row
 * peaked at 271-282 MiB with the worker kept for good, 266-271 kept 30 s, 248-254 stopped after
 * 2 s (asked together: 275-298 kept for good, 248-259 stopped after 2 s). Starting it again
 * costs a check 70-140 ms (a small session's: 100-200 ms against 25-55 warm).
 */
export const CHECK_WORKER_IDLE_MS = 2_000;

export function createCheckWorker(
  { idleMs = CHECK_WORKER_IDLE_MS }: { idleMs?: number } = {},
): CheckRunner {
  let worker: Worker | null = null;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let next = 1;
  const pending = new Map<
    number,
    { resolve(r: CheckSessionReport): void; reject(e: Error): void }
  >();
  const stop = () => {
    clearTimeout(idle);
    worker?.terminate();
    worker = null;
  };
  // once nothing is pending, the worker stops after idleMs (a timer that keeps no process alive)
  const stopWhenIdle = () => {
    clearTimeout(idle);
    if (pending.size || !worker) return;
    const timer = setTimeout(() => pending.size || stop(), idleMs);
    Deno.unrefTimer(timer);
    idle = timer;
  };
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
      stopWhenIdle();
    };
    w.onerror = (e) => {
      e.preventDefault();
      for (const p of pending.values()) {
        p.reject(new Error(`The check worker failed: ${e.message}`));
      }
      pending.clear();
      stop();
    };
    return w;
  };
  return {
    run(input) {
      clearTimeout(idle);
      worker ??= start();
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker!.postMessage({ id, input });
      });
    },
    get running() {
      return worker !== null;
    },
    close() {
      stop();
      for (const p of pending.values()) p.reject(new Error("The check worker was closed"));
      pending.clear();
    },
  };
}
