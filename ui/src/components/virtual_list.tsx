/**
 * A virtualised list for very long sessions: only the rows near the viewport are in the DOM
 * (a window of a few dozen, never more than {@link MAX_ROWS}). Row heights are estimated,
 * measured once rendered, and kept in a Fenwick tree so offsets stay O(log n) at 50k rows.
 */
import type { ComponentChildren, VNode } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

export const MAX_ROWS = 400;

/** Prefix sums of row heights with O(log n) update and search. */
export class HeightIndex {
  readonly sizes: Float64Array;
  private readonly tree: Float64Array;
  /** `from`: an index over fewer rows whose measured heights carry over (a list that grew). */
  constructor(readonly n: number, estimate: number, from?: HeightIndex) {
    this.sizes = new Float64Array(n).fill(estimate);
    if (from) this.sizes.set(from.sizes.subarray(0, Math.min(n, from.n)));
    this.tree = new Float64Array(n + 1);
    for (let i = 1; i <= n; i++) {
      this.tree[i] += this.sizes[i - 1];
      const j = i + (i & -i);
      if (j <= n) this.tree[j] += this.tree[i];
    }
  }
  set(i: number, h: number): boolean {
    const d = h - this.sizes[i];
    if (Math.abs(d) < 0.5) return false;
    this.sizes[i] = h;
    for (let j = i + 1; j <= this.n; j += j & -j) this.tree[j] += d;
    return true;
  }
  /** Sum of heights of rows [0, i). */
  offset(i: number): number {
    let s = 0;
    for (let j = Math.min(i, this.n); j > 0; j -= j & -j) s += this.tree[j];
    return s;
  }
  total(): number {
    return this.offset(this.n);
  }
  /** The row at vertical position y. */
  indexAt(y: number): number {
    let pos = 0;
    let rest = y;
    let step = 1;
    while (step * 2 <= this.n) step *= 2;
    for (; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.n && this.tree[next] <= rest) {
        pos = next;
        rest -= this.tree[next];
      }
    }
    return Math.min(pos, Math.max(this.n - 1, 0));
  }
}

export interface VirtualListProps {
  count: number;
  estimate?: number;
  /** Rows rendered above and below the viewport. */
  overscan?: number;
  renderRow: (index: number) => ComponentChildren;
  /** Called with the visible range whenever it changes (for loading pages). */
  onRange?: (first: number, last: number) => void;
  /** When set, scroll so this row is at the top (changes trigger a new scroll). */
  scrollTo?: { index: number; nonce: number } | null;
  header?: ComponentChildren;
  class?: string;
  /** Told whether the end of the list is on screen, whenever that changes (live views). */
  onAtEnd?: (atEnd: boolean) => void;
}

