/**
 * One Qwen Code import pass. Qwen Code writes a session as JSONL records in Claude Code's
 * envelope (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`, `version`,
 * `gitBranch`) around Gemini `Content` (`message: {role, parts}`): `user` (a prompt; a `cron`
 * or `notification` subtype is not the user's words), `assistant` (thought, text and
 * `functionCall` parts, `model`, `usageMetadata`), `tool_result` (`functionResponse` parts and
 * `toolCallResult`: status, error type), and `system` records (`custom_title`,
 * `chat_compression`, `rewind`, `slash_command`, `ui_telemetry`, ...). Records are only ever
 * appended; a call stays open in the state until its result arrives, in this pass or a later
 * one, and is then emitted again under the same id.
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
import { callsOfParts, isThoughtPart, responsesOf } from "../gemini/parts.ts";

export const SOURCE = "qwen";

/** Version of `QwenState`: a saved state of another version is dropped, the file read again. */
export const STATE_VERSION = 1;

/** How many answered call ids the state remembers (a repeated result is not a new one). */
const MAX_DONE = 2048;

/** What a Qwen Code pass keeps for the next one (plain JSON). */
export interface QwenState {
  v: number;
  sid: string | null;
  meta: {
    cwd?: string;
    version?: string;
    versionEvidence?: Evidence;
    branch?: string;
    title?: string;
    started?: number;
    agentName?: string;
  };
  models: string[];
  modelEvidence: Evidence[];
  lastTs: number | null;
  /** Calls read without their result yet, by call id. */
  open: Record<string, DraftRecord>;
  /** Recently answered call ids. */
  done: string[];
  /** Records that are bookkeeping (telemetry, snapshots): counted by type and subtype. */
  counted: Record<string, number>;
  lastPrompt?: string;
  /** A sub-agent transcript's first prompt: the `prompt` of the `agent` call that started it. */
  firstPrompt?: string;
  /** That call's operation in the parent chat, once found. */
  parentOp?: string;
}

export function freshState(): QwenState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: {},
    models: [],
    modelEvidence: [],
    lastTs: null,
    open: {},
    done: [],
    counted: {},
  };
}

/** `system` subtypes that only serve the CLI's own UI or bookkeeping: counted, not shown. */
const COUNTED_SYSTEM = new Set([
  "attribution_snapshot",
  "at_command",
  "agent_bootstrap",
  "ui_telemetry",
]);

/** `system` subtypes shown as events, and the canonical event name of each. */
const EVENT_SYSTEM: Record<string, string> = {
  chat_compression: "compaction",
  rewind: "rewind",
  slash_command: "command",
  agent_launch_prompt: "system",
};

/** The id of the operation a record's part becomes (`call:<id>` for a function call). */
export function callOpId(sid: string, uuid: string, part: string): string {
  return stableId("op_", SOURCE, sid, uuid, part);
}

/** The text of a list of parts without the thinking (text parts only). */
function textOf(parts: unknown): string {
  if (typeof parts === "string") return parts;
  if (!Array.isArray(parts)) return "";
  return parts.filter((p) => isObj(p) && typeof p.text === "string" && p.thought !== true)
    .map((p) => (p as Json).text as string).join("\n");
}

