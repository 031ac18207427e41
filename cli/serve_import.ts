/**
 * The server's importing, wired from core/live and runtime/: one read-only import worker (started
 * again after a pass that leaves a backlog to index, so what that pass left in it goes) and one
 * import queue for the life of the server; a first background pass right after the server
 * binds (newest sessions first, in growing chunks, with progress for the UI and the terminal),
 * a pass every few seconds after it (the polling fallback for everything nobody watches), and
 * live imports of the sessions someone views, which go before waiting background work. Every
 * import goes through `importUnits`, the pipeline of `chronicle import`.
 */
import {
  backgroundPass,
  type BackgroundPassResult,
  type ImportProgress,
  ImportQueue,
  LiveService,
  ProgressTracker,
  systemClock,
  UnitBatcher,
  type WatchTiming,
} from "../core/live/mod.ts";
import type { SourceUnit } from "../core/sources/types.ts";
import { ChronicleError } from "../core/model/mod.ts";
import type { ExcludeRules } from "../core/archive/mod.ts";
import {
  type ChronicleStore,
  CompressedBatch,
  compressPlainFrames,
  discoverUnits,
  emptySummary,
  type ImportSummary,
  importUnits,
  looksUnchanged,
  type PlainCursor,
  unitsToReread,
} from "../core/store/mod.ts";
import { createDenoFs } from "../runtime/deno_fs.ts";
import { createDenoWatcher } from "../runtime/fs_watch.ts";
import { createWorkerRunner, type WorkerRunner } from "../runtime/worker_runner.ts";
import { createTextWorker, type TextWorker } from "../runtime/text_builder.ts";
import { liveSource } from "../server/routes/live.ts";
import type { EventHub } from "../server/sse.ts";
import { discoverEnv, INDEXING_WHAT, progressBar } from "./import.ts";
import { isLock, tryImportLock } from "../runtime/import_lock.ts";
import { termSafe } from "../core/security/terminal.ts";
import { type CliIo, plural } from "./io.ts";

export interface ImportingOptions {
  /** The server's connection: what live views read. */
  store: ChronicleStore;
  /** The importer's own connection (see serve.ts): what every pass writes through. */
  writer: ChronicleStore;
  io: CliIo;
  tempRoot: string;
  /** Seconds between background passes. */
  intervalS: number;
  /** Where "sessions changed" and progress go (the UI's `/api/events`). */
  events: EventHub;
  /** Draw a progress bar on stderr during the first pass. */
  terminal?: boolean;
  timing?: Partial<WatchTiming>;
  /**
   * The data folder whose import lock each background pass takes: while another process
   * (`chronicle import`) imports, the pass is skipped and runs at the next interval.
   */
  lockDir?: string;
  /**
   * Reads the exclude list, before every background pass (an edit applies from the next pass).
   * A list that is not valid (ChronicleError `invalid_config`) stops importing until it is
   * fixed, said once on stderr. Default: nothing excluded.
   */
  exclude?: () => Promise<ExcludeRules>;
}

export interface Importing {
  live: LiveService;
  progress: () => ImportProgress;
  /** Starts the first pass now, and a pass every interval after it. */
  start(): void;
  /** Resolves when the first pass has finished (tests, benchmarks). */
  firstPass: Promise<void>;
  /** Stops passes and watches; resolves once the running import has finished. */
  stop(): Promise<void>;
  /**
   * Runs `fn` between imports, on the importer's connection (forgetting sessions: no import
   * chunk has a transaction open then).
   */
  exclusive<T>(fn: (writer: ChronicleStore) => T): Promise<T>;
  /** Why importing is stopped (an exclude list that is not valid), else null. */
  blocked(): string | null;
  /** Starts a pass soon (after the exclude list changed). */
  refresh(): void;
}

/** Calls `fn` at most every `ms`, the last call always landing. */
function throttle(ms: number, fn: () => void): { call(): void; cancel(): void } {
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    call() {
      const wait = last + ms - Date.now();
      if (wait <= 0) {
        last = Date.now();
        fn();
      } else {
        timer ??= setTimeout(() => {
          timer = undefined;
          last = Date.now();
          fn();
        }, wait);
      }
    },
    cancel: () => clearTimeout(timer),
  };
}

