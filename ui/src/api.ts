/**
 * The UI's one door to the server: JSON calls and the error shape. The browser's HttpOnly
 * cookie (set when the owner opened the URL `chronicle serve` printed) authorises every call;
 * the page never sees the token.
 */

/** An API error, carrying the server's `{code, error, status}`. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
    this.name = "ApiError";
  }
}

export interface RequestOptions {
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  body?: unknown;
  signal?: AbortSignal;
}

/** Calls a JSON endpoint; throws ApiError with the server's message on failure. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, "bad_response", `The server answered ${res.status}: not JSON`);
  }
  if (!res.ok) {
    const e = data as { code?: string; error?: string } | null;
    throw new ApiError(res.status, e?.code ?? "error", e?.error ?? `HTTP ${res.status}`);
  }
  return data as T;
}

/** A plain-text answer; ApiError `code`, "Cannot load the `what`", when it fails. */
async function plainText(path: string, code: string, what: string): Promise<string> {
  const res = await fetch(path);
  if (!res.ok) throw new ApiError(res.status, code, `Cannot load the ${what} (${res.status})`);
  return await res.text();
}

/** A payload's full text (for "show all"). */
export const payloadText = (sha256: string): Promise<string> =>
  plainText(`/api/payloads/${sha256}`, "payload", "payload");

/** An operation's whole own text (a long prompt's, reply's or thinking's "show all"). */
export const operationText = (sessionId: string, opId: string): Promise<string> =>
  plainText(
    `/api/sessions/${encodeURIComponent(sessionId)}/text${qs({ op: opId })}`,
    "text",
    "text",
  );

/** Query string from an object, skipping empty values. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}