/** One import pass over one Qwen Code JSONL file (a chat or a sub-agent transcript). */
export class QwenPass {
  readonly sink = new PayloadSink();
  readonly issues: IssueTally;
  readonly records = new Map<string, DraftRecord>();
  readonly usage: UsageEntry[] = [];
  firstTs: number | null = null;
  lastTs: number | null = null;
  /** Records this pass read. */
  read = 0;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: QwenState,
    readonly fallbackId: string,
    readonly connection: { id: string; kind: "main" | "subagent"; sessionId?: string },
  ) {
    this.issues = new IssueTally(unit.path);
  }

  sid(): string {
    return this.connection.sessionId ?? (this.state.sid ?? this.fallbackId);
  }

  private seeTime(v: unknown): number | null {
    const ts = parseTimeMs(v);
    if (ts !== null) {
      this.firstTs = this.firstTs === null ? ts : Math.min(this.firstTs, ts);
      this.lastTs = this.lastTs === null ? ts : Math.max(this.lastTs, ts);
    }
    return ts;
  }

  private count(key: string): void {
    this.state.counted[key] = (this.state.counted[key] ?? 0) + 1;
  }

  record(rec: Json, range: SourceRange): void {
    this.read++;
    const s = this.state;
    const type = nonEmpty(rec.type);
    if (!type) {
      this.issues.add(
        "unknown_record_type",
        `A Qwen Code record without a type (keys ${JSON.stringify(Object.keys(rec).slice(0, 5))})`,
        { line: range.lines[0] },
      );
      return;
    }
    if (!s.sid && nonEmpty(rec.sessionId)) s.sid = nonEmpty(rec.sessionId)!;
    const own = this.seeTime(rec.timestamp);
    if (own !== null) {
      s.meta.started = s.meta.started === undefined ? own : Math.min(s.meta.started, own);
      s.lastTs = own;
    }
    const ts = own ?? s.lastTs;
    if (nonEmpty(rec.cwd)) s.meta.cwd ??= nonEmpty(rec.cwd);
    const version = nonEmpty(rec.version);
    if (version && version !== "unknown" && !s.meta.version) {
      s.meta.version = version;
      s.meta.versionEvidence = { file: this.unit.path, line: range.lines[0], field: "version" };
    }
    if (nonEmpty(rec.gitBranch)) s.meta.branch = nonEmpty(rec.gitBranch);
    if (nonEmpty(rec.agentName)) s.meta.agentName ??= nonEmpty(rec.agentName);
    const uuid = nonEmpty(rec.uuid) ?? `line${range.lines[0]}`;
    const at = { uuid, ts, range, line: range.lines[0] };
    const message = isObj(rec.message) ? rec.message : undefined;
    if (rec.message !== undefined && !message) {
      this.issues.add("unexpected_shape", `A ${type} record whose message is not an object`, {
        line: range.lines[0],
      });
    }
    const parts = message?.parts;
    if (message && parts !== undefined && !Array.isArray(parts)) {
      this.issues.add("unexpected_shape", `A ${type} record whose parts are not a list`, {
        line: range.lines[0],
      });
    }
    switch (type) {
      case "user":
        return this.user(rec, parts, at);
      case "assistant":
        return this.assistant(rec, parts, at);
      case "tool_result":
        return this.results(rec, parts, at);
      case "system":
        return this.system(rec, at);
      default:
        this.issues.add(
          "unknown_record_type",
          `Unknown Qwen Code record type ${JSON.stringify(type)}`,
          {
            line: range.lines[0],
          },
        );
    }
  }

  // ---- operations ----

  private base(
    kind: OperationKind,
    at: At,
    extra: Partial<OperationDraft> = {},
  ): OperationDraft {
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: at.range, record_ids: [at.uuid] },
      ...extra,
    };
    if (at.ts !== null) op.ts_ms = at.ts;
    return op;
  }

  private emit(at: At, block: number, part: string, op: OperationDraft): DraftRecord {
    const id = callOpId(this.sid(), at.uuid, part);
    const rec: DraftRecord = {
      id,
      connection: this.connection.id,
      order: orderKey(at.ts, fileRank(this.unit), at.line, block),
      op,
    };
    this.records.set(id, rec);
    return rec;
  }

  private user(rec: Json, parts: unknown, at: At): void {
    const list = Array.isArray(parts) ? parts : [];
    if (list.length && list.every((p) => isObj(p) && isObj(p.functionResponse))) {
      // Results written as a user message: the same as a tool_result record.
      return this.results(rec, parts, at);
    }
    const text = textOf(parts);
    const subtype = nonEmpty(rec.subtype);
    const display = isObj(rec.systemPayload) ? nonEmpty(rec.systemPayload.displayText) : undefined;
    if (subtype === "notification") {
      // A background agent's report, put in the user's place: shown, not the user's words.
      this.emit(
        at,
        0,
        "event",
        this.base("event", at, { event: "notification", text: display ?? text }),
      );
      return;
    }
    const attachments = list.filter((p) => isObj(p) && p.text === undefined).length;
    if (!text && !attachments) return;
    const injected = subtype === "cron" || isInjectedText(text);
    if (!injected && this.connection.kind === "main") this.state.lastPrompt = text;
    if (this.connection.kind === "subagent") this.state.firstPrompt ??= text;
    const ext: Json = {};
    if (subtype) ext.subtype = subtype;
    if (attachments) ext.attachments = attachments;
    if (nonEmpty(rec.externalInputKind)) ext.external_input = rec.externalInputKind;
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

  private assistant(rec: Json, parts: unknown, at: At): void {
    const model = nonEmpty(rec.model);
    if (model) this.noteModel(model, at.range);
    const list = Array.isArray(parts) ? parts : [];
    let block = 0;
    for (const [i, p] of list.entries()) {
      if (isThoughtPart(p)) {
        if (!p.text.trim()) continue;
        this.emit(
          at,
          block++,
          `thought:${i}`,
          this.base("thinking", at, { text: p.text, model, response: this.sink.text(p.text) }),
        );
      } else if (isObj(p) && typeof p.text === "string") {
        if (!p.text) continue;
        this.emit(
          at,
          block++,
          `text:${i}`,
          this.base("reply", at, { text: p.text, model, response: this.sink.text(p.text) }),
        );
      } else if (isObj(p) && isObj(p.functionCall)) {
        const [call] = callsOfParts([p]);
        this.call(call, at, block++, i, model);
      } else if (isObj(p)) {
        this.issues.add(
          "unknown_part",
          `An assistant part with keys ${JSON.stringify(Object.keys(p).slice(0, 4))}; not shown`,
          { severity: "info", line: at.line },
        );
      }
    }
    const u = isObj(rec.usageMetadata) ? rec.usageMetadata : undefined;
    if (u) {
      const input = num(u.promptTokenCount) ?? 0, cached = num(u.cachedContentTokenCount) ?? 0;
      const usage = {
        input: Math.max(0, input - cached),
        output: (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0),
        cache_read: cached,
        cache_write: 0,
      };
      if (usage.input + usage.output + usage.cache_read > 0) {
        if (model) {
          this.usage.push({ key: stableId("u_", SOURCE, this.sid(), at.uuid), model, usage });
        } else {
          this.issues.add(
            "usage_without_model",
            "Token usage on a record that names no model; not attributed",
            { severity: "info", line: at.line },
          );
        }
      }
    }
  }

  private call(tc: Json, at: At, block: number, index: number, model?: string): void {
    const name = nonEmpty(tc.name);
    let kind: OperationKind = name ? classifyTool(name) : "other";
    if (kind === "other" && name?.includes("__")) kind = "mcp";
    const callId = nonEmpty(tc.id);
    const op = this.base(kind, at, { completeness: "incomplete", model });
    if (name) op.tool = name;
    if (callId) op.native_id = callId;
    if (tc.args !== undefined && !isObj(tc.args)) {
      this.issues.add("unexpected_shape", "A function call whose args are not an object", {
        line: at.line,
      });
    }
    const target = targetOf(tc.args);
    if (target) op.target = target;
    if (tc.args !== undefined) op.request = this.sink.json(tc.args);
    const summary = summarizeToolInput(tc.args);
    if (summary) op.summary = summary;
    const rec = this.emit(at, block, `call:${callId ?? index}`, op);
    if (callId) this.state.open[callId] = rec;
  }

  private results(rec: Json, parts: unknown, at: At): void {
    const tcr = isObj(rec.toolCallResult) ? rec.toolCallResult : {};
    const list = Array.isArray(parts) ? parts : [];
    for (const [i, part] of list.entries()) {
      const [fr] = responsesOf([part]);
      if (!fr) continue;
      const callId = fr.id ?? nonEmpty(tcr.callId);
      // toolCallResult describes the call the record is for (one call per record).
      const meta = callId && nonEmpty(tcr.callId) === callId ? tcr : {};
      const status = nonEmpty(meta.status);
      const exit = fr.output !== undefined ? exitCodeInText(fr.output) : undefined;
      const isError = fr.error || status === "error" || status === "cancelled" ||
        (exit !== undefined && exit !== 0);
      const ext: Json = {};
      if (status && status !== "success") ext.status = status;
      if (nonEmpty(meta.errorType)) ext.error_type = meta.errorType;
      const open = callId ? this.state.open[callId] : undefined;
      if (open) {
        delete this.state.open[callId!];
        this.state.done.push(callId!);
        const op = open.op;
        op.completeness = "complete";
        op.response = this.sink.json([part]);
        op.is_error = isError;
        op.provenance = {
          ...op.provenance,
          completion: { epoch: this.epoch, source_range: at.range },
          record_ids: [...(op.provenance.record_ids ?? []), at.uuid],
        };
        if (Object.keys(ext).length) {
          op.extensions = { ...op.extensions, [SOURCE]: { ...ext } };
        }
        this.records.set(open.id, open);
        continue;
      }
      if (callId && this.state.done.includes(callId)) {
        this.issues.add("repeated_result", "A tool result written again for an answered call", {
          severity: "info",
          line: at.line,
        });
        continue;
      }
      // A result whose call this file does not hold.
      const op = this.base(fr.name ? classifyTool(fr.name) : "other", at, {
        completeness: "unmatched",
        response: this.sink.json([part]),
        is_error: isError,
      });
      if (fr.name) op.tool = fr.name;
      if (callId) op.native_id = callId;
      op.provenance = {
        ...op.provenance,
        completion: { epoch: this.epoch, source_range: at.range },
      };
      if (Object.keys(ext).length) op.extensions = { [SOURCE]: ext };
      this.emit(at, i, `result:${callId ?? i}`, op);
    }
    capList(this.state.done, MAX_DONE);
  }

  private system(rec: Json, at: At): void {
    const subtype = nonEmpty(rec.subtype) ?? "(none)";
    const payload = isObj(rec.systemPayload) ? rec.systemPayload : {};
    if (subtype === "custom_title") {
      const title = nonEmpty(payload.customTitle);
      if (title) this.state.meta.title = title;
      this.count(`system:${subtype}`);
      return;
    }
    if (subtype === "ui_telemetry") {
      const ev = isObj(payload.uiEvent) ? payload.uiEvent : {};
      const name = nonEmpty(ev["event.name"]) ?? "";
      if (name.endsWith(".api_error")) {
        const text = nonEmpty(ev.error) ?? nonEmpty(ev.error_message) ?? "API error";
        this.emit(
          at,
          0,
          "api_error",
          this.base("event", at, {
            event: "error",
            text,
            is_error: true,
            ...(nonEmpty(ev.model) ? { model: nonEmpty(ev.model) } : {}),
            extensions: {
              [SOURCE]: { error_type: ev.error_type, status_code: ev.status_code },
            },
          }),
        );
        return;
      }
      this.count(`system:ui_telemetry:${name.replace(/^qwen-code\./, "") || "(none)"}`);
      return;
    }
    if (COUNTED_SYSTEM.has(subtype)) {
      this.count(`system:${subtype}`);
      return;
    }
    const event = EVENT_SYSTEM[subtype];
    if (event) {
      const text = nonEmpty(payload.displayText) ?? nonEmpty(payload.rawCommand) ??
        nonEmpty(payload.summary) ?? nonEmpty(payload.command) ?? subtype;
      this.emit(
        at,
        0,
        "event",
        this.base("event", at, {
          event,
          text,
          extensions: { [SOURCE]: { subtype } },
        }),
      );
      return;
    }
    this.issues.add(
      "unknown_system_subtype",
      `Unknown Qwen Code system record ${JSON.stringify(subtype)}`,
      {
        severity: "info",
        line: at.line,
      },
    );
  }

  private noteModel(model: string, range: SourceRange): void {
    const s = this.state;
    if (s.models.includes(model)) return;
    s.models.push(model);
    s.modelEvidence.push({ file: this.unit.path, line: range.lines[0], field: "model" });
    if (s.models.length === 2) {
      this.issues.add(
        "conflicting_model",
        "The chat used several models; the connection's model is left absent and each operation carries its own",
        { severity: "info", line: range.lines[0] },
      );
    }
  }

  connectionInfo(agentType?: string): Connection {
    const s = this.state;
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
    const c: Connection = { id: this.connection.id, kind: this.connection.kind, client, server };
    if (agentType) c.agent_type = agentType;
    if (this.connection.kind === "subagent" && s.parentOp) c.parent_op = s.parentOp;
    return c;
  }
}

interface At {
  uuid: string;
  ts: number | null;
  range: SourceRange;
  line: number;
}
