/**
 * Builds the operations of one Claude Code transcript, pass by pass: records deduplicated by
 * uuid, routed to their session (a file a resumed session was written into holds two), one API
 * message's blocks as operations (a message rewritten as it grows is read once), tool calls
 * pending in the state until their result arrives, sidechains as sub-agent connections.
 * `records.ts` reads each record type into it.
 */
import {
  type Connection,
  type OperationKind,
  PayloadSink,
  type SessionDelta,
  stableId,
  type UsageEntry,
} from "../../model/mod.ts";
import type { LossWindow, SourceRange } from "../../model/types.ts";
import type { JsonlLine } from "../jsonl.ts";
import type { SeenPrior, SourceUnit, UnitResult } from "../types.ts";
import {
  basename,
  type DeltaDraft,
  type DraftRecord,
  fileRank,
  IssueTally,
  type Json,
  type OperationDraft,
  str,
  type VersionedState,
} from "../_import_kit.ts";
import type { FileRole } from "./layout.ts";
import { readRecord } from "./records.ts";
import { keysOfUuids, SeenRecords } from "./seen.ts";

export const SOURCE = "claude-code" as const;

/**
 * Version of `ClaudeState`: a saved state of another version is dropped, the file read again,
 * except versions 2's and 3's, which {@link upgradeState} carries over.
 */
export const STATE_VERSION = 4;

export interface ConnState {
  conn: Connection;
  models: string[];
  versions: string[];
}

/** What a file keeps about one of its sessions across passes. */
export interface SessionState {
  conns: Record<string, ConnState>;
  titleRank: number;
  extensions: Json;
  /** The session of the same file this one continues (a resume written into the file). */
  continues?: string;
  /**
   * The first and last times (ms) of records read in passes that had nothing else to say of
   * the session (a queued prompt): its next delta starts and ends with them, as one pass over
   * the whole file would have it.
   */
  unsent?: { min: number; max: number };
}

/** A block of an API message already read: its key, the operation made of it and its place. */
interface KnownBlock {
  key: string;
  op: string;
  order: DraftRecord["order"];
  /** Text length and hash of its prefix of that length, to tell a grown text from a new one. */
  len: number;
}

/** Everything needed to resume a file where the last pass stopped. Plain JSON. */
export interface ClaudeState {
  v: number;
  /** The session records belong to now; absent until a record names one. */
  current?: string;
  sessions: Record<string, SessionState>;
  /**
   * Only in a state carried over from version 2 or 3: the records already imported, as
   * `seen.ts`'s base64 keys. The store keeps them apart now (`UnitResult.seen`): the next pass
   * gives them all to it, and drops this.
   */
  seen?: string;
  /** Uuids that are not uuids (placeholders) already used, so a repeat gets its own op id. */
  placeholders: string[];
  /** Tool calls waiting for their result, by tool_use id, with their session. */
  pending: Record<string, { rec: DraftRecord; session: string }>;
  /** Connection of sidechain records by uuid (inline sub-agents). */
  sidechain: Record<string, string>;
  /** Open Task/Agent calls in source order, for linking inline sidechains. */
  openTasks: string[];
  /** The prompts of task calls, by op id, for linking a sub-agent that names no agent id. */
  taskPrompts: Record<string, string>;
  lastTs: number | null;
  /** Blocks already read of recent API messages, by message id. */
  messages: Record<string, KnownBlock[]>;
  messageOrder: string[];
}

/** How many API messages' blocks the state remembers (a rewrite follows its original closely). */
const MAX_MESSAGES = 256;

export function freshState(): ClaudeState {
  return {
    v: STATE_VERSION,
    sessions: {},
    placeholders: [],
    pending: {},
    sidechain: {},
    openTasks: [],
    taskPrompts: {},
    lastTs: null,
    messages: {},
    messageOrder: [],
  };
}

/**
 * A saved state of an earlier version carried over, or undefined (the file is read again).
 * Versions 2 and 3 differ only in holding the seen records themselves (`seen.ts`): version 2
 * their uuids, version 3 their base64 keys.
 */
