/**
 * Builds the operations of one Claude Code transcript, pass by pass: records deduplicated by
 * uuid, one API message's blocks (one line each) as operations, tool calls pending in the
 * state until their result arrives, sidechains as sub-agent connections.
 */
import {
  classifyTool,
  type Connection,
  isInjectedText,
  type OperationKind,
  type PayloadRef,
  PayloadSink,
  type SessionDelta,
  stableId,
  summarizeToolInput,
  targetOf,
  type UsageEntry,
} from "../../model/mod.ts";
import type { JsonlLine } from "../jsonl.ts";
import type { SourceUnit } from "../types.ts";
import {
  basename,
  type DeltaDraft,
  type DraftRecord,
  isObj,
  IssueTally,
  type Json,
  type OperationDraft,
  str,
} from "../_import_kit.ts";
import type { LossWindow } from "../../model/types.ts";
import type { FileRole } from "./layout.ts";
import { INLINE_TUR_CHARS, trimToolUseResult } from "./tool_result.ts";

export const SOURCE = "claude-code" as const;

/** Version of `ClaudeState`: a saved state of another version is dropped, the file read again. */
export const STATE_VERSION = 1;

/** Record types that carry nothing for the timeline; counted, not reported as issues. */
const SKIPPED_TYPES = new Set([
  "file-history-snapshot",
  "attachment",
  "progress",
  "queue-operation",
]);

/** Session metadata singletons, re-appended on every resume. */
const META_TYPES = new Set([
  "custom-title",
  "ai-title",
  "agent-name",
  "agent-setting",
  "permission-mode",
  "mode",
  "pr-link",
  "last-prompt",
  "bridge-session",
  "worktree-state",
  "frame-link",
]);

interface ConnState {
  conn: Connection;
  models: string[];
  versions: string[];
}

/** Everything needed to resume a file where the last pass stopped. Plain JSON. */
export interface ClaudeState {
  v: number;
  session?: string;
  /** Record uuids (hex, no dashes) already imported: dedupe of resumed records. */
  seen: string[];
  /** Tool calls waiting for their result, by tool_use id. */
  pending: Record<string, DraftRecord>;
  /** Connection of sidechain records by uuid (inline sub-agents). */
  sidechain: Record<string, string>;
  /** Open Task/Agent calls in source order, for linking inline sidechains. */
  openTasks: string[];
  conns: Record<string, ConnState>;
  lastTs: number | null;
  titleRank: number;
  extensions: Json;
}

export function freshState(): ClaudeState {
  return {
    v: STATE_VERSION,
    seen: [],
    pending: {},
    sidechain: {},
    openTasks: [],
    conns: {},
    lastTs: null,
    titleRank: 0,
    extensions: {},
  };
}

interface At {
  line: number;
  start: number;
  end: number;
  block: number;
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** Builds the operations of one file, pass by pass. */
export class ClaudeFileBuilder {
  readonly sink = new PayloadSink();
  agentType?: string;
  private readonly seen: Set<string>;
  private readonly ops = new Map<string, DraftRecord>();
  private readonly issues: IssueTally;
  private readonly usage = new Map<string, UsageEntry>();
  private readonly info: {
    project: NonNullable<SessionDelta["info"]["project"]>;
    title?: string;
    last_prompt?: string;
  } = { project: {} };
  private minTs: number | null = null;
  private maxTs: number | null = null;
  private sessionHint?: string;

  constructor(
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly state: ClaudeState,
    private readonly role: FileRole,
  ) {
    this.seen = new Set(state.seen);
    this.issues = new IssueTally(unit.path);
  }

  private issue(code: string, message: string, line?: number): void {
    this.issues.add(code, message, { line });
  }

