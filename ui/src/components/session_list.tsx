/**
 * The left pane: every agent's sessions in one list with filters (agent, project, text, date
 * range, starred, sort), loaded a page at a time as you scroll, a ● for live ones and a ★ for
 * starred ones.
 */
import { signal, useComputed, useSignal, useSignalEffect } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { api, qs } from "../api.ts";
import { AGENTS, basename, isLive, localDayBound, sessionTitle } from "../format.ts";
import { Time } from "./time.tsx";
import { filterQuery, navigate, onLink, sessionUrl } from "../router.ts";
import type { Page, SessionSummary } from "../types.ts";
import { ImportProgressBar } from "./import_progress.tsx";
import { AgentOptions, ProjectOptions, useProjects } from "./filter_options.tsx";
import { queryParts } from "../../../core/store/search_query.ts";

const PAGE = 100;

export interface ListFilters {
  source: string;
  project: string;
  text: string;
  from: string;
  to: string;
  /** "1": only the starred sessions. */
  starred: string;
  sort: string;
}

/** The filters in the current URL (the list's and every session opened from it). */
function readFilters(query: string): ListFilters {
  const q = new URLSearchParams(query);
  return {
    source: q.get("source") ?? "",
    project: q.get("project") ?? "",
    text: q.get("text") ?? "",
    from: q.get("from") ?? "",
    to: q.get("to") ?? "",
    starred: q.get("starred") === "1" ? "1" : "",
    sort: q.get("sort") ?? "started_at",
  };
}

/** Sets one filter in the URL, keeping the view (list or session) and the others. */
function setFilter(k: keyof ListFilters, v: string): void {
  const q = new URLSearchParams(location.search);
  if (v && !(k === "sort" && v === "started_at")) q.set(k, v);
  else q.delete(k);
  const s = q.toString();
  navigate(`${location.pathname}${s ? `?${s}` : ""}`, { replace: true });
}

/** True when the store holds no session at all (the list shows none and no filter is set). */
export const storeEmpty = signal(false);

/** Moves the selection to the next or previous session of the list shown (↑ ↓ anywhere). */
export const moveSelection = signal<((by: number) => void) | null>(null);

