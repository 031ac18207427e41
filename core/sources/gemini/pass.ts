/**
 * One Gemini CLI import pass: message records upserted by id (the last record of an id wins),
 * `$set` rewrites and `$rewindTo` drops, then each message turned into operations whose ids
 * derive from message and tool-call ids, so a rewritten message replaces its operations.
 */
import { exitCodeInText } from "../../model/exit_code.ts";
import { isInjectedText } from "../../model/injected.ts";
import type { UsageEntry } from "../../model/delta.ts";
import { PayloadSink, stableId } from "../../model/payload.ts";
import { classifyTool, summarizeToolInput, targetOf } from "../../model/tools.ts";
import type { Connection, OperationKind, SourceRange } from "../../model/types.ts";
import type { SourceUnit } from "../types.ts";
import {
  capList,
  type DraftRecord,
  fileRank,
  isObj,
  isoOf,
  IssueTally,
  type Json,
  nonEmpty,
  num,
  type OperationDraft,
  orderKey,
  parseTimeMs,
  textOfParts,
} from "../_import_kit.ts";
import { callsOfParts, responsesOf } from "./parts.ts";
import { type GeminiState, type Msg, NeedsFullPass } from "./state.ts";

/** The fields `metadata()` reads; a `$set` of any other key is counted, not used. */
const METADATA_KEYS = new Set([
  "sessionId",
  "startTime",
  "start_time",
  "lastUpdated",
  "summary",
  "kind",
  "projectHash",
  "directories",
]);

/** The `Workspace Directories` the CLI lists in its injected session context. */
export function workspaceFromContext(text: string): string | undefined {
  const m = /Workspace Directories:\*{0,2}\s*\n\s*-\s+(\S.*)/.exec(text);
  return m ? m[1].trim() : undefined;
}

