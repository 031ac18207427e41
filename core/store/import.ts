/**
 * The import pass: discover every unit of every (selected) source, run its importer from its
 * checkpoint, and apply the result to the store. Running an importer is injected, so it can
 * happen in process (tests) or in a read-only worker (the CLI). The user's exclude list
 * (core/archive) applies here, for `chronicle import` and the server's passes alike: discovery
 * leaves out the logs its globs name before anything is read, the pass leaves unread the logs
 * that only feed sessions of excluded projects, and the store drops such sessions' deltas.
 */
import type { ExcludeRules } from "../archive/mod.ts";
import type { Checkpoint, SessionIssue } from "../model/mod.ts";
import { importerFor, IMPORTERS } from "../sources/registry.ts";
import { statMatches } from "../sources/jsonl.ts";
import { SEEN_NOT_KEPT, seenAfter, slicedOn, unchangedResult } from "../sources/results.ts";
import { sameSqliteCheckpoint, sqliteCheckpoint } from "../sources/sqlite_checkpoint.ts";
import type {
  DiscoverEnv,
  ImportContext,
  SeenPrior,
  SourceFs,
  SourceUnit,
} from "../sources/types.ts";
import type { ChronicleStore } from "./store.ts";
import { type BacklogSlice, buildTexts } from "./backlog.ts";
import { collectGarbage } from "../gc.ts";
import { compressPlainFrames } from "./payload_codec.ts";
import type { CompressedSlice, PlainCursor, PlainSlice } from "./payloads.ts";
import { isBusy } from "./_sql.ts";
import { type PreparedUnit, prepareUnit } from "./prepare.ts";

/** Runs one unit's importer. The default runs it in process. */
export type UnitRunner = (
  unit: SourceUnit,
  epoch: number,
  resume: ImportContext["resume"],
  /** `ImportContext.maxPassBytes`: the pass may stop after about this many bytes. */
  maxPassBytes?: number,
) => Promise<PreparedUnit>;

export interface DiscoverOptions {
  env: DiscoverEnv;
  fs: SourceFs;
  /** Only these sources (importer ids). Default: all. */
  sources?: string[];
  /** The user's exclude list, compiled. Default: nothing excluded. */
  exclude?: ExcludeRules;
}

export interface ImportOptions extends DiscoverOptions {
  /** Default: in process, through `fs`. */
  runner?: UnitRunner;
  onProgress?: (done: number, total: number, unit: SourceUnit) => void;
  /** Clock for the summary's seconds; injected for tests. Default performance.now. */
  now?: () => number;
  /**
   * Stop at the first unit the store cannot take when this says so (a full disk: every later
   * unit would fail the same way). Default: go on with the next unit.
   */
  stopOnStoreError?: (e: unknown) => boolean;
  /** Read every unit from its start, whatever its checkpoint says (`chronicle import --full`). */
  full?: boolean;
  /**
   * Leave the search backlog (what a bulk pass stored but did not index, see backlog.ts) to
   * the caller, who indexes it with `ChronicleStore.indexBacklog` (the server, between its
   * other work). Default: the pass indexes it before it returns, sessions browsable first.
   */
  searchLater?: boolean;
  /**
   * A pass that meets a log (or database) big enough to be read in slices stores the rest of
   * the pass as a bulk pass does: search texts, compression and statistics after it
   * (`chronicle import`). Default false: the server's live imports index as they go.
   */
  deferSliced?: boolean;
  /** The slice a JSONL log is read in, in bytes. Default {@link PASS_SLICE_BYTES}. */
  maxPassBytes?: number;
  /** Called as the pass indexes the backlog: operations indexed, and how many there were. */
  onIndexProgress?: (done: number, total: number) => void;
  /**
   * Stops the pass once aborted (Ctrl-C): before its next unit, or a big log's next slice, and
   * the units being read meanwhile are dropped. Every unit and slice stored is kept, with its
   * checkpoint, so the next pass goes on from there; `summary.interrupted` says what was left.
   */
  signal?: AbortSignal;
}

/**
 * What one pass did with one source's units. `units` = `new` + `rewritten` + `appended` +
 * `unchanged` + `failed`; `removed` counts the units stored before that this pass no longer
 * found on disk (their sessions are kept); `excluded` the units found but not read (the
 * exclude list).
 */
