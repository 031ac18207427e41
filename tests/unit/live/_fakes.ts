/** Fakes for core/live: a clock whose time moves only when a test says so, files, a watcher. */
import type { Clock, FileWatcher, StatFn, Watch } from "../../../core/live/mod.ts";
import type { FileStat, SourceUnit } from "../../../core/sources/types.ts";

/** Lets every pending promise chain run (one real macrotask turn, a few times). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
}

export class FakeClock implements Clock {
  t = 1_700_000_000_000;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(id: unknown): void {
    this.timers.delete(id as number);
  }
  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.size;
  }
  /** Delays of the waiting timers from now, sorted. */
  delays(): number[] {
    return [...this.timers.values()].map((t) => t.at - this.t).sort((a, b) => a - b);
  }
  /** Moves time on by `ms`, firing due timers in order and letting their work run. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    while (true) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!due || e[1].at < due[1].at)) due = e;
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

/** Files as a map of path -> content length; stat reports size and a changing mtime. */
export class FakeFiles {
  private files = new Map<string, { size: number; mtime: number; ino: number }>();
  stats = 0;
  write(path: string, size: number, ino = 1): void {
    const old = this.files.get(path);
    this.files.set(path, { size, mtime: (old?.mtime ?? 0) + 1, ino });
  }
  remove(path: string): void {
    this.files.delete(path);
  }
  stat: StatFn = (path) => {
    this.stats++;
    const f = this.files.get(path);
    const st: FileStat | null = f
      ? { isFile: true, isDirectory: false, size: f.size, mtimeMs: f.mtime, ino: f.ino }
      : null;
    return Promise.resolve(st);
  };
}

/** A watcher the test fires by hand; it records what is watched. */
export class FakeWatcher implements FileWatcher {
  open = new Set<{ paths: string[]; fire: (paths: string[]) => void }>();
  fail = false;
  watch(paths: string[], onChange: (paths: string[]) => void): Watch {
    if (this.fail) throw new Error("inotify watch limit reached");
    const w = { paths, fire: onChange };
    this.open.add(w);
    return { close: () => void this.open.delete(w) };
  }
  /** Reports a change of `path` to every watch of its folder. */
  emit(path: string): void {
    const dir = path.slice(0, path.lastIndexOf("/"));
    for (const w of this.open) if (w.paths.includes(dir)) w.fire([path]);
  }
}

export const unit = (path: string, kind: SourceUnit["kind"] = "jsonl"): SourceUnit => ({
  source: kind === "sqlite" ? "opencode" : "claude-code",
  path,
  kind,
  rank: 0,
});
