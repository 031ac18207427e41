/**
 * OpenCode sessions as canonical deltas: a sub-agent session (one with a `parent_id`, run by
 * the `task` tool) joins its root session as a sub-agent connection, linked to the call that
 * ran it. Rows have no lines: an operation's `source_range.lines` holds the row's ordinal in
 * the session's read order and `bytes` is [0, 0]; `record_ids` name the part and message.
 */
import type { SessionDelta, UsageEntry } from "../../model/delta.ts";
import { type PayloadSink, stableId } from "../../model/payload.ts";
import type { Connection, OperationKind, SessionIssue } from "../../model/types.ts";
import type { SourceUnit } from "../types.ts";
import {
  type DeltaDraft,
  type DraftRecord,
  isObj,
  IssueTally,
  type Json,
  num,
  type OperationDraft,
  str,
} from "../_import_kit.ts";
import { part } from "./parts.ts";
import { INVALID_JSON, type MessageLoader, type MessageRow, type SessionRow } from "./rows.ts";

export const SOURCE = "opencode" as const;

/**
 * One delta per root session, its sub-agent sessions joined to it (children after their
 * parent, so a task call is known before the sub-agent it ran); sessions in a cycle of parent
 * ids each on their own. With a `part` (a database read in parts), only the roots after
 * `part.after`, stopping before the first root once `part.spent()` reaches `part.budget`
 * (`next`: the id of the last root read); a root is never cut from its sub-agents.
 */
export async function buildAll(
  sessions: SessionRow[],
  load: MessageLoader,
  unit: SourceUnit,
  epoch: number,
  sink: PayloadSink,
  unitIssues: SessionIssue[],
  part?: {
    after?: string;
    budget: number;
    spent: () => number;
    /** True when a group's sessions are as the last read found them: not read again. */
    unchanged?: (members: SessionRow[]) => boolean;
    /** A group read whole. */
    read?: (members: SessionRow[]) => void;
  },
): Promise<{ deltas: DeltaDraft[]; next?: string; unchanged: string[] }> {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map<string, SessionRow[]>();
  const roots: SessionRow[] = [];
  for (const s of sessions) {
    if (s.parentId && byId.has(s.parentId) && s.parentId !== s.id) {
      const list = children.get(s.parentId) ?? [];
      list.push(s);
      children.set(s.parentId, list);
    } else {
      if (s.parentId) s.extensions.parent_id = s.parentId;
      roots.push(s);
    }
  }
  const groups: { root: SessionRow; members: { s: SessionRow; conn: string }[] }[] = [];
  const placed = new Set<string>();
  for (const root of roots) {
    const members: { s: SessionRow; conn: string }[] = [];
    const walk = (s: SessionRow, conn: string) => {
      if (placed.has(s.id)) return;
      placed.add(s.id);
      members.push({ s, conn });
      for (const c of children.get(s.id) ?? []) walk(c, c.id);
    };
    walk(root, "main");
    groups.push({ root, members });
  }
  // A cycle of parent ids leaves sessions unplaced: import them on their own.
  for (const s of sessions) {
    if (placed.has(s.id)) continue;
    placed.add(s.id);
    s.extensions.parent_id = s.parentId;
    groups.push({ root: s, members: [{ s, conn: "main" }] });
  }
  const deltas: DeltaDraft[] = [];
  const unchanged: string[] = [];
  const start = part?.after === undefined
    ? 0
    : groups.findIndex((g) => g.root.id === part.after) + 1;
  for (let i = start; i < groups.length; i++) {
    if (part && i > start && part.spent() >= part.budget) {
      return { deltas, next: groups[i - 1].root.id, unchanged };
    }
    const { root, members } = groups[i];
    const rows = members.map((m) => m.s);
    if (part?.unchanged?.(rows)) {
      unchanged.push(`${SOURCE}:${root.id}`);
      continue;
    }
    const builder = new SessionBuilder(unit, epoch, root, sink);
    try {
      for (const m of members) builder.member(m.s, m.conn, await load(m.s.id));
      deltas.push(builder.finish());
      part?.read?.(rows);
    } catch (e) {
      // One session's rows failing (a damaged page) leaves the others importable.
      unitIssues.push({
        code: "session_unreadable",
        severity: "error",
        message: `Cannot read session "${root.id}" in "${unit.path}": ${(e as Error).message}`,
        file: unit.path,
      });
    }
  }
  return { deltas, unchanged };
}

export interface ConnState {
  conn: Connection;
  models: Set<string>;
  providers: Set<string>;
  versions: Set<string>;
  lastTs: number | null;
  line: number;
}

/** Part types that carry nothing for the timeline (their data lives elsewhere). */
export const QUIET_PARTS = new Set(["step-start", "snapshot"]);

