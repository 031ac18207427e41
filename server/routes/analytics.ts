/**
 * Analytics per project and overall: tools, kinds, activity per day, errors, tokens. Results
 * are cached until the store changes (any write through this connection or another), since
 * they scan every operation of the selection.
 */
import { computeStats, type Stats } from "../../core/analytics/mod.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { json } from "../errors.ts";
import { type Route, sessionQuery } from "./_http.ts";

const CACHE_SIZE = 32;

/** Changes whenever the store's content may have changed. */
function storeVersion(store: ChronicleStore): string {
  const dv = store.db.prepare("PRAGMA data_version").get() as { data_version: number };
  const tc = store.db.prepare("SELECT total_changes() AS n").get() as { n: number };
  return `${dv.data_version}:${tc.n}`;
}

export function analyticsRoutes(deps: AppDeps): Route[] {
  const cache = new Map<string, Stats>();
  return [{
    method: "GET",
    path: "/api/analytics",
    handler: ({ url }) => {
      const q = sessionQuery(url);
      const filter = { project: q.project, source: q.source, from: q.from, to: q.to };
      const key = `${storeVersion(deps.store)}|${JSON.stringify(filter)}`;
      let stats = cache.get(key);
      if (!stats) {
        stats = computeStats(deps.store.db, filter, (sha, n) => deps.store.payloadHead(sha, n));
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(key, stats);
      }
      return json(stats);
    },
  }];
}
