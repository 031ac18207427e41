/** Small helpers the route modules share: the route table type, query and body parsing. */
import type { SessionQuery } from "../../core/store/mod.ts";
import { HttpError } from "../errors.ts";

export interface RouteContext {
  req: Request;
  url: URL;
  params: Record<string, string>;
}

export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** URLPattern pathname, e.g. `/api/sessions/:id`. */
  path: string;
  handler: (ctx: RouteContext) => Promise<Response> | Response;
}

const MAX_BODY = 1 << 20;

/**
 * Reads a request body of at most `max` bytes. The limit holds while the body streams: a
 * chunked body without a Content-Length is cut off at the first chunk past it, never buffered.
 */
export async function readBodyText(req: Request, max = MAX_BODY): Promise<string> {
  const tooBig = () =>
    new HttpError(413, "payload_too_large", `Request body over ${Math.round(max / 1024)} KiB`);
  const length = Number(req.headers.get("content-length") ?? 0);
  if (length > max) throw tooBig();
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooBig();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** Parses a JSON object body (at most 1 MiB, enforced while it streams); anything else is a 400. */
export async function readJson(req: Request): Promise<Record<string, unknown>> {
  const text = await readBodyText(req);
  let value: unknown;
  try {
    value = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw new HttpError(400, "bad_request", "Request body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "bad_request", "Request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** An integer query parameter within [min, max], or the default when absent. */
export function intParam(url: URL, name: string, def: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return def;
  if (!/^-?\d+$/.test(raw)) {
    throw new HttpError(400, "bad_request", `Query parameter "${name}" must be an integer`);
  }
  const n = Number(raw);
  if (n < min || n > max) {
    throw new HttpError(400, "bad_request", `Query parameter "${name}" must be ${min}..${max}`);
  }
  return n;
}

function dateParam(url: URL, name: string): string | undefined {
  const raw = url.searchParams.get(name);
  if (!raw) return undefined;
  if (Number.isNaN(Date.parse(raw))) {
    throw new HttpError(400, "bad_request", `Query parameter "${name}" must be an ISO date`);
  }
  return raw;
}

function str(url: URL, name: string): string | undefined {
  const v = url.searchParams.get(name);
  return v === null || v === "" ? undefined : v;
}

const SORTS = ["started_at", "ended_at", "op_count", "title"] as const;

/** A yes/no query parameter: `1`/`true`, `0`/`false`, or absent (false). */
function flagParam(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  if (v === null || v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw new HttpError(400, "bad_request", `Query parameter "${name}" must be 1 or 0`);
}

/**
 * The session filters shared by the list and search: source, project, text, from, to,
 * starred, sort; and paging, `limit` from 1 to `maxLimit`.
 */
export function sessionQuery(url: URL, defaultLimit = 50, maxLimit = 500): SessionQuery {
  const sort = str(url, "sort");
  if (sort !== undefined && !(SORTS as readonly string[]).includes(sort)) {
    throw new HttpError(400, "bad_request", `Query parameter "sort" must be one of ${SORTS}`);
  }
  const order = str(url, "order");
  if (order !== undefined && order !== "asc" && order !== "desc") {
    throw new HttpError(400, "bad_request", `Query parameter "order" must be asc or desc`);
  }
  return {
    source: str(url, "source"),
    project: str(url, "project"),
    text: str(url, "text"),
    from: dateParam(url, "from"),
    to: dateParam(url, "to"),
    starred: flagParam(url, "starred"),
    sort: sort as SessionQuery["sort"],
    order: order as SessionQuery["order"],
    limit: intParam(url, "limit", defaultLimit, 1, maxLimit),
    offset: intParam(url, "offset", 0, 0, 10_000_000),
  };
}

/** A required non-empty string field of a JSON body. */
export function bodyString(body: Record<string, unknown>, name: string, max = 10_000): string {
  const v = body[name];
  if (typeof v !== "string" || v.trim() === "") {
    throw new HttpError(400, "bad_request", `Field "${name}" must be a non-empty string`);
  }
  if (v.length > max) throw new HttpError(400, "bad_request", `Field "${name}" is too long`);
  return v;
}
