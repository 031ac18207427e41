/**
 * What one import pass of one source unit contributes to one session. Importers emit deltas;
 * the store merges them (idempotently) and `assembleSession` turns merged parts back into a
 * canonical session. The delta is the seam between capture and storage.
 */
import type {
  CanonicalSession,
  Checkpoint,
  Completeness,
  Connection,
  Epoch,
  LossWindow,
  Operation,
  SessionInfo,
  SessionIssue,
  TimelineEntry,
  Usage,
} from "./types.ts";
import { CANONICAL_SCHEMA_VERSION } from "./types.ts";

/** Deterministic order of an operation: time first, then source order. */
export interface OrderKey {
  /** Absolute ms since the epoch; null when no record before it had a time. */
  ts_ms: number | null;
  /** 0 for the session's main file, 1.. for other files (sub-agents). */
  rank: number;
  line: number;
  block: number;
}

export interface OperationRecord {
  id: string;
  connection: string;
  order: OrderKey;
  op: Operation;
}

/** Token usage of one model response, keyed so repeated lines count once. */
export interface UsageEntry {
  key: string;
  model: string;
  usage: Usage;
}

export interface SessionDelta {
  /** Canonical session id: `<source>:<native id>`. */
  session_id: string;
  /** The file this delta was read from (ops, issues and loss windows are owned by it). */
  file: string;
  /** Fields learned in this pass; absent fields leave the stored value as it is. */
  info: Partial<SessionInfo> & Pick<SessionInfo, "id" | "native_id" | "source">;
  /** True when this file is the session's main record (its title and project win). */
  primary: boolean;
  connections: Connection[];
  /** New operations and operations completed or changed in this pass. */
  operations: OperationRecord[];
  usage: UsageEntry[];
  loss_windows: LossWindow[];
  issues: SessionIssue[];
  extensions?: Record<string, unknown>;
}

/** Everything stored about a session, ready to be assembled. */
export interface SessionParts {
  info: SessionInfo;
  recording: CanonicalSession["recording"];
  connections: Connection[];
  operations: OperationRecord[];
  usage: UsageEntry[];
  epochs: Epoch[];
  loss_windows: LossWindow[];
  issues: SessionIssue[];
  extensions: Record<string, unknown>;
}

/**
 * The canonical order of operations, written once: these fields in turn, each ascending, an
 * untimed operation (`ts_ms` null) before every timed one. `compareOrder` reads it here; the
 * store sorts by the same list (`OP_ORDER`, SQLite also puts NULL first).
 */
export const ORDER_FIELDS = ["ts_ms", "rank", "line", "block"] as const satisfies readonly (
  keyof OrderKey
)[];

