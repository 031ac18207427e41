/**
 * The server's background import pass, so that a first start never waits: discover every
 * unit, skip the unchanged ones (a stat each), then import the rest newest first, in chunks
 * that start small (the sessions someone is likely to open land within a second) and grow (a
 * big backlog goes at bulk speed). Between chunks the server's queue lets live imports go
 * first. The chunks write rows only; once every session is stored, the search index of what
 * they wrote is built a slice at a time (core/store/backlog.ts). Progress (files, bytes,
 * sessions, then the operations indexed; percent, an estimate) is kept for the UI and the
 * terminal.
 */
import type { SessionIssue } from "../model/mod.ts";
import type { SourceUnit } from "../sources/types.ts";
import type { ImportSummary } from "../store/mod.ts";
import type { Clock, StatFn } from "./types.ts";

export interface ImportProgress {
  /** "indexing": the sessions are stored, the search index of what the pass wrote is filling in. */
  state: "idle" | "discovering" | "importing" | "indexing";
  /** The server's first pass: sessions and the search index are still filling in. */
  first: boolean;
  files_total: number;
  files_done: number;
  bytes_total: number;
  bytes_done: number;
  /** Sessions the pass has written to so far. */
  sessions: number;
  /** Operations the pass stored for search to index, and how many of them are indexed. */
  index_total: number;
  index_done: number;
  /** 0..100: by bytes while importing, by operations while indexing. */
  percent: number;
  /** Seconds left, from the rate so far; null until there is a rate. */
  eta_s: number | null;
  started_at: number | null;
  finished_at: number | null;
}

/** Progress of the running (or last) background pass. */
export class ProgressTracker {
  private p: ImportProgress = {
    state: "idle",
    first: true,
    files_total: 0,
    files_done: 0,
    bytes_total: 0,
    bytes_done: 0,
    sessions: 0,
    index_total: 0,
    index_done: 0,
    percent: 100,
    eta_s: null,
    started_at: null,
    finished_at: null,
  };
  private importingSince = 0;
  private indexingSince = 0;
  private readonly sessions = new Set<string>();

  constructor(private readonly clock: Clock) {}

  begin(first: boolean): void {
    this.sessions.clear();
    this.p = {
      ...this.p,
      state: "discovering",
      first,
      files_total: 0,
      files_done: 0,
      bytes_total: 0,
      bytes_done: 0,
      sessions: 0,
      index_total: 0,
      index_done: 0,
      started_at: this.clock.now(),
      finished_at: null,
    };
  }

  planned(files: number, bytes: number): void {
    this.p.state = "importing";
    this.p.files_total = files;
    this.p.bytes_total = bytes;
    this.importingSince = this.clock.now();
  }

  done(files: number, bytes: number, sessions: readonly string[]): void {
    this.p.files_done += files;
    this.p.bytes_done += bytes;
    for (const s of sessions) this.sessions.add(s);
    this.p.sessions = this.sessions.size;
  }

  /** The search backlog: `total` operations, `done` of them indexed so far. */
  indexing(total: number, done: number): void {
    if (this.p.state !== "indexing") this.indexingSince = this.clock.now();
    this.p.state = "indexing";
    this.p.index_total = total;
    this.p.index_done = done;
  }

  end(): void {
    this.p.state = "idle";
    this.p.finished_at = this.clock.now();
  }

  snapshot(): ImportProgress {
    const p = { ...this.p };
    const [done, total, since] = p.state === "indexing"
      ? [p.index_done, p.index_total, this.indexingSince]
      : [p.bytes_done, p.bytes_total, this.importingSince];
    p.percent = p.state === "idle" || total === 0
      ? (p.state === "discovering" ? 0 : 100)
      : Math.min(100, Math.floor((100 * done) / total));
    const elapsed = (this.clock.now() - since) / 1000;
    p.eta_s = (p.state === "importing" || p.state === "indexing") && done > 0 && elapsed >= 0.5
      ? Math.round((elapsed * (total - done)) / done)
      : null;
    return p;
  }
}

/** How chunks grow: from `firstBytes`, doubling up to `maxBytes`, and at most `maxUnits` units. */
export interface ChunkLimits {
  firstBytes: number;
  maxBytes: number;
  maxUnits: number;
}

export const DEFAULT_CHUNKS: ChunkLimits = {
  firstBytes: 2 << 20,
  maxBytes: 64 << 20,
  maxUnits: 512,
};

