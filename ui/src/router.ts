/**
 * Client-side routes: every view has a URL (`/`, `/sessions/<id>?op=<op id>`, `/analytics`,
 * `/security`, `/archive`). The location is a signal; `navigate` pushes history.
 */
import { signal } from "@preact/signals";

export interface Location {
  path: string;
  query: URLSearchParams;
}

function read(): Location {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export const here = signal<Location>(read());

addEventListener("popstate", () => {
  here.value = read();
});

interface EntryState {
  /** The in-app URL this entry was pushed from. */
  from?: string;
}

const entry = () => (history.state as EntryState | null) ?? {};

/** Goes to a URL inside the app; `replace` keeps history clean for selection changes. */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  const current = location.pathname + location.search;
  if (url === current) return;
  if (options.replace) history.replaceState(entry(), "", url);
  else history.pushState({ from: current } satisfies EntryState, "", url);
  here.value = read();
}

/**
 * Back to a parent view (a narrow layout's "back"): the browser's own back when this entry was
 * pushed from `parent`, else a push to it (a deep link opened in a fresh tab).
 */
export function goBack(parent: string): void {
  if (entry().from === parent) history.back();
  else navigate(parent);
}

export type View =
  | { name: "sessions"; id: string | null; op: string | null }
  | { name: "analytics"; project: string | null }
  | { name: "security" }
  | { name: "archive" }
  | { name: "not_found"; path: string };

export function viewOf(loc: Location): View {
  const m = /^\/sessions\/([^/]+)\/?$/.exec(loc.path);
  if (m) return { name: "sessions", id: decodeURIComponent(m[1]), op: loc.query.get("op") };
  if (loc.path === "/" || loc.path === "/sessions" || loc.path === "/sessions/") {
    return { name: "sessions", id: null, op: null };
  }
  if (loc.path === "/analytics") return { name: "analytics", project: loc.query.get("project") };
  if (loc.path === "/security") return { name: "security" };
  if (loc.path === "/archive") return { name: "archive" };
  return { name: "not_found", path: loc.path };
}

/** The session list's filters, kept in the URL of the list and of every session opened from it. */
export const LIST_FILTERS = ["source", "project", "text", "from", "to", "starred", "sort"] as const;
export type ListFilter = typeof LIST_FILTERS[number];

/** The list filters of the current URL as a query string (`?source=codex&...` or ""). */
export function filterQuery(extra: Record<string, string | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const k of LIST_FILTERS) {
    const v = here.value.query.get(k);
    if (v) q.set(k, v);
  }
  for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The session list with the current filters. */
export function listUrl(): string {
  return `/${filterQuery()}`;
}

/** A session (and optionally one of its steps), keeping the list's filters. */
export function sessionUrl(id: string, op?: string | null): string {
  return `/sessions/${encodeURIComponent(id)}${filterQuery({ op })}`;
}

/** A link click handler that routes in-app unless a modifier key asks for a new tab. */
export function onLink(e: MouseEvent, url: string): void {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(url);
}
