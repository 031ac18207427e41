/**
 * Following an open session live: once its first page is read, its event stream is opened
 * from that page's stamp; new and changed steps are put in place in the main thread and in
 * every sub-agent thread that is open; a reader at the end follows them, a reader who has
 * scrolled up is counted the new steps instead ("N new steps"). The session counts as being
 * written while something reached it in the last two minutes.
 */
import { batch, computed, effect, type ReadonlySignal, signal } from "@preact/signals";
import { WRITING_WINDOW_MS } from "../../core/live/writing.ts";
import { api } from "./api.ts";
import { liveEnabled, type LiveStatus, type LiveStream, openLiveStream } from "./live.ts";
import type { SessionState, TimelineState } from "./session_state.ts";
import type { LiveEventOps, LiveEventSession, LiveRow, Stats } from "./types.ts";

/** The overview's numbers are read again at most this often while the session grows. */
export const STATS_EVERY_MS = 3000;

export interface LiveSession {
  status: ReadonlySignal<LiveStatus>;
  retryInMs: ReadonlySignal<number | null>;
  /** Written to in the last two minutes (the LIVE badge). */
  writing: ReadonlySignal<boolean>;
  /** Steps added to the main thread while the reader was scrolled up. */
  newSteps: ReadonlySignal<number>;
  /** The main thread's view says whether its end is on screen. */
  setAtEnd(atEnd: boolean): void;
  /** Scrolls to the newest step and clears the count. */
  showNewest(): void;
  dispose(): void;
}

export function followSession(state: SessionState): LiveSession {
  const stream = signal<LiveStream | null>(null);
  const lastChange = signal<number | null>(null);
  const now = signal(Date.now());
  const newSteps = signal(0);
  let atEnd = true;
  const ticker = setInterval(() => (now.value = Date.now()), 5000);
  let statsTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshStats = () => {
    statsTimer ??= setTimeout(() => {
      statsTimer = undefined;
      api<Stats>(`/api/sessions/${encodeURIComponent(state.id)}/stats`)
        .then((st) => (state.stats.value = st))
        .catch(() => {});
    }, STATS_EVERY_MS);
  };

  const mark = (t: number | null) => {
    if (t !== null && t > (lastChange.value ?? -Infinity)) lastChange.value = t;
  };

  const showNewest = () => {
    const main = state.main.value;
    const total = main?.total.value ?? 0;
    batch(() => {
      newSteps.value = 0;
      if (total > 0) state.scrollTo.value = { index: total - 1, nonce: Math.random() };
    });
  };

  const place = (t: TimelineState, rows: LiveRow[], index: (r: LiveRow) => number, n: number) => {
    if (!rows.length) return 0;
    const before = t.total.value ?? 0;
    t.apply(rows.map((row) => ({ row, index: index(row) })), n);
    return rows.filter((r) => index(r) >= before).length;
  };

  const onOps = (e: LiveEventOps) => {
    mark(Date.now());
    const main = state.main.value;
    const mainConn = state.detail.value?.main_connection ?? null;
    batch(() => {
      if (main) {
        const mine = e.ops.filter((o) => mainConn === null || o.connection === mainConn);
        const added = mainConn === null
          ? place(main, mine, (r) => r.seq, e.totals.all)
          : place(main, mine, (r) => r.index, e.totals.connections[mainConn] ?? 0);
        if (added && atEnd) queueMicrotask(showNewest);
        else if (added) newSteps.value += added;
      }
      for (const [conn, t] of state.threads) {
        if (conn === mainConn) continue;
        const mine = e.ops.filter((o) => o.connection === conn);
        place(t, mine, (r) => r.index, e.totals.connections[conn] ?? t.total.value ?? 0);
      }
    });
  };

  const onSession = (e: LiveEventSession) => {
    const { live, ...detail } = e;
    if (live.last_change_at !== null) mark(live.last_change_at - live.server_now + Date.now());
    const before = state.detail.value?.main_connection ?? null;
    state.setDetail(detail);
    refreshStats();
    // The first sub-agent makes "main" a thread of its own: the main list is read again.
    if (detail.main_connection !== before) state.main.value?.reload();
  };

  const onReset = () => {
    state.main.value?.reload();
    for (const t of state.threads.values()) t.reload();
    newSteps.value = 0;
  };

  // Opens once the first page is there (its stamp is where the stream starts), when the
  // server follows sessions at all.
  const enabled = signal(false);
  let disposed = false;
  void liveEnabled().then((on) => (enabled.value = on && !disposed));
  const stop = effect(() => {
    const since = state.main.value?.stamp.value;
    if (!enabled.value || since === null || since === undefined || stream.peek()) return;
    stream.value = openLiveStream(state.id, String(since), { onOps, onSession, onReset });
  });

  const writing = computed(() => {
    const ended = state.detail.value?.session.ended_at;
    const last = Math.max(lastChange.value ?? -Infinity, ended ? Date.parse(ended) : -Infinity);
    return now.value - last < WRITING_WINDOW_MS;
  });

  return {
    status: computed(() => stream.value?.status.value ?? "connecting"),
    retryInMs: computed(() => stream.value?.retryInMs.value ?? null),
    writing,
    newSteps,
    setAtEnd(v) {
      atEnd = v;
      if (v && newSteps.peek()) newSteps.value = 0;
    },
    showNewest,
    dispose() {
      disposed = true;
      stop();
      clearInterval(ticker);
      clearTimeout(statsTimer);
      stream.peek()?.close();
    },
  };
}