  record(v: Json, l: JsonlLine): void {
    const { line, start, end } = l;
    const uuid = str(v.uuid);
    // Only real uuids deduplicate; synthetic placeholders would collapse distinct records.
    if (uuid && UUID_RE.test(uuid)) {
      const key = uuid.replace(/-/g, "").toLowerCase();
      if (this.seen.has(key)) {
        this.issue("duplicate_record", "records repeated (resumed session); imported once");
        return;
      }
      this.seen.add(key);
    }
    const tsParsed = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : NaN;
    if (!Number.isNaN(tsParsed)) {
      this.state.lastTs = tsParsed;
      this.minTs = this.minTs === null ? tsParsed : Math.min(this.minTs, tsParsed);
      this.maxTs = this.maxTs === null ? tsParsed : Math.max(this.maxTs, tsParsed);
    }
    if (!this.state.session && typeof v.sessionId === "string") this.sessionHint ??= v.sessionId;
    let type = str(v.type);
    if (
      type === undefined && isObj(v.message) &&
      (v.message.role === "user" || v.message.role === "assistant")
    ) {
      type = v.message.role;
      this.issue("missing_record_type", "records without a type; read by their message.role", line);
    }
    const at: At = { line, start, end, block: 0 };
    switch (type) {
      case "user":
        this.noteEnvelope(v, line);
        this.user(v, at);
        return;
      case "assistant":
        this.noteEnvelope(v, line);
        this.assistant(v, at);
        return;
      case "system":
        this.noteEnvelope(v, line);
        this.system(v, at);
        return;
      case "summary":
        this.summary(v, at);
        return;
    }
    if (type && META_TYPES.has(type)) {
      this.meta(type, v);
      return;
    }
    if (type && SKIPPED_TYPES.has(type)) {
      const counts = (this.state.extensions.skipped_records ??= {}) as Record<string, number>;
      counts[type] = (counts[type] ?? 0) + 1;
      return;
    }
    this.issue(
      "unknown_record_type",
      `unknown record type ${type === undefined ? "(none)" : JSON.stringify(type)}`,
      line,
    );
  }

  /** Envelope fields: project, branch, client version, entrypoint. */
  private noteEnvelope(v: Json, line: number): void {
    const cwd = str(v.cwd);
    if (cwd && !this.info.project.path) this.info.project.path = cwd;
    const branch = str(v.gitBranch);
    if (branch && !this.info.project.git) this.info.project.git = { branch };
    const c = this.connFor(v);
    const version = str(v.version);
    if (version && !c.versions.includes(version)) {
      c.versions.push(version);
      c.conn.client.evidence.push({ line, field: "version" });
    }
    const entrypoint = str(v.entrypoint);
    if (entrypoint && !c.conn.client.entrypoint) c.conn.client.entrypoint = entrypoint;
    if (typeof v.permissionMode === "string") {
      this.state.extensions.permission_mode = v.permissionMode;
    }
  }

  /** The connection a record belongs to: main, a sub-agent file, or an inline sidechain. */
  private connId(v: Json): string {
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

  private connFor(v: Json): ConnState {
    const id = this.connId(v);
    let c = this.state.conns[id];
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
      if (sub && this.agentTypeFor(id)) c.conn.agent_type = this.agentTypeFor(id);
      if (sub && !this.role.subagent && this.state.openTasks.length) {
        // Inline sidechain: spawned by the most recent Task call still waiting for its result.
        const parent = this.state.openTasks[this.state.openTasks.length - 1];
        c.conn.parent_op = parent;
        const rec = this.ops.get(parent) ?? this.findPending(parent);
        if (rec) {
          rec.op.spawns = id;
          this.ops.set(parent, rec);
        }
      }
      this.state.conns[id] = c;
    }
    return c;
  }

  private agentTypeFor(id: string): string | undefined {
    return this.role.subagent && id.startsWith("agent-") ? this.agentType : undefined;
  }

  private findPending(opId: string): DraftRecord | undefined {
    return Object.values(this.state.pending).find((r) => r.id === opId);
  }

  private order(at: At): DraftRecord["order"] {
    return { ts_ms: this.state.lastTs, rank: this.unit.rank, line: at.line, block: at.block };
  }

