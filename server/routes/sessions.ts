/** Projects, the session list, one session, its timeline (paged) and its payloads. */
import { cutBytes, type Operation, type PayloadRef, storedCutBytes } from "../../core/model/mod.ts";
import type { ChronicleStore, SessionMarks, TimelineItem } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json, SECURITY_HEADERS } from "../errors.ts";
import { intParam, readJson, type Route, sessionQuery } from "./_http.ts";

/** Characters of a tool input / result sent with each timeline row; the rest on demand. */
export const ROW_TEXT_CHARS = 6_000;
/** Inputs of file writes and edits are sent larger, so diffs are usually complete. */
export const DIFF_TEXT_CHARS = 200_000;

/** A timeline row as the UI gets it: the operation plus the opening of its payloads. */
export interface TimelineRow extends TimelineItem {
  input?: PayloadText;
  result?: PayloadText;
}

export interface PayloadText {
  text: string;
  /** Bytes of the whole payload, when known. */
  size: number | null;
  truncated: boolean;
  /** Fetch the whole payload from `/api/payloads/<sha256>`. */
  sha256?: string;
  /**
   * Bytes the import cut out of the payload (its log's line was too long to keep whole), as its
   * marks say: only on a `truncated` operation's payloads that hold a mark.
   */
  cut_bytes?: number;
}

function payloadText(store: ChronicleStore, ref: PayloadRef | undefined, max: number) {
  if (!ref) return undefined;
  if ("redacted" in ref) return { text: "[redacted]", size: ref.size ?? null, truncated: false };
  if ("missing" in ref) {
    return { text: `[missing: ${ref.reason}]`, size: null, truncated: false };
  }
  const text = store.payloadText(ref, max + 1);
  if (text === null) return { text: "[payload not in store]", size: null, truncated: false };
  const truncated = text.length > max;
  const out: PayloadText = {
    text: truncated ? text.slice(0, max) : text,
    size: "sha256" in ref ? ref.size : text.length,
    truncated,
  };
  if ("sha256" in ref) out.sha256 = ref.sha256;
  return out;
}

/**
 * A truncated operation's payload with what its cut marks say went (a cut payload is at most
 * `MAX_CUT_BYTES`: read whole, for these rare rows only).
 */
function withCut(store: ChronicleStore, ref: PayloadRef | undefined, out: PayloadText | undefined) {
  if (!out?.sha256) return out; // redacted, missing or not stored: nothing was cut
  const cut = out.truncated
    ? storedCutBytes(out.size, () => store.payloadText(ref))
    : cutBytes(out.text);
  return cut ? { ...out, cut_bytes: cut } : out;
}

/** A timeline item with the openings of its input and result: what the UI renders. */
export function timelineRow(store: ChronicleStore, item: TimelineItem): TimelineRow {
  const op: Operation = item.op;
  const inputMax = op.kind === "write" || op.kind === "edit" ? DIFF_TEXT_CHARS : ROW_TEXT_CHARS;
  const input = payloadText(store, op.request, inputMax);
  const result = payloadText(store, op.response, ROW_TEXT_CHARS);
  if (op.completeness !== "truncated") return { ...item, input, result };
  return {
    ...item,
    input: withCut(store, op.request, input),
    result: withCut(store, op.response, result),
  };
}

function requireSession(store: ChronicleStore, id: string) {
  const s = store.getSession(id);
  if (!s) throw new HttpError(404, "not_found", `No session "${id.slice(0, 200)}"`);
  return s;
}

/** The operation a request names (`?op=`). */
function opParam(url: URL): string {
  const opId = url.searchParams.get("op");
  if (!opId) throw new HttpError(400, "bad_request", 'Query parameter "op" is required');
  return opId;
}

/** A text the log holds, as plain text: data, never a page the browser could run. */
function plainText(body: string | Uint8Array<ArrayBuffer>, cache: string): Response {
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("content-type", "text/plain; charset=utf-8");
  headers.set("content-disposition", "inline");
  headers.set("cache-control", cache);
  return new Response(body, { headers });
}

export type { ConnectionView } from "../../core/store/mod.ts";

/** A PATCH body as marks: only `title` (a string or null) and `starred` (a boolean). */
function sessionMarks(body: Record<string, unknown>): SessionMarks {
  const extra = Object.keys(body).filter((k) => k !== "title" && k !== "starred");
  if (extra.length) {
    throw new HttpError(
      400,
      "bad_request",
      `Unknown field "${extra[0].slice(0, 40)}" (title, starred)`,
    );
  }
  const marks: SessionMarks = {};
  if ("title" in body) {
    if (body.title !== null && typeof body.title !== "string") {
      throw new HttpError(400, "bad_request", 'Field "title" must be a string or null');
    }
    marks.title = body.title;
  }
  if ("starred" in body) {
    if (typeof body.starred !== "boolean") {
      throw new HttpError(400, "bad_request", 'Field "starred" must be true or false');
    }
    marks.starred = body.starred;
  }
  if (!Object.keys(marks).length) {
    throw new HttpError(400, "bad_request", 'Nothing to change: send "title" or "starred"');
  }
  return marks;
}

