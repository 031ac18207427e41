/// <reference lib="deno.worker" />
/**
 * @module
 * Runs importers inside a worker whose permissions are read-only (plus the scratch folder for
 * copies of foreign SQLite databases). The main thread writes to the store while this parses.
 */
import { importerFor } from "../core/sources/registry.ts";
import type { ImportContext, SourceFs, SourceUnit } from "../core/sources/types.ts";
import { seenAfter, slicedOn } from "../core/sources/results.ts";
import { collectGarbage } from "../core/gc.ts";
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

/** A pass's result; `early` when it was read before it was asked for (`ahead`). */
export type WorkerResponse = WorkerAnswer<{ result: WireUnit; early: boolean }>;

/** A pass read: its result packed for the trip, or why it failed. */
type Pass =
  | { ok: true; wire: WireUnit; transfer: ArrayBuffer[]; next?: WorkerRequest }
  | { ok: false; error: string };

/**
 * The next slice of a big log (or part of a big database), read as soon as the last one was
 * answered instead of when the store asks for it, by the log's path. The store asks for slice
 * k + 1 once slice k has reached it, and stores slice k meanwhile: read here first, slice k + 1
 * no longer waits for slice k's trip and the store's ask (35-50 ms a part on OpenCode's 145 MiB
 * database; its import 0.91x the time). One slice ahead at most, as before: the store holds
 * slice k while this thread reads k + 1.
 *
 * The store's ask gets it when it asks for that very pass (`passKey`): the same unit, epoch,
 * checkpoint, state, size and kept seen records. An ask for the log that differs drops it (and
 * finds Claude Code's kept records moved on, `SEEN_NOT_KEPT`: the store gives its keys). A read
 * ahead that no ask takes (the store stopped) is dropped by the log's next ask, or when the
 * worker closes; a later import asks with the next epoch, so it never takes a stale one.
 */
const ahead = new Map<string, { key: string; pass: Promise<Pass> }>();

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const request = e.data;
  const next = send(request.id, await passFor(request));
  // A slice's garbage goes before the next slice comes (gc.ts): once this function is done,
  // as its frame holds the pass it sent (a pasted 28 MiB prompt's line and text, 30 MB).
  if (next) {
    queueMicrotask(() => {
      collectGarbage();
      ahead.set(request.unit.path, { key: passKey(next), pass: read(next) });
    });
  }
};

/** The pass `request` asks for, and whether it was read ahead. */
async function passFor(request: WorkerRequest): Promise<Pass & { early: boolean }> {
  const early = ahead.get(request.unit.path);
  ahead.delete(request.unit.path);
  if (early !== undefined && early.key === passKey(request)) {
    return { ...await early.pass, early: true };
  }
  // not what the store asks for; both read the log's state in this thread (its kept seen
  // records, its database's copy): one after the other
  if (early) await early.pass;
  return { ...await read(request), early: false };
}

/** Sends a pass to the store; returns the pass after it, to read ahead. */
function send(id: number, pass: Pass & { early: boolean }): WorkerRequest | undefined {
  if (!pass.ok) {
    self.postMessage({ id, ok: false, error: pass.error });
    return undefined;
  }
  self.postMessage(
    { id, ok: true, result: pass.wire, early: pass.early } satisfies WorkerResponse,
    pass.transfer,
  );
  return pass.next;
}

/**
 * The file system this thread reads through, one for its life (by scratch folder): it keeps the
 * last file's read buffer for the next (deno_fs.ts), where one made a pass gave each log a
 * fresh megabyte to fault in.
 */
const fsByTemp = new Map<string, SourceFs>();
const fsFor = (tempRoot: string) =>
  fsByTemp.get(tempRoot) ??
    fsByTemp.set(tempRoot, createDenoFs({ tempRoot, blocking: true })).get(tempRoot)!;

/** Reads one pass; a slice that says `more` names the pass after it (`next`). */
async function read(request: WorkerRequest): Promise<Pass> {
  const { unit, epoch, resume, tempRoot, maxPassBytes } = request;
  try {
    const importer = importerFor(unit.source);
    if (!importer) throw new TypeError(`No importer for source "${unit.source}"`);
    const result = prepareUnit(
      await importer.import(unit, {
        fs: fsFor(tempRoot),
        epoch,
        resume,
        maxPassBytes,
      }),
    );
    // The pass after a slice, as the store asks for it (core/store/import.ts): from its
    // checkpoint and state, with the seen records this thread kept (counted before they move).
    const cp = result.checkpoint;
    const next: WorkerRequest | undefined = slicedOn(cp) && cp
      ? {
        ...request,
        resume: { checkpoint: cp, state: result.state, seen: seenAfter(result.seen) },
      }
      : undefined;
    // The payload buffers are the worker's own (see packPayloads): they move, not copy.
    const buffers = new Set(result.payloads.buffers.map((b) => b.buffer as ArrayBuffer));
    if (result.seen) buffers.add(result.seen.added.buffer as ArrayBuffer); // its own (seen.ts)
    // Its operations packed, a few strings and arrays rather than 15 fields each (unit_wire.ts).
    return { ok: true, wire: packUnit(result), transfer: [...buffers], next };
  } catch (err) {
    return { ok: false, error: (err as Error)?.message ?? String(err) };
  }
}

/**
 * What a pass reads, but for the request's id: two requests with the same key read the same.
 * Seen records given as the store's keys (bytes) never match: only a slice's own read on does.
 */
function passKey({ unit, epoch, resume, tempRoot, maxPassBytes }: WorkerRequest): string {
  const seen = resume?.seen;
  return JSON.stringify([
    unit,
    epoch,
    tempRoot,
    maxPassBytes ?? null,
    resume?.checkpoint ?? null,
    resume?.state ?? null,
    seen instanceof Uint8Array ? crypto.randomUUID() : seen ?? null,
  ]);
}
