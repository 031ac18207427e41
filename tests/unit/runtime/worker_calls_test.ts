/** Calls to a worker: a worker that fails, even before its first call, answers every call. */
import { assertEquals, assertRejects } from "../../_helpers/assert.ts";
import { workerCalls } from "../../../runtime/worker_calls.ts";

/** A module worker from source text. */
function workerOf(source: string): Worker {
  const url = `data:application/javascript,${encodeURIComponent(source)}`;
  return new Worker(url, { type: "module" });
}

Deno.test("a worker that fails as it starts refuses every call instead of never answering", async () => {
  const worker = workerOf("throw new Error('cannot start');");
  const call = workerCalls(worker, "test worker", (a: { n: number }) => a.n);
  // whether the failure comes before or after the first call, each call is refused
  await assertRejects(() => call((id) => ({ id })), Error, "test worker failed");
  await assertRejects(() => call((id) => ({ id })), Error, "test worker failed");
});

Deno.test("a worker answers each call by its id", async () => {
  const worker = workerOf(
    "self.onmessage = (e) => self.postMessage({ id: e.data.id, ok: true, n: e.data.x * 2 });",
  );
  const call = workerCalls(worker, "test worker", (a: { n: number }) => a.n);
  assertEquals(await Promise.all([1, 2, 3].map((x) => call((id) => ({ id, x })))), [2, 4, 6]);
  worker.terminate();
});
