/**
 * What a Codex CLI import pass keeps for the next one (plain JSON, versioned), and the token
 * arithmetic of its usage records.
 */
import type { Evidence, SessionInfo, Usage } from "../../model/types.ts";
import type { DraftRecord, Json } from "../_import_kit.ts";
import { num, shortHash } from "../_import_kit.ts";
import type { Signal } from "./output.ts";

export const MAIN = "main";

/**
 * The connection a spawned thread is, in its parent's session: named by its task path
 * (`/root/inspect`, what the spawn call's output and the thread's session_meta both say), or by
 * its thread id when it has none (what the older collab_agent_spawn_end event says).
 */
export function threadConnection(threadId: string, path?: string): string {
  return path ? `thread:${path}` : `thread-${threadId}`;
}
/** Version of `CodexState`: a saved state of another version is dropped, the file read again. */
export const STATE_VERSION = 2;
/** How many recent call ids and mirror texts the state remembers across passes. */
export const MAX_CALLS = 512;
export const MAX_MIRRORS = 64;

export interface Mirror {
  key: string;
  op: string;
  order: DraftRecord["order"];
  sources: string[];
}

export interface CodexState {
  v: number;
  sid: string | null;
  /**
   * The file is being read from its start in slices: what it lacks (endpointIssues) is said
   * once the last slice is read, as one pass over the whole file says it.
   */
  endpointsDue?: true;
  meta: {
    cwd?: string;
    version?: string;
    originator?: string;
    provider?: string;
    git?: SessionInfo["project"]["git"];
    started?: string;
    evidence: { version?: Evidence; provider?: Evidence };
    metaIds: string[];
    forkedFrom?: string;
    /** Set when this rollout is a thread another one spawned (a sub-agent). */
    parent?: { thread: string; path?: string; nickname?: string; role?: string };
  };
  /** Reading the parent's history a forked thread starts with (its copied prefix). */
  inherited: boolean;
  models: string[];
  modelEvidence: Evidence[];
  model: string | null;
  lastTs: number | null;
  /** Open (incomplete) operations by op id, re-emitted when their result arrives. */
  open: Record<string, DraftRecord>;
  /** Recent call ids -> op ids (an apply_patch call has one op per file). */
  calls: Record<string, string[]>;
  callOrder: string[];
  signals: Record<string, Signal>;
  mirrors: Mirror[];
  tokens: Record<string, number> | null;
  tokenSig: string | null;
  /**
   * Known record types read without an operation of their own (mirrors, deltas, bookkeeping),
   * counted by `record`, `response_item:<type>` or `event_msg:<type>`. Absent in older state.
   */
  skipped?: Record<string, number>;
}

export function freshState(): CodexState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: { evidence: {}, metaIds: [] },
    inherited: false,
    models: [],
    modelEvidence: [],
    model: null,
    lastTs: null,
    open: {},
    calls: {},
    callOrder: [],
    signals: {},
    mirrors: [],
    tokens: null,
    tokenSig: null,
    skipped: {},
  };
}

export const USAGE_KEYS = [
  "input_tokens",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "output_tokens",
  "reasoning_output_tokens",
  "total_tokens",
];

/** Canonical usage from an OpenAI-style usage object (input excludes cached reads). */
export function openaiUsage(u: Json): Usage {
  const input = num(u.input_tokens) ?? num(u.prompt) ?? 0;
  const cached = num(u.cached_input_tokens) ?? 0;
  return {
    input: Math.max(0, input - cached),
    output: num(u.output_tokens) ?? num(u.completion) ?? 0,
    cache_read: cached,
    cache_write: num(u.cache_write_input_tokens) ?? 0,
  };
}

export const isZero = (u: Usage) => u.input + u.output + u.cache_read + u.cache_write === 0;

/** A short key for a mirrored text (state keeps keys, not whole prompts): 53-bit hash + length. */
export function mirrorKey(text: string): string {
  return `${shortHash(text)}:${text.length}`;
}
