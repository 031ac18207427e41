/**
 * State of one open session, as a signal factory: the timeline loaded page by page on demand
 * (so a 50k-step session opens with one small request), the selected and focused steps, and
 * which sub-agent threads are expanded. A live view (live_session.ts) puts new and changed
 * steps in place with `apply`.
 */
import { batch, type Signal, signal } from "@preact/signals";
import { api, qs } from "./api.ts";
import type { ConnectionView, Page, Row, SessionDetail, Stats } from "./types.ts";

export const PAGE = 100;

export interface TimelineState {
  total: Signal<number | null>;
  /** Bumped whenever rows arrive, so readers re-render. */
  version: Signal<number>;
  error: Signal<string | null>;
  row(index: number): Row | undefined;
  /** Loads the pages covering rows [first, last]. */
  ensure(first: number, last: number): void;
  /** Row index of an operation, if its page is loaded. */
  indexOf(opId: string): number | undefined;
  /** The change stamp the first page was read at: where a live view of it starts. */
  stamp: Signal<number | null>;
  /**
   * Puts live rows where they belong (`index` in this timeline) and sets the new total. A row
   * that lands before the end shifts the rows after it: those pages are read again.
   */
  apply(rows: { row: Row; index: number }[], total: number): void;
  /** Forgets every page and reads the visible ones again (a re-read dropped steps). */
  reload(): void;
}

/** Pages of one connection's timeline (or all of them when `connection` is null). */
export function createTimeline(
  sessionId: string,
  connection: string | null,
  byOp: Map<string, Row>,
  /** Bumped with every row that arrives (a reader of `byOp` re-renders). */
  arrived?: Signal<number>,
): TimelineState {
  const total = signal<number | null>(null);
  const version = signal(0);
  const error = signal<string | null>(null);
  const stamp = signal<number | null>(null);
  const pages = new Map<number, Row[] | "loading">();
  const index = new Map<string, number>();
  /** Live rows for pages being read: laid over them when they arrive. */
  const pending = new Map<number, Row>();
  let generation = 0;
  let range: [number, number] = [0, 0];

  const load = async (p: number) => {
    pages.set(p, "loading");
    const gen = generation;
    try {
      const page = await api<Page<Row>>(
        `/api/sessions/${encodeURIComponent(sessionId)}/timeline${
          qs({ offset: p * PAGE, limit: PAGE, connection })
        }`,
      );
      if (gen !== generation) return; // a reload began meanwhile
      const items = [...page.items];
      for (const [i, r] of pending) {
        if (Math.floor(i / PAGE) !== p) continue;
        pending.delete(i);
        if (i % PAGE <= items.length) items[i % PAGE] = r;
      }
      pages.set(p, items);
      items.forEach((r, i) => {
        index.set(r.op_id, p * PAGE + i);
        byOp.set(r.op_id, r);
      });
      batch(() => {
        if (stamp.value === null && page.stamp !== undefined) stamp.value = page.stamp;
        total.value = Math.max(page.total, total.value ?? 0);
        version.value++;
        if (arrived) arrived.value++;
      });
    } catch (e) {
      pages.delete(p);
      error.value = (e as Error).message;
    }
  };

  const state: TimelineState = {
    total,
    version,
    error,
    row(i) {
      const p = pages.get(Math.floor(i / PAGE));
      return Array.isArray(p) ? p[i % PAGE] : undefined;
    },
    ensure(first, last) {
      range = [first, last];
      for (let p = Math.floor(first / PAGE); p <= Math.floor(last / PAGE); p++) {
        if (!pages.has(p)) void load(p);
      }
    },
    indexOf: (opId) => index.get(opId),
    stamp,
    apply(rows, newTotal) {
      const before = total.value ?? 0;
      let stale = Infinity;
      for (const { row, index: i } of rows) {
        const was = index.get(row.op_id);
        if (was !== undefined && was !== i) stale = Math.min(stale, was, i);
        else if (was === undefined && i < before) stale = Math.min(stale, i);
        byOp.set(row.op_id, row);
        const page = pages.get(Math.floor(i / PAGE));
        if (page === "loading") pending.set(i, row);
        else if (Array.isArray(page)) {
          if (i % PAGE > page.length) stale = Math.min(stale, i);
          else {
            page[i % PAGE] = row;
            index.set(row.op_id, i);
          }
        }
      }
      if (Number.isFinite(stale)) {
        for (const p of [...pages.keys()]) if (p >= Math.floor(stale / PAGE)) pages.delete(p);
        for (const [id, i] of index) if (i >= Math.floor(stale / PAGE) * PAGE) index.delete(id);
      }
      batch(() => {
        total.value = Math.max(newTotal, 0);
        version.value++;
        if (arrived) arrived.value++;
      });
      if (Number.isFinite(stale)) state.ensure(...range);
    },
    reload() {
      generation++;
      pages.clear();
      index.clear();
      pending.clear();
      state.ensure(0, 0);
      state.ensure(...range);
    },
  };
  state.ensure(0, 0);
  return state;
}

