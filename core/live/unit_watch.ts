/**
 * Watching the source units of one session while someone views it live: file-system events
 * when the platform has them, polling always (fast right after a change, backing off while the
 * session is quiet), and a debounce so a burst of writes costs one import. The import itself is
 * injected: it is the same pipeline as `chronicle import`, run through the server's queue.
 */
import type { SourceUnit } from "../sources/types.ts";
import type { Clock, FileWatcher, StatFn, TimerId, Watch } from "./types.ts";

export interface WatchTiming {
  /** Quiet time after a change before importing. Default 8 ms. */
  debounceMs: number;
  /** However busy the files, a change waits at most this long. Default 40 ms. */
  maxDelayMs: number;
  /** Polling interval right after a change. Default 250 ms. */
  pollMinMs: number;
  /** Polling interval once the session has gone quiet. Default 4000 ms. */
  pollMaxMs: number;
}

export const DEFAULT_TIMING: WatchTiming = {
  debounceMs: 8,
  maxDelayMs: 40,
  pollMinMs: 250,
  pollMaxMs: 4000,
};

export interface UnitWatchOptions {
  clock: Clock;
  stat: StatFn;
  /** File-system events; without one (or when it fails) the watch only polls. */
  watcher?: FileWatcher;
  /** Imports the units through the shared pipeline; resolves when they are in the store. */
  importUnits: (units: SourceUnit[]) => Promise<void>;
  /** Something changed in a watched folder that is none of this watch's files. */
  onOtherPath?: (path: string) => void;
  /** An import or a stat failed (the watch goes on). */
  onError?: (e: unknown) => void;
  timing?: Partial<WatchTiming>;
}

export interface UnitWatchStatus {
  units: string[];
  /** `watch`: file-system events plus slow polling; `poll`: polling only. */
  mode: "watch" | "poll";
  poll_ms: number;
  imports: number;
  /** When a change was last seen (clock ms), if ever. */
  last_change_at: number | null;
}

/** The files that say a unit changed: a SQLite database writes to its `-wal` first. */
export function filesOf(unit: SourceUnit): string[] {
  return unit.kind === "sqlite" ? [unit.path, `${unit.path}-wal`] : [unit.path];
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : "/";
}

export class UnitWatch {
  private units: SourceUnit[] = [];
  /** Watched file -> its unit. */
  private files = new Map<string, SourceUnit>();
  private dirs: string[] = [];
  private watch: Watch | null = null;
  private readonly seen = new Map<string, string>();
  private readonly timing: WatchTiming;
  private closed = false;
  private pollMs: number;
  private pollTimer: TimerId | null = null;
  private debounceTimer: TimerId | null = null;
  private firstSignal: number | null = null;
  private importing: Promise<void> | null = null;
  private again = false;
  private ticking: Promise<void> | null = null;
  private imports = 0;
  private lastChange: number | null = null;

  constructor(units: readonly SourceUnit[], private readonly options: UnitWatchOptions) {
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.pollMs = this.timing.pollMinMs;
    this.setUnits(units);
    // The first poll takes the files' baseline; then a catch-up import, since the files may
    // have changed since the last pass. A change after the baseline is the next poll's.
    this.ticking = this.poll(false).then(() => this.signal()).finally(() => (this.ticking = null));
  }

  /** Follows a session whose units changed (a sub-agent's new file): re-arms the watcher. */
  setUnits(units: readonly SourceUnit[]): void {
    if (this.closed) return;
    this.units = [...units];
    this.files = new Map(this.units.flatMap((u) => filesOf(u).map((f) => [f, u] as const)));
    const dirs = [...new Set([...this.files.keys()].map(dirOf))].sort();
    if (dirs.join("\n") === this.dirs.join("\n") && (this.watch || !this.options.watcher)) return;
    this.dirs = dirs;
    this.watch?.close();
    this.watch = null;
    if (!this.options.watcher || !dirs.length) return;
    try {
      this.watch = this.options.watcher.watch(dirs, (paths) => this.onEvent(paths));
    } catch (e) {
      // No events here (a network file system, too many watches): polling carries on alone.
      this.options.onError?.(e);
    }
  }

  status(): UnitWatchStatus {
    return {
      units: this.units.map((u) => u.path),
      mode: this.watch ? "watch" : "poll",
      poll_ms: this.pollMs,
      imports: this.imports,
      last_change_at: this.lastChange,
    };
  }

  /** Stops watching and polling; resolves once a running stat or import has finished. */
  async close(): Promise<void> {
    this.closed = true;
    this.watch?.close();
    this.watch = null;
    for (const t of [this.pollTimer, this.debounceTimer]) {
      if (t !== null) this.options.clock.clearTimeout(t);
    }
    this.pollTimer = this.debounceTimer = null;
    await Promise.all([this.ticking, this.importing]);
  }

  private onEvent(paths: string[]): void {
    if (this.closed) return;
    let mine = false;
    for (const p of paths) {
      if (this.files.has(p)) mine = true;
      else if (!this.dirs.includes(p)) this.options.onOtherPath?.(p);
    }
    if (!mine) return;
    this.speedUp();
    this.signal();
  }

  /** A change seen: import once the files have been quiet a moment (or waited long enough). */
  private signal(): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    this.lastChange = now;
    this.firstSignal ??= now;
    if (this.debounceTimer !== null) this.options.clock.clearTimeout(this.debounceTimer);
    const wait = Math.max(
      0,
      Math.min(this.timing.debounceMs, this.firstSignal + this.timing.maxDelayMs - now),
    );
    this.debounceTimer = this.options.clock.setTimeout(() => this.fire(), wait);
  }

  private fire(): void {
    this.debounceTimer = null;
    this.firstSignal = null;
    if (this.closed) return;
    if (this.importing) {
      this.again = true; // the running import may have read before this change
      return;
    }
    this.imports++;
    this.importing = this.options.importUnits(this.units)
      .catch((e) => this.options.onError?.(e))
      .finally(() => {
        this.importing = null;
        if (this.again) {
          this.again = false;
          this.signal();
        }
      });
  }

  private speedUp(): void {
    if (this.pollMs === this.timing.pollMinMs) return;
    this.pollMs = this.timing.pollMinMs;
    if (this.pollTimer !== null && !this.ticking) {
      this.options.clock.clearTimeout(this.pollTimer);
      this.schedulePoll();
    }
  }

  private schedulePoll(): void {
    if (this.closed) return;
    this.pollTimer = this.options.clock.setTimeout(() => {
      this.pollTimer = null;
      this.ticking = this.poll(true).finally(() => (this.ticking = null));
    }, this.pollMs);
  }

  /** Stats every file; a difference from the last look is a change. */
  private async poll(compare: boolean): Promise<void> {
    let changed = false;
    for (const f of [...this.files.keys()]) {
      let sig = "gone";
      try {
        const st = await this.options.stat(f);
        if (st) sig = `${st.size}:${st.mtimeMs}:${st.ino}`;
      } catch (e) {
        this.options.onError?.(e);
        continue;
      }
      if (this.closed) return;
      if (compare && this.seen.get(f) !== sig) changed = true;
      this.seen.set(f, sig);
    }
    if (changed) {
      this.pollMs = this.timing.pollMinMs;
      this.signal();
    } else if (compare) {
      this.pollMs = Math.min(this.pollMs * 2, this.timing.pollMaxMs);
    }
    this.schedulePoll();
  }
}
