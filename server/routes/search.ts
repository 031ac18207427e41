/**
 * Full-text search across every session: `q`, the session filters (`source`, `project`, `from`,
 * `to`) and paging (`offset`, `limit` up to `SEARCH_PAGE_MAX`); hits newest first with
 * highlighted snippets, and an exact count or, with `total_capped`, a lower bound (see
 * core/store/search.ts).
 */
import { SEARCH_PAGE_MAX } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import { type Route, sessionQuery } from "./_http.ts";

export function searchRoutes(deps: AppDeps): Route[] {
  return [{
    method: "GET",
    path: "/api/search",
    handler: ({ url }) => {
      const q = url.searchParams.get("q") ?? "";
      if (q.length > 500) {
        throw new HttpError(400, "bad_request", "Search text over 500 characters");
      }
      const f = sessionQuery(url, 20, SEARCH_PAGE_MAX);
      const started = performance.now();
      const result = deps.store.search(q, { ...f, text: undefined });
      const ms = Math.round((performance.now() - started) * 10) / 10;
      // While a first import runs, or stored steps wait for the index (core/store/backlog.ts),
      // the index is still being built: say so, and how far.
      const p = deps.importProgress?.();
      const running = p && p.first && p.state !== "idle";
      const indexing = running || result.unindexed
        ? {
          phase: running ? p.state : "indexing",
          percent: running ? p.percent : null,
          files_done: p?.files_done ?? 0,
          files_total: p?.files_total ?? 0,
          unindexed: result.unindexed,
        }
        : null;
      return json({ ...result, q, ms, indexing });
    },
  }];
}
