/**
 * Replay mode's API: open a replay of a session (Chronicle picks the sandbox folder; a request
 * naming a path is refused), its plan and results, a step's preview, running a step (shell
 * steps only with `confirm: true`), the sandbox's files, and the final comparison.
 */
import { ChronicleError } from "../../core/model/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import { readJson, type Route } from "./_http.ts";

function service(deps: AppDeps) {
  if (!deps.replay) throw new HttpError(503, "unavailable", "Replay is not available here");
  return deps.replay;
}

/** A path the sandbox refused becomes a 400 that says why; anything else passes through. */
async function refusing<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof ChronicleError && e.code === "outside") {
      throw new HttpError(400, "bad_request", `Refused: ${e.message}`);
    }
    throw e;
  }
}

function seqOf(raw: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw new HttpError(400, "bad_request", "A step is a number");
  return Number(raw);
}

export function replayRoutes(deps: AppDeps): Route[] {
  return [
    {
      method: "POST",
      path: "/api/sessions/:id/replays",
      handler: async ({ req, params }) => {
        const body = await readJson(req);
        const extra = Object.keys(body);
        if (extra.length) {
          throw new HttpError(
            400,
            "bad_request",
            `Replay takes no options (got ${extra.slice(0, 5).join(", ")}): Chronicle chooses ` +
              "the sandbox folder under its data folder and seeds it from the project's history",
          );
        }
        return json(await service(deps).start(params.id), { status: 201 });
      },
    },
    {
      method: "GET",
      path: "/api/replays/:rid",
      handler: async ({ params }) => json(await service(deps).view(params.rid)),
    },
    {
      method: "GET",
      path: "/api/replays/:rid/steps/:seq/preview",
      handler: async ({ params }) =>
        json(await service(deps).preview(params.rid, seqOf(params.seq))),
    },
    {
      method: "POST",
      path: "/api/replays/:rid/steps/:seq",
      handler: async ({ req, params }) => {
        const body = await readJson(req);
        for (const k of Object.keys(body)) {
          if (k !== "confirm") throw new HttpError(400, "bad_request", `Unknown field "${k}"`);
        }
        if (body.confirm !== undefined && typeof body.confirm !== "boolean") {
          throw new HttpError(400, "bad_request", `Field "confirm" must be true or false`);
        }
        return json(
          await service(deps).step(params.rid, seqOf(params.seq), {
            confirm: body.confirm === true,
          }),
        );
      },
    },
    {
      method: "GET",
      path: "/api/replays/:rid/files",
      handler: async ({ params }) => json({ files: await service(deps).files(params.rid) }),
    },
    {
      method: "GET",
      path: "/api/replays/:rid/file",
      handler: async ({ url, params }) => {
        const path = url.searchParams.get("path") ?? "";
        if (!path || path.length > 4096) {
          throw new HttpError(400, "bad_request", "path is required");
        }
        const f = await refusing(service(deps).file(params.rid, path));
        if (!f) {
          throw new HttpError(404, "not_found", `No file ${path.slice(0, 200)} in the sandbox`);
        }
        return json(f);
      },
    },
    {
      method: "POST",
      path: "/api/replays/:rid/compare",
      handler: async ({ params }) => json({ final: await service(deps).compare(params.rid) }),
    },
  ];
}
