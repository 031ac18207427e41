/** Projects, the session list, one session, its timeline (paged) and its payloads. */
import { computeStats } from "../../core/analytics/mod.ts";
import type { Connection, Operation, PayloadRef, SessionInfo } from "../../core/model/mod.ts";
import type { ChronicleStore, TimelineItem } from "../../core/store/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json, SECURITY_HEADERS } from "../errors.ts";
import { intParam, type Route, sessionQuery } from "./_http.ts";

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

function row(store: ChronicleStore, item: TimelineItem): TimelineRow {
  const op: Operation = item.op;
  const inputMax = op.kind === "write" || op.kind === "edit" ? DIFF_TEXT_CHARS : ROW_TEXT_CHARS;
  return {
    ...item,
    input: payloadText(store, op.request, inputMax),
    result: payloadText(store, op.response, ROW_TEXT_CHARS),
  };
}

function requireSession(store: ChronicleStore, id: string) {
  const s = store.getSession(id);
  if (!s) throw new HttpError(404, "not_found", `No session "${id.slice(0, 200)}"`);
  return s;
}

/** A connection as the API shows it: `parent_guessed` when the log did not name the parent. */
export type ConnectionView = Connection & { parent_guessed?: boolean };

/**
 * The session's connections. A sub-agent whose log does not name the task call that spawned
 * it is attached to the latest unclaimed task call of the main thread before its first step.
 */
function connectionsOf(store: ChronicleStore, id: string): ConnectionView[] {
  const conns: ConnectionView[] = (store.db.prepare(
    "SELECT doc FROM connections WHERE session_id = ? ORDER BY id = 'main' DESC, id",
  ).all(id) as { doc: string }[]).map((r) => JSON.parse(r.doc) as Connection);
  const orphans = conns.filter((c) => c.kind === "subagent" && !c.parent_op);
  if (!orphans.length) return conns;
  const claimed = new Set(conns.map((c) => c.parent_op).filter(Boolean));
  const tasks = store.db.prepare(
    `SELECT op_id, ts_ms FROM operations WHERE session_id = ? AND kind = 'task'
     AND connection IN (SELECT id FROM connections WHERE session_id = ? AND
       json_extract(doc, '$.kind') = 'main') ORDER BY ts_ms, rank, line, block`,
  ).all(id, id) as { op_id: string; ts_ms: number | null }[];
  const firstAt = store.db.prepare(
    "SELECT min(ts_ms) AS t FROM operations WHERE session_id = ? AND connection = ?",
  );
  const order = orphans
    .map((c) => ({ c, t: (firstAt.all(id, c.id)[0] as { t: number | null }).t ?? Infinity }))
    .sort((a, b) => a.t - b.t);
  for (const { c, t } of order) {
    const candidates = tasks.filter((k) => !claimed.has(k.op_id) && (k.ts_ms ?? -Infinity) <= t);
    const parent = candidates[candidates.length - 1];
    if (!parent) continue;
    claimed.add(parent.op_id);
    c.parent_op = parent.op_id;
    c.parent_guessed = true;
  }
  return conns;
}

/** Position of an operation within its connection's timeline, in the store's order. */
function indexInConnection(store: ChronicleStore, sessionId: string, opId: string, all: boolean) {
  const row = store.db.prepare(
    `SELECT o.connection AS connection, (SELECT count(*) FROM operations p
       WHERE p.session_id = o.session_id ${all ? "" : "AND p.connection = o.connection"} AND
       (coalesce(p.ts_ms, -1e300), p.rank, p.line, p.block) <
       (coalesce(o.ts_ms, -1e300), o.rank, o.line, o.block)) AS idx
     FROM operations o WHERE o.session_id = ? AND o.op_id = ?`,
  ).get(sessionId, opId) as { connection: string; idx: number } | undefined;
  return row ?? null;
}

/** The one main connection whose timeline the session view shows, or null for "all". */
function mainConnection(conns: Connection[]): string | null {
  const mains = conns.filter((c) => c.kind === "main");
  return mains.length === 1 && conns.length > 1 ? mains[0].id : null;
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
        const summary = requireSession(store, params.id);
        const info = store.db.prepare("SELECT info FROM sessions WHERE id = ?").get(params.id) as {
          info: string;
        };
        const connections = connectionsOf(store, params.id);
        const count = (table: string) =>
          (store.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE session_id = ?`).get(
            params.id,
          ) as { n: number }).n;
        return json({
          session: summary,
          info: JSON.parse(info.info) as SessionInfo,
          connections,
          main_connection: mainConnection(connections),
          issues: count("session_issues"),
          loss_windows: count("loss_windows"),
        });
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
          connection = mainConnection(connectionsOf(store, params.id)) ?? undefined;
        }
        const page = store.timeline(params.id, {
          offset: intParam(url, "offset", 0, 0, 100_000_000),
          limit: intParam(url, "limit", 100, 1, 500),
          connection,
        });
        return json({ total: page.total, items: page.items.map((i) => row(store, i)) });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/locate",
      handler: ({ params, url }) => {
        requireSession(store, params.id);
        const opId = url.searchParams.get("op");
        if (!opId) throw new HttpError(400, "bad_request", 'Query parameter "op" is required');
        const conns = connectionsOf(store, params.id);
        const byId = new Map(conns.map((c) => [c.id, c]));
        const main = mainConnection(conns);
        // From the operation up through the task calls that spawned its sub-agents.
        const chain: { op_id: string; connection: string; index: number }[] = [];
        let current: string | undefined = opId;
        for (let depth = 0; current && depth < 16; depth++) {
          const conn = store.db.prepare(
            "SELECT connection FROM operations WHERE session_id = ? AND op_id = ?",
          ).get(params.id, current) as { connection: string } | undefined;
          if (!conn) break;
          const nested = conn.connection !== main && byId.get(conn.connection)?.kind === "subagent";
          const at = indexInConnection(store, params.id, current, main === null && !nested);
          if (!at) break;
          chain.unshift({ op_id: current, connection: at.connection, index: at.idx });
          current = nested ? byId.get(conn.connection)?.parent_op : undefined;
        }
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
        const stats = computeStats(
          store.db,
          { session_id: params.id },
          (sha, n) => store.payloadHead(sha, n),
        );
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
        const headers = new Headers(SECURITY_HEADERS);
        // Always plain text: a payload is data, never a page the browser could run.
        headers.set("content-type", "text/plain; charset=utf-8");
        headers.set("content-disposition", "inline");
        headers.set("cache-control", "private, max-age=31536000, immutable");
        return new Response(bytes as Uint8Array<ArrayBuffer>, { headers });
      },
    },
  ];
}