export function upgradeState(prior: VersionedState): ClaudeState | undefined {
  const old = prior as VersionedState & { seen?: unknown };
  if (old.v === 2 && Array.isArray(old.seen)) {
    return { ...(old as unknown as ClaudeState), v: STATE_VERSION, seen: keysOfUuids(old.seen) };
  }
  if (old.v === 3 && typeof old.seen === "string") {
    return { ...(old as unknown as ClaudeState), v: STATE_VERSION };
  }
  return undefined;
}

/** The session key used until a record names the file's session. */
const FIRST = "\u0000first";

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** Where a record is: its line and bytes, and which content block of it. */
export interface At {
  line: number;
  start: number;
  end: number;
  block: number;
}

/** What one pass learned about one session. */
interface Part {
  project: NonNullable<SessionDelta["info"]["project"]>;
  title?: string;
  last_prompt?: string;
  minTs: number | null;
  maxTs: number | null;
  usage: Map<string, UsageEntry>;
  touched: boolean;
}

/** A tool result kept in a separate file, read after the pass. */
export interface PersistedOutput {
  rec: DraftRecord;
  path: string;
}

/** Builds the operations of one file, pass by pass. */
export class ClaudeFileBuilder {
  readonly sink = new PayloadSink();
  agentType?: string;
  private readonly seen: SeenRecords;
  private readonly placeholders: Set<string>;
  /** The record key of the record being read (its uuid, or its line for a repeated placeholder). */
  private recordKey = "";
  /** Operations of this pass, by id, with the session each belongs to. */
  readonly ops = new Map<string, { rec: DraftRecord; session: string }>();
  readonly issues: IssueTally;
  /** Outputs Claude Code kept in `<session>/tool-results/` (the log has a preview). */
  readonly persisted: PersistedOutput[] = [];
  /** Task calls completed in this pass that name no sub-agent: linked by prompt afterwards. */
  readonly unlinkedTasks: { rec: DraftRecord; prompt: string; session: string }[] = [];
  private readonly parts = new Map<string, Part>();
  private sessionHint?: string;
  private readonly rank: number;

