/**
 * Types of the canonical session, schema v1. Every importer produces these; storage, export,
 * UI and replay consume them, never an agent's raw format.
 */

export const CANONICAL_SCHEMA_VERSION = 1;

export type { SourceId } from "./agents.ts";
import type { SourceId } from "./agents.ts";

/** Canonical operation kinds: the values of `Operation.kind`. */
export const OPERATION_KINDS = [
  "prompt",
  "reply",
  "thinking",
  "read",
  "search",
  "write",
  "edit",
  "exec",
  "web",
  "task",
  "plan",
  "mcp",
  "other",
  "event",
] as const;
export type OperationKind = typeof OPERATION_KINDS[number];

/** What an operation does to the world: the values of `Operation.effect`. */
export const EFFECTS = ["none", "fs_read", "fs_write", "process", "network", "delegate"] as const;
export type Effect = typeof EFFECTS[number];

/** How much of an operation (or connection) the log holds. */
export const COMPLETENESS = [
  "complete",
  "incomplete",
  "unmatched",
  "truncated",
  "malformed",
  "unsupported",
] as const;
export type Completeness = typeof COMPLETENESS[number];

/** Why replay may not (or not directly) run an operation. */
export const REPLAY_BLOCKERS = [
  "incomplete",
  "continuation_only",
  "out_of_scope",
  "needs_confirmation",
  "missing_payload",
  "unsupported_tool",
] as const;
export type ReplayBlocker = typeof REPLAY_BLOCKERS[number];

/** Connection kinds: the main thread, or a sub-agent. */
export const CONNECTION_KINDS = ["main", "subagent"] as const;
export type ConnectionKind = typeof CONNECTION_KINDS[number];

/** Issue severities. */
export const ISSUE_SEVERITIES = ["info", "warning", "error"] as const;

/**
 * A reference to payload bytes. Content is addressed by SHA-256 and stored once; small or
 * special cases use the other forms.
 */
export type PayloadRef =
  | { sha256: string; size: number }
  | { inline: string }
  | { redacted: true; size?: number; rules?: string[] }
  | { missing: true; reason: string };

/** Where a fact came from: a record (line) and the field read. */
export interface Evidence {
  line?: number;
  field: string;
  file?: string;
}

export interface ClientEndpoint {
  agent: SourceId;
  version?: string;
  entrypoint?: string;
  evidence: Evidence[];
}

export interface ServerEndpoint {
  provider?: string;
  model?: string;
  evidence: Evidence[];
}

export interface Connection {
  id: string;
  kind: ConnectionKind;
  /** The operation (a `task` call) that spawned this sub-agent, when known. */
  parent_op?: string;
  /** The agent type for sub-agents (e.g. "general-purpose"). */
  agent_type?: string;
  client: ClientEndpoint;
  server: ServerEndpoint;
}

export interface SourceRange {
  file: string;
  /** 1-based, inclusive line range. */
  lines: [number, number];
  /** 0-based byte range, end exclusive. */
  bytes: [number, number];
}

export interface OperationProvenance {
  /** Epoch (import pass) that produced the call. */
  epoch: number;
  source_range: SourceRange;
  /** Where the completion (tool result) came from, if any. */
  completion?: { epoch: number; source_range: SourceRange };
  /** Native record ids (e.g. Claude Code uuids) that contributed. */
  record_ids?: string[];
}

export interface ReplayAttributes {
  replayable: boolean;
  blockers: ReplayBlocker[];
}

export interface Usage {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

export interface Operation {
  kind: OperationKind;
  effect: Effect;
  /** The native tool name for tool calls (`Bash`, `apply_patch`, ...). */
  tool?: string;
  /** The native id of the call (tool_use id, call_id, ...). */
  native_id?: string;
  /** The main file or resource this operation touches, as the agent wrote it. */
  target?: string;
  /** Human-readable text for prompts, replies, thinking and events (also indexed). */
  text?: string;
  /** For events: what happened (`compaction`, `summary`, `system`, `title`, ...). */
  event?: string;
  request?: PayloadRef;
  response?: PayloadRef;
  is_error?: boolean;
  completeness: Completeness;
  provenance: OperationProvenance;
  replay: ReplayAttributes;
  /** Model that produced this step, where the record says so. */
  model?: string;
  /** Absolute time of the step in ms since the epoch; absent when the record had none. */
  ts_ms?: number;
  /** A one-line description of a tool call (its command, path or pattern), for lists and search. */
  summary?: string;
  /** The connection (sub-agent) this call spawned, when known. */
  spawns?: string;
  /** Injected context (system reminders, environment blocks): not the user's own words. */
  injected?: boolean;
  /**
   * Copied from the parent thread's history when this sub-agent was forked from it: shown for
   * context, not a step of this thread.
   */
  inherited?: boolean;
  extensions?: Record<string, unknown>;
}

export interface TimelineEntry {
  seq: number;
  op: string;
  connection: string;
  offset_ns: number;
}

export interface LossWindow {
  epoch: number;
  file: string;
  lines: [number, number];
  bytes: [number, number];
  reason: string;
}

export interface JsonlCheckpoint {
  kind: "jsonl";
  file: string;
  inode: number | null;
  size: number;
  mtime_ms: number | null;
  offset: number;
  /** SHA-256 of the bytes just before `offset` (up to 4 KiB), to detect replaced files. */
  tail_sha256: string;
  line: number;
  /**
   * The pass stopped before the file's end on purpose (a big log is imported a slice at a
   * time, `ImportContext.maxPassBytes`): the next pass reads on from `offset`, whatever the stat.
   */
  more?: true;
}

export interface SqliteCheckpoint {
  kind: "sqlite";
  file: string;
  db_mtime_ms: number | null;
  db_size: number;
  wal_mtime_ms: number | null;
  wal_size: number;
  row_counts?: Record<string, number>;
  /**
   * The read stopped before the database's end on purpose (a big database is read in parts of
   * whole sessions, `ImportContext.maxPassBytes`): the next part reads on after the key
   * `after`, while the database is as these stats say; `held` are the sessions this read's
   * parts have held so far.
   */
  more?: { after: string; held: string[] };
}

export type Checkpoint = JsonlCheckpoint | SqliteCheckpoint;

export interface Epoch {
  ordinal: number;
  imported_at: string;
  checkpoints: Checkpoint[];
}

export type IssueSeverity = typeof ISSUE_SEVERITIES[number];

export interface SessionIssue {
  code: string;
  message: string;
  severity: IssueSeverity;
  file?: string;
  line?: number;
  count?: number;
}

export interface Recording {
  id: string;
  source: SourceId;
  source_paths: string[];
  pipeline_version: string;
}

export interface SessionInfo {
  id: string;
  native_id: string;
  source: SourceId;
  title?: string;
  project: { path?: string; git?: { branch?: string; commit?: string; repository?: string } };
  started_at?: string;
  ended_at?: string;
  last_prompt?: string;
  /**
   * The canonical id of the session this one continues: a resumed session written apart
   * from (or after) the one it resumed, or a fork of it.
   */
  continues?: string;
}

export interface CanonicalSession {
  schema_version: typeof CANONICAL_SCHEMA_VERSION;
  recording: Recording;
  session: SessionInfo;
  connections: Connection[];
  timeline: TimelineEntry[];
  operations: Record<string, Operation>;
  completeness: {
    connections: Record<string, Completeness>;
    operations: Record<string, Completeness>;
  };
  provenance: { epochs: Epoch[]; loss_windows: LossWindow[] };
  usage: { by_model: Record<string, Usage> };
  issues: SessionIssue[];
  extensions: Record<string, unknown>;
}
