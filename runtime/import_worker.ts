/// <reference lib="deno.worker" />
/**
 * @module
 * Runs importers inside a worker whose permissions are read-only (plus the scratch folder for
 * copies of foreign SQLite databases). The main thread writes to the store while this parses.
 */
import { importerFor } from "../core/sources/registry.ts";
import type { ImportContext, SourceUnit } from "../core/sources/types.ts";
import { slicedOn } from "../core/sources/results.ts";
import { collectGarbage } from "../core/store/gc.ts";
import { prepareUnit } from "../core/store/prepare.ts";
import { packUnit, type WireUnit } from "../core/store/unit_wire.ts";
import { createDenoFs } from "./deno_fs.ts";
import type { WorkerAnswer } from "./worker_calls.ts";

export interface WorkerRequest {
  id: number;
  unit: SourceUnit;
  epoch: number;
  resume: ImportContext["resume"];
  tempRoot: string;
  maxPassBytes?: number;
}

export type WorkerResponse = WorkerAnswer<{ result: WireUnit }>;

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const { id, unit, epoch, resume, tempRoot, maxPassBytes } = e.data;
  try {
    const importer = importerFor(unit.source);
    if (!importer) throw new TypeError(`No importer for source "${unit.source}"`);
    const result = prepareUnit(
      await importer.import(unit, {
        fs: createDenoFs({ tempRoot, blocking: true }),
        epoch,
        resume,
        maxPassBytes,
      }),
    );
    // The payload buffers are the worker's own (see packPayloads): they move, not copy.
    const buffers = new Set(result.payloads.buffers.map((b) => b.buffer as ArrayBuffer));
    if (result.seen) buffers.add(result.seen.added.buffer as ArrayBuffer); // its own (seen.ts)
    // Its operations packed, a few strings and arrays rather than 15 fields each (unit_wire.ts).
    const wire = packUnit(result);
    self.postMessage({ id, ok: true, result: wire } satisfies WorkerResponse, [...buffers]);
    // a slice of a big log: its garbage goes before the next slice comes (gc.ts)
    if (slicedOn(result.checkpoint)) collectGarbage();
  } catch (err) {
    self.postMessage({ id, ok: false, error: (err as Error)?.message ?? String(err) });
  }
};
