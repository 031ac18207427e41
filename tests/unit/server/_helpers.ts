/**
 * Shared helpers for the server's in-process tests: a store imported from the real-client
 * fixtures, a request builder that speaks as a loopback browser, and the ONE assertion for the
 * API's error shape.
 */
import assert from "node:assert/strict";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { createApp, type Handler } from "../../../server/app.ts";
import type { AppDeps } from "../../../server/deps.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

export const PORT = 4173;
export const TOKEN = "a".repeat(64);

/** The real-client fixtures: `<repo>/fixtures/realclients` or the shared copy beside the repo. */
export function realClients(): string {
  const repo = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");
  for (const p of [`${repo}/fixtures/realclients`, `${repo}/../shared/fixtures/realclients`]) {
    try {
      if (Deno.statSync(p).isDirectory) return p;
    } catch { /* try the next */ }
  }
  throw new Error("Cannot find fixtures/realclients (looked in the repo and ../shared)");
}

/**
 * A store holding the given fixture scenarios (`claude/s1-basic`, ...) and any other agent
 * homes, imported in process.
 */
export async function fixtureStore(
  scenarios: string[],
  homes: string[] = [],
): Promise<ChronicleStore> {
  const store = ChronicleStore.open(":memory:");
  const root = realClients();
  // the importers' scratch folder (copies of foreign SQLite databases), needed while they run
  await withTempDir("chronicle-test-", async (tempRoot) => {
    const fs = createDenoFs({ tempRoot });
    for (const home of [...scenarios.map((s) => `${root}/${s}/native`), ...homes]) {
      await importAll(store, { env: { home, env: { HOME: home }, platform: "linux" }, fs });
    }
  });
  return store;
}

export function testApp(store: ChronicleStore, extra: Partial<AppDeps> = {}): Handler {
  return createApp({ store, token: TOKEN, port: PORT, version: "test", ...extra });
}

export interface CallOptions {
  body?: unknown;
  /** Host header; default the server's own `127.0.0.1:PORT`. */
  host?: string;
  /** Origin header; default none (like curl); `null` leaves it out explicitly. */
  origin?: string | null;
  /** Token to present (the header); default the right one. `null`: none. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** Calls the handler in process as a loopback client would. */
export function call(
  app: Handler,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  const headers = new Headers(options.headers);
  headers.set("host", options.host ?? `127.0.0.1:${PORT}`);
  if (options.origin) headers.set("origin", options.origin);
  const token = options.token === undefined ? TOKEN : options.token;
  if (token) headers.set("x-chronicle-token", token);
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers.set("content-type", "application/json");
  }
  return app(new Request(`http://127.0.0.1:${PORT}${path}`, { method, headers, body }));
}

/** Calls and parses a JSON answer, asserting the status first. */
export async function callJson<T = Record<string, unknown>>(
  app: Handler,
  method: string,
  path: string,
  status = 200,
  options: CallOptions = {},
): Promise<T> {
  const res = await call(app, method, path, options);
  const text = await res.text();
  assert.equal(res.status, status, `${method} ${path} answered ${res.status}: ${text}`);
  assert(res.headers.get("content-type")?.startsWith("application/json"));
  return JSON.parse(text) as T;
}

/**
 * The one check of the API's error shape: exactly `{ok:false, code, error, status}`, the
 * status matching the HTTP status, a one-line message, JSON content type and the CSP header.
 */
export async function assertApiError(res: Response, status: number, code: string): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${text}`);
  assert(res.headers.get("content-type")?.startsWith("application/json"), "JSON content type");
  assert(res.headers.get("content-security-policy")?.includes("default-src 'none'"), "CSP");
  const body = JSON.parse(text);
  assert.deepEqual(Object.keys(body).sort(), ["code", "error", "ok", "status"]);
  assert.equal(body.ok, false);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert(typeof body.error === "string" && body.error.length > 0 && !body.error.includes("\n"));
}