export class SessionBuilder {
  private readonly ops = new Map<string, DraftRecord>();
  private readonly usage = new Map<string, UsageEntry>();
  private readonly issues: IssueTally;
  private readonly conns = new Map<string, ConnState>();
  /** task calls by the child session they ran, for linking sub-agent connections. */
  readonly taskBySession = new Map<string, DraftRecord>();
  lastPrompt?: string;
  private maxTs: number | null = null;
  private minTs: number | null = null;
  private row = 0;
  /** Known part types read without an operation (QUIET_PARTS), counted per type. */
  private readonly skipped: Record<string, number> = {};

  constructor(
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly root: SessionRow,
    readonly sink: PayloadSink,
  ) {
    this.issues = new IssueTally(unit.path);
  }

  issue(code: string, message: string, file?: string): void {
    this.issues.add(code, message, { file });
  }

  /** A known part shown nowhere: counted in the session's `skipped_records`. */
  skip(type: string): void {
    this.skipped[type] = (this.skipped[type] ?? 0) + 1;
  }

  seeTime(ts: number | undefined): void {
    if (ts === undefined) return;
    this.minTs = this.minTs === null ? ts : Math.min(this.minTs, ts);
    this.maxTs = this.maxTs === null ? ts : Math.max(this.maxTs, ts);
  }

  member(s: SessionRow, connId: string, messages: MessageRow[]): void {
    const main = connId === "main";
    const state: ConnState = {
      conn: {
        id: connId,
        kind: main ? "main" : "subagent",
        client: { agent: SOURCE, evidence: [] },
        server: { evidence: [] },
      },
      models: new Set(),
      providers: new Set(),
      versions: new Set(),
      lastTs: null,
      line: 0,
    };
    if (s.version) {
      state.versions.add(s.version);
      state.conn.client.evidence.push({ file: s.file, field: `session(${s.id}).version` });
    }
    if (!main) {
      const task = this.taskBySession.get(s.id);
      if (task) {
        state.conn.parent_op = task.id;
        task.op.spawns = connId;
        const taskExt = task.op.extensions?.[SOURCE] as Json | undefined;
        const agentType = str(taskExt?.subagent_type);
        if (agentType) state.conn.agent_type = agentType;
      }
      if (!state.conn.agent_type && typeof s.extensions.agent === "string") {
        state.conn.agent_type = s.extensions.agent;
      }
    }
    this.conns.set(connId, state);
    this.seeTime(s.created);
    this.seeTime(s.updated);
    for (const m of messages) this.message(state, s, m);
  }

  private message(c: ConnState, s: SessionRow, m: MessageRow): void {
    c.line++;
    if (!isObj(m.data)) {
      this.issue(
        "malformed_message",
        m.data === INVALID_JSON
          ? "message data is not valid JSON; its parts imported alone"
          : "message data is not a JSON object; its parts imported alone",
        m.file,
      );
    }
    const msg: Json = isObj(m.data) ? m.data : {};
    const role = str(msg.role);
    const time = isObj(msg.time) ? msg.time : {};
    const created = num(time.created) ?? m.created;
    this.seeTime(created);
    this.seeTime(num(time.completed));
    // Models: assistant messages say who answered; user messages what was asked for.
    const model = isObj(msg.model) ? msg.model : {};
    const modelId = str(msg.modelID) ?? str(model.modelID);
    const providerId = str(msg.providerID) ?? str(model.providerID);
    if (role === "assistant") {
      if (modelId && !c.models.has(modelId)) {
        c.models.add(modelId);
        c.conn.server.evidence.push({ file: m.file, field: `message(${m.id}).modelID` });
      }
      if (providerId && !c.providers.has(providerId)) {
        c.providers.add(providerId);
        c.conn.server.evidence.push({ file: m.file, field: `message(${m.id}).providerID` });
      }
    } else if (role !== "user" && isObj(m.data)) {
      this.issue(
        "unknown_message_role",
        `unknown message role ${JSON.stringify(msg.role ?? null)}`,
        m.file,
      );
    }
    const stepUsage: UsageEntry[] = [];
    for (const [i, p] of m.parts.entries()) {
      part(this, c, s, m, role, modelId, p, i, created, stepUsage);
    }
    if (role === "assistant" && modelId) {
      if (stepUsage.length) { for (const u of stepUsage) this.usage.set(u.key, u); }
      else {
        const u = tokensUsage(msg.tokens);
        if (u) this.usage.set(`${m.id}`, { key: m.id, model: modelId, usage: u });
      }
    }
    if (role === "assistant" && isObj(msg.error)) {
      const err = msg.error;
      const data = isObj(err.data) ? err.data : {};
      const text = [str(err.name), str(data.message)].filter(Boolean).join(": ") || "error";
      const rec = this.push(c, s, m, `${m.id}#error`, m.parts.length, "event", {
        event: "error",
        text,
        is_error: true,
        response: this.sink.json(err),
      }, num(time.completed) ?? created);
      if (modelId) rec.op.model = modelId;
    }
  }

