/**
 * The app shell: header (navigation, search, theme), then the view for the URL: sessions
 * (list, session, inspector), analytics or security. Keyboard: ⌘K / Ctrl-K search, / filter,
 * j/k move through steps, ↑↓ through sessions, Esc closes.
 */
import { signal, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { here, navigate, onLink, viewOf } from "../router.ts";
import { AnalyticsPage } from "./analytics_page.tsx";
import { SearchPalette } from "./search_palette.tsx";
import { SecurityPage } from "./security_page.tsx";
import { importProgress } from "../live.ts";
import { SessionList } from "./session_list.tsx";
import { SessionView } from "./session_view.tsx";

type Theme = "light" | "dark" | "auto";
const theme = signal<Theme>((localStorage.getItem("chronicle-theme") as Theme | null) ?? "auto");

function applyTheme(t: Theme) {
  if (t === "auto") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", t);
}

export function App(): VNode {
  const searching = useSignal(false);
  const refresh = useSignal(0);
  const view = viewOf(here.value);

  useEffect(() => applyTheme(theme.value), [theme.value]);

  // Live: re-read lists when an import pass changed something.
  useEffect(() => {
    const es = new EventSource("/api/events");
    es.addEventListener("import", () => refresh.value++);
    es.addEventListener("progress", (e) => (importProgress.value = JSON.parse(e.data)));
    es.addEventListener("interception", () => refresh.value++);
    return () => es.close();
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = e.target instanceof HTMLInputElement ||
        e.target instanceof HTMLTextAreaElement ||
        e.target instanceof HTMLSelectElement;
      if ((e.metaKey || e.ctrlKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        searching.value = !searching.value;
      } else if (e.key === "/" && !typing && !searching.value) {
        const el = document.getElementById("session-filter");
        if (el) {
          e.preventDefault();
          el.focus();
        }
      } else if (e.key === "Escape" && !searching.value) {
        const v = viewOf(here.value);
        if (typing) (e.target as HTMLElement).blur();
        else if (v.name === "sessions" && v.op) {
          navigate(`/sessions/${encodeURIComponent(v.id!)}`, { replace: true });
        }
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
  return (
    <div class="app">
      <header class="topbar">
        <a class="brand" href="/" onClick={(e) => onLink(e, "/")}>Chronicle</a>
        <nav class="topnav" aria-label="Pages">
          {nav("/", "Sessions", view.name === "sessions")}
          {nav("/analytics", "Analytics", view.name === "analytics")}
          {nav("/security", "Security", view.name === "security")}
        </nav>
        <button
          type="button"
          class="search-button"
          onClick={() => (searching.value = true)}
          aria-label="Search all sessions"
        >
          <span>Search</span> <kbd>Ctrl K</kbd>
        </button>
        <button
          type="button"
          class="icon theme-button"
          title={`Theme: ${theme.value}`}
          aria-label={`Theme: ${theme.value}`}
          onClick={() => {
            theme.value = nextTheme[theme.value];
            localStorage.setItem("chronicle-theme", theme.value);
          }}
        >
          {theme.value === "dark" ? "☾" : theme.value === "light" ? "☀" : "◐"}
        </button>
      </header>
      {view.name === "sessions" && (
        <div class="panes">
          <SessionList selected={view.id} refresh={refresh.value} />
          {view.id ? <SessionView key={view.id} id={view.id} op={view.op} /> : (
            <div class="empty">
              <p>
                Select a session, or press <kbd>Ctrl K</kbd> to search every session.
              </p>
              <p class="muted small">Keys: / filter · ↑↓ sessions · j/k steps · Esc close</p>
            </div>
          )}
        </div>
      )}
      {view.name === "analytics" && <AnalyticsPage project={view.project} />}
      {view.name === "security" && <SecurityPage refresh={refresh.value} />}
      {searching.value && <SearchPalette onClose={() => (searching.value = false)} />}
    </div>
  );
}
