/**
 * Request protection for a server that must be safe to leave running on a laptop: the Host
 * check (DNS rebinding), the Origin check and the per-install token for state-changing
 * requests. The token lives in a 0600 file in the data folder (runtime/data_dir.ts); the UI
 * page carries it and the guard reads the file.
 */
import { isLoopbackHostname, TOKEN_HEADER } from "../core/security/local_access.ts";
import { HttpError } from "./errors.ts";

export { TOKEN_HEADER };

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Splits `name:port`, keeping IPv6 brackets. */
function splitHost(host: string): { name: string; port: string } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  return m ? { name: m[1], port: m[2] ?? "" } : { name: "", port: "" };
}

/** True when `host` (a Host header value) names this loopback server on its port. */
export function isLoopbackHost(host: string, port: number): boolean {
  const h = splitHost(host);
  return isLoopbackHostname(h.name) && h.port === String(port);
}

/** True when `origin` is an http origin on a loopback name with this server's port. */
export function isLoopbackOrigin(origin: string, port: number): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.protocol === "http:" && isLoopbackHost(url.host, port) &&
    (url.port === String(port));
}

function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The token a request presents, from the token header or a bearer Authorization header. */
export function presentedToken(req: Request): string | null {
  const direct = req.headers.get(TOKEN_HEADER);
  if (direct) return direct.trim();
  const auth = req.headers.get("authorization");
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? m[1] : null;
}

export interface GuardOptions {
  /** The port the server listens on. */
  port: number;
  /** The per-install token. */
  token: string;
}

/**
 * Throws an HttpError when a request must be refused: a Host that is not this loopback server
 * (every request), or for a state-changing method a foreign Origin or a missing/wrong token.
 */
export function checkRequest(req: Request, options: GuardOptions): void {
  const host = req.headers.get("host") ?? new URL(req.url).host;
  if (!isLoopbackHost(host, options.port)) {
    throw new HttpError(
      403,
      "forbidden_host",
      `Refused: Host "${host.slice(0, 100)}" is not this server (127.0.0.1:${options.port})`,
    );
  }
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.get("origin");
  if (origin !== null && !isLoopbackOrigin(origin, options.port)) {
    throw new HttpError(
      403,
      "forbidden_origin",
      `Refused: Origin "${origin.slice(0, 100)}" is not this server`,
    );
  }
  if (req.headers.get("sec-fetch-site") === "cross-site") {
    throw new HttpError(403, "forbidden_origin", "Refused: cross-site request");
  }
  const presented = presentedToken(req);
  if (presented === null) {
    throw new HttpError(401, "missing_token", "Refused: this request needs the install token");
  }
  if (!sameToken(presented, options.token)) {
    throw new HttpError(403, "bad_token", "Refused: the install token does not match");
  }
}
