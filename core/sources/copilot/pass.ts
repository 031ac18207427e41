/**
 * One GitHub Copilot CLI import pass over a session's `events.jsonl`: one event per line,
 * `{type, data, id, timestamp, parentId, agentId?}`, as the CLI's own schema
 * (`schemas/session-events.schema.json` in its package) describes them. `user.message` is a
 * prompt, `assistant.message` a reply with its `toolRequests` (calls), `assistant.reasoning`
 * thinking, `tool.execution_complete` a call's result (paired by `toolCallId`, in this pass or a
 * later one), `session.usage_record` the tokens of one model call, `session.error`, `abort`,
 * a failed hook or sub-agent an error event. Events from a sub-agent carry `parentToolCallId`
 * (the `task` call that started it): they sit on that sub-agent's connection. Every other event
 * of a namespace the schema knows is counted by type in the session's extensions; an event of an
 * unknown namespace is a counted issue.
 */
import { exitCodeInText } from "../../model/exit_code.ts";
import { isInjectedText } from "../../model/injected.ts";
import type { UsageEntry } from "../../model/delta.ts";
import { PayloadSink, stableId } from "../../model/payload.ts";
import { classifyTool, summarizeToolInput, targetOf } from "../../model/tools.ts";
import type { Connection, Evidence, OperationKind, SourceRange } from "../../model/types.ts";
import type { SourceUnit } from "../types.ts";
import {
  capList,
  type DraftRecord,
  fileRank,
  isObj,
  IssueTally,
  type Json,
  nonEmpty,
  num,
  type OperationDraft,
  orderKey,
  parseTimeMs,
} from "../_import_kit.ts";

export const SOURCE = "copilot";

/** Version of `CopilotState`: a saved state of another version is dropped, the file read again. */
export const STATE_VERSION = 1;

const MAX_CALLS = 2048;

/** The event namespaces of Copilot CLI 1.0's schema; an event outside them is unknown. */
const KNOWN_NAMESPACES = new Set([
  "session",
  "user",
  "pending_messages",
  "assistant",
  "agent",
  "prompt_cache_break",
  "model",
  "abort",
  "tool",
  "tool_search",
  "skill",
  "sandbox",
  "subagent",
  "hook",
  "system",
  "permission",
  "user_input",
  "elicitation",
  "sampling",
  "mcp",
  "ui",
  "external_tool",
  "command",
  "auto_mode_switch",
  "session_limits_exhausted",
  "commands",
  "capabilities",
  "exit_plan_mode",
  "human_response",
  "workflow",
  "mcp_app",
]);

export interface CopilotState {
  v: number;
  sid: string | null;
  meta: {
    cwd?: string;
    branch?: string;
    commit?: string;
    repository?: string;
    version?: string;
    versionEvidence?: Evidence;
    started?: string;
    title?: string;
  };
  models: string[];
  modelEvidence: Evidence[];
  lastTs: number | null;
  /** Calls read without their result yet, by call id. */
  open: Record<string, DraftRecord>;
  /** Recent call ids -> their operation id (a sub-agent names the call that started it). */
  calls: Record<string, string>;
  callOrder: string[];
  /** Sub-agents by the call that started them: their agent type. */
  subagents: Record<string, string>;
  counted: Record<string, number>;
  lastPrompt?: string;
}

export function freshState(): CopilotState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: {},
    models: [],
    modelEvidence: [],
    lastTs: null,
    open: {},
    calls: {},
    callOrder: [],
    subagents: {},
    counted: {},
  };
}

interface At {
  id: string;
  ts: number | null;
  range: SourceRange;
  line: number;
  /** The connection the event belongs to: `main`, or the sub-agent of a `task` call. */
  conn: string;
}

/** A sub-agent's connection id, from the call that started it. */
export const subagentConnection = (toolCallId: string) => `subagent:${toolCallId}`;

