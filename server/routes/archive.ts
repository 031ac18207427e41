/**
 * The archive: forgetting a session and the exclude list. Both write, so (like every request
 * that is not GET) they pass the token and loopback-Origin checks of auth.ts before reaching
 * here. A real forget must repeat the session's id in `confirm`: a stray or replayed request
 * with another body cannot delete anything.
 */
import type { ExcludeList } from "../../core/archive/mod.ts";
import type { AppDeps, ArchiveService } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import { readJson, type Route } from "./_http.ts";

function service(deps: AppDeps): ArchiveService {
  if (!deps.archive) throw new HttpError(503, "unavailable", "The archive is not available here");
  return deps.archive;
}

/** The `list` field of a body: `{paths: string[], projects: string[]}`, checked by the service. */
function listOf(body: Record<string, unknown>): ExcludeList {
  const list = body.list;
  if (typeof list !== "object" || list === null || Array.isArray(list)) {
    throw new HttpError(400, "bad_request", 'Field "list" must be an object {paths, projects}');
  }
  return list as ExcludeList;
}

export function archiveRoutes(deps: AppDeps): Route[] {
  const { store } = deps;
  return [
    {
      method: "GET",
      path: "/api/archive/exclude",
      handler: async () => json(await service(deps).readExclude()),
    },
    {
      method: "POST",
      path: "/api/archive/exclude",
      handler: async ({ req }) => {
        const body = await readJson(req);
        if (typeof body.etag !== "string") {
          throw new HttpError(
            400,
            "bad_request",
            'Field "etag" must be the tag the list was read with',
          );
        }
        return json(await service(deps).writeExclude(listOf(body), body.etag));
      },
    },
    {
      method: "GET",
      path: "/api/archive/forgotten",
      handler: () => json({ items: service(deps).forgotten() }),
    },
    {
      method: "POST",
      path: "/api/sessions/:id/forget",
      handler: async ({ req, params }) => {
        const archive = service(deps);
        const body = await readJson(req);
        if (!store.getSession(params.id)) {
          throw new HttpError(404, "not_found", `No session "${params.id.slice(0, 200)}"`);
        }
        const dryRun = body.dry_run === true;
        if (!dryRun && body.confirm !== params.id) {
          throw new HttpError(
            400,
            "bad_request",
            'Forgetting cannot be undone: field "confirm" must repeat the session\'s id',
          );
        }
        return json(await archive.forget(params.id, { dry_run: dryRun }));
      },
    },
  ];
}