export interface BackgroundPassOptions {
  discover: () => Promise<{ units: SourceUnit[]; errors: SessionIssue[] }>;
  stat: StatFn;
  /** True when the unit's files match its checkpoint (as the import pass decides it). */
  unchanged: (unit: SourceUnit) => Promise<boolean>;
  /**
   * Imports one chunk through the server's queue (its search texts wait in the backlog); null
   * when it did not (the server is stopping).
   */
  importChunk: (units: SourceUnit[]) => Promise<ImportSummary | null>;
  /** How many stored operations wait for the search index (core/store/backlog.ts). */
  searchBacklog?: () => number;
  /**
   * Called once before a backlog the chunks left is indexed, after their statistics: the
   * server lets go of what the chunks left behind, before the index's reads come on top of it.
   */
  beforeIndex?: () => Promise<void>;
  /** Indexes a slice of the backlog through the server's queue; how many are still waiting. */
  indexSlice?: () => Promise<number>;
  /**
   * Once a backlog is indexed: gives a slice of the free pages its build left back to the disk
   * (`ChronicleStore.vacuumFreePages`); how many are still to give back.
   */
  vacuumSlice?: () => Promise<number>;
  /**
   * Counts the statistics of a slice of the sessions bulk imports left waiting (the store's
   * `settleStats`) through the server's queue; how many are still waiting.
   */
  statsSlice?: () => Promise<number>;
  /**
   * Compresses a slice of the payload frames bulk imports wrote uncompressed (the store's
   * `readPlainFrames` / `applyCompressedFrames`) through the server's queue; whether any are left.
   */
  compressSlice?: () => Promise<boolean>;
  /** Called with every unit found, before any is imported. */
  discovered?: (units: SourceUnit[]) => void;
  progress: ProgressTracker;
  first: boolean;
  chunks?: ChunkLimits;
  /**
   * Stops the pass once aborted (the server stopping): no chunk or slice is begun after it,
   * and the result says what was imported.
   */
  signal?: AbortSignal;
}

export interface BackgroundPassResult {
  /** Every unit discovered (the server watches from these). */
  units: SourceUnit[];
  /** Units that changed and were imported. */
  imported: number;
  /** Units that changed: `imported` of them unless the pass was stopped. */
  changed: number;
  /** The pass was stopped (`signal`) before it ended. */
  stopped: boolean;
  changed_sessions: string[];
  errors: SessionIssue[];
}

/** Cuts the units (newest first) into chunks that grow from small to `maxBytes`. */
export function chunksOf(
  units: readonly { unit: SourceUnit; size: number }[],
  limits: ChunkLimits = DEFAULT_CHUNKS,
): SourceUnit[][] {
  const out: SourceUnit[][] = [];
  let cap = limits.firstBytes;
  let chunk: SourceUnit[] = [];
  let bytes = 0;
  for (const { unit, size } of units) {
    if (chunk.length && (bytes + size > cap || chunk.length >= limits.maxUnits)) {
      out.push(chunk);
      chunk = [];
      bytes = 0;
      cap = Math.min(cap * 2, limits.maxBytes);
    }
    chunk.push(unit);
    bytes += size;
  }
  if (chunk.length) out.push(chunk);
  return out;
}

/** One background pass; see the module comment. Never throws for a bad unit. */
export async function backgroundPass(
  options: BackgroundPassOptions,
): Promise<BackgroundPassResult> {
  const { progress } = options;
  progress.begin(options.first);
  try {
    const { units, errors } = await options.discover();
    options.discovered?.(units);
    const looked = await Promise.all(units.map(async (unit) => {
      const [st, same] = await Promise.all([
        options.stat(unit.path).catch(() => null),
        options.unchanged(unit).catch(() => false),
      ]);
      return { unit, same, size: st?.size ?? 0, mtime: st?.mtimeMs ?? 0 };
    }));
    // Newest first; a session's main file before its sub-agents' when they are as new.
    const todo = looked.filter((u) => !u.same).sort((a, b) =>
      b.mtime - a.mtime || a.unit.rank - b.unit.rank || (a.unit.path < b.unit.path ? -1 : 1)
    );
    progress.planned(todo.length, todo.reduce((n, u) => n + u.size, 0));
    const size = new Map(todo.map((u) => [u.unit.path, u.size]));
    const changed = new Set<string>();
    const stopped = () => options.signal?.aborted === true;
    const result = () => ({
      units,
      imported,
      changed: todo.length,
      changed_sessions: [...changed],
      errors,
      stopped: stopped(),
    });
    let imported = 0;
    for (const chunk of chunksOf(todo, options.chunks)) {
      const s = stopped() ? null : await options.importChunk(chunk);
      if (!s) return result();
      imported += chunk.length;
      errors.push(...s.errors);
      for (const id of s.changed_sessions) changed.add(id);
      progress.done(chunk.length, chunk.reduce((n, u) => n + (size.get(u.path) ?? 0), 0), [
        ...s.changed_sessions,
      ]);
    }
    // Every session is stored (browsable); now their statistics, then the search index of what
    // the chunks wrote, a slice at a time, so live imports go between.
    // (Stopped, what is left waits in the store's backlogs for the next pass.)
    for (let left = 1; left > 0 && !stopped() && options.statsSlice;) {
      left = await options.statsSlice();
    }
    const total = stopped() ? 0 : options.searchBacklog?.() ?? 0;
    if (total > 0) await options.beforeIndex?.();
    for (let left = total; left > 0 && !stopped() && options.indexSlice;) {
      progress.indexing(total, total - left);
      left = await options.indexSlice();
    }
    // The frames the chunks wrote uncompressed (or a pass stopped before left so), compressed a
    // slice at a time.
    for (let more = true; more && !stopped() && options.compressSlice;) {
      more = await options.compressSlice();
    }
    if (total > 0) {
      for (let left = 1; left > 0 && !stopped() && options.vacuumSlice;) {
        left = await options.vacuumSlice();
      }
    }
    return result();
  } finally {
    progress.end();
  }
}
