/** Shapes of the API's answers, as the UI reads them. */
import type { Connection, Operation, SessionInfo } from "../../core/model/types.ts";

export type { Connection, Operation, SessionInfo };

export interface SessionSummary {
  id: string;
  source: string;
  native_id: string;
  project_path: string | null;
  title: string | null;
  first_prompt: string | null;
  started_at: string | null;
  ended_at: string | null;
  op_count: number;
  error_count: number;
}

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

export interface Row {
  seq: number;
  op_id: string;
  connection: string;
  offset_ns: number;
  ts_ms: number | null;
  op: Operation;
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

export interface SearchHit {
  session_id: string;
  op_id: string;
  seq: number;
  kind: string;
  tool: string | null;
  rank: number;
  snippet: { text: string; match: boolean }[];
  session: {
    title: string | null;
    first_prompt: string | null;
    source: string;
    project_path: string | null;
  };
}

export interface Project {
  path: string;
  sessions: number;
  operations: number;
  last_active: string | null;
}