  /**
   * `seen`: the records the log gave before this pass (the store's keys, or the table its last
   * slice kept), as the pass's `ImportContext.resume` has them; none for a pass from the start.
   */
  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: ClaudeState,
    readonly role: FileRole,
    seen?: SeenPrior,
  ) {
    this.seen = SeenRecords.resume(unit.path, seen, state.seen);
    this.placeholders = new Set(state.placeholders);
    this.rank = fileRank(unit);
    this.issues = new IssueTally(unit.path);
  }

  issue(code: string, message: string, line?: number): void {
    this.issues.add(code, message, { line });
  }

  record(v: Json, l: JsonlLine): void {
    const uuid = str(v.uuid);
    // Only real uuids deduplicate; synthetic placeholders would collapse distinct records.
    if (uuid && UUID_RE.test(uuid)) {
      if (!this.seen.add(uuid)) {
        this.issue("duplicate_record", "records repeated (resumed session); imported once");
        return;
      }
    }
    this.recordKey = uuid ?? `L${l.line}`;
    if (uuid && !UUID_RE.test(uuid)) {
      if (this.placeholders.has(uuid)) this.recordKey = `${uuid}#L${l.line}`;
      else this.placeholders.add(uuid);
    }
    this.routeSession(v);
    const tsParsed = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : NaN;
    if (!Number.isNaN(tsParsed)) {
      this.state.lastTs = tsParsed;
      const p = this.part();
      p.minTs = p.minTs === null ? tsParsed : Math.min(p.minTs, tsParsed);
      p.maxTs = p.maxTs === null ? tsParsed : Math.max(p.maxTs, tsParsed);
    }
    readRecord(this, v, { line: l.line, start: l.start, end: l.end, block: 0 });
  }

  /**
   * A main file's records say which session they belong to: the first session id named is the
   * file's session; a later, different one (a resume written into the same file) starts a
   * session that continues the one before. Sub-agent files belong to their parent session.
   */
  private routeSession(v: Json): void {
    const sid = str(v.sessionId);
    if (!sid) return;
    const s = this.state;
    if (this.role.subagent) {
      this.sessionHint ??= sid;
      return;
    }
    if (s.current === undefined) {
      this.adopt(sid);
      return;
    }
    if (sid === s.current || !UUID_RE.test(sid) || !UUID_RE.test(s.current)) return;
    if (!s.sessions[sid]) s.sessions[sid] = { ...newSession(), continues: s.current };
    s.current = sid;
  }

  /** The first session id of the file: what was read before it was named belongs to it. */
  private adopt(sid: string): void {
    const s = this.state;
    s.current = sid;
    const early = s.sessions[FIRST];
    if (early) {
      delete s.sessions[FIRST];
      s.sessions[sid] = early;
    }
    const part = this.parts.get(FIRST);
    if (part) {
      this.parts.delete(FIRST);
      this.parts.set(sid, part);
    }
    for (const o of this.ops.values()) if (o.session === FIRST) o.session = sid;
    for (const p of Object.values(s.pending)) if (p.session === FIRST) p.session = sid;
    for (const t of this.unlinkedTasks) if (t.session === FIRST) t.session = sid;
  }

  /** The session records belong to now. */
  sessionKey(): string {
    return this.state.current ?? FIRST;
  }

  session(key = this.sessionKey()): SessionState {
    return this.state.sessions[key] ??= newSession();
  }

  part(key = this.sessionKey()): Part {
    let p = this.parts.get(key);
    if (!p) {
      p = { project: {}, minTs: null, maxTs: null, usage: new Map(), touched: false };
      this.parts.set(key, p);
    }
    return p;
  }

  /** Envelope fields: project, branch, client version, entrypoint. */
  noteEnvelope(v: Json, line: number): void {
    const p = this.part();
    const cwd = str(v.cwd);
    if (cwd && !p.project.path) p.project.path = cwd;
    const branch = str(v.gitBranch);
    if (branch && !p.project.git) p.project.git = { branch };
    const c = this.connFor(v);
    const version = str(v.version);
    if (version && !c.versions.includes(version)) {
      c.versions.push(version);
      c.conn.client.evidence.push({ line, field: "version" });
    }
    const entrypoint = str(v.entrypoint);
    if (entrypoint && !c.conn.client.entrypoint) c.conn.client.entrypoint = entrypoint;
    if (typeof v.permissionMode === "string") {
      this.session().extensions.permission_mode = v.permissionMode;
    }
  }

  /** The connection a record belongs to: main, a sub-agent file, or an inline sidechain. */
  connId(v: Json): string {
    if (this.role.subagent) {
      return `agent-${
        str(v.agentId) ?? this.role.agentId ?? basename(this.unit.path).replace(/\.jsonl$/, "")
      }`;
    }
    if (v.isSidechain !== true) return "main";
    const agentId = str(v.agentId);
    if (agentId) return `agent-${agentId}`;
    const uuid = str(v.uuid) ?? "";
    const parent = str(v.parentUuid);
    const parentConn = parent ? this.state.sidechain[parent] : undefined;
    const id = parentConn ?? `sidechain-${uuid.slice(0, 8)}`;
    if (uuid) this.state.sidechain[uuid] = id;
    return id;
  }

  connFor(v: Json): ConnState {
    const id = this.connId(v);
    const conns = this.session().conns;
    let c = conns[id];
    if (!c) {
      const sub = id !== "main";
      c = {
        conn: {
          id,
          kind: sub ? "subagent" : "main",
          client: { agent: SOURCE, evidence: [] },
          server: { evidence: [] },
        },
        models: [],
        versions: [],
      };
      if (sub && this.role.subagent && id.startsWith("agent-") && this.agentType) {
        c.conn.agent_type = this.agentType;
      }
      if (sub && !this.role.subagent && this.state.openTasks.length) {
        // Inline sidechain: spawned by the most recent Task call still waiting for its result.
        const parent = this.state.openTasks[this.state.openTasks.length - 1];
        c.conn.parent_op = parent;
        const rec = this.ops.get(parent)?.rec ?? this.findPending(parent);
        if (rec) {
          rec.op.spawns = id;
          this.keep(rec);
        }
      }
      conns[id] = c;
    }
    return c;
  }

  private findPending(opId: string): DraftRecord | undefined {
    return Object.values(this.state.pending).find((p) => p.rec.id === opId)?.rec;
  }

  range(at: At): SourceRange {
    return { file: this.unit.path, lines: [at.line, at.line], bytes: [at.start, at.end] };
  }

  /** Emits an operation made from a record (or one of its blocks). */
  push(
    v: Json,
    at: At,
    kind: OperationKind,
    fields: Partial<OperationDraft>,
    options: { id?: string; order?: DraftRecord["order"] } = {},
  ): DraftRecord {
    const conn = this.connId(v);
    const id = options.id ?? stableId("op_", conn, this.recordKey || `L${at.line}`, at.block);
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: this.range(at) },
      ...fields,
    };
    if (this.state.lastTs !== null) op.ts_ms = this.state.lastTs;
    const uuid = str(v.uuid);
    if (uuid) op.provenance.record_ids = [uuid];
    const order = options.order ??
      { ts_ms: this.state.lastTs, rank: this.rank, line: at.line, block: at.block };
    const rec: DraftRecord = { id, connection: conn, order, op };
    this.ops.set(id, { rec, session: this.sessionKey() });
    this.part().touched = true;
    return rec;
  }

  /** Emits again an operation of an earlier record (a call completed), in its own session. */
  keep(rec: DraftRecord, session = this.ops.get(rec.id)?.session ?? this.sessionKey()): void {
    this.ops.set(rec.id, { rec, session });
    this.part(session).touched = true;
  }

  /** The blocks of an API message read so far (undefined for a message not seen recently). */
  knownBlocks(messageId: string): KnownBlock[] | undefined {
    return this.state.messages[messageId];
  }

  rememberBlock(messageId: string, block: KnownBlock): void {
    const s = this.state;
    const list = s.messages[messageId];
    if (list) {
      list.push(block);
      return;
    }
    s.messages[messageId] = [block];
    s.messageOrder.push(messageId);
    while (s.messageOrder.length > MAX_MESSAGES) delete s.messages[s.messageOrder.shift()!];
  }

  addUsage(entry: UsageEntry): void {
    const usage = this.part().usage;
    const prev = usage.get(entry.key);
    // Every line of a split message repeats usage; the last one carries the final output count.
    if (!prev || entry.usage.output >= prev.usage.output) usage.set(entry.key, entry);
    this.part().touched = true;
  }

  setTitle(title: string | undefined, rank: number): void {
    const s = this.session();
    if (!title || rank < s.titleRank) return;
    s.titleRank = rank;
    this.part().title = title;
    this.part().touched = true;
  }

  setLastPrompt(text: string): void {
    this.part().last_prompt = text;
  }

  /** The records this pass added, for `UnitResult.seen`; `keep`: its next slice follows. */
  seenResult(keep: boolean): NonNullable<UnitResult["seen"]> {
    return this.seen.result(this.unit.path, keep);
  }

  /** Finalises this pass: connection endpoints and one delta per session it touched. */
  finish(loss: LossWindow[]): DeltaDraft[] {
    const s = this.state;
    if (s.current === undefined) {
      this.adopt(
        this.role.sessionFromLayout ?? this.sessionHint ??
          basename(this.unit.path).replace(/\.jsonl$/, ""),
      );
    }
    delete s.seen;
    s.placeholders = [...this.placeholders].slice(-4096);
    const issues = this.issues.list();
    for (const [k, p] of this.parts) {
      const sess = s.sessions[k];
      if (p.touched || p.minTs === null || p.maxTs === null || !sess) continue;
      sess.unsent = {
        min: Math.min(sess.unsent?.min ?? p.minTs, p.minTs),
        max: Math.max(sess.unsent?.max ?? p.maxTs, p.maxTs),
      };
    }
    const keys = Object.keys(s.sessions).filter((k) => this.parts.get(k)?.touched);
    if (!keys.length) {
      const current = s.sessions[s.current!];
      const anything = loss.length || issues.length ||
        (current && (Object.keys(current.conns).length || current.titleRank));
      if (!anything) return [];
      keys.push(s.current!);
    }
    const ops = new Map<string, DraftRecord[]>();
    for (const { rec, session } of this.ops.values()) {
      const list = ops.get(session) ?? [];
      list.push(rec);
      ops.set(session, list);
    }
    return keys.map((key, i) => {
      const sess = this.session(key);
      const part = this.part(key);
      const sessionIssues = i === 0 ? issues : [];
      this.settleEndpoints(sess, sessionIssues);
      const info: SessionDelta["info"] = {
        id: `${SOURCE}:${key}`,
        native_id: key,
        source: SOURCE,
        project: part.project,
      };
      if (part.title) info.title = part.title;
      if (part.last_prompt) info.last_prompt = part.last_prompt;
      const min = Math.min(part.minTs ?? Infinity, sess.unsent?.min ?? Infinity);
      const max = Math.max(part.maxTs ?? -Infinity, sess.unsent?.max ?? -Infinity);
      delete sess.unsent;
      if (Number.isFinite(min)) info.started_at = new Date(min).toISOString();
      if (Number.isFinite(max)) info.ended_at = new Date(max).toISOString();
      if (sess.continues) info.continues = `${SOURCE}:${sess.continues}`;
      const continuedIn = Object.entries(s.sessions).filter(([, x]) => x.continues === key)
        .map(([k]) => `${SOURCE}:${k}`);
      const ext: Json = { ...sess.extensions };
      if (continuedIn.length) ext.continued_in = continuedIn;
      return {
        session_id: info.id,
        file: this.unit.path,
        info,
        primary: !this.role.subagent,
        connections: Object.values(sess.conns).map((c) => c.conn),
        operations: ops.get(key) ?? [],
        usage: [...part.usage.values()],
        loss_windows: i === 0 ? loss : [],
        issues: sessionIssues,
        extensions: Object.keys(ext).length ? { [SOURCE]: ext } : undefined,
      };
    });
  }

  /** Client version and model of each connection: one value, or absent with an issue. */
  private settleEndpoints(sess: SessionState, issues: DeltaDraft["issues"] & object): void {
    for (const c of Object.values(sess.conns)) {
      const { conn } = c;
      if (c.versions.length === 1) conn.client.version = c.versions[0];
      else if (c.versions.length > 1) {
        delete conn.client.version;
        issues.push({
          code: "conflicting_client_version",
          message: `connection ${conn.id}: several Claude Code versions wrote it (${
            c.versions.join(", ")
          }); version left absent`,
          severity: "info",
          file: this.unit.path,
        });
      }
      if (c.models.length === 1) {
        conn.server.model = c.models[0];
        if (c.models[0].startsWith("claude")) conn.server.provider = "anthropic";
      } else if (c.models.length > 1) {
        delete conn.server.model;
        issues.push({
          code: "conflicting_model",
          message: `connection ${conn.id}: several models answered (${
            c.models.join(", ")
          }); each operation keeps its own`,
          severity: "info",
          file: this.unit.path,
        });
      }
    }
    const main = sess.conns.main;
    if (main && main.versions.length === 0) {
      issues.push({
        code: "missing_client_version",
        message: "no record names the Claude Code version; client version left absent",
        severity: "info",
        file: this.unit.path,
      });
    }
  }
}

function newSession(): SessionState {
  return { conns: {}, titleRank: 0, extensions: {} };
}