export function VirtualList(props: VirtualListProps): VNode {
  const estimate = props.estimate ?? 72;
  const overscan = props.overscan ?? 8;
  // A list that grows (a live session) keeps the heights it measured.
  const previous = useRef<HeightIndex | null>(null);
  const heights = useMemo(
    () => (previous.current = new HeightIndex(
      props.count,
      estimate,
      previous.current ?? undefined,
    )),
    [props.count, estimate],
  );
  const scroller = useRef<HTMLDivElement>(null);
  const headerRef = useRef<HTMLDivElement>(null);
  const [, setTick] = useState(0);
  const [viewport, setViewport] = useState({ top: 0, height: 800 });
  const observer = useRef<ResizeObserver | null>(null);
  const pendingScroll = useRef<number | null>(null);

  const headerHeight = headerRef.current?.offsetHeight ?? 0;
  const top = Math.max(0, viewport.top - headerHeight);
  const first = Math.max(0, heights.indexAt(top) - overscan);
  const lastVisible = heights.indexAt(top + viewport.height);
  const last = Math.min(props.count - 1, lastVisible + overscan, first + MAX_ROWS - 1);

  useEffect(() => {
    if (props.count > 0) props.onRange?.(first, last);
  }, [first, last, props.count]);

  const atEnd = useRef<boolean | null>(null);
  useEffect(() => {
    const el = scroller.current;
    if (!el || !props.onAtEnd) return;
    const end = el.scrollTop + el.clientHeight >= el.scrollHeight - 24;
    if (end !== atEnd.current) props.onAtEnd(atEnd.current = end);
  });

  useLayoutEffect(() => {
    const el = scroller.current!;
    const onScroll = () => setViewport({ top: el.scrollTop, height: el.clientHeight });
    onScroll();
    el.addEventListener("scroll", onScroll, { passive: true });
    const ro = new ResizeObserver(() => onScroll());
    ro.observe(el);
    return () => {
      el.removeEventListener("scroll", onScroll);
      ro.disconnect();
    };
  }, []);

  // Measure rows (and the header); keep the row at the top of the viewport where it is when
  // anything above it changes height, or hold a requested scroll target in place.
  const headerSeen = useRef(0);
  useLayoutEffect(() => {
    const el = scroller.current!;
    observer.current = new ResizeObserver((entries) => {
      const hh = headerRef.current?.offsetHeight ?? 0;
      const oldHh = headerSeen.current;
      headerSeen.current = hh;
      const scrollTop = el.scrollTop;
      const anchor = heights.indexAt(Math.max(0, scrollTop - oldHh));
      const within = scrollTop - oldHh - heights.offset(anchor);
      let changed = hh !== oldHh;
      for (const e of entries) {
        const i = Number((e.target as HTMLElement).dataset.index);
        if (Number.isNaN(i) || i >= heights.n) continue;
        const h = (e.target as HTMLElement).offsetHeight;
        if (h > 0 && heights.set(i, h)) changed = true;
      }
      if (!changed) return;
      if (pendingScroll.current !== null) {
        el.scrollTop = heights.offset(pendingScroll.current) + hh;
      } else if (scrollTop > oldHh) {
        const want = heights.offset(anchor) + hh + within;
        if (Math.abs(want - scrollTop) > 1) el.scrollTop = want;
      }
      setTick((t) => t + 1);
    });
    // A user who scrolls takes over from a pending scroll request.
    const release = () => (pendingScroll.current = null);
    el.addEventListener("wheel", release, { passive: true });
    el.addEventListener("touchmove", release, { passive: true });
    el.addEventListener("keydown", release);
    return () => {
      observer.current?.disconnect();
      el.removeEventListener("wheel", release);
      el.removeEventListener("touchmove", release);
      el.removeEventListener("keydown", release);
    };
  }, [heights]);

  // A request is done once its row exists: a list that grows later must not repeat it.
  const doneNonce = useRef<number | null>(null);
  const releaseTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    const s = props.scrollTo;
    if (!s || !scroller.current || doneNonce.current === s.nonce) return;
    const el = scroller.current;
    if (s.index < heights.n) doneNonce.current = s.nonce;
    pendingScroll.current = s.index;
    el.scrollTop = heights.offset(s.index) + (headerRef.current?.offsetHeight ?? 0);
    setViewport({ top: el.scrollTop, height: el.clientHeight });
    clearTimeout(releaseTimer.current);
    releaseTimer.current = setTimeout(() => (pendingScroll.current = null), 2000);
  }, [props.scrollTo?.nonce, heights]);
  useEffect(() => () => clearTimeout(releaseTimer.current), []);

  // Observe exactly the rows now in the DOM (rows that left are no longer observed).
  const windowRef = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const ro = observer.current;
    if (!ro || !windowRef.current) return;
    ro.disconnect();
    if (headerRef.current) ro.observe(headerRef.current);
    for (const child of Array.from(windowRef.current.children)) ro.observe(child);
  });

  const rows: VNode[] = [];
  for (let i = first; i <= last && props.count > 0; i++) {
    rows.push(
      <div class="vrow" key={i} data-index={i} role="listitem">
        {props.renderRow(i)}
      </div>,
    );
  }
  const before = heights.offset(first);
  const after = heights.total() - heights.offset(last + 1);
  return (
    <div class={`vscroll ${props.class ?? ""}`} ref={scroller} tabIndex={-1}>
      <div ref={headerRef}>{props.header}</div>
      <div style={{ height: `${before}px` }} aria-hidden="true" />
      <div class="vwindow" role="list" ref={windowRef}>{rows}</div>
      <div style={{ height: `${Math.max(0, after)}px` }} aria-hidden="true" />
    </div>
  );
}