export interface SessionState {
  id: string;
  detail: Signal<SessionDetail | null>;
  /** The overview's numbers, fetched once the first steps are on screen. */
  stats: Signal<Stats | null>;
  error: Signal<string | null>;
  main: Signal<TimelineState | null>;
  /** Every loaded row by operation id (main thread and sub-agents). */
  byOp: Map<string, Row>;
  /** Bumped whenever rows of any thread arrive (readers of `byOp` subscribe to it). */
  rows: Signal<number>;
  /** For a revealed step: its index in its own thread, by connection (shown that far). */
  wanted: Map<string, number>;
  /** Sub-agent connections by the task call that spawned them. */
  children: Signal<Map<string, ConnectionView[]>>;
  /** Task calls whose sub-agent threads are open. */
  expanded: Signal<Set<string>>;
  /** The step a deep link points at (highlighted and scrolled to). */
  focus: Signal<string | null>;
  /** A scroll request for the main list. */
  scrollTo: Signal<{ index: number; nonce: number } | null>;
  toggle(opId: string): void;
  /** Opens the threads leading to an operation and scrolls to it. */
  reveal(opId: string): Promise<void>;
  /** The timeline of one sub-agent thread, made once (a live view updates it in place). */
  thread(connection: string): TimelineState;
  /** Timelines of the threads made so far, by connection. */
  threads: Map<string, TimelineState>;
  /** Takes a newer detail of the session (its summary, connections and main thread). */
  setDetail(d: SessionDetail): void;
}

export function createSessionState(id: string): SessionState {
  const byOp = new Map<string, Row>();
  const threads = new Map<string, TimelineState>();
  const rows = signal(0);
  const s: SessionState = {
    id,
    detail: signal(null),
    stats: signal(null),
    error: signal(null),
    main: signal(null),
    byOp,
    rows,
    wanted: new Map(),
    children: signal(new Map()),
    expanded: signal(new Set()),
    focus: signal(null),
    scrollTo: signal(null),
    toggle(opId) {
      const next = new Set(s.expanded.value);
      if (next.has(opId)) next.delete(opId);
      else next.add(opId);
      s.expanded.value = next;
    },
    async reveal(opId) {
      try {
        const { chain } = await api<
          { chain: { op_id: string; connection: string; index: number }[] }
        >(
          `/api/sessions/${encodeURIComponent(id)}/locate${qs({ op: opId })}`,
        );
        const next = new Set(s.expanded.value);
        for (const link of chain.slice(0, -1)) next.add(link.op_id);
        for (const link of chain.slice(1)) s.wanted.set(link.connection, link.index);
        batch(() => {
          s.expanded.value = next;
          s.focus.value = opId;
          s.scrollTo.value = { index: chain[0].index, nonce: Math.random() };
        });
      } catch (e) {
        s.error.value = (e as Error).message;
      }
    },
    threads,
    thread(connection) {
      let t = threads.get(connection);
      if (!t) threads.set(connection, t = createTimeline(id, connection, byOp, rows));
      return t;
    },
    setDetail(d) {
      const children = new Map<string, ConnectionView[]>();
      for (const c of d.connections) {
        if (c.kind === "subagent" && c.parent_op) {
          children.set(c.parent_op, [...(children.get(c.parent_op) ?? []), c]);
        }
      }
      batch(() => {
        s.detail.value = d;
        s.children.value = children;
      });
    },
  };
  // Page one of the main thread is asked for at once, beside the session's details.
  const main = createTimeline(id, ":main", byOp, rows);
  api<SessionDetail>(`/api/sessions/${encodeURIComponent(id)}`).then((d) => {
    batch(() => {
      s.setDetail(d);
      s.main.value = main;
    });
    // The server answers one request at a time: ask for the (slower) stats after page one.
    let asked = false;
    const stop = main.total.subscribe((t) => {
      if (t === null || asked) return;
      asked = true;
      queueMicrotask(() => stop());
      api<Stats>(`/api/sessions/${encodeURIComponent(id)}/stats`)
        .then((st) => (s.stats.value = st))
        .catch(() => {});
    });
  }).catch((e) => (s.error.value = (e as Error).message));
  return s;
}