export interface SourceSummary {
  units: number;
  /** Seen for the first time. */
  new: number;
  /** Read again from the start (replaced, or rewritten shorter). */
  rewritten: number;
  appended: number;
  unchanged: number;
  /** Not stored: the importer or the store failed (see `errors`). */
  failed: number;
  removed: number;
  excluded: number;
  /** `new` + `rewritten`: read from the start. */
  full: number;
  /** Sessions and operations this pass wrote. */
  sessions: number;
  operations: number;
  bytes: number;
}

export interface ImportSummary {
  sessions: number;
  operations: number;
  issues: number;
  loss_windows: number;
  seconds: number;
  bytes_read: number;
  sources: Record<string, SourceSummary>;
  /** Units that failed as a whole (locked, unreadable): reported, never fatal. */
  errors: SessionIssue[];
  /** Set when the pass stopped early (`stopOnStoreError`): where, why, and what is left. */
  stopped?: { file: string; error: SessionIssue; remaining_paths: string[] };
  /**
   * Set when the pass was stopped (`signal`): the files it did not read to their end, the one
   * it was in the middle of first.
   */
  interrupted?: { remaining_paths: string[] };
  /** Ids of the sessions this pass wrote to. */
  changed_sessions: string[];
  /**
   * Seconds from the start until every session the pass wrote was stored and browsable; the
   * search index of a bulk pass is built after (`seconds` includes it).
   */
  browsable_seconds: number;
  /** Operations the pass took off the search backlog (indexed after their rows). */
  indexed: number;
  /** Operations stored but not yet in the search index when the pass returned. */
  unindexed: number;
}

/**
 * True only when the stat of the unit's files matches its checkpoint exactly: one stat for a
 * JSONL file, two for a SQLite database and its WAL. Anything else goes to the importer.
 */
export async function looksUnchanged(
  fs: SourceFs,
  unit: SourceUnit,
  checkpoint: Checkpoint,
): Promise<boolean> {
  if (checkpoint.file !== unit.path) return false;
  if (checkpoint.kind === "jsonl" && unit.kind === "jsonl") {
    const st = await fs.stat(unit.path);
    return st !== null && statMatches(st, checkpoint);
  }
  if (checkpoint.kind === "sqlite" && unit.kind === "sqlite") {
    const current = await sqliteCheckpoint(fs, unit.path);
    return current !== null && sameSqliteCheckpoint(checkpoint, current);
  }
  return false;
}

/**
 * A JSONL log is imported in slices of about this many bytes (`ImportContext.maxPassBytes`):
 * one unit's rows and payloads are held whole between the worker and the store, and a 131 MiB
 * session peaked at 383 MB read in one pass.
 */
export const PASS_SLICE_BYTES = 12 << 20;

/** From this many units to import, a pass counts as a bulk import. */
const BULK_UNITS = 16;
/** A pass of at most this many units reads their checkpoints one by one, not the whole table. */
const FEW_UNITS = 64;

/** Runs importers in this thread. */
export function inProcessRunner(fs: SourceFs): UnitRunner {
  return (unit, epoch, resume, maxPassBytes) => {
    const importer = importerFor(unit.source);
    if (!importer) throw new TypeError(`No importer for source "${unit.source}"`);
    return importer.import(unit, { fs, epoch, resume, maxPassBytes }).then((r) => prepareUnit(r));
  };
}

/**
 * Every unit of every (selected) source, from the importers' own `discover`, without those the
 * exclude list's globs name (`excluded`: never read). A source whose logs cannot be listed is
 * an error in the list, never fatal.
 */
export async function discoverUnits(
  options: DiscoverOptions,
): Promise<
  { units: SourceUnit[]; excluded: SourceUnit[]; errors: SessionIssue[]; failed: Set<string> }
