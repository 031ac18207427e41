/**
 * The live service the server holds: viewers subscribe to a session (hub.ts); a session with
 * viewers has its source units watched (unit_watch.ts), and a change to them is imported at
 * once through the server's one import pipeline; every import, live or background, tells the
 * service which sessions it wrote to, and their viewers are sent the changes. When the last
 * viewer of a session leaves, its watch stops.
 */
import type { SourceUnit } from "../sources/types.ts";
import type { ChangeCursor } from "../store/mod.ts";
import { LiveHub, type LiveSink, type LiveSource } from "./hub.ts";
import type { Clock, FileWatcher, StatFn } from "./types.ts";
import { UnitWatch, type UnitWatchStatus, type WatchTiming } from "./unit_watch.ts";

export interface LiveServiceOptions {
  clock: Clock;
  source: LiveSource;
  stat: StatFn;
  /** File-system events (Deno.watchFs); without it, watches poll. */
  watcher?: FileWatcher;
  /** The source units a session was imported from. */
  unitsOf: (sessionId: string) => SourceUnit[];
  /** Imports units urgently through the shared pipeline; resolves when they are stored. */
  importUnits: (units: SourceUnit[]) => Promise<void>;
  /** A file nobody knows appeared beside a watched session's files (look for new units). */
  onNewPath?: (path: string) => void;
  onError?: (e: unknown) => void;
  timing?: Partial<WatchTiming>;
  /** Operations per `ops` event. */
  batch?: number;
}

export interface LiveSessionStatus {
  id: string;
  viewers: number;
  watch: UnitWatchStatus | null;
  last_change_at: number | null;
}

export class LiveService {
  readonly hub: LiveHub;
  private readonly watches = new Map<string, UnitWatch>();
  private readonly closing: Promise<void>[] = [];
  private closed = false;

  constructor(private readonly options: LiveServiceOptions) {
    this.hub = new LiveHub({
      source: options.source,
      clock: options.clock,
      batch: options.batch,
      onViewers: (id, count) => (count ? this.startWatch(id) : this.stopWatch(id)),
    });
  }

  /** A viewer of `sessionId` whose data reflects everything up to `after`. */
  subscribe(sessionId: string, sink: LiveSink, after: ChangeCursor): () => void {
    return this.hub.subscribe(sessionId, sink, after);
  }

  /**
   * An import wrote to these sessions. `live` is false for a first import of a backlog, which
   * is not the sessions being written now.
   */
  changed(sessionIds: readonly string[], options: { live?: boolean } = {}): void {
    this.hub.notify(sessionIds, options);
    for (const id of sessionIds) this.watches.get(id)?.setUnits(this.options.unitsOf(id));
  }

  /** The units known changed (a discovery found more): watched sessions follow. */
  refreshUnits(): void {
    for (const [id, w] of this.watches) w.setUnits(this.options.unitsOf(id));
  }

  /** Sessions with viewers, and those a live import wrote to since `since` (clock ms). */
  status(since: number): LiveSessionStatus[] {
    const viewing = this.hub.viewing();
    const ids = new Set([...viewing.keys(), ...this.hub.changedSince(since).map((c) => c.id)]);
    return [...ids].map((id) => ({
      id,
      viewers: viewing.get(id) ?? 0,
      watch: this.watches.get(id)?.status() ?? null,
      last_change_at: this.hub.lastChangeOf(id),
    }));
  }

  /** Ends every viewer's stream and stops every watch; resolves when all have stopped. */
  async close(): Promise<void> {
    this.closed = true;
    this.hub.closeAll();
    for (const id of [...this.watches.keys()]) this.stopWatch(id);
    await Promise.all(this.closing);
    await this.hub.settled();
  }

  private startWatch(id: string): void {
    if (this.closed || this.watches.has(id)) return;
    const o = this.options;
    this.watches.set(
      id,
      new UnitWatch(o.unitsOf(id), {
        clock: o.clock,
        stat: o.stat,
        watcher: o.watcher,
        importUnits: o.importUnits,
        onOtherPath: o.onNewPath,
        onError: o.onError,
        timing: o.timing,
      }),
    );
  }

  private stopWatch(id: string): void {
    const w = this.watches.get(id);
    if (!w) return;
    this.watches.delete(id);
    const done = w.close();
    this.closing.push(done);
    void done.finally(() => this.closing.splice(this.closing.indexOf(done), 1));
  }
}
