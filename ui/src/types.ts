/** Shapes of the API's answers, as the UI reads them. */
import type { Connection, Operation, SessionInfo } from "../../core/model/types.ts";
import type {
  ProjectSummary as Project,
  SearchHit,
  SessionSummary,
  TimelineItem,
} from "../../core/store/store.ts";

export type { Connection, Operation, Project, SearchHit, SessionInfo, SessionSummary };

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

export type ConnectionView = Connection & { parent_guessed?: boolean };

export interface SessionDetail {
  session: SessionSummary;
  info: SessionInfo;
  connections: ConnectionView[];
  main_connection: string | null;
  issues: number;
  loss_windows: number;
}

export interface Stats {
  sessions: number;
  operations: number;
  kinds: { kind: string; count: number }[];
  tools: { tool: string; kind: string; count: number; errors: number }[];
  activity: { day: string; operations: number; sessions: number; errors: number }[];
  errors: number;
  tokens: {
    model: string;
    input: number;
    output: number;
    cache_read: number;
    cache_write: number;
  }[];
  files: { path: string; reads: number; writes: number }[];
  first_ms: number | null;
  last_ms: number | null;
  duration_ms?: number | null;
}