> {
  const selected = IMPORTERS.filter((i) => !options.sources || options.sources.includes(i.id));
  const units: SourceUnit[] = [];
  const excluded: SourceUnit[] = [];
  const errors: SessionIssue[] = [];
  const failed = new Set<string>();
  const exclude = options.exclude;
  for (const importer of selected) {
    try {
      for (const unit of await importer.discover(options.env, options.fs)) {
        (exclude && !exclude.empty && exclude.unit(unit.path) ? excluded : units).push(unit);
      }
    } catch (e) {
      failed.add(importer.id);
      errors.push({
        code: "discover_failed",
        message: `Cannot look for ${importer.displayName} logs: ${(e as Error).message}`,
        severity: "error",
      });
    }
  }
  return { units, excluded, errors, failed };
}

/** Imports every discovered unit incrementally. Never throws for one bad unit. */
export async function importAll(
  store: ChronicleStore,
  options: ImportOptions,
): Promise<ImportSummary> {
  const started = (options.now ?? (() => performance.now()))();
  const { units, excluded, errors, failed } = await discoverUnits(options);
  const removedFrom = IMPORTERS.map((i) => i.id as string).filter((id) =>
    (!options.sources || options.sources.includes(id)) && !failed.has(id)
  );
  return await importUnits(store, units, {
    ...options,
    errors,
    started,
    removedFrom,
    excludedUnits: excluded,
  });
}

export interface ImportUnitsOptions extends Omit<ImportOptions, "env" | "sources"> {
  /** Problems found before (discovery's), reported with the pass's own. */
  errors?: SessionIssue[];
  /** When the pass began, on the `now` clock (default: now). */
  started?: number;
  /**
   * Count the store's sessions, operations, issues and loss windows for the summary (a scan
   * of the store). Default true; the server's chunks and live imports skip it (zeros).
   */
  totals?: boolean;
  /**
   * The sources whose every unit `discovered` lists: stored units of these sources that it
   * does not list are counted as removed. Default: none (a partial pass counts nothing).
   */
  removedFrom?: readonly string[];
  /**
   * A pass that is one piece of a bulk import (the server's first pass, in chunks): relaxed
   * durability and shared commits however few its units. Default: from this many units on.
   */
  bulk?: boolean;
  /** The units discovery left out (the exclude list): counted, never read, not "removed". */
  excludedUnits?: readonly SourceUnit[];
}

/**
 * The units an earlier pass read while one of their projects was excluded (their notes, see
 * admit.ts) whose project is no longer excluded: read from their start, whatever their
 * checkpoint says, so what was left out comes in. The server's passes ask before skipping a
 * unit as unchanged.
 */
export function unitsToReread(store: ChronicleStore, exclude?: ExcludeRules): Set<string> {
  const out = new Set<string>();
  for (const [path, projects] of store.excludedMarks()) {
    if (projects.some((p) => !exclude?.project(p))) out.add(path);
  }
  return out;
}

/** The summary of a pass that did nothing (yet). */
export function emptySummary(errors: SessionIssue[] = []): ImportSummary {
  return {
    sessions: 0,
    operations: 0,
    issues: 0,
    loss_windows: 0,
    seconds: 0,
    bytes_read: 0,
    sources: {},
    errors,
    changed_sessions: [],
    browsable_seconds: 0,
    indexed: 0,
    unindexed: 0,
  };
}

/**
 * Imports the given units incrementally, as `importAll` does with the ones it discovers: the
 * one import pass of `chronicle import`, the server's background passes and its live imports.
 * Never throws for one bad unit.
 */
