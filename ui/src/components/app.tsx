/**
 * The app shell: a skip link, the header (navigation, search, theme), then the view for the URL
 * in <main>: sessions (list, session, inspector), analytics, security, the archive, or "no such
 * page". At narrow widths (≤ 760 px) the list, the session and the inspector are stacked views
 * with a back link each. The keyboard is answered here; shortcuts.tsx lists every key.
 */
import { signal, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { here, listUrl, navigate, onLink, sessionUrl, viewOf } from "../router.ts";
import { AnalyticsPage } from "./analytics_page.tsx";
import { ArchivePage } from "./archive_page.tsx";
import { SearchPalette } from "./search_palette.tsx";
import { SecurityPage } from "./security_page.tsx";
import { importProgress } from "../live.ts";
import { moveSelection, SessionList, storeEmpty } from "./session_list.tsx";
import { EmptyStore } from "./empty_store.tsx";
import { SessionView } from "./session_view.tsx";
import { sessionMarked } from "./session_marks.tsx";
import { ShortcutsOverlay } from "./shortcuts.tsx";
import { isFormControl } from "../keys.ts";

type Theme = "light" | "dark" | "auto";
const theme = signal<Theme>((localStorage.getItem("chronicle-theme") as Theme | null) ?? "auto");

function applyTheme(t: Theme) {
  if (t === "auto") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", t);
}

/** The conversation's scroller, when a session is open. */
const timeline = () => document.querySelector<HTMLElement>(".session-pane .vscroll");

/**
 * Scroll keys reach the conversation though nothing in it was clicked: focus on the page itself
 * (or the list, the header) scrolls the timeline. Inside a scroller of its own, the browser does.
 */
function scrollTimeline(e: KeyboardEvent): boolean {
  const el = timeline();
  if (!el) return false;
  const t = e.target as HTMLElement | null;
  if (t && t !== document.body && t.closest(".vscroll, .inspector, pre, .diff, [role=dialog]")) {
    return false;
  }
  if (e.key === " " && t && t.closest("button, a, summary")) return false;
  const page = el.clientHeight * 0.9;
  const by: Record<string, number> = {
    PageDown: page,
    PageUp: -page,
    " ": e.shiftKey ? -page : page,
  };
  if (e.key === "End") {
    // Rows near the end are measured as they appear, moving the end: follow it a few frames.
    // Until the height has held for 10 frames (at most 3 s), or the reader moves on: scrolls,
    // touches, clicks or presses another key (Home or j right after End go where they say).
    const until = performance.now() + 3000;
    let held = 0;
    let height = -1;
    let stop = false;
    const moves = ["wheel", "touchstart", "pointerdown", "keydown"] as const;
    const release = (ev: Event) => {
      if (ev !== e) stop = true;
    };
    for (const m of moves) addEventListener(m, release, { capture: true, passive: true });
    const stick = () => {
      if (!stop) {
        held = el.scrollHeight === height ? held + 1 : 0;
        height = el.scrollHeight;
        el.scrollTop = el.scrollHeight;
        if (held < 10 && performance.now() < until) return void requestAnimationFrame(stick);
      }
      for (const m of moves) removeEventListener(m, release, { capture: true });
    };
    stick();
  } else if (e.key === "Home") el.scrollTop = 0;
  else if (e.key in by) el.scrollBy({ top: by[e.key] });
  else return false;
  return true;
}

export function App(): VNode {
  const searching = useSignal(false);
  const helping = useSignal(false);
  const refresh = useSignal(0);
  const view = viewOf(here.value);

  useEffect(() => applyTheme(theme.value), [theme.value]);

  // Live: re-read lists when an import pass changed something.
  useEffect(() => {
    const es = new EventSource("/api/events");
    es.addEventListener("import", () => refresh.value++);
    es.addEventListener("progress", (e) => (importProgress.value = JSON.parse(e.data)));
    es.addEventListener("interception", () => refresh.value++);
    // a session renamed or starred (here or in another tab): lists and its header read it again
    es.addEventListener("session", (e) => {
      const { id } = JSON.parse(e.data) as { id: string };
      sessionMarked.value = { id, n: (sessionMarked.peek()?.n ?? 0) + 1 };
      refresh.value++;
    });
    return () => es.close();
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = isFormControl(e.target);
      const modal = searching.value || helping.value;
      if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        helping.value = false;
        searching.value = !searching.value;
        return;
      }
      if (modal || e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
      const v = viewOf(here.value);
      if (e.key === "?" && !typing) {
        e.preventDefault();
        helping.value = true;
      } else if (e.key === "/" && !typing) {
        const el = document.getElementById("session-filter");
        if (el && el.offsetParent !== null) {
          e.preventDefault();
          el.focus();
        }
      } else if (e.key === "Escape") {
        if (typing) (e.target as HTMLElement).blur();
        else if (v.name === "sessions" && v.op) {
          e.preventDefault();
          navigate(sessionUrl(v.id!), { replace: true });
        }
      } else if ((e.key === "ArrowDown" || e.key === "ArrowUp") && !typing) {
        const t = e.target as HTMLElement | null;
        if (t?.closest("pre, .diff, .inspector, .tt-panel, .replay-panel")) return;
        if (v.name !== "sessions" || !moveSelection.value) return;
        e.preventDefault();
        moveSelection.value(e.key === "ArrowDown" ? 1 : -1);
      } else if (!typing && v.name === "sessions" && scrollTimeline(e)) {
        e.preventDefault();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  const nav = (url: string, label: string, active: boolean) => (
    <a
      href={url}
      class={active ? "is-active" : ""}
      aria-current={active ? "page" : undefined}
      onClick={(e) => onLink(e, url)}
    >
      {label}
    </a>
  );
  const nextTheme: Record<Theme, Theme> = { auto: "dark", dark: "light", light: "auto" };
  const themeName: Record<Theme, string> = { auto: "system", dark: "dark", light: "light" };
  return (
    <div class="app">
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <a class="brand" href="/" onClick={(e) => onLink(e, "/")}>
          <img src="/assets/favicon.svg" alt="" width="20" height="20" />
          <span class="brand-name">Chronicle</span>
        </a>
        <nav class="topnav" aria-label="Pages">
          {nav(listUrl(), "Sessions", view.name === "sessions")}
          {nav("/analytics", "Analytics", view.name === "analytics")}
          {nav("/security", "Security", view.name === "security")}
          {nav("/archive", "Archive", view.name === "archive")}
        </nav>
        <button
          type="button"
          class="search-button"
          onClick={() => (searching.value = true)}
          aria-keyshortcuts="Control+K Meta+K"
        >
          <span>Search</span> <kbd aria-hidden="true">Ctrl K</kbd>
        </button>
        <button
          type="button"
          class="icon help-button"
          onClick={() => (helping.value = true)}
          aria-keyshortcuts="?"
          title="Keyboard shortcuts (?)"
        >
          ?<span class="sr-only">Keyboard shortcuts</span>
        </button>
        <button
          type="button"
          class="icon theme-button"
          title={`Theme: ${themeName[theme.value]} (click to change)`}
          onClick={() => {
            theme.value = nextTheme[theme.value];
            localStorage.setItem("chronicle-theme", theme.value);
          }}
        >
          <span aria-hidden="true">
            {theme.value === "dark" ? "☾" : theme.value === "light" ? "☀" : "◐"}
          </span>
          <span class="sr-only">Theme: {themeName[theme.value]}</span>
        </button>
      </header>
      <main id="main" class="main" tabIndex={-1}>
        {view.name === "sessions" && (
          <div
            class={`panes ${view.id ? "has-session" : "no-session"} ${
              storeEmpty.value ? "store-empty" : ""
            }`}
          >
            <SessionList selected={view.id} refresh={refresh.value} />
            {view.id
              ? <SessionView key={view.id} id={view.id} op={view.op} />
              : storeEmpty.value
              ? <EmptyStore />
              : (
                <div class="empty">
                  <h1 class="sr-only">Sessions</h1>
                  <p>
                    Select a session, or press <kbd>Ctrl K</kbd> to search every session.
                  </p>
                  <p class="muted small">
                    Keys: / filter · ↑↓ sessions · j/k steps · Esc close · ? every key
                  </p>
                </div>
              )}
          </div>
        )}
        {view.name === "analytics" && <AnalyticsPage project={view.project} />}
        {view.name === "security" && <SecurityPage refresh={refresh.value} />}
        {view.name === "archive" && <ArchivePage refresh={refresh.value} />}
        {view.name === "not_found" && (
          <div class="empty not-found">
            <h1>No such page</h1>
            <p>
              Chronicle has no page at <code>{view.path}</code>.
            </p>
            <p>
              <a href="/" onClick={(e) => onLink(e, "/")}>Go to the sessions</a>
            </p>
          </div>
        )}
      </main>
      {searching.value && <SearchPalette onClose={() => (searching.value = false)} />}
      {helping.value && <ShortcutsOverlay onClose={() => (helping.value = false)} />}
    </div>
  );
}
