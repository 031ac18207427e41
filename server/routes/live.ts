/**
 * Live views: `GET /api/sessions/:id/live` streams a session's changes as server-sent events
 * (core/live/hub.ts says which), resuming after `Last-Event-ID` (or `?since=`, the stamp a
 * timeline page was read at); `GET /api/live` lists the sessions being written, their viewers
 * and watches, and the background import's progress.
 */
import { type LiveSource, parseEventId, WRITING_WINDOW_MS } from "../../core/live/mod.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import { openSseStream } from "../sse.ts";
import type { Route } from "./_http.ts";
import { ROW_TEXT_CHARS, timelineRow } from "./sessions.ts";

/** What the live hub reads: the store's change queries, rows rendered as the timeline's. */
export function liveSource(store: ChronicleStore): LiveSource {
  return {
    changeClock: () => store.changeClock(),
    sessionChanges: (id, options) =>
      store.sessionChanges(id, { ...options, textChars: ROW_TEXT_CHARS }),
    sessionDetail: (id) => store.sessionDetail(id),
    rows: (ops) => ops.map((op) => ({ ...timelineRow(store, op), index: op.index })),
  };
}

export interface LiveRouteOptions {
  /** Milliseconds between heartbeats of a live stream. Default 15000. */
  heartbeatMs?: number;
}

export function liveRoutes(deps: AppDeps, options: LiveRouteOptions = {}): Route[] {
  const { store } = deps;
  const now = deps.now ?? (() => Date.now());
  return [
    {
      method: "GET",
      path: "/api/sessions/:id/live",
      handler: ({ req, url, params }) => {
        if (!store.getSession(params.id)) {
          throw new HttpError(404, "not_found", `No session "${params.id.slice(0, 200)}"`);
        }
        const live = deps.live;
        if (!live) {
          throw new HttpError(
            503,
            "unavailable",
            "Live updates are off (the server does not import)",
          );
        }
        // The browser sends the last id it got when it reconnects by itself; the UI's own
        // reconnection (with backoff) passes it as `since`, as does a first connection (the
        // stamp its timeline page was read at). Without either, from now on.
        const after = parseEventId(req.headers.get("last-event-id")) ??
          parseEventId(url.searchParams.get("since")) ??
          { stamp: store.changeClock(), rowid: Infinity };
        // A client that goes away cancels the body stream, which ends the subscription. (Not
        // req.signal: Deno.serve aborts it also when a response completes.)
        let leave = () => {};
        const stream = openSseStream({
          heartbeatMs: options.heartbeatMs,
          onClose: () => leave(),
        });
        leave = live.subscribe(params.id, stream, after);
        if (stream.closed) leave();
        return stream.response;
      },
    },
    {
      method: "GET",
      path: "/api/live",
      handler: () => {
        const t = now();
        const since = t - WRITING_WINDOW_MS;
        const watched = deps.live?.status(since) ?? [];
        const recent = store.listSessions({
          from: new Date(since).toISOString(),
          sort: "ended_at",
          limit: 100,
        }).items;
        const byId = new Map(watched.map((w) => [w.id, w]));
        const ids = [...new Set([...watched.map((w) => w.id), ...recent.map((s) => s.id)])];
        const sessions = ids.flatMap((id) => {
          const session = recent.find((s) => s.id === id) ?? store.getSession(id);
          if (!session) return [];
          const w = byId.get(id);
          const ended = session.ended_at ? Date.parse(session.ended_at) : NaN;
          const lastChange = Math.max(w?.last_change_at ?? -Infinity, ended || -Infinity);
          return [{
            session,
            writing: lastChange >= since,
            last_change_at: Number.isFinite(lastChange) ? lastChange : null,
            viewers: w?.viewers ?? 0,
            watch: w?.watch ?? null,
          }];
        });
        return json({
          now: t,
          // Whether this server follows sessions live (`serve --no-import` does not).
          enabled: deps.live !== undefined,
          sessions,
          import: deps.importProgress?.() ?? null,
        });
      },
    },
  ];
}