export function startImporting(options: ImportingOptions): Importing {
  const { io, writer, events } = options;
  const fs = createDenoFs({ tempRoot: options.tempRoot });
  const env = discoverEnv(io);
  const queue = new ImportQueue();
  const tracker = new ProgressTracker(systemClock);
  const stopping = new AbortController();
  let worker: WorkerRunner | null = null;
  let known = new Map<string, SourceUnit>();
  let pass: Promise<void> | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  let soon: ReturnType<typeof setTimeout> | undefined;
  let resolveFirst!: () => void;
  const firstPass = new Promise<void>((r) => (resolveFirst = r));

  const announce = throttle(500, () => events.publish("import", { at: Date.now() }));
  const report = throttle(250, () => events.publish("progress", tracker.snapshot()));
  let lastDraw = 0;
  const draw = (final = false) => {
    if (!options.terminal) return;
    const p = tracker.snapshot();
    if (!final && (p.files_total === 0 || performance.now() - lastDraw < 100)) return;
    lastDraw = performance.now();
    const eta = p.eta_s === null ? "" : `, about ${p.eta_s} s left`;
    io.stderr(
      p.state === "indexing"
        ? progressBar(p.index_done, p.index_total, ` ${p.percent}%${eta}`, INDEXING_WHAT)
        : progressBar(p.files_done, p.files_total, ` ${p.percent}%, ${p.sessions} sessions${eta}`),
    );
    if (final) io.stderr("\n");
  };

  // The exclude list of the last pass; null while it is not valid (nothing is imported).
  let rules: ExcludeRules | undefined;
  let blockedBy: string | null = null;
  const loadRules = async (): Promise<boolean> => {
    if (!options.exclude) return true;
    try {
      rules = await options.exclude();
      blockedBy = null;
      return true;
    } catch (e) {
      if (!(e instanceof ChronicleError && e.code === "invalid_config")) throw e;
      if (blockedBy !== e.message) {
        io.stderr(`chronicle: ${termSafe(e.message)}; nothing is imported until it is fixed\n`);
      }
      blockedBy = e.message;
      return false;
    }
  };

  const run = (units: SourceUnit[], bulk?: boolean): Promise<ImportSummary> =>
    blockedBy !== null ? Promise.resolve(emptySummary()) : importUnits(writer, units, {
      fs,
      runner: worker!.runner,
      totals: false,
      bulk,
      exclude: rules,
      // a background pass indexes what its chunks stored once they are all in (background.ts)
      searchLater: true,
    });

  const changed = (s: ImportSummary, live: boolean) => {
    if (!s.changed_sessions.length) return;
    service.changed(s.changed_sessions, { live });
    announce.call();
  };

  const batcher = new UnitBatcher(queue, async (units) => {
    if (stopping.signal.aborted || !worker) return;
    changed(await run(units), true);
  });

  const service = new LiveService({
    clock: systemClock,
    source: liveSource(options.store),
    stat: (p) => fs.stat(p),
    watcher: createDenoWatcher(),
    unitsOf: (id) => options.store.sourcePathsOf(id).flatMap((p) => known.get(p) ?? []),
    importUnits: (units) => batcher.request(units),
    // A new file beside a watched session's (a sub-agent's log): look for it soon.
    onNewPath: () => {
      soon ??= setTimeout(() => {
        soon = undefined;
        startPass(false);
      }, 300);
    },
    onError: (e) => {
      if (io.env.CHRONICLE_DEBUG) io.stderr(`chronicle: live: ${(e as Error).message}\n`);
    },
    timing: options.timing,
  });

  let toldLocked = false;
  const onePass = async (first: boolean) => {
    const lock = options.lockDir ? await tryImportLock(options.lockDir, "chronicle serve") : null;
    if (lock && !isLock(lock)) {
      if (!toldLocked) {
        io.stderr(
          `Another import is running (pid ${lock.pid}, ${
            termSafe(lock.command)
          }); the server imports once it has finished.\n`,
        );
      }
      toldLocked = true;
      firstPending ||= first;
      return;
    }
    try {
      await lockedPass(first || firstPending);
      firstPending = false;
    } finally {
      lock?.release();
    }
  };
  let firstPending = false;

  type Slice = NonNullable<ReturnType<ChronicleStore["readBacklog"]>>;
  /** A macrotask's turn: what requests, timers and the UI's events wait for. */
  const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));
  // The search-text worker of a pass that has a backlog to index (closed when the pass ends).
  let textWorker: TextWorker | null = null;
  let textWorkerFailed = false;
  /** The next slice, its texts being built. */
  let ahead: { slice: Slice; texts: Promise<string[] | null> } | null = null;
  const buildAhead = (slice: Slice | null) => slice && { slice, texts: buildTexts(slice) };
  const closeTextWorker = () => {
    ahead?.texts.catch(() => {});
    ahead = null;
    textWorker?.close();
    textWorker = null;
  };
  /** A slice's texts from the worker; null (the slice is built in process) when it fails. */
  const buildTexts = async (slice: Slice): Promise<string[] | null> => {
    try {
      return await textWorker!.build(slice);
    } catch (e) {
      if (io.env.CHRONICLE_DEBUG) {
        io.stderr(`chronicle: search text worker: ${(e as Error).message}\n`);
      }
      textWorkerFailed = true;
      closeTextWorker();
      return null;
    }
  };

  /** Where the compression of plain frames goes on from (the store's `readPlainFrames`). */
  let compressAfter: PlainCursor | null = null;
  /** Slices compressed, stored a few at a time (the frames before `compressAfter`). */
  const compressed = new CompressedBatch(writer);
  const lockedPass = async (first: boolean) => {
    if (!await loadRules()) return;
    const checkpoints = writer.sourceCheckpoints();
    const reread = unitsToReread(writer, rules);
    const result = await backgroundPass({
      discover: () => discoverUnits({ env, fs, exclude: rules }),
      stat: (p) => fs.stat(p),
      unchanged: (u) => {
        const c = reread.has(u.path) ? null : checkpoints.get(u.path)?.checkpoint;
        return c ? looksUnchanged(fs, u, c) : Promise.resolve(false);
      },
      importChunk: (units) =>
        queue.run(async () => {
          if (stopping.signal.aborted) return null;
          // A first pass is a bulk import even in its small first chunks (each collects what
          // it left in this thread as it ends: importUnits).
          const s = await run(units, first || undefined);
          // A first pass fills in a backlog: those sessions are not "being written".
          changed(s, !first);
          report.call();
          draw();
          return s;
        }),
      searchBacklog: () => writer.searchBacklog(),
      indexSlice: async () => {
        // Writing a slice is synchronous work: give the event loop a turn before each one, or
        // requests and the UI's progress events wait for the whole index (6 s over 300 MB).
        await nextTurn();
        // Its texts are built in a worker without permissions, the next slice's while this
        // one is written (the main thread only writes them); a slice written again before its
        // texts come back stays queued for the next round.
        if (!textWorker && !textWorkerFailed) textWorker = createTextWorker();
        const current = ahead ?? (textWorker ? buildAhead(writer.readBacklog(0)) : null);
        ahead = null;
        const slice = current?.slice ?? null;
        const texts = current ? await current.texts : null;
        if (slice && texts && textWorker) {
          ahead = buildAhead(writer.readBacklog(slice.rowids[slice.rowids.length - 1]));
          await nextTurn(); // between reading the next slice and writing this one
        }
        return queue.run(() => {
          if (stopping.signal.aborted) return Promise.resolve(0);
          if (slice && texts) writer.applyBacklogTexts(slice, texts);
          else writer.indexBacklog();
          report.call();
          draw();
          return Promise.resolve(writer.searchBacklog());
        });
      },
      // What the chunks left in the import worker goes before the index: the worker lives as
      // long as the server, and its heap held the bulk pass's leftovers while the index was
      // built. It is started again, and its memory goes with the old one. (This thread's own
      // garbage went as the last chunk ended: importUnits.) The server's peak over a first
      // import, before and after this with the main thread's collection: 300 MB of Claude Code
      // 343-351 -> 263-287 MiB (the collection alone 315-331), Codex 290-300 -> 255-257, a
      // 114 MiB Cursor database 307-319 -> 245-249, eight pasted 26 MiB prompts 356-360 ->
      // 275-278, 1 GB of Claude Code 374 -> 271-299.
      beforeIndex: () =>
        queue.run(() => {
          if (worker && !stopping.signal.aborted) {
            worker.close();
            worker = createWorkerRunner({ tempRoot: options.tempRoot });
          }
          return Promise.resolve();
        }),
      statsSlice: async () => {
        await nextTurn();
        return queue.run(() => {
          if (stopping.signal.aborted) return Promise.resolve(0);
          const left = writer.settleStats();
          report.call();
          return Promise.resolve(left);
        });
      },
      compressSlice: async () => {
        await nextTurn();
        const slice = await queue.run(() => Promise.resolve(writer.readPlainFrames(compressAfter)));
        if (!slice) {
          compressAfter = null;
          // the slices held are stored: in a turn of the queue, as every write
          await queue.run(() => {
            if (stopping.signal.aborted) compressed.drop();
            else compressed.flush();
            return Promise.resolve();
          });
          return false;
        }
        // In the pass's search-text worker when it has one (it had a backlog), else here; a
        // worker that fails leaves the slice to be read again and compressed here.
        const bytes = slice.frames.map((f) => f.bytes);
        const frames = textWorker
          ? await textWorker.compress(bytes).catch(() => {
            textWorkerFailed = true;
            closeTextWorker();
            return null;
          })
          : compressPlainFrames(bytes);
        return queue.run(() => {
          if (stopping.signal.aborted) {
            compressed.drop(); // left plain, for the next pass
            return Promise.resolve(false);
          }
          if (frames) {
            compressed.add(slice, frames); // stored a few slices at a time (import.ts)
            compressAfter = slice.next;
          }
          return Promise.resolve(true);
        });
      },
      vacuumSlice: async () => {
        await nextTurn();
        return queue.run(() => {
          if (stopping.signal.aborted) return Promise.resolve(0);
          // 0 too when another writer holds the database: the pages stay for the next writes
          return Promise.resolve(writer.vacuumFreePages());
        });
      },
      discovered: (units) => {
        known = new Map(units.map((u) => [u.path, u]));
        service.refreshUnits();
      },
      progress: tracker,
      first,
      signal: stopping.signal,
    });
    closeTextWorker();
    report.call();
    if (first) {
      if (tracker.snapshot().files_total) draw(true);
      io.stdout(firstPassLine(result, tracker.snapshot()));
      for (const e of result.errors.slice(0, 5)) io.stderr(`  ! ${e.message}\n`);
    }
  };

  const startPass = (first: boolean) => {
    if (pass || stopping.signal.aborted) return;
    pass = onePass(first)
      .catch((e) => io.stderr(`chronicle: background import failed: ${(e as Error).message}\n`))
      .finally(() => {
        pass = null;
        if (first && !firstPending) resolveFirst();
        if (!firstPending && !first && toldLocked) resolveFirst();
      });
  };

  return {
    live: service,
    progress: () => tracker.snapshot(),
    firstPass,
    start() {
      worker = createWorkerRunner({ tempRoot: options.tempRoot });
      startPass(true);
      timer = setInterval(() => startPass(false), options.intervalS * 1000);
    },
    exclusive: (fn) => queue.run(() => Promise.resolve().then(() => fn(writer)), { urgent: true }),
    blocked: () => blockedBy,
    refresh() {
      soon ??= setTimeout(() => {
        soon = undefined;
        startPass(false);
      }, 50);
    },
    async stop() {
      stopping.abort();
      clearInterval(timer);
      clearTimeout(soon);
      announce.cancel();
      report.cancel();
      resolveFirst();
      await service.close();
      await pass;
      await queue.idle();
      worker?.close();
      closeTextWorker();
    },
  };
}

/**
 * What the terminal says when the first pass ends: the files it imported, or, stopped (Ctrl-C
 * while it ran), how many of them and that the next start goes on.
 */
export function firstPassLine(
  result: BackgroundPassResult,
  progress: Pick<ImportProgress, "started_at" | "finished_at">,
): string {
  const seconds = ((progress.finished_at! - progress.started_at!) / 1000).toFixed(1);
  const sessions = plural(result.changed_sessions.length, "session");
  const errors = result.errors.length ? `; ${plural(result.errors.length, "problem")}` : "";
  return result.stopped && result.imported < result.changed
    ? `Stopped: ${result.imported} of ${result.changed} new or changed files imported (${sessions}) in ${seconds} s${errors}; the next start imports the rest.\n`
    : `Imported ${
      plural(result.imported, "new or changed file")
    } (${sessions}) in ${seconds} s${errors}.\n`;
}
