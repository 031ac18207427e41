/**
 * The browser UI's files, read from `ui/dist` next to this module (the layout `deno compile
 * --include ui/dist` keeps), served with a strict Content-Security-Policy. The page carries no
 * token: the browser's cookie (auth.ts) authorises its requests.
 */
import { errorResponse, SECURITY_HEADERS } from "./errors.ts";

/** Where the built UI lives by default: `<repo>/ui/dist`. */
export const DEFAULT_UI_DIR = `${import.meta.dirname}/../ui/dist`;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".ico": "image/x-icon",
  ".png": "image/png",
  ".woff2": "font/woff2",
};

export interface StaticOptions {
  /** Folder holding index.html and assets/. Default {@link DEFAULT_UI_DIR}. */
  dir?: string;
  /** Reads a file; defaults to Deno.readFile (tests inject files). */
  readFile?: (path: string) => Promise<Uint8Array>;
}

export type StaticHandler = (req: Request, pathname: string) => Promise<Response>;

/**
 * Serves `/assets/*` from the dist folder and index.html for every other path (client-side
 * routes such as `/sessions/<id>`). Files are read once and kept in memory.
 */
export function createStatic(options: StaticOptions = {}): StaticHandler {
  const dir = options.dir ?? DEFAULT_UI_DIR;
  const readFile = options.readFile ?? ((p: string) => Deno.readFile(p));
  const cache = new Map<string, Uint8Array>();

  const load = async (rel: string): Promise<Uint8Array | null> => {
    const hit = cache.get(rel);
    if (hit) return hit;
    try {
      const bytes = await readFile(`${dir}/${rel}`);
      cache.set(rel, bytes);
      return bytes;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return null;
      throw e;
    }
  };

  return async (req, pathname) => {
    let rel = "index.html";
    if (pathname.startsWith("/assets/")) {
      rel = pathname.slice(1);
      if (!/^assets\/[A-Za-z0-9._-]+$/.test(rel) || rel.includes("..")) {
        return errorResponse(404, "not_found", `No asset at ${pathname.slice(0, 200)}`);
      }
    } else if (pathname === "/favicon.ico" || pathname === "/favicon.svg") {
      rel = "assets/favicon.svg";
    }
    const bytes = await load(rel);
    if (!bytes) {
      if (rel === "index.html") {
        return errorResponse(
          503,
          "unavailable",
          "The UI is not built: run `deno task build:ui`",
        );
      }
      return errorResponse(404, "not_found", `No asset at ${pathname.slice(0, 200)}`);
    }
    const ext = rel.slice(rel.lastIndexOf("."));
    const headers = new Headers(SECURITY_HEADERS);
    headers.set("content-type", TYPES[ext] ?? "application/octet-stream");
    headers.set("cache-control", rel === "index.html" ? "no-store" : "no-cache");
    return new Response(req.method === "HEAD" ? null : bytes as Uint8Array<ArrayBuffer>, {
      headers,
    });
  };
}
