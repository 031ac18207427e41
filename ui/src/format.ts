/** Small formatting helpers: times, durations, counts, sizes, agent names. */
import { WRITING_WINDOW_MS } from "../../core/live/writing.ts";
import { sessionTitle as titleOf, type TitleParts } from "../../core/model/titles.ts";

export const AGENTS: Record<string, string> = {
  "claude-code": "Claude Code",
  codex: "Codex",
  cursor: "Cursor",
  opencode: "OpenCode",
  gemini: "Gemini",
};

export function agentName(source: string): string {
  return AGENTS[source] ?? source;
}

export function when(iso: string | null | undefined, now = Date.now()): string {
  const t = instant(iso);
  if (t === null) return "";
  const s = Math.round((now - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 7) return `${Math.floor(s / 86400)} d ago`;
  return localDate(t);
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * Every date and time the UI shows is in the browser's own zone (each time's tooltip names
 * the zone, {@link timeTitle}); the API's ISO instants are UTC. `YYYY-MM-DD`.
 */
export function localDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** `YYYY-MM-DD HH:MM:SS` in the browser's zone. */
export function dateTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  const d = new Date(ms);
  return `${localDate(ms)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The browser's zone and its offset at `ms`, e.g. `Asia/Tokyo (UTC+09:00)`. */
export function zoneName(ms = Date.now()): string {
  const off = -new Date(ms).getTimezoneOffset();
  const a = Math.abs(off);
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  return `${name} (UTC${off < 0 ? "−" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)})`;
}

/** A time's tooltip: the local time with its zone, and the same instant in UTC. */
export function timeTitle(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  const utc = new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  return `${dateTime(ms)} ${zoneName(ms)} · ${utc} UTC`;
}

/** Milliseconds of an ISO instant; null when absent or unreadable. */
export function instant(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

/**
 * A date filter's day (`YYYY-MM-DD`, local) as the instant the API compares with: the day's
 * first millisecond in the browser's zone, or with `end` its last, as an ISO string.
 */
export function localDayBound(day: string, end = false): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const next = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (end ? 1 : 0));
  return new Date(next.getTime() - (end ? 1 : 0)).toISOString();
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function count(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return n.toLocaleString("en-US");
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function basename(path: string | null | undefined): string {
  if (!path) return "";
  const parts = path.replace(/\/+$/, "").split("/");
  return parts[parts.length - 1] || path;
}

/**
 * A session's display title: core/model's `sessionTitle` (the user's name, else its own, else
 * the first prompt), else its id.
 */
export function sessionTitle(s: TitleParts & { id?: string }): string {
  return (titleOf(s) || s.id || "Untitled session").replace(/\s+/g, " ").trim();
}

/** True when a session wrote to its log in the last two minutes (shown with a dot). */
export function isLive(s: { ended_at: string | null }, now = Date.now()): boolean {
  if (!s.ended_at) return false;
  return now - Date.parse(s.ended_at) < WRITING_WINDOW_MS;
}
