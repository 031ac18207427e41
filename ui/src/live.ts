/**
 * The UI's side of live views: one session's event stream (`/api/sessions/:id/live`) with its
 * own reconnection (backoff with jitter, resuming after the last id it got, so nothing is
 * lost or shown twice), and the background import's progress as the app hears it.
 */
import { type Signal, signal } from "@preact/signals";
import { api } from "./api.ts";
import type { LiveEventOps, LiveEventSession } from "./types.ts";

export type LiveStatus = "connecting" | "live" | "reconnecting" | "off";

/** First wait before reconnecting, and the longest. */
export const RETRY_MIN_MS = 1000;
export const RETRY_MAX_MS = 30_000;

export interface LiveStreamHandlers {
  onOps(e: LiveEventOps): void;
  onSession(e: LiveEventSession): void;
  /** A re-read dropped operations: reload what is shown. */
  onReset(): void;
}

export interface LiveStream {
  status: Signal<LiveStatus>;
  /** The delay before the next reconnection, while reconnecting. */
  retryInMs: Signal<number | null>;
  close(): void;
}

/** The wait before reconnection attempt `n` (0-based): doubling, capped, with jitter. */
export function backoff(n: number, random = Math.random): number {
  const base = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** n);
  return Math.round(base * (0.75 + random() * 0.5));
}

/**
 * Follows a session from cursor `since` (the stamp its timeline was read at). The browser's
 * own reconnection is not used: its delay is fixed, and it would retry a 404 for ever.
 */
export function openLiveStream(
  sessionId: string,
  since: string,
  handlers: LiveStreamHandlers,
): LiveStream {
  const status = signal<LiveStatus>("connecting");
  const retryInMs = signal<number | null>(null);
  let cursor = since;
  let es: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  let closed = false;

  const take = <T>(fn: (data: T) => void) => (e: Event) => {
    const m = e as MessageEvent<string>;
    if (m.lastEventId) cursor = m.lastEventId;
    try {
      fn(JSON.parse(m.data) as T);
    } catch (err) {
      console.error("live event", err);
    }
  };

  const connect = () => {
    if (closed) return;
    const url = `/api/sessions/${encodeURIComponent(sessionId)}/live?since=${
      encodeURIComponent(cursor)
    }`;
    es = new EventSource(url);
    es.addEventListener("open", () => {
      failures = 0;
      retryInMs.value = null;
      status.value = "live";
    });
    es.addEventListener("ops", take(handlers.onOps));
    es.addEventListener("session", take(handlers.onSession));
    es.addEventListener(
      "reset",
      take(() => {
        status.value = "live";
        handlers.onReset();
      }),
    );
    // The session is gone (its log emptied): not followed, but a log written again comes back
    // as a reset on this same stream.
    es.addEventListener("gone", () => (status.value = "off"));
    es.addEventListener("error", () => {
      es?.close();
      es = null;
      if (closed) return;
      // A session the server does not have (or a server that does not import) stops here.
      void api(`/api/sessions/${encodeURIComponent(sessionId)}`).then(
        () => retry(),
        (e) => ((e as { status?: number }).status === 404 ? stop("off") : retry()),
      );
    });
  };

  const retry = () => {
    if (closed) return;
    const wait = backoff(failures++);
    status.value = "reconnecting";
    retryInMs.value = wait;
    timer = setTimeout(connect, wait);
  };

  const stop = (s: LiveStatus) => {
    closed = true;
    clearTimeout(timer);
    es?.close();
    es = null;
    status.value = s;
    retryInMs.value = null;
  };

  connect();
  return { status, retryInMs, close: () => stop("off") };
}

/** The background import's progress (`/api/live`, then `progress` events). */
export interface ImportProgressView {
  /** "indexing": every session is stored, the search index is filling in. */
  state: "idle" | "discovering" | "importing" | "indexing";
  first: boolean;
  files_total: number;
  files_done: number;
  index_total: number;
  index_done: number;
  sessions: number;
  percent: number;
  eta_s: number | null;
}

export const importProgress = signal<ImportProgressView | null>(null);

let status: Promise<{ enabled: boolean; import: ImportProgressView | null }> | null = null;

/** `/api/live`, read once per page: whether the server follows sessions, and the progress. */
function liveStatus() {
  status ??= api<{ enabled: boolean; import: ImportProgressView | null }>("/api/live").catch(
    () => ({ enabled: false, import: null }),
  );
  return status;
}

/** Whether the server follows sessions live (a server that does not import does not). */
export function liveEnabled(): Promise<boolean> {
  return liveStatus().then((s) => s.enabled);
}

/** Reads the progress once (the events carry it from then on). */
export function loadImportProgress(): void {
  void liveStatus().then((s) => (importProgress.value ??= s.import));
}