export class CopilotPass {
  readonly sink = new PayloadSink();
  readonly issues: IssueTally;
  readonly records = new Map<string, DraftRecord>();
  readonly usage: UsageEntry[] = [];
  /** Connections this pass wrote to. */
  readonly conns = new Set<string>();
  firstTs: number | null = null;
  lastTs: number | null = null;
  /** The latest `assistant.reasoning` text, so a message repeating it is not thinking twice. */
  private lastReasoning?: string;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: CopilotState,
    readonly fallbackId: string,
  ) {
    this.issues = new IssueTally(unit.path);
  }

  sid(): string {
    return this.state.sid ?? this.fallbackId;
  }

  private count(type: string): void {
    this.state.counted[type] = (this.state.counted[type] ?? 0) + 1;
  }

  record(ev: Json, range: SourceRange): void {
    const type = nonEmpty(ev.type);
    const data = isObj(ev.data) ? ev.data : {};
    if (!type) {
      this.issues.add(
        "unknown_record_type",
        `A Copilot CLI event without a type (keys ${JSON.stringify(Object.keys(ev).slice(0, 5))})`,
        { line: range.lines[0] },
      );
      return;
    }
    if (ev.data !== undefined && !isObj(ev.data)) {
      this.issues.add("unexpected_shape", `A ${type} event whose data is not an object`, {
        line: range.lines[0],
      });
    }
    const own = parseTimeMs(ev.timestamp);
    if (own !== null) {
      this.firstTs = this.firstTs === null ? own : Math.min(this.firstTs, own);
      this.lastTs = this.lastTs === null ? own : Math.max(this.lastTs, own);
      this.state.lastTs = own;
    }
    const parent = nonEmpty(data.parentToolCallId);
    const at: At = {
      id: nonEmpty(ev.id) ?? `line${range.lines[0]}`,
      ts: own ?? this.state.lastTs,
      range,
      line: range.lines[0],
      conn: parent ? subagentConnection(parent) : "main",
    };
    switch (type) {
      case "session.start":
      case "session.resume":
        return this.start(type, data, at);
      case "session.title_changed":
        if (nonEmpty(data.title)) this.state.meta.title = nonEmpty(data.title);
        return this.count(type);
      case "user.message":
        return this.user(data, at);
      case "assistant.message":
        return this.assistant(data, at);
      case "assistant.reasoning": {
        const text = nonEmpty(data.content);
        if (!text) return;
        this.lastReasoning = text;
        this.emit(
          at,
          0,
          "reasoning",
          this.base("thinking", at, {
            text,
            response: this.sink.text(text),
          }),
        );
        return;
      }
      case "tool.execution_start":
      case "tool.user_requested":
        return this.started(type, data, at);
      case "tool.execution_complete":
        return this.complete(data, at);
      case "session.usage_record":
      case "assistant.usage":
        return this.tokens(isObj(data.usage) ? data.usage : data, at);
      case "subagent.started": {
        const call = nonEmpty(data.toolCallId);
        if (call) {
          this.state.subagents[call] = nonEmpty(data.agentType) ?? nonEmpty(data.agentName) ??
            "subagent";
          this.conns.add(subagentConnection(call));
        }
        return this.count(type);
      }
      case "subagent.failed":
        return this.event(at, "error", nonEmpty(data.error) ?? "sub-agent failed", true, {
          conn: nonEmpty(data.toolCallId)
            ? subagentConnection(nonEmpty(data.toolCallId)!)
            : at.conn,
        });
      case "session.error":
        return this.event(at, "error", nonEmpty(data.message) ?? "error", true, {
          ext: { error_type: data.errorType, status_code: data.statusCode },
        });
      case "session.warning":
        return this.event(at, "warning", nonEmpty(data.message) ?? "warning", false, {
          ext: { warning_type: data.warningType },
        });
      case "abort":
        return this.event(at, "abort", nonEmpty(data.reason) ?? "aborted", false);
      case "session.compaction_complete":
        return this.event(
          at,
          "compaction",
          nonEmpty(data.summaryContent) ?? nonEmpty(data.outcome) ?? "compaction",
          data.success === false,
        );
      case "session.truncation":
        return this.event(at, "truncation", "conversation truncated", false);
      case "hook.end":
        if (data.success === false) {
          const err = isObj(data.error) ? nonEmpty(data.error.message) : nonEmpty(data.error);
          return this.event(
            at,
            "error",
            `${nonEmpty(data.hookType) ?? "hook"} hook failed${err ? `: ${err}` : ""}`,
            true,
          );
        }
        return this.count(type);
    }
    const ns = type.includes(".") ? type.slice(0, type.indexOf(".")) : type;
    if (KNOWN_NAMESPACES.has(ns)) return this.count(type);
    this.count(type);
    this.issues.add(
      "unknown_record_type",
      `Unknown Copilot CLI event type ${JSON.stringify(type)}`,
      {
        line: at.line,
      },
    );
  }

  // ---- operations ----

  private base(kind: OperationKind, at: At, extra: Partial<OperationDraft> = {}): OperationDraft {
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: at.range, record_ids: [at.id] },
      ...extra,
    };
    if (at.ts !== null) op.ts_ms = at.ts;
    return op;
  }

  private emit(
    at: At,
    block: number,
    part: string,
    op: OperationDraft,
    conn = at.conn,
  ): DraftRecord {
    const id = stableId("op_", SOURCE, this.sid(), at.id, part);
    const rec: DraftRecord = {
      id,
      connection: conn,
      order: orderKey(at.ts, fileRank(this.unit), at.line, block),
      op,
    };
    this.records.set(id, rec);
    this.conns.add(conn);
    return rec;
  }

  private event(
    at: At,
    event: string,
    text: string,
    isError: boolean,
    options: { conn?: string; ext?: Json } = {},
  ): void {
    const ext = Object.fromEntries(
      Object.entries(options.ext ?? {}).filter(([, v]) => v !== undefined && v !== null),
    );
    this.emit(
      at,
      0,
      "event",
      this.base("event", at, {
        event,
        text,
        ...(isError ? { is_error: true } : {}),
        ...(Object.keys(ext).length ? { extensions: { [SOURCE]: ext } } : {}),
      }),
      options.conn ?? at.conn,
    );
  }

  private start(type: string, data: Json, at: At): void {
    const m = this.state.meta;
    if (type === "session.start") {
      if (!this.state.sid && nonEmpty(data.sessionId)) this.state.sid = nonEmpty(data.sessionId)!;
      m.started ??= nonEmpty(data.startTime);
      const version = nonEmpty(data.copilotVersion);
      if (version && !m.version) {
        m.version = version;
        m.versionEvidence = { file: this.unit.path, line: at.line, field: "data.copilotVersion" };
      }
    }
    const ctx = isObj(data.context) ? data.context : {};
    m.cwd ??= nonEmpty(ctx.cwd);
    m.branch ??= nonEmpty(ctx.branch);
    m.commit ??= nonEmpty(ctx.headCommit);
    m.repository ??= nonEmpty(ctx.repository);
    this.count(type);
  }

  private user(data: Json, at: At): void {
    const text = typeof data.content === "string" ? data.content : "";
    const attachments = Array.isArray(data.attachments) ? data.attachments.length : 0;
    if (!text && !attachments) return;
    const source = nonEmpty(data.source);
    const injected = source !== undefined || data.isAutopilotContinuation === true ||
      isInjectedText(text);
    if (!injected && at.conn === "main") this.state.lastPrompt = text;
    const ext: Json = {};
    if (source) ext.source = source;
    if (attachments) ext.attachments = attachments;
    this.emit(
      at,
      0,
      "prompt",
      this.base("prompt", at, {
        text,
        request: this.sink.text(text),
        ...(injected ? { injected: true } : {}),
        ...(Object.keys(ext).length ? { extensions: { [SOURCE]: ext } } : {}),
      }),
    );
  }

  private assistant(data: Json, at: At): void {
    const model = nonEmpty(data.model);
    if (model) this.noteModel(model, at);
    let block = 0;
    const reasoning = nonEmpty(data.reasoningText);
    if (reasoning && reasoning !== this.lastReasoning) {
      this.emit(
        at,
        block++,
        "reasoning",
        this.base("thinking", at, {
          text: reasoning,
          model,
          response: this.sink.text(reasoning),
        }),
      );
    }
    const text = typeof data.content === "string" ? data.content : "";
    if (text) {
      this.emit(
        at,
        block++,
        "reply",
        this.base("reply", at, {
          text,
          model,
          response: this.sink.text(text),
        }),
      );
    }
    const requests = Array.isArray(data.toolRequests) ? data.toolRequests : [];
    if (data.toolRequests !== undefined && !Array.isArray(data.toolRequests)) {
      this.issues.add("unexpected_shape", "An assistant message whose toolRequests is not a list", {
        line: at.line,
      });
    }
    for (const [i, tr] of requests.entries()) {
      if (!isObj(tr)) {
        this.issues.add("unexpected_shape", "A tool request that is not an object", {
          line: at.line,
        });
        continue;
      }
      this.call(tr.toolCallId, tr.name, tr.arguments, at, block++, i, model, {
        mcpServer: nonEmpty(tr.mcpServerName),
      });
    }
  }

  private call(
    idValue: unknown,
    nameValue: unknown,
    args: unknown,
    at: At,
    block: number,
    index: number,
    model: string | undefined,
    extra: { mcpServer?: string; userRequested?: boolean } = {},
  ): void {
    const name = nonEmpty(nameValue);
    const callId = nonEmpty(idValue);
    let kind: OperationKind = name ? classifyTool(name) : "other";
    if (extra.mcpServer) kind = "mcp";
    const op = this.base(kind, at, { completeness: "incomplete", model });
    if (name) op.tool = name;
    if (callId) op.native_id = callId;
    const target = targetOf(args);
    if (target) op.target = target;
    if (args !== undefined) op.request = this.sink.json(args);
    const summary = summarizeToolInput(args);
    if (summary) op.summary = summary;
    const ext: Json = {};
    if (extra.mcpServer) ext.mcp_server = extra.mcpServer;
    if (extra.userRequested) ext.user_requested = true;
    if (Object.keys(ext).length) op.extensions = { [SOURCE]: ext };
    const rec = this.emit(at, block, `call:${callId ?? index}`, op);
    if (callId) {
      this.state.open[callId] = rec;
      this.state.calls[callId] = rec.id;
      this.state.callOrder.push(callId);
    }
  }

  /** A call the assistant message did not list (a tool the user ran): its start is its call. */
  private started(type: string, data: Json, at: At): void {
    const callId = nonEmpty(data.toolCallId);
    if (callId && this.state.calls[callId]) return this.count(type);
    this.call(data.toolCallId, data.toolName, data.arguments, at, 0, 0, nonEmpty(data.model), {
      mcpServer: nonEmpty(data.mcpServerName),
      userRequested: type === "tool.user_requested",
    });
  }

  private complete(data: Json, at: At): void {
    const callId = nonEmpty(data.toolCallId);
    const result = isObj(data.result) ? data.result : undefined;
    const error = isObj(data.error) ? data.error : undefined;
    const content = result && typeof result.content === "string" ? result.content : undefined;
    const exitCode = isObj(data.shellExecution) ? num(data.shellExecution.exitCode) : undefined;
    const exit = exitCode ?? (content !== undefined ? exitCodeInText(content) : undefined);
    const isError = data.success === false || error !== undefined ||
      (exit !== undefined && exit !== 0);
    const response = this.sink.json(result ?? (error ? { error } : {}));
    const ext: Json = {};
    if (error && nonEmpty(error.code)) ext.error_code = error.code;
    if (exitCode !== undefined) ext.exit_code = exitCode;
    const open = callId ? this.state.open[callId] : undefined;
    if (open) {
      delete this.state.open[callId!];
      const op = open.op;
      op.completeness = "complete";
      op.response = response;
      op.is_error = isError;
      op.provenance = {
        ...op.provenance,
        completion: { epoch: this.epoch, source_range: at.range },
        record_ids: [...(op.provenance.record_ids ?? []), at.id],
      };
      const spawned = this.state.subagents[callId!];
      if (spawned) op.spawns = subagentConnection(callId!);
      if (Object.keys(ext).length) {
        op.extensions = {
          ...op.extensions,
          [SOURCE]: { ...(op.extensions?.[SOURCE] as Json), ...ext },
        };
      }
      this.records.set(open.id, open);
      this.conns.add(open.connection);
      this.trimCalls();
      return;
    }
    if (callId && this.state.calls[callId]) {
      this.issues.add("repeated_result", "A tool result written again for an answered call", {
        severity: "info",
        line: at.line,
      });
      return;
    }
    const op = this.base("other", at, { completeness: "unmatched", response, is_error: isError });
    if (callId) op.native_id = callId;
    op.provenance = { ...op.provenance, completion: { epoch: this.epoch, source_range: at.range } };
    if (Object.keys(ext).length) op.extensions = { [SOURCE]: ext };
    this.emit(at, 0, `result:${callId ?? at.line}`, op);
  }

  private trimCalls(): void {
    const s = this.state;
    while (s.callOrder.length > MAX_CALLS) {
      const old = s.callOrder.shift()!;
      if (!s.open[old]) delete s.calls[old];
    }
    capList(s.callOrder, MAX_CALLS);
  }

  private tokens(u: Json, at: At): void {
    const model = nonEmpty(u.model);
    const usage = {
      input: num(u.inputTokens) ?? 0,
      output: num(u.outputTokens) ?? 0,
      cache_read: num(u.cacheReadTokens) ?? 0,
      cache_write: num(u.cacheWriteTokens) ?? 0,
    };
    if (usage.input + usage.output + usage.cache_read + usage.cache_write === 0) return;
    if (!model) {
      this.issues.add("usage_without_model", "Token usage that names no model; not attributed", {
        severity: "info",
        line: at.line,
      });
      return;
    }
    // One model call is one key: a usage record and an assistant.usage of the same call count once.
    const key = stableId("u_", SOURCE, this.sid(), nonEmpty(u.apiCallId) ?? at.id);
    this.usage.push({ key, model, usage });
  }

  private noteModel(model: string, at: At): void {
    const s = this.state;
    if (s.models.includes(model)) return;
    s.models.push(model);
    s.modelEvidence.push({ file: this.unit.path, line: at.line, field: "data.model" });
    if (s.models.length === 2) {
      this.issues.add(
        "conflicting_model",
        "The session used several models; the connection's model is left absent and each operation carries its own",
        { severity: "info", line: at.line },
      );
    }
  }

  /** The connections this pass wrote to: main, and each sub-agent linked to its call. */
  connections(): Connection[] {
    const s = this.state;
    const out: Connection[] = [];
    for (const id of new Set(["main", ...this.conns])) {
      const server: Connection["server"] = { evidence: [] };
      if (s.models.length === 1) {
        server.model = s.models[0];
        server.evidence.push(...s.modelEvidence.slice(0, 1));
      }
      const client: Connection["client"] = { agent: SOURCE, evidence: [] };
      if (s.meta.version) {
        client.version = s.meta.version;
        if (s.meta.versionEvidence) client.evidence.push(s.meta.versionEvidence);
      }
      if (id === "main") {
        out.push({ id, kind: "main", client, server });
        continue;
      }
      const call = id.slice("subagent:".length);
      const c: Connection = { id, kind: "subagent", client, server };
      if (s.calls[call]) c.parent_op = s.calls[call];
      if (s.subagents[call]) c.agent_type = s.subagents[call];
      out.push(c);
    }
    return out;
  }
}
