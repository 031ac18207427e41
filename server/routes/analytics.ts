/**
 * Analytics per project and overall: tools, kinds, activity per day, errors, tokens. Results
 * are cached until the store changes (any write through this connection or another), since
 * they scan every operation of the selection.
 */
import type { Stats } from "../../core/analytics/mod.ts";
import type { AppDeps } from "../deps.ts";
import { json } from "../errors.ts";
import { type Route, sessionQuery } from "./_http.ts";

const CACHE_SIZE = 32;

export function analyticsRoutes(deps: AppDeps): Route[] {
  const cache = new Map<string, Stats>();
  return [{
    method: "GET",
    path: "/api/analytics",
    handler: ({ url }) => {
      const q = sessionQuery(url);
      const filter = { project: q.project, source: q.source, from: q.from, to: q.to };
      const key = `${deps.store.changeStamp()}|${JSON.stringify(filter)}`;
      let stats = cache.get(key);
      if (!stats) {
        stats = deps.store.stats(filter);
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(key, stats);
      }
      return json(stats);
    },
  }];
}
