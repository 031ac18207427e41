/**
 * ⌘K / Ctrl-K: search every session, or those of an agent, a project, a range of days (the
 * session list's filters when it opens); snippets with the match marked; Enter jumps to it.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { api, qs } from "../api.ts";
import { agentName, basename, localDayBound, sessionTitle } from "../format.ts";
import { navigate, sessionUrl } from "../router.ts";
import { useFocusTrap } from "./dialog.ts";
import { AgentOptions, ProjectOptions, useProjects } from "./filter_options.tsx";
import type { Project, SearchHit, SearchResult } from "../types.ts";
import { type Indexing, indexingNote, searchStatus, stillIndexing } from "../search_status.ts";

const PAGE = 30;

/** The sessions a search looks in: an agent, a project (and its sub-folders), days. */
interface Scope {
  source: string;
  project: string;
  from: string;
  to: string;
}

const EVERYWHERE: Scope = { source: "", project: "", from: "", to: "" };

/** The scope is an agent, a project or days rather than every session. */
const isNarrowed = (s: Scope) => Object.values(s).some(Boolean);

/** The session list's filters, from the URL: where the palette searches when it opens. */
function listScope(): Scope {
  const q = new URLSearchParams(location.search);
  const get = (k: keyof Scope) => q.get(k) ?? "";
  return { source: get("source"), project: get("project"), from: get("from"), to: get("to") };
}

/** The scope as /api/search takes it: days as the local day's first and last instant. */
const scopeQuery = (s: Scope) => ({
  source: s.source,
  project: s.project,
  from: localDayBound(s.from),
  to: localDayBound(s.to, true),
});

