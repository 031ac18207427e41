/**
 * The API's one error shape, built here and nowhere else:
 * `{ ok: false, code, error, status }`.
 */

/** Stable codes a client may branch on. */
export type ApiErrorCode =
  | "bad_request"
  | "forbidden_host"
  | "forbidden_origin"
  | "missing_token"
  | "bad_token"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "payload_too_large"
  | "unavailable"
  | "internal";

export interface ApiErrorBody {
  ok: false;
  code: ApiErrorCode;
  error: string;
  status: number;
}

/** Thrown by route handlers; the app turns it into the JSON error response. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  constructor(status: number, code: ApiErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
  }
}

/** Headers every response carries: transcript content is data, never markup or a frame. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** A JSON response with the security headers and no caching. */
export function json(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set("cache-control", "no-store");
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) headers.set(k, v);
  return new Response(JSON.stringify(data), { ...init, headers });
}

/** The JSON error response for a status, code and one-line message. */
export function errorResponse(status: number, code: ApiErrorCode, message: string): Response {
  const body: ApiErrorBody = { ok: false, code, error: message, status };
  return json(body, { status });
}

/** Any thrown value as an error response; unexpected errors become a 500 without internals. */
export function toErrorResponse(e: unknown): Response {
  if (e instanceof HttpError) return errorResponse(e.status, e.code, e.message);
  const err = e as { name?: string; code?: string; message?: string };
  if (err?.name === "ChronicleError") {
    const map: Record<string, [number, ApiErrorCode]> = {
      not_found: [404, "not_found"],
      usage: [400, "bad_request"],
      invalid_session: [400, "bad_request"],
      conflict: [409, "conflict"],
      invalid_config: [400, "bad_request"],
      forbidden: [403, "forbidden_origin"],
      locked: [503, "unavailable"],
    };
    const [status, code] = map[err.code ?? ""] ?? [500, "internal"];
    return errorResponse(status, code, err.message ?? "Request failed");
  }
  if (e instanceof URIError) return errorResponse(400, "bad_request", "Malformed percent-encoding");
  if (e instanceof RangeError || e instanceof SyntaxError || e instanceof TypeError) {
    if (e instanceof TypeError && !/^(Cannot|Invalid|Expected)/.test(e.message)) {
      return errorResponse(500, "internal", "Internal error: " + e.message);
    }
    return errorResponse(400, "bad_request", e.message);
  }
  return errorResponse(500, "internal", "Internal error: " + String(err?.message ?? e));
}