  push(
    c: ConnState,
    s: SessionRow,
    m: MessageRow,
    recordId: string,
    block: number,
    kind: OperationKind,
    fields: Partial<OperationDraft>,
    ts: number | undefined,
  ): DraftRecord {
    this.row++;
    this.seeTime(ts);
    // Order follows the rows; a time earlier than the one before keeps its place.
    if (ts !== undefined) c.lastTs = c.lastTs === null ? ts : Math.max(c.lastTs, ts);
    const id = stableId("op_", s.id, m.id, recordId);
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: {
        epoch: this.epoch,
        source_range: {
          file: m.file === this.unit.path ? this.unit.path : fileOf(m, recordId),
          lines: [this.row, this.row],
          bytes: [0, 0],
        },
        record_ids: recordId.includes("#") ? [m.id] : [recordId, m.id],
      },
      ...fields,
    };
    if (ts !== undefined) op.ts_ms = ts;
    const rec: DraftRecord = {
      id,
      connection: c.conn.id,
      order: {
        ts_ms: c.lastTs,
        rank: c.conn.kind === "main" ? this.unit.rank : this.unit.rank + 1,
        line: c.line,
        block,
      },
      op,
    };
    this.ops.set(id, rec);
    return rec;
  }

  finish(): DeltaDraft {
    const s = this.root;
    const issues = this.issues.list();
    for (const c of this.conns.values()) {
      const { conn } = c;
      if (c.versions.size === 1) conn.client.version = [...c.versions][0];
      if (c.models.size === 1) conn.server.model = [...c.models][0];
      else if (c.models.size > 1) {
        issues.push({
          code: "conflicting_model",
          message: `connection ${conn.id}: several models answered (${
            [...c.models].join(", ")
          }); each operation keeps its own`,
          severity: "info",
          file: this.unit.path,
        });
      }
      if (c.providers.size === 1) conn.server.provider = [...c.providers][0];
      else if (c.providers.size > 1) {
        issues.push({
          code: "conflicting_provider",
          message: `connection ${conn.id}: several providers answered (${
            [...c.providers].join(", ")
          }); provider left absent`,
          severity: "info",
          file: this.unit.path,
        });
      }
    }
    const main = this.conns.get("main");
    if (main && !main.versions.size) {
      issues.push({
        code: "missing_client_version",
        message: "the session record names no OpenCode version; client version left absent",
        severity: "info",
        file: s.file,
      });
    }
    if (main && !main.models.size && [...this.ops.values()].some((r) => r.op.kind !== "prompt")) {
      issues.push({
        code: "missing_model",
        message: "no assistant message names its model; server model left absent",
        severity: "info",
        file: s.file,
      });
    }
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${s.id}`,
      native_id: s.id,
      source: SOURCE,
      project: s.directory ? { path: s.directory } : {},
    };
    if (s.title) info.title = s.title;
    if (this.lastPrompt) info.last_prompt = this.lastPrompt;
    const start = s.created ?? this.minTs;
    const end = s.updated !== undefined && this.maxTs !== null
      ? Math.max(s.updated, this.maxTs)
      : s.updated ?? this.maxTs;
    if (start !== null && start !== undefined) info.started_at = new Date(start).toISOString();
    if (end !== null && end !== undefined) info.ended_at = new Date(end).toISOString();
    const ext: Json = { ...s.extensions };
    const subs = [...this.conns.values()].filter((c) => c.conn.kind === "subagent").map((c) =>
      c.conn.id
    );
    if (subs.length) ext.child_sessions = subs;
    if (Object.keys(this.skipped).length) ext.skipped_records = { ...this.skipped };
    return {
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: true,
      connections: [...this.conns.values()].map((c) => c.conn),
      operations: [...this.ops.values()],
      usage: [...this.usage.values()],
      loss_windows: [],
      issues,
      extensions: Object.keys(ext).length ? { [SOURCE]: ext } : undefined,
    };
  }
}

function fileOf(m: MessageRow, recordId: string): string {
  const part = m.parts.find((p) => p.id === recordId);
  return part?.file ?? m.file;
}

/** Token usage of a step or message; null when it names no token counts. */
export function tokensUsage(tokens: unknown): UsageEntry["usage"] | null {
  if (!isObj(tokens)) return null;
  const cache = isObj(tokens.cache) ? tokens.cache : {};
  const input = num(tokens.input), output = num(tokens.output);
  if (input === undefined && output === undefined) return null;
  // OpenCode counts reasoning apart from output; canonical usage has no reasoning bucket.
  return {
    input: input ?? 0,
    output: (output ?? 0) + (num(tokens.reasoning) ?? 0),
    cache_read: num(cache.read) ?? 0,
    cache_write: num(cache.write) ?? 0,
  };
}