export function SearchPalette({ onClose }: { onClose: () => void }): VNode {
  const q = useSignal("");
  const scope = useSignal<Scope>(listScope());
  const projects = useProjects();
  const hits = useSignal<SearchHit[]>([]);
  const total = useSignal<number | null>(null);
  const capped = useSignal(false);
  const loading = useSignal(false);
  const ms = useSignal<number | null>(null);
  /** While a first import runs, how far the index is (the hits may be incomplete). */
  const indexing = useSignal<Indexing | null>(null);
  const active = useSignal(0);
  /** The query the hits shown answer (the one typed may be newer). */
  const answered = useSignal("");
  const error = useSignal<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLUListElement>(null);
  useFocusTrap(box, input);

  // The active hit stays in sight as ↑↓ move it.
  useEffect(() => {
    list.current?.querySelector(`#hit-${active.value}`)?.scrollIntoView({ block: "nearest" });
  }, [active.value]);
  useEffect(() => {
    const text = q.value.trim();
    if (!text) {
      hits.value = [];
      total.value = null;
      return;
    }
    const ctl = new AbortController();
    const t = setTimeout(() => {
      api<SearchResult & { ms: number; indexing?: Indexing | null }>(
        `/api/search${qs({ q: text, limit: PAGE, ...scopeQuery(scope.value) })}`,
        { signal: ctl.signal },
      ).then((r) => {
        indexing.value = r.indexing ?? null;
        hits.value = r.hits;
        answered.value = text;
        total.value = r.total;
        capped.value = r.total_capped;
        ms.value = r.ms;
        active.value = 0;
        error.value = null;
      }).catch((e) => {
        if ((e as Error).name !== "AbortError") error.value = (e as Error).message;
      });
    }, 120);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [q.value, scope.value]);

  /** The next page of hits, after the ones shown. */
  const more = () => {
    if (loading.value) return;
    loading.value = true;
    const text = q.value.trim();
    const where = scope.value;
    api<SearchResult & { ms: number }>(
      `/api/search${qs({ q: text, limit: PAGE, offset: hits.value.length, ...scopeQuery(where) })}`,
    ).then((r) => {
      if (q.value.trim() !== text || scope.value !== where) return;
      hits.value = [...hits.value, ...r.hits];
      total.value = r.total;
      capped.value = r.total_capped;
    }).catch((e) => (error.value = (e as Error).message)).finally(() => (loading.value = false));
  };
  const hasMore = () => total.value !== null && (hits.value.length < total.value || capped.value);

  const open = (h: SearchHit) => {
    onClose();
    navigate(sessionUrl(h.session_id, h.op_id));
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onClose();
      return;
    }
    // The filters' own keys (a select's arrows, Enter on a button) stay theirs.
    if (e.target !== input.current) return;
    if (e.key === "ArrowDown" && hits.value.length) {
      e.preventDefault();
      active.value = Math.min(hits.value.length - 1, active.value + 1);
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      active.value = Math.max(0, active.value - 1);
    } else if (e.key === "Enter" && hits.value[active.value]) {
      e.preventDefault();
      open(hits.value[active.value]);
    }
  };

  return (
    <div class="palette-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class="palette"
        role="dialog"
        aria-modal="true"
        aria-label="Search all sessions"
        onKeyDown={onKey}
        ref={box}
      >
        <input
          ref={input}
          type="search"
          class="palette-input"
          placeholder="Search every session…"
          value={q.value}
          onInput={(e) => (q.value = (e.currentTarget as HTMLInputElement).value)}
          aria-label="Search text"
          role="combobox"
          list={undefined}
          aria-expanded={hits.value.length > 0}
          aria-controls="search-hits"
          aria-autocomplete="list"
          aria-activedescendant={hits.value.length ? `hit-${active.value}` : undefined}
        />
        <ScopeFilters
          scope={scope.value}
          projects={projects.value}
          onChange={(next) => (scope.value = next)}
          onReset={() => {
            scope.value = EVERYWHERE;
            input.current?.focus(); // the button goes with the filters it cleared
          }}
        />
        <div class="palette-status muted small" role="status">
          {error.value ?? searchStatus({
            total: total.value,
            capped: capped.value,
            ms: ms.value,
            query: answered.value, // (what the count answers, not what is typed since)
            narrowed: isNarrowed(scope.value),
            indexing: stillIndexing(indexing.value),
          })}
        </div>
        {indexing.value && (
          <div class="search-indexing small" role="status">
            {indexingNote(indexing.value)}
          </div>
        )}
        <ul
          class="hits"
          role="listbox"
          id="search-hits"
          aria-label="Matches"
          data-query={answered.value}
          ref={list}
        >
          {hits.value.map((h, i) => (
            <li
              key={`${h.session_id}/${h.op_id}`}
              id={`hit-${i}`}
              role="option"
              aria-selected={i === active.value}
              class={i === active.value ? "is-active" : ""}
              onMouseEnter={() => (active.value = i)}
              onClick={() => open(h)}
            >
              <div class="hit-top">
                <span class={`agent agent-${h.session.source}`}>{agentName(h.session.source)}</span>
                <span class="hit-title">{sessionTitle({ ...h.session, id: h.session_id })}</span>
                <span class="muted small">{basename(h.session.project_path)}</span>
                <span class={`badge badge-${h.kind}`}>{h.tool ?? h.kind}</span>
              </div>
              <div class="snippet">
                {h.snippet.map((
                  s,
                  j,
                ) => (s.match ? <mark key={j}>{s.text}</mark> : <span key={j}>{s.text}</span>))}
              </div>
            </li>
          ))}
        </ul>
        {hasMore() && (
          <button type="button" class="palette-more" onClick={more} disabled={loading.value}>
            {loading.value ? "Loading…" : `Show ${PAGE} more`}
          </button>
        )}
      </div>
    </div>
  );
}

/** The agent, project and days the search looks in, and a way back to every session. */
function ScopeFilters(
  { scope, projects, onChange, onReset }: {
    scope: Scope;
    projects: Project[];
    onChange: (s: Scope) => void;
    onReset: () => void;
  },
): VNode {
  const set = (k: keyof Scope) => (e: Event) =>
    onChange({ ...scope, [k]: (e.currentTarget as HTMLInputElement).value });
  const narrowed = isNarrowed(scope);
  return (
    <div class="palette-filters" role="group" aria-label="Search in">
      <select value={scope.source} onChange={set("source")} aria-label="Search in agent">
        <AgentOptions />
      </select>
      <select value={scope.project} onChange={set("project")} aria-label="Search in project">
        <ProjectOptions projects={projects} chosen={scope.project} />
      </select>
      <input
        type="date"
        value={scope.from}
        onChange={set("from")}
        aria-label="Search from date"
        title="Sessions active on or after this day"
      />
      <input
        type="date"
        value={scope.to}
        onChange={set("to")}
        aria-label="Search to date"
        title="Sessions started on or before this day"
      />
      {narrowed && <button type="button" class="mini" onClick={onReset}>All sessions</button>}
    </div>
  );
}