export function SessionList(
  { selected, refresh }: { selected: string | null; refresh: number },
): VNode {
  const query = useComputed(() => filterQuery());
  const filters = useComputed(() => readFilters(query.value));
  const items = useSignal<SessionSummary[]>([]);
  const total = useSignal<number | null>(null);
  const error = useSignal<string | null>(null);
  const projects = useProjects(refresh);
  const loading = useRef(false);
  const listRef = useRef<HTMLUListElement>(null);
  const textInput = useSignal(filters.peek().text);
  /** The selection the list last scrolled to (a deep link scrolls once its row exists). */
  const scrolledTo = useRef<string | null>(null);

  const load = async (offset: number) => {
    loading.current = true;
    try {
      const f = filters.peek();
      const page = await api<Page<SessionSummary>>(
        `/api/sessions${
          qs({
            ...f,
            from: localDayBound(f.from),
            to: localDayBound(f.to, true),
            order: f.sort === "title" ? "asc" : "desc",
            limit: PAGE,
            offset,
          })
        }`,
      );
      items.value = offset === 0 ? page.items : [...items.value, ...page.items];
      total.value = page.total;
      if (offset === 0 && !query.peek()) storeEmpty.value = page.total === 0;
      error.value = null;
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      loading.current = false;
    }
  };

  useSignalEffect(() => {
    void query.value;
    void load(0);
  });
  useEffect(() => {
    if (refresh) void load(0);
  }, [refresh]);

  // Debounce typing into the text filter.
  useEffect(() => {
    const t = setTimeout(() => {
      if (filters.peek().text !== textInput.value) setFilter("text", textInput.value);
    }, 250);
    return () => clearTimeout(t);
  }, [textInput.value]);
  // A URL that changes the text (back, a link) changes the box.
  useSignalEffect(() => {
    textInput.value = filters.value.text;
  });

  // The selected session is scrolled into view once (a deep link, a move by ↑↓).
  useEffect(() => {
    if (!selected || scrolledTo.current === selected) return;
    const el = listRef.current?.querySelector(`[data-id="${CSS.escape(selected)}"]`);
    if (!el) return;
    scrolledTo.current = selected;
    el.scrollIntoView({ block: "nearest" });
  });

  const onScroll = (e: Event) => {
    const el = e.currentTarget as HTMLElement;
    if (loading.current || total.value === null || items.value.length >= total.value) return;
    if (el.scrollTop + el.clientHeight > el.scrollHeight - 400) void load(items.value.length);
  };

  const set = (k: keyof ListFilters) => (e: Event) =>
    setFilter(k, (e.currentTarget as HTMLInputElement).value);

  useEffect(() => {
    moveSelection.value = (by: number) => {
      const list = items.value;
      const i = list.findIndex((s) => s.id === selected);
      const next = list[Math.min(list.length - 1, Math.max(0, i < 0 ? 0 : i + by))];
      if (next && next.id !== selected) navigate(sessionUrl(next.id), { replace: true });
    };
    return () => (moveSelection.value = null);
  }, [selected]);

  const f = filters.value;
  const now = Date.now();
  return (
    <nav class="list-pane" aria-label="Sessions">
      <div class="filters">
        <input
          type="search"
          id="session-filter"
          placeholder="Filter sessions…  ( / )"
          value={textInput.value}
          onInput={(e) => (textInput.value = (e.currentTarget as HTMLInputElement).value)}
          aria-label="Filter sessions by text"
        />
        <div class="filter-row">
          <select value={f.source} onChange={set("source")} aria-label="Agent">
            <AgentOptions />
          </select>
          <select value={f.project} onChange={set("project")} aria-label="Project">
            <ProjectOptions projects={projects.value} />
          </select>
        </div>
        <div class="filter-row">
          <input type="date" value={f.from} onChange={set("from")} aria-label="From date" />
          <input type="date" value={f.to} onChange={set("to")} aria-label="To date" />
        </div>
        <div class="list-count-row">
          <div class="muted small list-count" role="status">
            {total.value === null
              ? "Loading…"
              : `${total.value.toLocaleString("en-US")} ${f.starred ? "starred " : ""}session${
                total.value === 1 ? "" : "s"
              }${
                // (the server leaves out a text with no word, as search reads it)
                f.text.trim() && !queryParts(f.text).length
                  ? " · no word in the text to filter by"
                  : ""}`}
          </div>
          <button
            type="button"
            class="mini starred-filter"
            aria-pressed={f.starred === "1"}
            onClick={() => setFilter("starred", f.starred ? "" : "1")}
          >
            <span aria-hidden="true">{f.starred ? "★" : "☆"}</span> Starred
          </button>
          <select class="list-sort" value={f.sort} onChange={set("sort")} aria-label="Sort by">
            <option value="started_at">Newest</option>
            <option value="ended_at">Last active</option>
            <option value="op_count">Longest</option>
            <option value="title">Title</option>
          </select>
        </div>
      </div>
      <ImportProgressBar />
      {error.value && <div class="error-text pad">{error.value}</div>}
      <ul class="sessions" ref={listRef} onScroll={onScroll}>
        {items.value.map((s) => {
          const url = sessionUrl(s.id);
          return (
            <li key={s.id} data-id={s.id} class={s.id === selected ? "is-selected" : ""}>
              <a
                href={url}
                onClick={(e) => onLink(e, url)}
                aria-current={s.id === selected ? "page" : undefined}
              >
                <div class="s-top">
                  <span class={`agent agent-${s.source}`}>{AGENTS[s.source] ?? s.source}</span>
                  {isLive(s, now) && (
                    <span class="live" title="Active in the last two minutes">●</span>
                  )}
                  <Time class="muted s-when" at={s.started_at} show="ago" now={now} />
                </div>
                <div class="s-title">
                  {s.starred && (
                    <span class="star-mark" title="Starred">
                      <span aria-hidden="true">★</span>
                      <span class="sr-only">Starred:</span>
                    </span>
                  )}
                  {sessionTitle(s)}
                </div>
                <div class="s-bottom muted">
                  <span title={s.project_path ?? ""}>{basename(s.project_path)}</span>
                  <span>{s.op_count} step{s.op_count === 1 ? "" : "s"}</span>
                  {s.error_count > 0 && (
                    <span class="err-count">
                      {s.error_count} error{s.error_count === 1 ? "" : "s"}
                    </span>
                  )}
                  {s.kept_count > 0 && (
                    <span title="Steps no longer in the agent's log, kept by Chronicle">
                      {s.kept_count === s.op_count ? "log gone" : `${s.kept_count} kept`}
                    </span>
                  )}
                </div>
              </a>
            </li>
          );
        })}
        {total.value === 0 && (
          <li class="muted pad">
            {f.starred && query.value === "?starred=1"
              ? "No starred sessions yet: open one and press s, or its ☆ Star button."
              : query.value
              ? "No sessions match."
              : "No sessions yet."}
          </li>
        )}
      </ul>
    </nav>
  );
}
