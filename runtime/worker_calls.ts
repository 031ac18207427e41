/**
 * @module
 * Requests to a worker answered by id, as the import and search-text workers answer them:
 * `{ id, ok: true, ... }` or `{ id, ok: false, error }`. A worker that fails (or never starts)
 * rejects every request still waiting, and every request after.
 */

/** A worker's answer to request `id`. */
export type WorkerAnswer<T extends object> =
  | ({ id: number; ok: true } & T)
  | { id: number; ok: false; error: string };

/**
 * Sends `request(id)` for each call and resolves it with `value` of the answer carrying that
 * id. `what` names the worker in the error a failed one gives.
 */
export function workerCalls<T extends object, V>(
  worker: Worker,
  what: string,
  value: (answer: T) => V,
): (request: (id: number) => unknown, transfer?: Transferable[]) => Promise<V> {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: V) => void; reject: (e: Error) => void }>();
  /** Why the worker failed: every later call is refused with it rather than never answered. */
  let failed: Error | null = null;
  worker.onmessage = (e: MessageEvent<WorkerAnswer<T>>) => {
    const w = waiting.get(e.data.id);
    if (!w) return;
    waiting.delete(e.data.id);
    if (e.data.ok) w.resolve(value(e.data));
    else w.reject(new Error(e.data.error));
  };
  worker.onerror = (e) => {
    e.preventDefault();
    // (a worker that fails to start fails before any call waits: the calls after it are refused)
    failed = new Error(`${what} failed: ${e.message}`);
    for (const w of waiting.values()) w.reject(failed);
    waiting.clear();
    worker.terminate();
  };
  return (request, transfer = []) =>
    new Promise((resolve, reject) => {
      if (failed) return reject(failed);
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      worker.postMessage(request(id), transfer);
    });
}
