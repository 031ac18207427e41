/**
 * Client-side routes: every view has a URL (`/`, `/sessions/<id>?op=<op id>`, `/analytics`,
 * `/security`). The location is a signal; `navigate` pushes history.
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

/** Goes to a URL inside the app; `replace` keeps history clean for selection changes. */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  here.value = read();
}

export type View =
  | { name: "sessions"; id: string | null; op: string | null }
  | { name: "analytics"; project: string | null }
  | { name: "security" };

export function viewOf(loc: Location): View {
  const m = /^\/sessions\/([^/]+)\/?$/.exec(loc.path);
  if (m) return { name: "sessions", id: decodeURIComponent(m[1]), op: loc.query.get("op") };
  if (loc.path === "/analytics") return { name: "analytics", project: loc.query.get("project") };
  if (loc.path === "/security") return { name: "security" };
  return { name: "sessions", id: null, op: null };
}

export function sessionUrl(id: string, op?: string | null): string {
  return `/sessions/${encodeURIComponent(id)}${op ? `?op=${encodeURIComponent(op)}` : ""}`;
}

/** A link click handler that routes in-app unless a modifier key asks for a new tab. */
export function onLink(e: MouseEvent, url: string): void {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(url);
}
