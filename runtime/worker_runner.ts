/**
 * @module
 * A UnitRunner backed by one read-only import worker, so parsing (worker) and writing (main
 * thread) use both cores.
 */
import type { UnitRunner } from "../core/store/import.ts";
import { unpackUnit, type WireUnit } from "../core/store/unit_wire.ts";
import type { WorkerRequest } from "./import_worker.ts";
import { workerCalls } from "./worker_calls.ts";

export interface WorkerRunner {
  runner: UnitRunner;
  /** How many passes the worker had read before they were asked for (a big log's next slice). */
  readAhead(): number;
  close(): void;
}

export function createWorkerRunner(options: { tempRoot: string }): WorkerRunner {
  // The worker's scratch copies go to a folder of its own, removed when it closes: a copy a
  // read in parts keeps between parts (core/sources/_sqlite_copy.ts) goes with it.
  const tempRoot = `${options.tempRoot}/worker-${crypto.randomUUID()}`;
  const worker = new Worker(new URL("./import_worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        read: true,
        write: [tempRoot],
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
  let early = 0;
  const call = workerCalls(worker, "import worker", (a: { result: WireUnit; early: boolean }) => {
    if (a.early) early++;
    return unpackUnit(a.result);
  });
  return {
    runner: (unit, epoch, resume, maxPassBytes) =>
      call((id) => ({
        id,
        unit,
        epoch,
        resume,
        tempRoot,
        maxPassBytes,
      } satisfies WorkerRequest)),
    readAhead: () => early,
    close: () => {
      worker.terminate();
      try {
        Deno.removeSync(tempRoot, { recursive: true });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    },
  };
}