/** One import pass over one Gemini chat file (JSONL log or legacy JSON document). */
export class GeminiPass {
  readonly sink = new PayloadSink();
  readonly issues: IssueTally;
  readonly records = new Map<string, DraftRecord>();
  readonly usage: UsageEntry[] = [];
  /** Calls whose whole output the CLI kept in `tool-outputs/` (the log holds its head and tail). */
  readonly persisted: { op: OperationDraft; path: string }[] = [];
  /** Messages recorded in this pass (latest record per id), in first-seen order. */
  readonly changed = new Map<string, Msg>();
  /** Tool results recorded as user `functionResponse` parts, by call id. */
  readonly carried = new Map<string, unknown>();
  /** Ids of the tool calls this pass read, and those earlier passes read. */
  readonly knownCalls = new Set<string>();
  readonly priorIds: Set<string>;
  firstTs: number | null = null;
  lastTs: number | null = null;
  lastPrompt?: string;
  contextProject?: string;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: GeminiState,
    readonly fallbackId: string,
    readonly connection: { id: string; kind: "main" | "subagent"; sessionId?: string },
  ) {
    this.priorIds = new Set(state.order);
    this.issues = new IssueTally(unit.path);
  }

  get file(): string {
    return this.unit.path;
  }

  sid(): string {
    return this.connection.sessionId ?? (this.state.sid ??= this.fallbackId);
  }

  seeTime(v: unknown): number | null {
    const ts = parseTimeMs(v);
    if (ts !== null) {
      this.firstTs = this.firstTs === null ? ts : Math.min(this.firstTs, ts);
      this.lastTs = this.lastTs === null ? ts : Math.max(this.lastTs, ts);
    }
    return ts;
  }

  // ---- reading records ----

  record(value: unknown, range: SourceRange): void {
    if (!isObj(value)) {
      this.issues.add("not_object", "A line is valid JSON but not an object", {
        line: range.lines[0],
      });
      return;
    }
    if (typeof value.id === "string" || typeof value.id === "number") {
      this.upsert(String(value.id), value, range);
      return;
    }
    if (isObj(value.$set)) return this.set(value.$set, range);
    if (typeof value.$rewindTo === "string") return this.rewind(value.$rewindTo);
    if (typeof value.sessionId === "string") return this.metadata(value);
    this.issues.add(
      "unknown_record_type",
      `Unknown Gemini record with keys ${JSON.stringify(Object.keys(value).slice(0, 5))}`,
      { line: range.lines[0] },
    );
  }

  metadata(m: Json): void {
    const s = this.state;
    if (!s.sid && nonEmpty(m.sessionId)) s.sid = nonEmpty(m.sessionId)!;
    s.meta.started ??= isoOf(this.seeTime(m.startTime ?? m.start_time));
    const upd = isoOf(this.seeTime(m.lastUpdated));
    if (upd) s.meta.updated = upd;
    if (nonEmpty(m.summary)) s.meta.summary = nonEmpty(m.summary);
    if (nonEmpty(m.kind)) s.meta.kind = nonEmpty(m.kind);
    if (nonEmpty(m.projectHash)) s.meta.projectHash = nonEmpty(m.projectHash);
    const dirs = Array.isArray(m.directories) ? m.directories : [];
    if (typeof dirs[0] === "string") s.meta.project ??= dirs[0];
  }

  upsert(id: string, rec: Json, range: SourceRange): void {
    const known = this.state.messages[id];
    const prev = this.changed.get(id);
    const first = prev?.first ?? known?.first ?? range.lines[0];
    if (!known && !prev) this.state.order.push(id);
    if (!known) this.state.messages[id] = { first, ops: [] };
    this.changed.set(id, { id, rec, first, range }); // an existing key keeps its place
  }

  /**
   * A `$set` patch. A message list in it is the conversation as the CLI reloads it (on
   * `--resume` it writes the history again in the model's wire form: calls as `functionCall`
   * parts, results as extra `<id>_response` messages): a message it names that is known keeps
   * its own record (where its calls, statuses and results are), and a message it leaves out
   * stays, since it happened; only `$rewindTo` takes messages back.
   */
  set(patch: Json, range: SourceRange): void {
    if (Array.isArray(patch.messages)) {
      patch.messages.forEach((m, i) => {
        if (!isObj(m)) return;
        const id = m.id === undefined ? `#${range.lines[0]}.${i}` : String(m.id);
        if (this.state.messages[id] || this.changed.has(id)) return;
        this.upsert(id, m, range);
      });
    }
    const rest: Json = { ...patch };
    delete rest.messages;
    if (Object.keys(rest).length) this.metadata({ ...rest, sessionId: undefined });
    for (const k of Object.keys(rest)) {
      if (METADATA_KEYS.has(k)) continue;
      const counts = this.state.skipped ??= {};
      counts[`$set:${k}`] = (counts[`$set:${k}`] ?? 0) + 1;
    }
  }

  rewind(id: string): void {
    const at = this.state.order.indexOf(id);
    if (at === -1) return;
    this.drop(this.state.order.slice(at));
  }

  drop(ids: string[]): void {
    if (!ids.length) return;
    for (const id of ids) {
      if (this.priorIds.has(id)) throw new NeedsFullPass();
      this.changed.delete(id);
      delete this.state.messages[id];
    }
    const gone = new Set(ids);
    this.state.order = this.state.order.filter((id) => !gone.has(id));
  }

  // ---- turning messages into operations ----

  finish(): void {
    // Tool results carried by user messages complete calls recorded without one.
    for (const m of this.changed.values()) {
      if (m.rec.type !== "user" || !Array.isArray(m.rec.content)) continue;
      for (const part of m.rec.content) {
        if (isObj(part) && isObj(part.functionResponse) && nonEmpty(part.functionResponse.id)) {
          this.carried.set(nonEmpty(part.functionResponse.id)!, [part]);
        }
      }
    }
    for (const m of this.changed.values()) {
      const calls = Array.isArray(m.rec.toolCalls) ? m.rec.toolCalls : callsOfParts(m.rec.content);
      for (const tc of calls) {
        if (isObj(tc) && nonEmpty(tc.id)) this.knownCalls.add(nonEmpty(tc.id)!);
      }
    }
    for (const id of this.state.callIds) this.knownCalls.add(id);
    for (const m of this.changed.values()) this.message(m);
    const s = this.state;
    const seen = new Set(s.callIds);
    for (const id of this.knownCalls) if (!seen.has(id)) s.callIds.push(id);
    capList(s.callIds, 2048);
  }

  opId(msgId: string, part: string): string {
    return stableId("op_", "gemini", this.sid(), msgId, part);
  }

  emit(m: Msg, block: number, part: string, op: OperationDraft, ts: number | null, out: string[]) {
    const id = this.opId(m.id, part);
    out.push(id);
    this.records.set(id, {
      id,
      connection: this.connection.id,
      order: orderKey(ts, fileRank(this.unit), m.first, block),
      op,
    });
  }

  /** Records a field of an unexpected type (null, a string for an object, ...). */
  shape(what: string, m: Msg): void {
    this.issues.add("unexpected_shape", `Gemini message with ${what}`, {
      line: m.range.lines[0],
    });
  }

  message(m: Msg): void {
    const rec = m.rec;
    const content = rec.content ?? rec.parts;
    if (content !== undefined && typeof content !== "string" && !Array.isArray(content)) {
      this.shape("content that is neither text nor a list of parts", m);
    }
    for (const k of ["toolCalls", "thoughts"]) {
      if (rec[k] !== undefined && rec[k] !== null && !Array.isArray(rec[k])) {
        this.shape(`${k} that is not a list`, m);
      }
    }
    if (rec.tokens !== undefined && !isObj(rec.tokens)) {
      this.shape("tokens that are not an object", m);
    }
    const own = this.seeTime(rec.timestamp);
    const ts = own ?? this.state.lastTs;
    if (own !== null) this.state.lastTs = own;
    const type = nonEmpty(rec.type) ?? nonEmpty(rec.role) ?? "(none)";
    const provenance = { epoch: this.epoch, source_range: m.range };
    const ops: string[] = [];
    const base = (kind: OperationKind, extra: Partial<OperationDraft> = {}): OperationDraft => {
      const op: OperationDraft = { kind, completeness: "complete", provenance, ...extra };
      if (ts !== null) op.ts_ms = ts;
      return op;
    };
    switch (type) {
      case "user": {
        const parts = Array.isArray(rec.content) ? rec.content : [];
        const onlyResults = parts.length > 0 &&
          parts.every((p) => isObj(p) && isObj(p.functionResponse));
        if (onlyResults) {
          // Results of calls that were read are attached to them; others are continuations.
          for (const [i, part] of parts.entries()) {
            const fr = (part as Json).functionResponse as Json;
            const callId = nonEmpty(fr.id);
            if (callId && this.knownCalls.has(callId)) continue;
            const name = nonEmpty(fr.name);
            const op = base(name ? classifyTool(name) : "other", {
              completeness: "unmatched",
              response: this.sink.json([part]),
            });
            if (name) op.tool = name;
            if (callId) op.native_id = callId;
            op.provenance = { ...op.provenance, completion: op.provenance };
            this.emit(m, i, `result:${callId ?? i}`, op, ts, ops);
          }
          break;
        }
        const text = textOfParts(rec.content ?? rec.parts);
        const attachments = parts.filter((p) => isObj(p) && p.text === undefined).length;
        if (!text && !attachments) break;
        const injected = isInjectedText(text);
        if (injected) this.contextProject ??= workspaceFromContext(text);
        else this.lastPrompt = text;
        this.emit(
          m,
          0,
          "prompt",
          base("prompt", {
            text,
            ...(injected ? { injected: true } : {}),
            request: this.sink.text(text),
            ...(attachments ? { extensions: { gemini: { attachments } } } : {}),
          }),
          ts,
          ops,
        );
        break;
      }
      case "gemini":
      case "model":
      case "assistant":
        this.assistant(m, ts, base, ops);
        break;
      case "info":
      case "error":
      case "warning":
        this.emit(
          m,
          0,
          "event",
          base("event", {
            event: type,
            text: textOfParts(rec.content),
            ...(type === "error" ? { is_error: true } : {}),
          }),
          ts,
          ops,
        );
        break;
      default:
        this.issues.add(
          "unknown_message_type",
          `Unknown Gemini message type ${JSON.stringify(type)}`,
          { line: m.range.lines[0] },
        );
    }
    const known = this.state.messages[m.id];
    if (known) {
      if (known.ops.some((id) => !ops.includes(id)) && this.priorIds.has(m.id)) {
        throw new NeedsFullPass();
      }
      known.ops = ops;
    }
  }

  assistant(
    m: Msg,
    ts: number | null,
    base: (kind: OperationKind, extra?: Partial<OperationDraft>) => OperationDraft,
    ops: string[],
  ): void {
    const rec = m.rec;
    const model = nonEmpty(rec.model);
    if (model) this.noteModel(model, m.range, m.id);
    let block = 0;
    const thoughts = Array.isArray(rec.thoughts) ? rec.thoughts : [];
    for (const [i, t] of thoughts.entries()) {
      if (!isObj(t)) continue;
      const text = [nonEmpty(t.subject), nonEmpty(t.description)].filter(Boolean).join(": ");
      if (!text) continue;
      this.emit(
        m,
        block++,
        `thought:${i}`,
        base("thinking", { text, model, response: this.sink.text(text) }),
        ts,
        ops,
      );
    }
    const text = textOfParts(rec.content ?? rec.parts);
    if (text) {
      this.emit(
        m,
        block++,
        "reply",
        base("reply", { text, model, response: this.sink.text(text) }),
        ts,
        ops,
      );
    }
    const calls = Array.isArray(rec.toolCalls) ? rec.toolCalls : callsOfParts(rec.content);
    for (const [i, tc] of calls.entries()) {
      if (!isObj(tc)) {
        this.shape("a tool call that is not an object", m);
        continue;
      }
      if (tc.args !== undefined && !isObj(tc.args)) {
        this.shape("tool-call args that are not an object", m);
      }
      const op = this.toolOp(tc, base, model);
      this.emit(m, block++, `tool:${nonEmpty(tc.id) ?? i}`, op, ts, ops);
    }
    if (isObj(rec.tokens)) {
      const t = rec.tokens;
      const input = num(t.input) ?? 0, cached = num(t.cached) ?? 0;
      const usage = {
        input: Math.max(0, input - cached) + (num(t.tool) ?? 0),
        output: (num(t.output) ?? 0) + (num(t.thoughts) ?? 0),
        cache_read: cached,
        cache_write: 0,
      };
      if (usage.input + usage.output + usage.cache_read > 0) {
        if (model) {
          this.usage.push({ key: stableId("u_", "gemini", this.sid(), m.id), model, usage });
        } else {
          this.issues.add(
            "usage_without_model",
            "Token usage on a message that names no model; not attributed",
            { severity: "info", line: m.range.lines[0] },
          );
        }
      }
    }
  }

  toolOp(
    tc: Json,
    base: (kind: OperationKind, extra?: Partial<OperationDraft>) => OperationDraft,
    model: string | undefined,
  ): OperationDraft {
    const name = nonEmpty(tc.name);
    let kind: OperationKind = name ? classifyTool(name) : "other";
    if (kind === "other" && name?.includes("__")) kind = "mcp";
    const args = isObj(tc.args) ? tc.args : undefined;
    const callId = nonEmpty(tc.id);
    const result = tc.result ?? (callId ? this.carried.get(callId) : undefined);
    const status = nonEmpty(tc.status);
    const finished = status === "success" || status === "error" || status === "cancelled" ||
      (status === undefined && result !== undefined);
    const op = base(kind, { completeness: finished ? "complete" : "incomplete", model });
    if (name) op.tool = name;
    if (callId) op.native_id = callId;
    const target = targetOf(args);
    if (target) op.target = target;
    if (tc.args !== undefined) op.request = this.sink.json(tc.args);
    const ext: Json = {};
    if (nonEmpty(tc.displayName)) ext.display_name = tc.displayName;
    if (status && status !== "success") ext.status = status;
    if (result !== undefined && result !== null) {
      op.response = this.sink.json(result);
      const responses = responsesOf(result);
      const exit = responses.map((r) => (r.output ? exitCodeInText(r.output) : undefined))
        .find((c) => c !== undefined);
      const full = responses.map((r) => /For full output see: (\S+)/.exec(r.output ?? "")?.[1])
        .find(Boolean);
      if (full) {
        ext.full_output_path = full;
        this.persisted.push({ op, path: full });
      }
      op.is_error = status === "error" || status === "cancelled" ||
        responses.some((r) => r.error) || (exit !== undefined && exit !== 0);
    } else if (finished) {
      op.response = { missing: true, reason: "the log records no result for this call" };
      op.is_error = status === "error" || status === "cancelled";
    }
    if (Object.keys(ext).length) op.extensions = { gemini: ext };
    const summary = summarizeToolInput(tc.args);
    if (summary) op.summary = summary;
    if (finished) op.provenance = { ...op.provenance, completion: op.provenance };
    return op;
  }

  noteModel(model: string, range: SourceRange, message: string): void {
    const s = this.state;
    const line = range.lines[0];
    const known = s.models.indexOf(model);
    if (known >= 0) {
      // The same message again, later in the file: where one pass over the file finds it last.
      const evidence = s.modelEvidence[known];
      if (s.modelMessages?.[known] === message && evidence && evidence.line! < line) {
        s.modelEvidence[known] = { ...evidence, line };
      }
      return;
    }
    s.models.push(model);
    s.modelEvidence.push({ file: this.file, line, field: "message.model" });
    (s.modelMessages ??= [])[s.models.length - 1] = message;
    if (s.models.length === 2) {
      this.issues.add(
        "conflicting_model",
        "The chat used several models; the connection's model is left absent and each operation carries its own",
        { severity: "info", line: range.lines[0] },
      );
    }
  }
}

export function connectionOf(state: GeminiState, conn: GeminiPass["connection"]): Connection {
  const server: Connection["server"] = { evidence: [] };
  if (state.models.length === 1) {
    server.model = state.models[0];
    server.evidence.push(...state.modelEvidence.slice(0, 1));
  }
  return { id: conn.id, kind: conn.kind, client: { agent: "gemini", evidence: [] }, server };
}
