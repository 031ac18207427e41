/**
 * The fan-out of a session's changes to the clients viewing it live. Each viewer has a cursor
 * (the last change it was sent); when an import touched the session, every viewer is sent the
 * operations written after its cursor, a batch at a time, waiting for a slow client rather
 * than queueing without bound. Event ids are the cursors (event_id.ts), so a client that
 * reconnects with `Last-Event-ID` is sent exactly what it missed.
 *
 * Events: `session` (the session's detail, when it changed), `ops` (changed and new
 * operations in canonical order, with their places and the new totals), `reset` (a re-read
 * dropped operations: reload), `gone` (the session was removed; should it come back, as a log
 * truncated to nothing that grows again does, its viewers are sent `reset`).
 */
import type { ChangeCursor, ChangedOperation, SessionChanges } from "../store/mod.ts";
import { formatEventId } from "./event_id.ts";
import type { Clock } from "./types.ts";

/** One client's stream, as the hub writes to it (server/sse.ts makes them). */
export interface LiveSink {
  /** Sends one event; false once the stream is closed. */
  send(event: string, data: unknown, id?: string): boolean;
  /** Resolves when the client has taken what was sent so far, or the stream closed. */
  ready(): Promise<void>;
  readonly closed: boolean;
  /** Ends the stream (the server is stopping). */
  close(): void;
}

/** What the hub reads: the store's change queries, and how a row is shown. */
export interface LiveSource {
  changeClock(): number;
  sessionChanges(
    id: string,
    options: { after: ChangeCursor; limit: number },
  ): SessionChanges | null;
  /** What a `session` event carries; null when the session is gone. */
  sessionDetail(id: string): unknown;
  /** Changed operations as the UI renders them (timeline rows with their payloads' openings). */
  rows(ops: ChangedOperation[]): unknown[];
}

export interface LiveHubOptions {
  source: LiveSource;
  clock: Clock;
  /** Operations per `ops` event. Default 200. */
  batch?: number;
  /** A session got its first viewer, or lost its last (`count` 0). */
  onViewers?: (sessionId: string, count: number) => void;
}

interface Viewer {
  sessionId: string;
  sink: LiveSink;
  cursor: ChangeCursor;
  /** The reset stamp this viewer's data already reflects. */
  resetSeen: number;
  /** The session stamp its last `session` event reflected, and that event's JSON. */
  detailStamp: number;
  detailJson: string;
  pumping: Promise<void> | null;
  again: boolean;
  /** It was sent `gone`: its data are of a session that no longer exists. */
  gone: boolean;
}

/** What `session` events add to the detail: when the hub last saw the session change. */
export interface LiveMark {
  last_change_at: number | null;
  server_now: number;
}

export class LiveHub {
  private readonly viewers = new Map<string, Set<Viewer>>();
  private readonly lastChange = new Map<string, number>();
  private readonly batch: number;

  constructor(private readonly options: LiveHubOptions) {
    this.batch = options.batch ?? 200;
  }

  /**
   * Adds a viewer whose data reflects everything up to `after`; it is sent the session's
   * detail and whatever changed since at once. Returns the unsubscribe function.
   */
  subscribe(sessionId: string, sink: LiveSink, after: ChangeCursor): () => void {
    const v: Viewer = {
      sessionId,
      sink,
      cursor: after,
      resetSeen: after.stamp,
      detailStamp: -1,
      detailJson: "",
      pumping: null,
      again: false,
      gone: false,
    };
    let set = this.viewers.get(sessionId);
    if (!set) this.viewers.set(sessionId, set = new Set());
    set.add(v);
    this.options.onViewers?.(sessionId, set.size);
    void this.pump(v);
    return () => this.drop(v);
  }

  /** An import wrote to these sessions: each of their viewers is sent what it lacks. */
  notify(sessionIds: Iterable<string>, options: { live?: boolean } = {}): void {
    const now = this.options.clock.now();
    for (const id of sessionIds) {
      if (options.live !== false) this.lastChange.set(id, now);
      for (const v of this.viewers.get(id) ?? []) void this.pump(v);
    }
  }

  /** Viewers per session being viewed. */
  viewing(): Map<string, number> {
    return new Map([...this.viewers].map(([id, set]) => [id, set.size]));
  }

  /** When a live import last wrote to the session (clock ms), if this process saw one. */
  lastChangeOf(sessionId: string): number | null {
    return this.lastChange.get(sessionId) ?? null;
  }

  /** Sessions a live import wrote to since `since` (clock ms), newest first. */
  changedSince(since: number): { id: string; at: number }[] {
    const out: { id: string; at: number }[] = [];
    for (const [id, at] of this.lastChange) {
      if (at >= since) out.push({ id, at });
      else this.lastChange.delete(id);
    }
    return out.sort((a, b) => b.at - a.at);
  }

  /** Ends every viewer's stream (the server is stopping). */
  closeAll(): void {
    for (const set of [...this.viewers.values()]) for (const v of [...set]) v.sink.close();
  }

  /** Waits for every viewer's sending to finish (tests, shutdown). */
  async settled(): Promise<void> {
    for (const set of this.viewers.values()) {
      await Promise.all([...set].map((v) => v.pumping));
    }
  }

  private drop(v: Viewer): void {
    const set = this.viewers.get(v.sessionId);
    if (!set?.delete(v)) return;
    if (!set.size) this.viewers.delete(v.sessionId);
    this.options.onViewers?.(v.sessionId, set.size);
  }

  private pump(v: Viewer): Promise<void> {
    if (v.pumping) {
      v.again = true; // the running pump may have read before this change
      return v.pumping;
    }
    v.pumping = (async () => {
      try {
        do {
          v.again = false;
          await this.sendChanges(v);
        } while (v.again && !v.sink.closed);
      } finally {
        v.pumping = null;
      }
    })();
    return v.pumping;
  }

  private async sendChanges(v: Viewer): Promise<void> {
    const { source } = this.options;
    while (!v.sink.closed) {
      // A client that does not read holds its pump here, not an ever longer queue.
      await v.sink.ready();
      if (v.sink.closed) return;
      const ch = source.sessionChanges(v.sessionId, { after: v.cursor, limit: this.batch });
      if (!ch) {
        if (!v.gone) v.sink.send("gone", { id: v.sessionId });
        v.gone = true;
        return;
      }
      if (v.gone || ch.reset_stamp > v.resetSeen) {
        v.gone = false;
        // Operations were dropped: the client reloads, and everything up to now is in that.
        v.resetSeen = ch.reset_stamp;
        v.cursor = { stamp: Math.max(source.changeClock(), ch.reset_stamp), rowid: Infinity };
        v.sink.send("reset", { stamp: v.cursor.stamp }, formatEventId(v.cursor));
        v.detailStamp = -1;
        continue;
      }
      if (ch.stamp > v.detailStamp) this.sendDetail(v, ch.stamp);
      if (ch.ops.length) {
        v.cursor = ch.next;
        v.sink.send(
          "ops",
          { ops: source.rows(ch.ops), totals: ch.totals, more: ch.more },
          formatEventId(ch.next),
        );
      }
      if (!ch.more) return;
    }
  }

  private sendDetail(v: Viewer, stamp: number): void {
    v.detailStamp = stamp;
    const detail = this.options.source.sessionDetail(v.sessionId);
    if (!detail) return;
    const json = JSON.stringify(detail);
    if (json === v.detailJson) return;
    v.detailJson = json;
    const mark: LiveMark = {
      last_change_at: this.lastChangeOf(v.sessionId),
      server_now: this.options.clock.now(),
    };
    v.sink.send("session", { ...detail as object, live: mark });
  }
}