/** Compares two order keys by {@link ORDER_FIELDS}. */
export function compareOrder(a: OrderKey, b: OrderKey): number {
  for (const f of ORDER_FIELDS) {
    const x = a[f] ?? -Infinity, y = b[f] ?? -Infinity;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The timeline of operations in canonical order (`sorted`): each one's position, thread and
 * time from the session's start (its first timed operation's, else `info.started_at`; 0 when
 * unknown).
 */
export function timelineOf(
  sorted: readonly Pick<OperationRecord, "id" | "connection" | "order">[],
  info: Pick<SessionInfo, "started_at">,
): TimelineEntry[] {
  const startMs = sorted.find((o) => o.order.ts_ms !== null)?.order.ts_ms ??
    (info.started_at ? Date.parse(info.started_at) : null);
  return sorted.map((rec, seq) => ({
    seq,
    op: rec.id,
    connection: rec.connection,
    offset_ns: offsetNs(rec.order.ts_ms, startMs),
  }));
}

/** A step's time from its session's start, in nanoseconds; 0 when either is unknown. */
export function offsetNs(tsMs: number | null, startMs: number | null): number {
  return tsMs !== null && startMs !== null ? Math.max(0, Math.round((tsMs - startMs) * 1e6)) : 0;
}

/**
 * A session's completeness, counted from its operations in canonical order: each operation's
 * own, and each thread's: complete until one of its operations is not ("unmatched" when that
 * one is unmatched, else "incomplete").
 */
export function completenessTally(connections: readonly Pick<Connection, "id">[]): {
  add(rec: { id: string; connection: string; op: Pick<Operation, "completeness"> }): void;
  readonly value: CanonicalSession["completeness"];
} {
  const ops: Record<string, Completeness> = {};
  const conns: Record<string, Completeness> = {};
  for (const c of connections) conns[c.id] = "complete";
  return {
    add({ id, connection, op }) {
      ops[id] = op.completeness;
      if (op.completeness !== "complete" && conns[connection] === "complete") {
        conns[connection] = op.completeness === "unmatched" ? "unmatched" : "incomplete";
      }
    },
    value: { connections: conns, operations: ops },
  };
}

/** Builds the canonical session from stored parts: the timeline is derived, never stored twice. */
export function assembleSession(parts: SessionParts): CanonicalSession {
  const ops = [...parts.operations].sort((a, b) => compareOrder(a.order, b.order));
  const timeline = timelineOf(ops, parts.info);
  const operations: CanonicalSession["operations"] = {};
  const completeness = completenessTally(parts.connections);
  for (const rec of ops) {
    operations[rec.id] = rec.op;
    completeness.add(rec);
  }
  const connections = withSpawners(parts.connections, ops.map((r) => [r.id, r.op.spawns]));
  const byModel: Record<string, Usage> = {};
  for (const u of parts.usage) {
    const sum = byModel[u.model] ??= { input: 0, output: 0, cache_read: 0, cache_write: 0 };
    sum.input += u.usage.input;
    sum.output += u.usage.output;
    sum.cache_read += u.usage.cache_read;
    sum.cache_write += u.usage.cache_write;
  }
  return {
    schema_version: CANONICAL_SCHEMA_VERSION,
    recording: parts.recording,
    session: parts.info,
    connections,
    timeline,
    operations,
    completeness: completeness.value,
    provenance: { epochs: parts.epochs, loss_windows: parts.loss_windows },
    usage: { by_model: byModel },
    issues: parts.issues,
    extensions: parts.extensions,
  };
}

/**
 * A sub-agent's parent is the call that spawned it, whichever file said so: each connection
 * without a parent gets the last call (of `calls`, `[id, spawns]` in canonical order) naming it.
 */
function withSpawners(
  connections: Connection[],
  calls: [string, string | null | undefined][],
): Connection[] {
  const spawnedBy = new Map<string, string>();
  for (const [id, spawns] of calls) if (spawns) spawnedBy.set(spawns, id);
  return connections.map((c) =>
    c.parent_op || !spawnedBy.has(c.id) ? c : { ...c, parent_op: spawnedBy.get(c.id) }
  );
}

/**
 * A session without its operations' bodies: what a walk of it a page of operations at a time
 * (an export of tens of thousands of steps) needs before its first page.
 */
export interface SessionOutline {
  /**
   * The session with no operation (its timeline, operations and their completeness empty):
   * its info, threads (each sub-agent with its parent call, as {@link assembleSession} gives
   * them), usage, provenance and issues.
   */
  session: CanonicalSession;
  /** Its whole timeline, as {@link assembleSession} gives it. */
  timeline: TimelineEntry[];
  /** Each operation's kind, by id. */
  kinds: Map<string, Operation["kind"]>;
}

/** A whole session's outline: the session itself, its timeline and its operations' kinds. */
export function outlineOfSession(session: CanonicalSession): SessionOutline {
  const kinds = new Map<string, Operation["kind"]>();
  for (const [id, op] of Object.entries(session.operations)) kinds.set(id, op.kind);
  return { session, timeline: session.timeline, kinds };
}

/**
 * A session read without holding it whole: its outline, then its operations a page at a time
 * in canonical order, each with its thread (the store's `sessionOutline`, then its
 * `operationPages` or `sessionParts`). What an export document and canonical files are made
 * from; an operation not in the outline (written after it was read) is left out.
 */
export interface PagedSession {
  outline: SessionOutline;
  pages: Iterable<readonly Pick<OperationRecord, "id" | "connection" | "op">[]>;
}

/**
 * A canonical session read as it streams in (`chronicle import --canonical`), never whole: its
 * head (the session with its whole timeline but no operation), each operation's own time
 * (`ts_ms`) by id, then its operations a page at a time in the file's order, each page with the
 * payloads its operations name (by SHA-256).
 */
export interface StreamedSession {
  head: CanonicalSession;
  times: ReadonlyMap<string, number>;
  pages: AsyncIterable<OperationPage>;
  /** The checksum of its `session.json`, as its manifest states it. */
  sessionSha256: string;
}

/** A page of a {@link StreamedSession}: operations by id, and the payloads they name. */
export interface OperationPage {
  operations: [id: string, op: Operation][];
  payloads: Map<string, Uint8Array>;
}

/** What an outline reads of an operation: its place and kind, and the thread it spawned. */
export interface OutlineRecord extends Pick<OperationRecord, "id" | "connection" | "order"> {
  kind: Operation["kind"];
  spawns: string | null;
}

/** The outline of a session from its parts but its operations, and its operations' records. */
export function assembleOutline(
  head: Omit<SessionParts, "operations">,
  records: readonly OutlineRecord[],
): SessionOutline {
  const sorted = [...records].sort((a, b) => compareOrder(a.order, b.order));
  const session = assembleSession({ ...head, operations: [] });
  session.connections = withSpawners(head.connections, sorted.map((r) => [r.id, r.spawns]));
  return {
    session,
    timeline: timelineOf(sorted, head.info),
    kinds: new Map(sorted.map((r) => [r.id, r.kind])),
  };
}

/** Merges what a pass learned about a session into what was known. */
export function mergeInfo(
  known: SessionInfo,
  learned: SessionDelta["info"],
  primary: boolean,
): SessionInfo {
  const out: SessionInfo = { ...known, project: { ...known.project } };
  const minIso = (a?: string, b?: string) => (!a ? b : !b ? a : a < b ? a : b);
  const maxIso = (a?: string, b?: string) => (!a ? b : !b ? a : a > b ? a : b);
  out.started_at = minIso(known.started_at, learned.started_at);
  out.ended_at = maxIso(known.ended_at, learned.ended_at);
  if (learned.title && (primary || !out.title)) out.title = learned.title;
  if (learned.last_prompt && (primary || !out.last_prompt)) out.last_prompt = learned.last_prompt;
  if (learned.continues && !out.continues) out.continues = learned.continues;
  if (learned.project?.path && (primary || !out.project.path)) {
    out.project.path = learned.project.path;
  }
  if (learned.project?.git && (primary || !out.project.git)) {
    out.project.git = { ...out.project.git, ...learned.project.git };
  }
  return out;
}

export type { Checkpoint };