export async function importUnits(
  store: ChronicleStore,
  discovered: readonly SourceUnit[],
  options: ImportUnitsOptions,
): Promise<ImportSummary> {
  const now = options.now ?? (() => performance.now());
  const started = options.started ?? now();
  const runner = options.runner ?? inProcessRunner(options.fs);
  const errors = [...options.errors ?? []];
  const summary = emptySummary(errors);
  const exclude = options.exclude;
  const excludedProject = exclude && !exclude.noProjects
    ? (path: string) => exclude.project(path)
    : undefined;
  // Logs that only feed stored sessions of excluded projects are not read.
  const held = excludedProject ? store.heldUnits(excludedProject) : new Set<string>();
  for (const u of options.excludedUnits ?? []) sourceSummary(u.source).excluded++;
  // Main files first, so sub-agent files find their session's project and title.
  const units = discovered.filter((u) => {
    if (!held.has(u.path)) return true;
    sourceSummary(u.source).excluded++;
    return false;
  }).sort((a, b) => a.rank - b.rank || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const touched = new Set<string>();
  // Stored units of the sources this pass looked at that discovery no longer found, and whose
  // files are gone: their operations stay in the store, marked kept (the archive keeps what it
  // saw); counted as removed, once. An excluded log, or a file still there, is left as it is.
  if (options.removedFrom) {
    const found = new Set(
      [...discovered, ...options.excludedUnits ?? []].map((u) => u.path),
    );
    for (const [path, cp] of store.sourceCheckpoints()) {
      if (found.has(path) || !options.removedFrom.includes(cp.source)) continue;
      if (await options.fs.stat(path)) continue;
      sourceSummary(cp.source).removed++;
      for (const sid of store.markUnitGone(path)) touched.add(sid);
    }
  }
  // Checkpoints only: an importer's state is read for the units that changed. A pass of a few
  // units (a live import) reads theirs alone.
  const known = store.sourceCheckpoints(
    units.length <= FEW_UNITS ? units.map((u) => u.path) : undefined,
  );
  const reread = unitsToReread(store, exclude);
  const plan = units.map((unit) => {
    const prev = known.get(unit.path);
    const checkpoint = options.full || reread.has(unit.path) ? null : prev?.checkpoint ?? null;
    return { unit, prev, epoch: prev ? prev.epoch + 1 : 0, checkpoint };
  });
  // Slices only where they read as appends: a log the store holds nothing of, or one read on
  // from its checkpoint (readPass); never a file read again from its start over stored rows.
  const sliceOf = (p: (typeof plan)[number]) =>
    importerFor(p.unit.source)?.slices && (!p.prev || p.checkpoint)
      ? options.maxPassBytes ?? PASS_SLICE_BYTES
      : undefined;
  const resumeOf = (p: (typeof plan)[number]) =>
    p.checkpoint
      ? {
        checkpoint: p.checkpoint,
        state: store.sourceState(p.unit.path),
        seen: store.sourceSeen(p.unit.path),
      }
      : undefined;
  // A unit whose files did not move is skipped here, without a round trip to the worker.
  const unchanged = await Promise.all(
    plan.map((p) => p.checkpoint ? looksUnchanged(options.fs, p.unit, p.checkpoint) : false),
  );
  // A big pass (a first import) trades durability on power loss for speed: everything in it
  // can be imported again from the agents' logs, and the store is synced once at the end. Its
  // units also share commits, a few at a time (each unit stays atomic).
  // Small passes (the server's background imports, beside rule edits) stay fully durable.
  const heavy = options.bulk ?? unchanged.filter((u) => !u).length >= BULK_UNITS;
  // It also writes rows first and the search index after (backlog.ts): its sessions are
  // browsable sooner, and the index is built in a few large transactions. So does a pass that
  // meets a log big enough to be read in slices, when asked (`deferSliced`, deferLate): its
  // slices are stored without their search texts, which FTS5 would hold in memory until each
  // slice's commit (a 1 GiB session: browsable after 27 s instead of 50, peak RSS about 25 MB
  // lower).
  const restore = heavy ? store.relaxDurability() : () => {};
  let undefer = heavy ? store.deferSearch() : null;
  const deferLate = () => undefer ??= store.deferSearch();
  const group = heavy ? store.writeGroup() : null;
  try {
    try {
      await runPlan();
    } finally {
      group?.close();
      undefer?.();
    }
    // Every session is stored, so browsable, before the collection below.
    summary.browsable_seconds = Math.round(now() - started) / 1000;
    // A pass that left a backlog (a bulk pass, or a big log's slices) leaves its garbage in this
    // thread: the payloads the import worker sent, the rows written. V8 collects it when it
    // likes, and what comes next (the index's reads, or the server's next chunk) lands on top
    // of it. One full collection here (gc.ts), a few tens of milliseconds a pass. Measured
    // where it was before: eight pasted 26 MiB prompts had 97 MB of dead buffers when their
    // index began, which then peaked at 323-354 MB without; the server's first import of 1 GB
    // of Claude Code, in about twenty chunks, at 269-278 MiB without, 248-278 with. A pass
    // that indexes as it goes (a live import, a few units) does not collect.
    if (undefer) collectGarbage();
    if (!options.searchLater) {
      await indexSearchBacklog(store, summary, {
        onProgress: options.onIndexProgress,
        signal: options.signal,
      });
    }
  } finally {
    restore();
  }
  summary.unindexed = store.searchBacklog();
  if (options.totals !== false) {
    const totals = store.totals();
    summary.sessions = totals.sessions;
    summary.operations = totals.operations;
    summary.issues = totals.issues;
    summary.loss_windows = totals.loss_windows;
  }
  summary.seconds = Math.round(now() - started) / 1000;
  summary.changed_sessions = [...touched];
  return summary;

  /** Settles the sessions of a log whose sliced read stopped before its last slice. */
  function settle(unit: SourceUnit): void {
    try {
      store.settleSlices(unit.path);
    } catch (e) {
      // its next import reads on from the stored slice and settles them then
      errors.push(storeFailed(unit, e));
    }
  }

  function sourceSummary(source: string): SourceSummary {
    return summary.sources[source] ??= {
      units: 0,
      new: 0,
      rewritten: 0,
      appended: 0,
      unchanged: 0,
      failed: 0,
      removed: 0,
      excluded: 0,
      full: 0,
      sessions: 0,
      operations: 0,
      bytes: 0,
    };
  }

  async function runPlan(): Promise<void> {
    const start = (i: number) =>
      i >= plan.length ? null : unchanged[i]
        ? Promise.resolve({
          ok: true as const,
          r: prepareUnit(unchangedResult({ checkpoint: plan[i].checkpoint!, state: null })),
        })
        : runner(plan[i].unit, plan[i].epoch, resumeOf(plan[i]), sliceOf(plan[i])).then(
          (r) => ({ ok: true as const, r }),
          (e: unknown) => ({ ok: false as const, e }),
        );
    // The importer runs up to AHEAD units in front of the writer, so a slow file on either
    // side does not leave the other idle. Two are as fast as three (300 MB corpus, five
    // interleaved rounds: browsable after a median 4.3 s against 4.5 s) and hold less in
    // memory at once (peak RSS 245–266 MB against 248–292 MB).
    const AHEAD = 2;
    const queue: ReturnType<typeof start>[] = [];
    for (let i = 0; i < Math.min(AHEAD, plan.length); i++) queue.push(start(i));
    // The units not read to their end when the pass is stopped at unit `i` (`signal`).
    const interrupt = async (i: number, midway = false) => {
      await Promise.all(queue); // read meanwhile: dropped, their units read again next time
      summary.interrupted = {
        remaining_paths: plan.slice(i).filter((_, k) => (midway && k === 0) || !unchanged[i + k])
          .map((p) => p.unit.path),
      };
    };
    for (let i = 0; i < plan.length; i++) {
      if (options.signal?.aborted) return await interrupt(i);
      // (let: dropped once read, like the first slice below)
      let current: Awaited<ReturnType<typeof start>> | undefined = await queue.shift()!;
      queue.push(start(i + AHEAD));
      const { unit, prev, epoch } = plan[i];
      const s = sourceSummary(unit.source);
      s.units++;
      if (!current.ok) {
        s.failed++;
        errors.push(importFailed(unit, current.e));
        options.onProgress?.(i + 1, plan.length, unit);
        continue;
      }
      let result = current.r;
      current = undefined;
      // What the unit's first slice says, not the slice: a big log's slices are stored one by one,
      // and each is held only until the next. Held for the whole log, the first slice of eight
      // pasted 26 MiB prompts held one of them: the server's first import of them peaked at
      // 274–277 MiB, 245–247 without it.
      const first = { mode: result.mode, checkpoint: result.checkpoint };
      if (options.deferSliced && first.mode !== "unchanged" && slicedOn(first.checkpoint)) {
        deferLate();
      }
      // a unit skipped as unchanged that failed last time is failing still: say so again
      const failing = result.mode === "unchanged" && unchanged[i] ? prev?.failing ?? [] : [];
      const unitErrors = [...failing];
      // The operations written, each result's own as it comes; but a big log's slices may
      // give an operation again (a call completed in a later slice), so those are counted by
      // the store once stored (store.slicedOperations, from its clock now). A database's parts
      // hold whole sessions: counted as they come.
      let written = 0;
      const clock = first.checkpoint?.kind === "jsonl" && slicedOn(first.checkpoint)
        ? store.clock()
        : undefined;
      const sessions = new Set<string>();
      let stored = true;
      // The last slice stored left its sessions to a slice after it (apply.ts): settled below
      // when no slice after it is stored.
      let unsettled = false;
      // stopped (`signal`) between two of the log's slices: it is read on from there next time
      let midway = false;
      // A big log comes in slices (its checkpoint says `more`): each stored, then the next read.
      for (let slice = 0;; slice++) {
        const errs = result.issues.filter((x) => x.severity === "error");
        unitErrors.push(...errs);
        errors.push(...(slice ? errs : [...failing, ...errs]));
        summary.bytes_read += result.bytesRead;
        s.bytes += result.bytesRead;
        if (result.mode === "unchanged" && !result.issues.length) break;
        // the next slice is read while this one is stored (its state is in this result)
        const cp = result.checkpoint;
        // (a pass that read nothing, a log gone mid-way through, keeps its checkpoint: no next)
        // the records it has seen stay in the importer's thread (seen.ts): asked for by count
        const state = result.state;
        const kept = seenAfter(result.seen);
        const readOn = (seen: SeenPrior | undefined) =>
          runner(unit, epoch, { checkpoint: cp!, state, seen }, sliceOf(plan[i])).then(
            (r) => ({ ok: true as const, r }),
            (e: unknown) => ({ ok: false as const, e }),
          );
        const next = result.mode !== "unchanged" && cp && slicedOn(cp) ? readOn(kept) : null;
        try {
          const part = result; // the apply closure keeps this slice
          const apply = () =>
            store.applyUnit(
              unit,
              part,
              part.mode === "unchanged" && prev ? prev.epoch : epoch,
              { excludedProject },
            );
          const changed = group ? group.run(part.bytesRead, apply) : apply();
          for (const id of changed) touched.add(id);
          unsettled = slicedOn(part.checkpoint);
          if (unsettled) collectGarbage(); // the slice's garbage goes before the next (gc.ts)
        } catch (e) {
          stored = false;
          const error = storeFailed(unit, e);
          errors.push(error);
          if (options.stopOnStoreError?.(e)) {
            s.failed++;
            summary.stopped = {
              file: unit.path,
              error,
              remaining_paths: plan.slice(i).filter((_, k) => k === 0 || !unchanged[i + k])
                .map((p) => p.unit.path),
            };
            await next; // a slice read past a store that stops is dropped
            if (unsettled) settle(unit);
            options.onProgress?.(i + 1, plan.length, unit);
            return;
          }
          await next;
          break;
        }
        for (const d of result.deltas) sessions.add(d.session_id);
        if (clock === undefined) written += distinctOperations(result);
        if (!next) break;
        if (options.signal?.aborted) {
          midway = true;
          await next; // the slice read past the stop is dropped: the checkpoint stored says where
          break;
        }
        let read = await next;
        // not kept there (a worker started since): read again with the keys, stored by now
        if (!read.ok && (read.e as Error)?.message?.includes(SEEN_NOT_KEPT)) {
          read = await readOn(store.sourceSeen(unit.path));
        }
        if (!read.ok) {
          stored = false;
          errors.push(importFailed(unit, read.e));
          break;
        }
        result = read.r;
      }
      if (unsettled) settle(unit);
      s.operations += clock === undefined ? written : store.slicedOperations(unit.path, clock);
      s.sessions += sessions.size;
      if (!stored || unitErrors.length) s.failed++;
      else if (first.mode === "unchanged") s.unchanged++;
      else if (first.mode === "append") s.appended++;
      else if (prev) s.rewritten++;
      else s.new++;
      s.full = s.new + s.rewritten;
      options.onProgress?.(i + 1, plan.length, unit);
      if (midway) return await interrupt(i, true);
    }
  }
}

/** How many operations a result writes (an operation given twice counts once). */
function distinctOperations(result: PreparedUnit): number {
  const bySession = new Map<string, Set<string>>();
  for (const d of result.deltas) {
    let ids = bySession.get(d.session_id);
    if (!ids) bySession.set(d.session_id, ids = new Set());
    for (const o of d.operations) ids.add(o.id);
  }
  let n = 0;
  for (const ids of bySession.values()) n += ids.size;
  return n;
}

/** A unit the store could not write. */
function storeFailed(unit: SourceUnit, e: unknown): SessionIssue {
  return {
    code: "store_failed",
    message: `Cannot store "${unit.path}": ${(e as Error).message}`,
    severity: "error",
    file: unit.path,
  };
}

/** A unit its importer could not read (it threw, or its worker did). */
function importFailed(unit: SourceUnit, e: unknown): SessionIssue {
  return {
    code: "import_failed",
    message: `Cannot import "${unit.path}": ${(e as Error)?.message ?? e}`,
    severity: "error",
    file: unit.path,
  };
}

/** Builds the search texts of a backlog slice (in a worker: runtime/text_worker.ts). */
export type TextBuilder = (slice: BacklogSlice) => Promise<string[]>;

/**
 * Compresses plain payload frames, each into one Zstandard frame (`compressPlainFrames`). It
 * may take the frames' buffers (a worker: moved, not copied).
 */
export type FrameCompressor = (frames: Uint8Array[]) => Promise<Uint8Array[]>;

/**
 * Counts the statistics of the sessions a bulk import left waiting (`ChronicleStore.deferSearch`),
 * a slice per transaction with a turn of the event loop between.
 */
export function settleStats(store: ChronicleStore, summary: ImportSummary): Promise<void> {
  return deferredWork(summary, "stats_failed", "count the statistics of the sessions", async () => {
    while (store.settleStats() > 0) await Promise.resolve();
  });
}

/**
 * Slices of compressed frames stored in one transaction: up to this many bytes of frames held
 * meanwhile. A frame is one row (migration 27), so a transaction costs little; what it saves is
 * a commit between the index's. The frames are written in the transaction that points at them:
 * written before it, they would be nobody's bytes meanwhile, and another process's compaction
 * could take them for dead.
 */
const COMPRESSED_AT_ONCE = 2 << 20;

/**
 * Compressed slices of plain frames held until there are enough to store in one transaction
 * ({@link COMPRESSED_AT_ONCE}). What is held and never stored stays in its plain frames, read
 * as before and compressed by the next pass.
 */
export class CompressedBatch {
  private held: CompressedSlice[] = [];
  private bytes = 0;

  constructor(private readonly store: ChronicleStore) {}

  /** Holds a compressed slice (its plain bytes are let go), and stores the batch once full. */
  add(slice: PlainSlice, compressed: readonly Uint8Array[]): void {
    for (const f of slice.frames) f.bytes = new Uint8Array();
    for (const c of compressed) this.bytes += c.byteLength;
    this.held.push({ slice, compressed });
    if (this.bytes >= COMPRESSED_AT_ONCE) this.flush();
  }

  /** Stores what is held, in one transaction. */
  flush(): void {
    const held = this.drop();
    if (held.length) this.store.applyCompressedFrames(held);
  }

  /** Lets go of what is held, unstored. */
  drop(): CompressedSlice[] {
    const held = this.held;
    this.held = [];
    this.bytes = 0;
    return held;
  }
}

/**
 * Compresses the frames a bulk import wrote uncompressed (`ChronicleStore.deferSearch`), a
 * few slices a transaction; `compress` may do it elsewhere (a worker) meanwhile.
 */
export function compressFrames(
  store: ChronicleStore,
  summary: ImportSummary,
  options: { compress?: FrameCompressor; signal?: AbortSignal } = {},
): Promise<void> {
  const compress = options.compress ??
    ((frames) => Promise.resolve(compressPlainFrames(frames)));
  return deferredWork(summary, "compress_failed", "compress the payloads", async () => {
    const batch = new CompressedBatch(store);
    // (stopped: the frames left plain are the next pass's)
    const more = (after: PlainCursor | null = null) =>
      options.signal?.aborted ? null : store.readPlainFrames(after);
    for (let slice = more(); slice; slice = more(slice.next)) {
      batch.add(slice, await compress(slice.frames.map((f) => f.bytes)));
    }
    batch.flush();
  });
}

/**
 * Work a bulk import leaves until every session is stored. A failure is a warning and the
 * next import does what is left (the rows say what that is); another writer holding the store
 * is no failure.
 */
async function deferredWork(
  summary: ImportSummary,
  code: string,
  what: string,
  work: () => Promise<void>,
): Promise<void> {
  try {
    await work();
  } catch (e) {
    if (isBusy(e)) return;
    summary.errors.push({
      code,
      message: `Cannot ${what} this import stored (the next import goes on): ${
        (e as Error).message
      }`,
      severity: "warning",
    });
  }
}

export interface IndexBacklogOptions {
  /** Called after each slice: operations indexed, and how many there were. */
  onProgress?: (done: number, total: number) => void;
  /** Builds a slice's texts (a worker). Default: here. */
  build?: TextBuilder;
  /** Compresses the plain frames (a worker). Default: here. */
  compress?: FrameCompressor;
  /**
   * Stops once aborted (Ctrl-C), after the slice being written: what is not indexed or
   * compressed yet stays for the next import (`summary.unindexed`).
   */
  signal?: AbortSignal;
}

/**
 * What a bulk import leaves until every session is stored: counts its sessions' statistics,
 * then indexes the search backlog (backlog.ts) into `summary`'s counts, a slice per
 * transaction, while its plain payload frames are compressed; a failure (a full disk) is one
 * of its errors and leaves the rest for the next import. With `build` (a worker), the texts of
 * the next slice are built while this thread writes the current one's: the two halves of the
 * work on two cores; with `compress`, the frames too.
 */
export async function indexSearchBacklog(
  store: ChronicleStore,
  summary: ImportSummary,
  options: IndexBacklogOptions = {},
): Promise<void> {
  const { onProgress, signal } = options;
  const build = options.build ?? ((slice) => Promise.resolve(buildTexts(slice)));
  const total = store.searchBacklog();
  // (the pass that left the backlog collected its garbage as it ended: importUnits)
  await settleStats(store, summary);
  // The pass's plain frames are compressed meanwhile: with a worker, between its slices of
  // texts, while this thread writes the index. (The worker is the busier thread now that it
  // builds the texts too: 13.0 s of CPU against this thread's 10.5 on the 1 GB corpus.
  // Compressing here instead was slower, and peaked higher.)
  const compressing = compressFrames(store, summary, { compress: options.compress, signal });
  let done = 0;
  let pending: Promise<string[]> | null = null;
  try {
    // A round reads the backlog once through; what was written again meanwhile stays queued
    // for the next round, and a round that indexes nothing ends it.
    for (let moved = total > 0; moved && !signal?.aborted && store.searchBacklog() > 0;) {
      moved = false;
      let slice = store.readBacklog(0);
      pending = slice && build(slice);
      while (slice && pending && !signal?.aborted) {
        const next = store.readBacklog(slice.rowids[slice.rowids.length - 1]);
        const following: Promise<string[]> | null = next && build(next);
        const texts = await pending;
        pending = following;
        const n = store.applyBacklogTexts(slice, texts);
        if (n) moved = true;
        done += n;
        onProgress?.(Math.min(done, total), total);
        slice = next;
      }
    }
    await pending; // stopped (`signal`): the slice built ahead is not written
  } catch (e) {
    pending?.catch(() => {}); // the slice built ahead is not needed any more
    summary.errors.push({
      code: "index_failed",
      message: `Cannot index ${
        Math.max(0, total - done)
      } operations for search (the next import goes on): ${(e as Error).message}`,
      severity: "error",
    });
  }
  await compressing;
  summary.indexed += done;
  summary.unindexed = store.searchBacklog();
  // The segments the index merged while it grew leave free pages: back to the disk, a slice
  // at a time (each its own short write).
  if (done && !summary.unindexed) {
    try {
      while (store.vacuumFreePages() > 0) await Promise.resolve();
    } catch (e) {
      // another writer holding the database is not a failure (the pages stay); this is one
      summary.errors.push({
        code: "vacuum_failed",
        message: `Cannot give the store's free pages back to the disk: ${(e as Error).message}`,
        severity: "warning",
      });
    }
  }
}
