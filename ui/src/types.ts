/** Shapes of the API's answers, as the UI reads them. */
import type { Connection, Operation, SessionInfo } from "../../core/model/types.ts";
import type {
  ConnectionView,
  ProjectSummary as Project,
  SearchHit,
  SearchResult,
  SessionDetail,
  SessionSummary,
} from "../../core/store/types.ts";
import type { Stats as StoreStats } from "../../core/analytics/stats.ts";
import type { TimelineRow } from "../../server/routes/sessions.ts";

export type {
  Connection,
  ConnectionView,
  Operation,
  Project,
  SearchHit,
  SearchResult,
  SessionDetail,
  SessionInfo,
  SessionSummary,
};

export interface Page<T> {
  total: number;
  items: T[];
  /** Timeline pages: the change stamp they were read at (where a live view starts). */
  stamp?: number;
}

/** A changed step from a live stream: a timeline row and its place in its own thread. */
export interface LiveRow extends Row {
  index: number;
}

/** `event: ops` of `/api/sessions/:id/live`. */
export interface LiveEventOps {
  ops: LiveRow[];
  totals: { all: number; connections: Record<string, number> };
  more: boolean;
}

/** `event: session`: the session's detail, and when the server last saw it written. */
export type LiveEventSession = SessionDetail & {
  live: { last_change_at: number | null; server_now: number };
};

/** A payload's opening as a timeline row carries it: the server's own type. */
export type { PayloadText } from "../../server/routes/sessions.ts";

/** A timeline item as the API sends it, with its input and result text when asked for. */
export type Row = TimelineRow;

/** Analytics as the API sends them; a session's stats add its duration. */
export interface Stats extends StoreStats {
  duration_ms?: number | null;
}
