/**
 * @module
 * The PreToolUse hook program Claude Code runs before each tool call. It reads the hook payload
 * on stdin, asks the running Chronicle server for a decision and, on `block`, prints the reason
 * on stderr and exits 2 (Claude Code then refuses the call and shows Claude the reason).
 *
 * It fails open: no server, a slow one (3 s), an error status or an answer that is not the
 * expected JSON all end in exit 0 with nothing on stdout. It needs only loopback network, the
 * token file and three environment variables (HOME, CHRONICLE_HOME, CHRONICLE_URL); it imports
 * nothing else so it compiles to a small binary.
 */

import { isLoopbackHostname, TOKEN_HEADER } from "../core/security/local_access.ts";

/** The guard never keeps the agent waiting longer than this. */
export const GUARD_TIMEOUT_MS = 3000;
export const DEFAULT_URL = "http://127.0.0.1:4173";

export interface GuardDeps {
  env(name: string): string | undefined;
  readStdin(): Promise<string>;
  readTextFile(path: string): Promise<string>;
  fetch: typeof fetch;
  stderr(text: string): void;
}

function tokenPath(env: GuardDeps["env"]): string | null {
  const home = env("CHRONICLE_HOME");
  if (home) return `${home.replace(/\/+$/, "")}/token`;
  const h = env("HOME");
  return h ? `${h.replace(/\/+$/, "")}/.chronicle/token` : null;
}

/** Only loopback servers: the guard never sends a tool call anywhere else. */
export function loopbackUrl(base: string): URL | null {
  try {
    const url = new URL("/api/security/pretooluse", base);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return isLoopbackHostname(url.hostname) ? url : null;
  } catch {
    return null;
  }
}

function safeEnv(env: GuardDeps["env"], name: string): string | undefined {
  try {
    return env(name);
  } catch {
    return undefined; // not permitted: treat as unset
  }
}

/**
 * Runs the hook once and returns the exit code: 2 to block, 0 for everything else. Never
 * throws, never writes to stdout.
 */
export async function runGuard(deps: GuardDeps, signal?: AbortSignal): Promise<number> {
  try {
    const env = (name: string) => safeEnv(deps.env, name);
    const payload = JSON.parse(await deps.readStdin());
    if (!payload || typeof payload !== "object" || typeof payload.tool_name !== "string") return 0;
    if (payload.hook_event_name !== undefined && payload.hook_event_name !== "PreToolUse") return 0;
    const url = loopbackUrl(env("CHRONICLE_URL") || DEFAULT_URL);
    if (!url) return 0;
    let token = "";
    const path = tokenPath(env);
    if (path) {
      try {
        token = (await deps.readTextFile(path)).trim();
      } catch {
        token = "";
      }
    }
    const body = JSON.stringify({
      tool_name: payload.tool_name,
      tool_input: payload.tool_input ?? {},
      cwd: payload.cwd,
      session_id: payload.session_id,
    });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token) headers[TOKEN_HEADER] = token;
    const res = await deps.fetch(url, { method: "POST", headers, body, signal });
    if (!res.ok) {
      await res.body?.cancel();
      return 0;
    }
    const answer = JSON.parse(await res.text());
    if (!answer || answer.decision !== "block") return 0;
    const reason = typeof answer.reason === "string" && answer.reason.trim()
      ? answer.reason.trim()
      : "Chronicle blocked this tool call: it would read or send a secret.";
    deps.stderr(reason + "\n");
    return 2;
  } catch {
    return 0;
  }
}

if (import.meta.main) {
  // One deadline for everything (stdin, token, request, response): past it, allow the call.
  const deadline = setTimeout(() => Deno.exit(0), GUARD_TIMEOUT_MS);
  Deno.unrefTimer(deadline);
  const controller = new AbortController();
  const abort = setTimeout(() => controller.abort(), GUARD_TIMEOUT_MS - 100);
  Deno.unrefTimer(abort);
  const code = await runGuard({
    env: (name) => Deno.env.get(name),
    readStdin: () => new Response(Deno.stdin.readable).text(),
    readTextFile: (path) => Deno.readTextFile(path),
    fetch,
    stderr: (text) => void Deno.stderr.writeSync(new TextEncoder().encode(text)),
  }, controller.signal);
  Deno.exit(code);
}