export function sessionRoutes(deps: AppDeps): Route[] {
  const { store } = deps;
  return [
    { method: "GET", path: "/api/projects", handler: () => json({ items: store.projects() }) },
    {
      method: "GET",
      path: "/api/sessions",
      handler: ({ url }) => json(store.listSessions(sessionQuery(url))),
    },
    {
      method: "GET",
      path: "/api/sessions/:id",
      handler: ({ params }) => {
        const detail = store.sessionDetail(params.id);
        if (!detail) {
          throw new HttpError(404, "not_found", `No session "${params.id.slice(0, 200)}"`);
        }
        return json(detail);
      },
    },
    {
      // What the user marks on a session: `{title?: string | null, starred?: boolean}` (an
      // empty or null title clears the name). Answers the session's summary after.
      method: "PATCH",
      path: "/api/sessions/:id",
      handler: async ({ req, params }) => {
        const marks = sessionMarks(await readJson(req));
        const session = store.markSession(params.id, marks);
        if (!session) {
          throw new HttpError(404, "not_found", `No session "${params.id.slice(0, 200)}"`);
        }
        // Other tabs: a live view of the session is sent its summary, every list reloads.
        deps.live?.changed([params.id], { live: false });
        deps.events?.publish("session", { id: params.id });
        return json({ session });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/timeline",
      handler: ({ params, url }) => {
        requireSession(store, params.id);
        // ":main" names the thread the session view shows, so the UI can ask for page one
        // before it knows the session's connections.
        let connection = url.searchParams.get("connection") || undefined;
        if (connection === ":main") {
          connection = store.mainConnection(params.id) ?? undefined;
        }
        // Read first: a live view started from it misses nothing written after the page.
        const stamp = store.changeClock();
        const page = store.timeline(params.id, {
          offset: intParam(url, "offset", 0, 0, 100_000_000),
          limit: intParam(url, "limit", 100, 1, 500),
          connection,
          // a pasted log as a prompt: its opening, the rest from /text (`text_bytes`)
          textChars: ROW_TEXT_CHARS,
        });
        return json({
          total: page.total,
          items: page.items.map((i) => timelineRow(store, i)),
          stamp,
        });
      },
    },
    {
      // An operation's whole own text (prompt, reply, thinking), which its timeline row gives
      // the opening of when it is long (`text_bytes`): plain text, as a payload is.
      method: "GET",
      path: "/api/sessions/:id/text",
      handler: ({ params, url }) => {
        requireSession(store, params.id);
        const opId = opParam(url);
        const text = store.operationText(params.id, opId);
        if (text === null) {
          const name = `"${opId.slice(0, 200)}"`;
          throw new HttpError(
            404,
            "not_found",
            store.seqOf(params.id, opId) === null
              ? `No operation ${name} here`
              : `Operation ${name} has no text, or its text cannot be read (chronicle doctor checks the store)`,
          );
        }
        return plainText(text, "no-store"); // (a live session's text may be written again)
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/locate",
      handler: ({ params, url }) => {
        requireSession(store, params.id);
        const opId = opParam(url);
        const chain = store.locate(params.id, opId);
        if (!chain.length) {
          throw new HttpError(404, "not_found", `No operation "${opId.slice(0, 200)}" here`);
        }
        return json({ chain });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/stats",
      handler: ({ params }) => {
        const summary = requireSession(store, params.id);
        const stats = store.stats({ session_id: params.id });
        const start = summary.started_at ? Date.parse(summary.started_at) : stats.first_ms;
        const end = summary.ended_at ? Date.parse(summary.ended_at) : stats.last_ms;
        return json({
          ...stats,
          duration_ms: start !== null && end !== null && !Number.isNaN(start - end)
            ? Math.max(0, end - start)
            : null,
        });
      },
    },
    {
      method: "GET",
      path: "/api/payloads/:sha256",
      handler: ({ params }) => {
        if (!/^[0-9a-f]{64}$/.test(params.sha256)) {
          throw new HttpError(400, "bad_request", "A payload id is 64 hex characters");
        }
        const bytes = store.payload(params.sha256);
        if (!bytes) throw new HttpError(404, "not_found", `No payload ${params.sha256}`);
        return plainText(bytes as Uint8Array<ArrayBuffer>, "private, max-age=31536000, immutable");
      },
    },
  ];
}
