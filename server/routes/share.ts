/**
 * Share pages and the API behind the share / export dialog. `GET /share/<token>` renders the
 * frozen, redacted document server-side (no script, strict CSP, `noindex`); every refused token
 * (unknown, expired, revoked, malformed) gets the same 404 page after the same work. It is the
 * one path reachable without the install token (see `TOKEN_EXEMPT` in auth.ts). The API lists,
 * creates and revokes shares, previews what redaction finds, and downloads Markdown / HTML.
 */
import {
  DOCUMENT_FORMATS,
  documentChunks,
  type DocumentFormat,
  documentInTurns,
  type DocumentOptions,
  EXPORT_CSP,
  extensionOf,
  type SteppedDocument,
  textStream,
} from "../../core/export/mod.ts";
import { RuleStore } from "../../core/security/mod.ts";
import {
  createShare,
  DEFAULT_SHARE_DAYS,
  listShares,
  openSharedDocument,
  revokeShare,
  SHARE_NOT_FOUND_PAGE,
  SHARE_PATH,
  type ShareDeps,
  sharePageChunks,
  type ShareRow,
  shareState,
} from "../../core/shares/mod.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { errorResponse, HttpError, json, SECURITY_HEADERS } from "../errors.ts";
import { readJson, type Route } from "./_http.ts";
import { pagedTurns } from "../../core/paged.ts";
import { oneAtATime } from "../session_work.ts";

/** Headers of every share page, found or not. */
export const SHARE_HEADERS: Readonly<Record<string, string>> = {
  ...SECURITY_HEADERS,
  "content-security-policy": `${EXPORT_CSP}; frame-ancestors 'none'`,
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-robots-tag": "noindex, nofollow, noarchive",
};

const NOT_FOUND_BYTES = new TextEncoder().encode(SHARE_NOT_FOUND_PAGE);

function shareDeps(store: ChronicleStore, now?: () => number): ShareDeps {
  return { records: store.shareTable, now: now ? () => new Date(now()) : undefined };
}

/** Serves `GET /share/<token>`. */
export function createSharePages(deps: AppDeps): (req: Request, url: URL) => Response {
  const shares = shareDeps(deps.store, deps.now);
  return (req, url) => {
    if (req.method !== "GET") {
      const r = errorResponse(405, "method_not_allowed", "A share page answers GET only");
      r.headers.set("allow", "GET");
      return r;
    }
    const opened = openSharedDocument(shares, url.pathname.slice(SHARE_PATH.length));
    if (!opened) {
      return new Response(NOT_FOUND_BYTES.slice(), { status: 404, headers: SHARE_HEADERS });
    }
    // streamed a step at a time as it is read: a big session's share is never held whole
    return new Response(textStream(sharePageChunks(opened)), {
      status: 200,
      headers: SHARE_HEADERS,
    });
  };
}

/**
 * The work of building a session's redacted document, a page at a time with the event loop's
 * turns between (core/paged.ts's `pagedTurns`): a session of tens of thousands of steps takes
 * seconds, and the server answers other requests meanwhile. Run in the session work's turn.
 */
function documentWork(
  store: ChronicleStore,
  id: string,
  options: DocumentOptions,
): () => Promise<SteppedDocument> {
  return async () => {
    const doc = await documentInTurns(store, id, {
      ...options,
      rules: new RuleStore(store.ruleTable).active(),
      turn: pagedTurns(),
    });
    if (!doc) throw new HttpError(404, "not_found", `No session "${id.slice(0, 200)}"`);
    return doc;
  };
}

function flag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  return v === "1" || v === "true";
}

/** What the dialog shows before a share or export: counts and masked samples, never secrets. */
function preview(doc: SteppedDocument) {
  return { session_id: doc.session.id, title: doc.session.title, redaction: doc.redaction };
}

/** A download name from the title: letters, digits and dashes. */
function fileName(doc: SteppedDocument, format: DocumentFormat): string {
  const base = doc.session.title.normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "").slice(0, 60).toLowerCase() || "session";
  return base + extensionOf(format);
}

export function shareRoutes(deps: AppDeps): Route[] {
  const { store } = deps;
  const shares = shareDeps(store, deps.now);
  const now = () => new Date(deps.now?.() ?? Date.now());
  const view = (row: ShareRow) => ({ ...row, state: shareState(row, now()) });
  // one whole session's document at a time (server/session_work.ts)
  const work = deps.sessionWork ?? oneAtATime();
  return [
    {
      method: "GET",
      path: "/api/sessions/:id/redaction",
      handler: async ({ params, url }) =>
        json(
          preview(
            await work.run(
              documentWork(store, params.id, {
                now,
                thinking: flag(url, "thinking"),
                summaryOnly: true,
              }),
              { room: true },
            ),
          ),
        ),
    },
    {
      method: "GET",
      path: "/api/sessions/:id/export",
      handler: async ({ params, url }) => {
        const format = url.searchParams.get("format") ?? "html";
        if (!(DOCUMENT_FORMATS as readonly string[]).includes(format)) {
          throw new HttpError(
            400,
            "bad_request",
            `Unknown format "${format.slice(0, 20)}" (md, html)`,
          );
        }
        // built and streamed in one turn of the session work: the next heavy piece starts once
        // the download is rendered, or its reader stops reading
        const turn = await work.hold(
          documentWork(store, params.id, { now, thinking: flag(url, "thinking") }),
          { room: true },
        );
        const doc = turn.value;
        const f = format as DocumentFormat;
        const headers = new Headers(SECURITY_HEADERS);
        headers.set(
          "content-type",
          f === "md" ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8",
        );
        headers.set("content-disposition", `attachment; filename="${fileName(doc, f)}"`);
        headers.set("cache-control", "no-store");
        // A download, never a page of this origin: the policy of an export page applies anyway.
        headers.set("content-security-policy", `${EXPORT_CSP}; frame-ancestors 'none'; sandbox`);
        // streamed as it is rendered: the Markdown of a 35,000-step session is 54 MB
        return new Response(
          textStream(documentChunks(doc, f), { pull: turn.touch, end: turn.release }),
          { headers },
        );
      },
    },
    {
      method: "GET",
      path: "/api/shares",
      handler: ({ url }) => {
        const session = url.searchParams.get("session") ?? undefined;
        return json({ items: listShares(shares, { sessionId: session }).map(view) });
      },
    },
    {
      method: "POST",
      path: "/api/sessions/:id/shares",
      handler: async ({ params, req }) => {
        const body = await readJson(req);
        const days = body.days === undefined ? DEFAULT_SHARE_DAYS : body.days;
        if (typeof days !== "number") {
          throw new HttpError(400, "bad_request", 'Field "days" must be a number');
        }
        // its document built and packed in one turn of the session work
        const { doc, created } = await work.run(async () => {
          const doc = await documentWork(store, params.id, {
            now,
            thinking: body.thinking === true,
          })();
          return { doc, created: createShare(shares, doc, { days }) };
        }, { room: true });
        return json({
          share: view(created.share),
          path: created.path,
          redaction: doc.redaction,
        }, { status: 201 });
      },
    },
    {
      method: "DELETE",
      path: "/api/shares/:id",
      handler: ({ params }) => {
        const row = revokeShare(shares, params.id);
        return json({ share: view(row) });
      },
    },
  ];
}
