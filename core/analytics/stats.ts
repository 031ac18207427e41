/**
 * The shapes of statistics over stored operations: tool distribution, operation kinds,
 * activity per day, errors and token usage per model. The store computes them
 * (`ChronicleStore.stats`); errors are the operations whose stored error flag is set, decided
 * once at import by the one error heuristic (`isErrorResult`), so the numbers match what
 * the session view marks.
 */
/** Which operations to count. Every field is optional; none means the whole store. */
export interface StatsFilter {
  /** Only sessions of this project path. */
  project?: string;
  /** Only sessions of this agent. */
  source?: string;
  /** Only this session. */
  session_id?: string;
  /** ISO date or timestamp: operations at or after it. */
  from?: string;
  /** ISO date or timestamp: operations on or before it (a bare date includes the whole day). */
  to?: string;
}

export interface ToolCount {
  tool: string;
  kind: string;
  count: number;
  errors: number;
}
export interface DayActivity {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  operations: number;
  sessions: number;
  errors: number;
}
export interface ModelTokens {
  model: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}
/** A model's tokens on one UTC day (what per-day costs are estimated from). */
export interface DayModelTokens extends ModelTokens {
  day: string;
}
/** A model's tokens in one project ('' for sessions without one). */
export interface ProjectModelTokens extends ModelTokens {
  project: string;
}
export interface FileTouch {
  path: string;
  reads: number;
  writes: number;
}

export interface Stats {
  sessions: number;
  operations: number;
  /** Operations per kind, most frequent first. */
  kinds: { kind: string; count: number }[];
  /** Tool calls per native tool name, most frequent first. */
  tools: ToolCount[];
  activity: DayActivity[];
  /** Tool results judged errors by `isErrorResult` at import. */
  errors: number;
  tokens: ModelTokens[];
  /** Tokens per UTC day and model, by day. */
  tokens_by_day: DayModelTokens[];
  /** Tokens per project and model. */
  tokens_by_project: ProjectModelTokens[];
  /** Files read or written, most touched first (at most 200). */
  files: FileTouch[];
  /** How many files were read or written in all (`files` lists the 200 most touched). */
  files_touched: number;
  /** Earliest and latest operation time in ms, when any operation has one. */
  first_ms: number | null;
  last_ms: number | null;
}
