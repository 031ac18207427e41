/**
 * Request protection for a server that must be safe to leave running on a shared machine: only
 * its owner can use it. Every request passes the Host check (DNS rebinding); every route, reads
 * and the page included, needs the per-install token (the 0600 file in the data folder), except
 * the paths in `PUBLIC_PATHS`; state-changing requests also need a loopback Origin (when sent)
 * and must not be cross-site.
 *
 * How the token comes: scripts send it in the `x-chronicle-token` header or as a bearer token;
 * the browser gets it once, in the URL `chronicle serve` prints (`/?token=...`), which the
 * server trades for an HttpOnly, SameSite=Strict cookie and a redirect to the clean URL (the way
 * Jupyter does). The cookie holds a value derived from the token, never the token itself, and
 * no response ever contains the token.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { isLoopbackHostname, TOKEN_HEADER } from "../core/security/local_access.ts";
import { HttpError, SECURITY_HEADERS } from "./errors.ts";

export { TOKEN_HEADER };

/**
 * The only paths reachable without the install token (the Host check still applies): share
 * pages, `/share/<token>`, whose own random token is the credential (core/shares; the route
 * answers GET only).
 */
export const PUBLIC_PATHS: readonly RegExp[] = [/^\/share\/[^/]*$/];

/** The query parameter the printed URL carries the token in. */
export const TOKEN_PARAM = "token";

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

function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The token a request presents, from the token header or a bearer Authorization header. */
export function presentedToken(req: Request): string | null {
  const direct = req.headers.get(TOKEN_HEADER);
  if (direct) return direct.trim();
  const auth = req.headers.get("authorization");
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? m[1] : null;
}

/** The cookie's name: one per port, so two servers on one machine do not overwrite each other. */
export function cookieName(port: number): string {
  return `chronicle_${port}`;
}

/** The cookie's value: derived from the token (HMAC), so the token itself is never sent back. */
export function cookieValue(token: string): string {
  return createHmac("sha256", token).update("chronicle browser session v1").digest("hex");
}

function cookieOf(req: Request, name: string): string | null {
  const header = req.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export interface GuardOptions {
  /** The port the server listens on. */
  port: number;
  /** The per-install token. */
  token: string;
  /** Paths reachable without the token. Default `PUBLIC_PATHS`. */
  publicPaths?: readonly RegExp[];
}

/** What a request that passed the checks may do next. */
export type Admission =
  | { kind: "ok" }
  /** The printed URL with the right token: set the cookie, redirect to `location`. */
  | { kind: "sign_in"; location: string; cookie: string };

function refuse(path: string, status: 401 | 403, code: "missing_token" | "bad_token", why: string) {
  return new HttpError(status, code, why, { cause: { page: !path.startsWith("/api/") } });
}

/**
 * Decides a request: throws an HttpError when it must be refused (a Host that is not this
 * loopback server; no or a wrong token; for a state-changing method a foreign Origin or a
 * cross-site fetch), else says whether it is the sign-in URL.
 */
export function checkRequest(req: Request, options: GuardOptions): Admission {
  const host = req.headers.get("host") ?? new URL(req.url).host;
  if (!isLoopbackHost(host, options.port)) {
    throw new HttpError(
      403,
      "forbidden_host",
      `Refused: Host "${host.slice(0, 100)}" is not this server (127.0.0.1:${options.port})`,
    );
  }
  const url = new URL(req.url);
  if (!SAFE_METHODS.has(req.method)) {
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
  }
  if ((options.publicPaths ?? PUBLIC_PATHS).some((re) => re.test(url.pathname))) {
    return { kind: "ok" };
  }

  // the printed URL: /?token=... on a page, traded for the cookie
  const fromUrl = url.searchParams.get(TOKEN_PARAM);
  if (fromUrl !== null && (req.method === "GET" || req.method === "HEAD")) {
    if (!url.pathname.startsWith("/api/") && sameSecret(fromUrl, options.token)) {
      url.searchParams.delete(TOKEN_PARAM);
      return {
        kind: "sign_in",
        location: url.pathname + url.search,
        cookie: `${cookieName(options.port)}=${cookieValue(options.token)}; HttpOnly; ` +
          "SameSite=Strict; Path=/",
      };
    }
    throw refuse(url.pathname, 403, "bad_token", "Refused: the token in the URL does not match");
  }

  const presented = presentedToken(req);
  if (presented !== null) {
    if (sameSecret(presented, options.token)) return { kind: "ok" };
    throw refuse(url.pathname, 403, "bad_token", "Refused: the install token does not match");
  }
  const cookie = cookieOf(req, cookieName(options.port));
  if (cookie !== null && sameSecret(cookie, cookieValue(options.token))) return { kind: "ok" };
  throw refuse(
    url.pathname,
    401,
    "missing_token",
    "Refused: this request needs the install token (open the URL `chronicle open` prints)",
  );
}

/** The 303 that sets the cookie and drops the token from the address bar. */
export function signInResponse(admission: { location: string; cookie: string }): Response {
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("location", admission.location || "/");
  headers.set("set-cookie", admission.cookie);
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 303, headers });
}

/** The small page a browser gets without the token: how to open Chronicle. */
export function signInPage(status: number, message: string): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chronicle: open it from your terminal</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}
code{background:#8882;padding:.1em .3em;border-radius:3px}</style></head>
<body><h1>Open Chronicle from your terminal</h1>
<p>This Chronicle server only answers its owner. Run <code>chronicle open</code> (or look at what
<code>chronicle serve</code> printed) and open the address it gives: it carries this
installation's token, which your browser then keeps in a cookie.</p>
<p>${status === 403 ? "The token this page was opened with does not match." : ""}</p>
<!-- ${message.replace(/--/g, "- -")} --></body></html>
`;
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("cache-control", "no-store");
  return new Response(html, { status, headers });
}
