/**
 * Where GitHub Copilot CLI keeps its sessions: `$COPILOT_HOME` (default `~/.copilot`), then
 * `session-state/<session id>/events.jsonl` (1.0: one folder per session, beside its
 * `workspace.yaml`, checkpoints and file snapshots) or `session-state/<session id>.jsonl`
 * (the earlier flat layout, the same events).
 */
import type { DiscoverEnv } from "../types.ts";
import { basename, joinPath } from "../_import_kit.ts";

/** `$COPILOT_HOME`, else `~/.copilot`. */
export function copilotHome(env: DiscoverEnv): string {
  const v = env.env.COPILOT_HOME?.trim();
  if (!v) return joinPath(env.home, ".copilot");
  return v === "~" ? env.home : v.startsWith("~/") ? joinPath(env.home, v.slice(2)) : v;
}

/** The session id a file's place names, or undefined for a file Copilot CLI does not write. */
export function sessionOfPath(path: string): string | undefined {
  const segs = path.split("/");
  const name = basename(path);
  if (name === "events.jsonl" && segs.at(-3) === "session-state") return segs.at(-2);
  if (name.endsWith(".jsonl") && segs.at(-2) === "session-state") {
    return name.slice(0, -".jsonl".length);
  }
  return undefined;
}

/** The `workspace.yaml` beside a session's events (1.0 layout only). */
export function workspaceOf(path: string): string | undefined {
  return basename(path) === "events.jsonl"
    ? path.replace(/events\.jsonl$/, "workspace.yaml")
    : undefined;
}

/**
 * The session name `workspace.yaml` holds when the user named it (`user_named: true`); the
 * CLI's own default name is the first prompt, which Chronicle titles from anyway. Only these
 * two top-level `key: value` lines are read (no YAML library for two scalars).
 */
export function userNameOf(yaml: string): string | undefined {
  const scalar = (key: string) => {
    const m = new RegExp(`^${key}:[ \\t]*(.*)$`, "m").exec(yaml);
    if (!m) return undefined;
    const v = m[1].trim();
    if (v.startsWith('"')) {
      try {
        return String(JSON.parse(v));
      } catch {
        return undefined;
      }
    }
    return v.startsWith("'") && v.endsWith("'") ? v.slice(1, -1).replaceAll("''", "'") : v;
  };
  return scalar("user_named") === "true" ? scalar("name") || undefined : undefined;
}
