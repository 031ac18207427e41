/** Shapes of the API's answers, as the UI reads them. */
import type { Connection, Operation, SessionInfo } from "../../core/model/types.ts";
import type {
  ConnectionView,
  ProjectSummary as Project,
  SearchHit,
  SearchResult,
  SessionDetail,
  SessionSummary,
  TimelineItem,
} from "../../core/store/types.ts";
import type { Stats as StoreStats } from "../../core/analytics/stats.ts";

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
}

export interface PayloadText {
  text: string;
  size: number | null;
  truncated: boolean;
  sha256?: string;
}

/** A timeline item as the API sends it, with its input and result text when asked for. */
export interface Row extends TimelineItem {
  input?: PayloadText;
  result?: PayloadText;
}

/** Analytics as the API sends them; a session's stats add its duration. */
export interface Stats extends StoreStats {
  duration_ms?: number | null;
}
