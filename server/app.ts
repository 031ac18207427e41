/**
 * @module
 * Chronicle's local HTTP server as a request handler factory: `createApp(deps)` returns
 * `(req) => Promise<Response>`. The CLI serves it with `Deno.serve` on 127.0.0.1; tests call
 * it in process. Every request passes the Host check and needs the install token (a header, a
 * bearer token, or the cookie the printed URL trades it for: auth.ts); state-changing ones also
 * need a loopback Origin (when sent). Errors have one JSON shape (errors.ts).
 */
import { oneAtATime } from "./session_work.ts";
import { SHARE_PATH } from "../core/shares/mod.ts";
import { checkRequest, signInPage, signInResponse } from "./auth.ts";
import type { AppDeps } from "./deps.ts";
import { errorResponse, HttpError, json, toErrorResponse } from "./errors.ts";
import { analyticsRoutes } from "./routes/analytics.ts";
import { archiveRoutes } from "./routes/archive.ts";
import { causalityRoutes } from "./routes/causality.ts";
import { liveRoutes } from "./routes/live.ts";
import type { Route } from "./routes/_http.ts";
import { replayRoutes } from "./routes/replay.ts";
import { searchRoutes } from "./routes/search.ts";
import { securityRoutes } from "./routes/security.ts";
import { createSharePages, shareRoutes } from "./routes/share.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { createEventHub } from "./sse.ts";
import { createStatic } from "./static.ts";

export type { AppDeps, SecurityService } from "./deps.ts";

export type Handler = (req: Request) => Promise<Response>;

interface CompiledRoute extends Route {
  pattern: URLPattern;
}

/** Builds the request handler. */
export function createApp(deps: AppDeps): Handler {
  const events = deps.events ?? createEventHub();
  const full: AppDeps = { ...deps, events, sessionWork: deps.sessionWork ?? oneAtATime() };
  const port = typeof deps.port === "function" ? deps.port : () => deps.port as number;
  const serveStatic = deps.static ?? createStatic();

  const routes: Route[] = [
    {
      method: "GET",
      path: "/api/health",
      handler: () => json({ ok: true, version: deps.version ?? "dev" }),
    },
    { method: "GET", path: "/api/events", handler: () => events.response() },
    {
      method: "GET",
      path: "/api/doctor",
      handler: async ({ url }) => {
        if (!deps.doctor) {
          throw new HttpError(503, "unavailable", "The doctor is not available in this build");
        }
        // ?verify=false skips reading back every pack payload (quicker on a big store)
        return json(await deps.doctor({ verifyPacks: url.searchParams.get("verify") !== "false" }));
      },
    },
    ...sessionRoutes(full),
    ...searchRoutes(full),
    ...analyticsRoutes(full),
    ...securityRoutes(full),
    ...replayRoutes(full),
    ...causalityRoutes(full),
    ...shareRoutes(full),
    ...liveRoutes(full),
    ...archiveRoutes(full),
  ];
  const sharePages = createSharePages(full);
  const compiled: CompiledRoute[] = routes.map((r) => ({
    ...r,
    pattern: new URLPattern({ pathname: r.path }),
  }));

  return async (req: Request): Promise<Response> => {
    try {
      const admission = checkRequest(req, { port: port(), token: deps.token });
      if (admission.kind === "sign_in") return signInResponse(admission);
      const url = new URL(req.url);
      const path = url.pathname;
      if (path.startsWith(SHARE_PATH)) return sharePages(req, url);
      if (!path.startsWith("/api/")) {
        if (req.method !== "GET" && req.method !== "HEAD") {
          return errorResponse(405, "method_not_allowed", `${req.method} is not allowed here`);
        }
        return await serveStatic(req, path);
      }
      const method = req.method === "HEAD" ? "GET" : req.method;
      let pathMatched = false;
      for (const r of compiled) {
        const m = r.pattern.exec({ pathname: path });
        if (!m) continue;
        pathMatched = true;
        if (r.method !== method) continue;
        const params: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.pathname.groups)) {
          if (v !== undefined) params[k] = decodeURIComponent(v);
        }
        return await r.handler({ req, url, params });
      }
      if (pathMatched) {
        return errorResponse(405, "method_not_allowed", `${req.method} is not allowed on ${path}`);
      }
      return errorResponse(404, "not_found", `No API route ${path.slice(0, 200)}`);
    } catch (e) {
      // a browser page without the token gets a page saying how to open Chronicle
      if (
        e instanceof HttpError && (e.code === "missing_token" || e.code === "bad_token") &&
        (e.cause as { page?: boolean } | undefined)?.page
      ) {
        return signInPage(e.status, e.message);
      }
      return toErrorResponse(e);
    }
  };
}
