/**
 * Security: custom rules (CRUD and toggle), the security check of a session or of all, the
 * interceptions log (what the guard, deciding on its own, journaled) and the opt-in hook
 * install.
 */
import type { AppDeps, SecurityService } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import { bodyString, intParam, readJson, type Route } from "./_http.ts";

function engine(deps: AppDeps): SecurityService {
  if (!deps.security) {
    throw new HttpError(503, "unavailable", "The security engine is not available in this build");
  }
  return deps.security;
}

function action(body: Record<string, unknown>): "redact" | "allow" {
  const a = body.action ?? "redact";
  if (a !== "redact" && a !== "allow") {
    throw new HttpError(400, "bad_request", 'Field "action" must be "redact" or "allow"');
  }
  return a;
}

export function securityRoutes(deps: AppDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/security/rules",
      handler: () => json({ items: engine(deps).listRules() }),
    },
    {
      method: "POST",
      path: "/api/security/rules",
      handler: async ({ req }) => {
        const body = await readJson(req);
        const pattern = bodyString(body, "pattern", 1000);
        const name = typeof body.name === "string" && body.name.trim()
          ? body.name.trim().slice(0, 200)
          : pattern.slice(0, 60);
        const rule = engine(deps).addRule({ name, pattern, action: action(body) });
        return json({ ok: true, rule }, { status: 201 });
      },
    },
    {
      method: "PATCH",
      path: "/api/security/rules/:id",
      handler: async ({ req, params }) => {
        const body = await readJson(req);
        if (typeof body.enabled !== "boolean") {
          throw new HttpError(400, "bad_request", 'Field "enabled" must be true or false');
        }
        return json({ ok: true, rule: engine(deps).setRuleEnabled(params.id, body.enabled) });
      },
    },
    {
      method: "DELETE",
      path: "/api/security/rules/:id",
      handler: ({ params }) => {
        engine(deps).deleteRule(params.id);
        return json({ ok: true });
      },
    },
    {
      method: "POST",
      path: "/api/security/check",
      handler: async ({ req }) => {
        const body = await readJson(req);
        const sessionId = body.session_id;
        if (sessionId !== undefined && typeof sessionId !== "string") {
          throw new HttpError(400, "bad_request", 'Field "session_id" must be a string');
        }
        // what `chronicle show` accepts (an id, a native id, a unique prefix); else 404, or
        // 400 naming the candidates
        const resolved = sessionId === undefined
          ? undefined
          : deps.store.requireSessionId(sessionId.slice(0, 200));
        const limit = typeof body.limit === "number"
          ? Math.min(Math.max(body.limit, 1), 10_000)
          : 500;
        return json(await engine(deps).check({ session_id: resolved, limit }));
      },
    },
    {
      method: "GET",
      path: "/api/security/interceptions",
      handler: ({ url }) =>
        json(
          engine(deps).interceptions({
            limit: intParam(url, "limit", 100, 1, 1000),
            offset: intParam(url, "offset", 0, 0, 100_000_000),
          }),
        ),
    },
    {
      method: "GET",
      path: "/api/security/guard",
      handler: async () => json(await engine(deps).guardStatus()),
    },
    {
      method: "POST",
      path: "/api/security/guard/install",
      handler: async ({ req }) => {
        const body = await readJson(req);
        return json(await engine(deps).installGuard({ dry_run: body.dry_run === true }));
      },
    },
    {
      method: "POST",
      path: "/api/security/guard/uninstall",
      handler: async ({ req }) => {
        const body = await readJson(req);
        return json(await engine(deps).uninstallGuard({ dry_run: body.dry_run === true }));
      },
    },
  ];
}