  private range(at: At) {
    return {
      file: this.unit.path,
      lines: [at.line, at.line] as [number, number],
      bytes: [at.start, at.end] as [number, number],
    };
  }

  private push(
    v: Json,
    at: At,
    kind: OperationKind,
    fields: Partial<OperationDraft>,
  ): DraftRecord {
    const conn = this.connId(v);
    const id = stableId("op_", conn, str(v.uuid) ?? `L${at.line}`, at.block);
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: this.range(at) },
      ...fields,
    };
    if (this.state.lastTs !== null) op.ts_ms = this.state.lastTs;
    const uuid = str(v.uuid);
    if (uuid) op.provenance.record_ids = [uuid];
    const rec: DraftRecord = { id, connection: conn, order: this.order(at), op };
    this.ops.set(id, rec);
    return rec;
  }

  private user(v: Json, at: At): void {
    const msg = v.message;
    const content = isObj(msg) ? msg.content : msg;
    if (typeof content === "string") {
      this.userText(v, at, content, undefined);
      return;
    }
    if (!Array.isArray(content)) {
      this.issue("unexpected_shape", "user record without message content", at.line);
      return;
    }
    const texts: string[] = [];
    let nonText = false;
    for (const [i, block] of content.entries()) {
      if (!isObj(block)) continue;
      if (block.type === "tool_result") {
        this.toolResult(v, { ...at, block: i }, block);
      } else if (block.type === "text" && typeof block.text === "string") {
        texts.push(block.text);
      } else {
        nonText = true;
        if (block.type !== "image" && block.type !== "document") {
          this.issue(
            "unknown_block_type",
            `unknown user block ${JSON.stringify(block.type)}`,
            at.line,
          );
        }
      }
    }
    if (texts.length || nonText) {
      this.userText(v, at, texts.join("\n\n"), nonText ? content : undefined);
    }
  }

  private userText(v: Json, at: At, text: string, blocks: unknown[] | undefined): void {
    const request: PayloadRef = blocks ? this.sink.json(blocks) : this.sink.text(text);
    if (v.isCompactSummary === true) {
      this.push(v, at, "event", { event: "compaction_summary", text, request });
      return;
    }
    if (/^\[Request interrupted by user/.test(text)) {
      this.push(v, at, "event", { event: "interrupt", text, request });
      return;
    }
    const injected = v.isMeta === true || isInjectedText(text);
    const rec = this.push(v, at, "prompt", { text, request });
    if (injected) rec.op.injected = true;
    if (blocks) {
      const images = blocks.filter((b) => isObj(b) && b.type === "image").length;
      if (images) rec.op.extensions = { [SOURCE]: { images } };
    }
  }

  private toolResult(v: Json, at: At, block: Json): void {
    const useId = str(block.tool_use_id) ?? "";
    const content = block.content;
    const response = typeof content === "string"
      ? this.sink.text(content)
      : content === undefined
      ? this.sink.text("")
      : this.sink.json(content);
    const pending = this.state.pending[useId];
    const tur = v.toolUseResult;
    const ext: Json = {};
    if (tur !== undefined) {
      const { kept, dropped } = trimToolUseResult(tur);
      ext.tool_use_result = JSON.stringify(kept).length <= INLINE_TUR_CHARS
        ? kept
        : this.sink.json(kept);
      if (dropped.length) ext.tool_use_result_dropped = dropped;
      if (isObj(tur)) {
        if (Array.isArray(tur.structuredPatch)) ext.structured_patch = tur.structuredPatch;
        if (typeof tur.type === "string") ext.result_type = tur.type;
        if (typeof tur.exitCode === "number") ext.exit_code = tur.exitCode;
        if (typeof tur.interrupted === "boolean" && tur.interrupted) ext.interrupted = true;
      }
    }
    const isError = block.is_error === true;
    if (!pending) {
      const rec = this.push(v, at, "other", {
        native_id: useId || undefined,
        response,
        is_error: isError,
        completeness: "unmatched",
      });
      if (Object.keys(ext).length) rec.op.extensions = { [SOURCE]: ext };
      return;
    }
    delete this.state.pending[useId];
    this.state.openTasks = this.state.openTasks.filter((id) => id !== pending.id);
    const op = pending.op;
    op.response = response;
    op.is_error = isError;
    op.completeness = "complete";
    op.provenance.completion = { epoch: this.epoch, source_range: this.range(at) };
    const uuid = str(v.uuid);
    if (uuid) op.provenance.record_ids = [...(op.provenance.record_ids ?? []), uuid];
    if (Object.keys(ext).length) {
      op.extensions = {
        ...op.extensions,
        [SOURCE]: { ...(op.extensions?.[SOURCE] as Json), ...ext },
      };
    }
    if (op.kind === "task" && isObj(tur) && typeof tur.agentId === "string") {
      op.spawns = `agent-${tur.agentId}`;
    }
    this.ops.set(pending.id, pending);
  }

  private assistant(v: Json, at: At): void {
    const msg = v.message;
    const c = this.connFor(v);
    if (!isObj(msg)) {
      if (typeof msg === "string") {
        this.push(v, at, "reply", { text: msg, response: this.sink.text(msg) });
      } else this.issue("unexpected_shape", "assistant record without message", at.line);
      return;
    }
    const model = str(msg.model);
    const realModel = model && model !== "<synthetic>" ? model : undefined;
    if (realModel && !c.models.includes(realModel)) {
      c.models.push(realModel);
      c.conn.server.evidence.push({ line: at.line, field: "message.model" });
    }
    this.countUsage(v, msg, realModel);
    const content = typeof msg.content === "string"
      ? [{ type: "text", text: msg.content }]
      : msg.content;
    if (!Array.isArray(content)) return;
    const isApiError = v.isApiErrorMessage === true;
    for (const [i, block] of content.entries()) {
      if (!isObj(block)) continue;
      const bat = { ...at, block: i };
      const common: Partial<OperationDraft> = realModel ? { model: realModel } : {};
      switch (block.type) {
        case "text": {
          const text = str(block.text) ?? "";
          const rec = this.push(v, bat, "reply", {
            ...common,
            text,
            response: this.sink.text(text),
          });
          if (isApiError) rec.op.is_error = true;
          break;
        }
        case "thinking":
        case "redacted_thinking": {
          const text = str(block.thinking) ?? "";
          this.push(v, bat, "thinking", {
            ...common,
            text,
            response: block.type === "thinking" ? this.sink.text(text) : { redacted: true },
          });
          break;
        }
        case "tool_use":
        case "server_tool_use": {
          const name = str(block.name) ?? "unknown";
          const kind = block.type === "server_tool_use" ? "web" : classifyTool(name);
          const input = block.input ?? {};
          const rec = this.push(v, bat, kind, {
            ...common,
            tool: name,
            native_id: str(block.id),
            target: targetOf(input),
            summary: summarizeToolInput(input),
            request: this.sink.json(input),
            completeness: "incomplete",
          });
          if (rec.op.native_id) this.state.pending[rec.op.native_id] = rec;
          if (kind === "task") this.state.openTasks.push(rec.id);
          break;
        }
        case "web_search_tool_result": {
          const useId = str(block.tool_use_id) ?? "";
          this.toolResult(v, bat, { tool_use_id: useId, content: block.content });
          break;
        }
        default:
          this.issue(
            "unknown_block_type",
            `unknown assistant block ${JSON.stringify(block.type)}`,
            at.line,
          );
      }
    }
  }

  private countUsage(v: Json, msg: Json, model: string | undefined): void {
    const u = msg.usage;
    if (!isObj(u) || !model) return;
    const key = `${str(msg.id) ?? str(v.uuid) ?? ""}:${str(v.requestId) ?? ""}`;
    const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
    const entry: UsageEntry = {
      key,
      model,
      usage: {
        input: n(u.input_tokens),
        output: n(u.output_tokens),
        cache_read: n(u.cache_read_input_tokens),
        cache_write: n(u.cache_creation_input_tokens),
      },
    };
    const prev = this.usage.get(key);
    // Every line of a split message repeats usage; the last one carries the final output count.
    if (!prev || entry.usage.output >= prev.usage.output) this.usage.set(key, entry);
  }

  private system(v: Json, at: At): void {
    const subtype = str(v.subtype);
    const text = str(v.content) ?? "";
    if (subtype === "compact_boundary") {
      const meta = isObj(v.compactMetadata) ? v.compactMetadata : {};
      this.push(v, at, "event", {
        event: "compaction",
        text: text || `Conversation compacted (${str(meta.trigger) ?? "auto"})`,
        extensions: { [SOURCE]: { compact_metadata: meta } },
      });
      return;
    }
    const rec = this.push(v, at, "event", { event: subtype ?? "notice", text });
    if (subtype === "api_error") rec.op.is_error = true;
  }

  private summary(v: Json, at: At): void {
    const text = str(v.summary) ?? "";
    this.push(v, at, "event", { event: "summary", text });
    this.setTitle(text, 1);
  }

  private setTitle(title: string | undefined, rank: number): void {
    if (!title || rank < this.state.titleRank) return;
    this.state.titleRank = rank;
    this.info.title = title;
  }

  private meta(type: string, v: Json): void {
    switch (type) {
      case "custom-title":
        this.setTitle(str(v.customTitle), 3);
        return;
      case "ai-title":
        this.setTitle(str(v.aiTitle), 2);
        return;
      case "last-prompt":
        if (typeof v.lastPrompt === "string") this.info.last_prompt = v.lastPrompt;
        return;
      case "agent-name":
        this.state.extensions.agent_name = v.agentName;
        return;
      case "permission-mode":
        this.state.extensions.permission_mode = v.permissionMode;
        return;
      case "mode":
        this.state.extensions.mode = v.mode;
        return;
      case "pr-link":
        this.state.extensions.pr = { number: v.prNumber, url: v.prUrl, repository: v.prRepository };
        return;
      default: {
        const rest: Json = { ...v };
        delete rest.type;
        delete rest.sessionId;
        this.state.extensions[type.replace(/-/g, "_")] = rest;
      }
    }
  }

  /** Finalises this pass: connection endpoints and one delta (none when the file held nothing). */
  finish(loss: LossWindow[]): DeltaDraft[] {
    const nativeId = this.state.session ??= this.role.sessionFromLayout ?? this.sessionHint ??
      basename(this.unit.path).replace(/\.jsonl$/, "");
    const issues = this.issues.list();
    for (const c of Object.values(this.state.conns)) {
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
    const mainConn = this.state.conns.main;
    if (mainConn && mainConn.versions.length === 0) {
      issues.push({
        code: "missing_client_version",
        message: "no record names the Claude Code version; client version left absent",
        severity: "info",
        file: this.unit.path,
      });
    }
    this.state.seen = [...this.seen];
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${nativeId}`,
      native_id: nativeId,
      source: SOURCE,
      project: this.info.project,
    };
    if (this.info.title) info.title = this.info.title;
    if (this.info.last_prompt) info.last_prompt = this.info.last_prompt;
    if (this.minTs !== null) info.started_at = new Date(this.minTs).toISOString();
    if (this.maxTs !== null) info.ended_at = new Date(this.maxTs).toISOString();
    if (
      !this.ops.size && !loss.length && !issues.length &&
      !Object.keys(this.state.conns).length && !info.title
    ) {
      return [];
    }
    return [{
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: !this.role.subagent,
      connections: Object.values(this.state.conns).map((c) => c.conn),
      operations: [...this.ops.values()],
      usage: [...this.usage.values()],
      loss_windows: loss,
      issues,
      extensions: Object.keys(this.state.extensions).length
        ? { [SOURCE]: this.state.extensions }
        : undefined,
    }];
  }
}
