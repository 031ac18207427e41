/**
 * One Cursor IDE chat (a `composerData` row and its bubbles) as canonical operations: prompts,
 * replies and thinking from bubble text, tool calls from `toolFormerData` (rawArgs, params and
 * result are JSON strings), usage from `tokenCount`. SQLite rows have no lines: an operation's
 * `source_range.lines` holds the bubble's place in the conversation and `record_ids` name the
 * row it came from.
 */
import type { PayloadSink } from "../../model/payload.ts";
import { stableId } from "../../model/payload.ts";
import type { SessionDelta, UsageEntry } from "../../model/delta.ts";
import { classifyTool, summarizeToolInput, targetOf } from "../../model/tools.ts";
import type { Connection, OperationKind, PayloadRef, SessionIssue } from "../../model/types.ts";
import type { SourceUnit } from "../types.ts";
import {
  addExtensions,
  type DeltaDraft,
  type DraftRecord,
  isObj,
  IssueTally,
  type Json,
  num,
  type OperationDraft,
  parseJsonText,
  str,
} from "../_import_kit.ts";
import { uriToPath } from "./uri.ts";

export const SOURCE = "cursor" as const;

/** Markers for bubble rows whose value is NULL or not JSON. */
export const NULL_VALUE = Symbol("NULL");
export const BAD_JSON = Symbol("invalid JSON");
/** Tool ids of `toolFormerData.tool`, for bubbles that carry no name. */
const TOOL_IDS: Record<number, string> = {
  9: "codebase_search",
  15: "run_terminal_cmd",
  38: "search_replace",
  39: "list_dir",
  40: "read_file",
  41: "grep",
  42: "glob_file_search",
};

/** Builds the delta of one chat from its composerData and bubble rows. */
export class ComposerBuilder {
  private readonly ops: DraftRecord[] = [];
  private readonly usage: UsageEntry[] = [];
  private readonly issues: IssueTally;
  private readonly models = new Set<string>();
  private readonly conn: Connection;
  private lastTs: number | null = null;
  private minTs: number | null = null;
  private maxTs: number | null = null;
  private projectPath?: string;
  private lastPrompt?: string;

  constructor(
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly sink: PayloadSink,
    private readonly cid: string,
    private readonly composer: Json,
    folder: string | undefined,
  ) {
    this.conn = {
      id: "main",
      kind: "main",
      client: { agent: SOURCE, evidence: [] },
      server: { evidence: [] },
    };
    this.projectPath = folder;
    this.issues = new IssueTally(unit.path);
  }

  issueList(): SessionIssue[] {
    return this.issues.list();
  }

  private issue(code: string, message: string, severity: SessionIssue["severity"] = "warning") {
    this.issues.add(code, message, { severity });
  }

  private seeTime(ts: number | undefined) {
    if (ts === undefined) return;
    this.minTs = this.minTs === null ? ts : Math.min(this.minTs, ts);
    this.maxTs = this.maxTs === null ? ts : Math.max(this.maxTs, ts);
  }

  private model(name: unknown, field: string) {
    // "default" is Cursor's automatic model choice, not a model.
    if (typeof name !== "string" || !name || name === "default") return undefined;
    if (!this.models.has(name)) {
      this.models.add(name);
      this.conn.server.evidence.push({ file: this.unit.path, field });
    }
    return name;
  }

  build(bubbleRows: Map<string, unknown>): DeltaDraft | null {
    const c = this.composer;
    const created = num(c.createdAt), updated = num(c.lastUpdatedAt);
    this.seeTime(created);
    this.seeTime(updated);
    this.lastTs = created ?? null;
    const composerModel = isObj(c.modelConfig)
      ? this.model(c.modelConfig.modelName, `composerData:${this.cid}.modelConfig.modelName`)
      : undefined;
    // The conversation: headers naming bubble rows (modern), or inline bubbles (old).
    const list: { id: string; bubble: unknown; where: string }[] = [];
    const map = isObj(c.conversationMap) ? c.conversationMap : {};
    const used = new Set<string>();
    if (Array.isArray(c.fullConversationHeadersOnly)) {
      for (const h of c.fullConversationHeadersOnly) {
        const id = isObj(h) ? str(h.bubbleId) : undefined;
        if (!id) {
          this.issue("malformed_value", "conversation headers without a bubbleId were skipped");
          continue;
        }
        used.add(id);
        const bubble = map[id] ?? bubbleRows.get(id);
        if (bubble === undefined) {
          this.issue(
            "missing_bubble",
            "bubbles named in the conversation but absent from the database",
          );
          continue;
        }
        list.push({ id, bubble, where: `bubbleId:${this.cid}:${id}` });
      }
    } else if (Array.isArray(c.conversation)) {
      for (const [i, b] of c.conversation.entries()) {
        const id = (isObj(b) && str(b.bubbleId)) || `#${i}`;
        list.push({ id, bubble: b, where: `composerData:${this.cid}.conversation[${i}]` });
      }
    } else if (c.fullConversationHeadersOnly !== undefined || c.conversation !== undefined) {
      this.issue(
        "malformed_value",
        "the chat's conversation is neither a header list nor an array",
      );
    }
    for (const [id, v] of bubbleRows) {
      if (used.has(id)) continue;
      if (v === NULL_VALUE) this.issue("null_value", "bubble rows with a NULL value were skipped");
      else if (v === BAD_JSON) {
        this.issue("malformed_value", "bubble rows that are not valid JSON were skipped");
      }
    }
    for (const [i, item] of list.entries()) {
      this.bubble(item.id, item.bubble, i + 1, item.where, composerModel);
    }
    if (!this.ops.length) return null;
    return this.finish(created, updated);
  }

  private bubble(id: string, b: unknown, line: number, where: string, composerModel?: string) {
    if (b === NULL_VALUE) {
      this.issue("null_value", "bubble rows with a NULL value were skipped");
      return;
    }
    if (b === BAD_JSON || !isObj(b)) {
      this.issue("malformed_value", "bubbles that are not a JSON object were skipped");
      return;
    }
    const ts = bubbleTime(b);
    this.seeTime(ts);
    if (ts !== undefined) this.lastTs = this.lastTs === null ? ts : Math.max(this.lastTs, ts);
    const type = b.type;
    const text = bubbleText(b);
    if (type === 1 || type === "user") {
      if (!this.projectPath) {
        const dir = str(b.workspaceProjectDir) ??
          (Array.isArray(b.workspaceUris) ? uriToPath(str(b.workspaceUris[0])) : undefined);
        if (dir) this.projectPath = dir;
      }
      if (!text.trim()) return;
      const rec = this.push(
        id,
        0,
        line,
        where,
        "prompt",
        { text, request: this.sink.text(text) },
        ts,
      );
      this.lastPrompt = text;
      if (typeof b.requestId === "string") {
        addExtensions(rec.op, SOURCE, { request_id: b.requestId });
      }
      return;
    }
    if (type !== 2 && type !== "ai" && type !== "assistant") {
      this.issue("unknown_bubble_type", `unknown bubble type ${JSON.stringify(type ?? null)}`);
      if (text.trim()) this.push(id, 0, line, where, "event", { event: "bubble", text }, ts);
      return;
    }
    if (!this.projectPath) {
      const dir = str(b.workspaceProjectDir) ??
        (Array.isArray(b.workspaceUris) ? uriToPath(str(b.workspaceUris[0])) : undefined);
      if (dir) this.projectPath = dir;
    }
    const model =
      (isObj(b.modelInfo)
        ? this.model(b.modelInfo.modelName, `${where}.modelInfo.modelName`)
        : undefined) ?? composerModel;
    const common: Partial<OperationDraft> = model ? { model } : {};
    const thinking = thinkingText(b);
    if (thinking) {
      this.push(id, 0, line, where, "thinking", {
        ...common,
        text: thinking,
        response: this.sink.text(thinking),
      }, ts);
    }
    if (text.trim()) {
      const rec = this.push(id, 1, line, where, "reply", {
        ...common,
        text,
        response: this.sink.text(text),
      }, ts);
      if (Array.isArray(b.codeBlocks) && b.codeBlocks.length) {
        addExtensions(rec.op, SOURCE, { code_blocks: this.sink.json(b.codeBlocks) });
      }
    }
    if (b.toolFormerData !== undefined && b.toolFormerData !== null) {
      if (isObj(b.toolFormerData)) this.tool(id, b, b.toolFormerData, line, where, common, ts);
      else this.issue("malformed_value", "toolFormerData that is not an object was skipped");
    }
    const tc = isObj(b.tokenCount) ? b.tokenCount : undefined;
    if (tc && model) {
      const input = num(tc.inputTokens) ?? 0, output = num(tc.outputTokens) ?? 0;
      if (input || output) {
        this.usage.push({
          key: id,
          model,
          usage: { input, output, cache_read: 0, cache_write: 0 },
        });
      }
    }
  }

  private tool(
    id: string,
    b: Json,
    tf: Json,
    line: number,
    where: string,
    common: Partial<OperationDraft>,
    ts?: number,
  ) {
    const toolId = num(tf.tool);
    let name = str(tf.name);
    if (!name && toolId !== undefined) name = TOOL_IDS[toolId];
    if (!name) {
      this.issue("unknown_tool", `tool calls without a name (tool id ${toolId ?? "none"})`);
    }
    const raw = str(tf.rawArgs) || undefined;
    const params = str(tf.params) || undefined;
    const parsedRaw = raw ? parseJsonText(raw) : { ok: false as const };
    const parsedParams = params ? parseJsonText(params) : { ok: false as const };
    const input = parsedRaw.ok ? parsedRaw.value : parsedParams.ok ? parsedParams.value : undefined;
    let request: PayloadRef;
    if (raw) request = this.sink.text(raw);
    else if (params) request = this.sink.text(params);
    else if (isObj(tf.rawArgs) || isObj(tf.params)) {
      request = this.sink.json(tf.rawArgs ?? tf.params);
    } else request = { missing: true, reason: "the tool call recorded no arguments" };
    const status = str(tf.status);
    const result = tf.result;
    const resultText = typeof result === "string"
      ? result
      : result === undefined || result === null
      ? undefined
      : JSON.stringify(result);
    const parsedResult = typeof result === "string"
      ? mayTellOutcome(result) ? parseJsonText(result) : { ok: false as const }
      : { ok: true as const, value: result };
    const res = parsedResult.ok && isObj(parsedResult.value) ? parsedResult.value : {};
    const addStatus = isObj(tf.additionalData) ? str(tf.additionalData.status) : undefined;
    const exit = num(res.exitCodeV2) ?? num(res.exitCode);
    const kind: OperationKind = name ? classifyTool(name) : "other";
    const fields: Partial<OperationDraft> = {
      ...common,
      tool: name,
      native_id: str(tf.toolCallId),
      target: targetOf(input),
      summary: summarizeToolInput(input),
      request,
    };
    let errored = status === "error" || status === "cancelled" || tf.userDecision === "rejected" ||
      addStatus === "error" || res.rejected === true || (exit !== undefined && exit !== 0);
    switch (status) {
      case "loading":
      case "pending":
      case "running":
        fields.completeness = "incomplete";
        errored = false;
        break;
      case "completed":
      case "error":
      case "cancelled":
        fields.completeness = "complete";
        break;
      default:
        if (status !== undefined) {
          this.issue("unknown_tool_state", `unknown tool status ${JSON.stringify(status)}`);
        }
        fields.completeness = resultText !== undefined ? "complete" : "incomplete";
    }
    if (resultText !== undefined) fields.response = this.sink.text(resultText);
    if (fields.completeness === "complete") fields.is_error = errored;
    const rec = this.push(id, 2, line, where, kind, fields, ts);
    const ext: Json = {};
    if (status) ext.status = status;
    if (toolId !== undefined) ext.tool_id = toolId;
    if (typeof tf.userDecision === "string") ext.user_decision = tf.userDecision;
    if (exit !== undefined) ext.exit_code = exit;
    if (raw && params && raw !== params) ext.params = this.sink.text(params);
    if (isObj(tf.additionalData) && typeof tf.additionalData.codeblockId === "string") {
      ext.codeblock_id = tf.additionalData.codeblockId;
    }
    if (typeof b.capabilityType === "number") ext.capability_type = b.capabilityType;
    addExtensions(rec.op, SOURCE, ext);
  }

  private push(
    bubbleId: string,
    block: number,
    line: number,
    where: string,
    kind: OperationKind,
    fields: Partial<OperationDraft>,
    ts: number | undefined,
  ): DraftRecord {
    const op: OperationDraft = {
      kind,
      completeness: "complete",
      provenance: {
        epoch: this.epoch,
        source_range: { file: this.unit.path, lines: [line, line], bytes: [0, 0] },
        record_ids: [where],
      },
      ...fields,
    };
    if (ts !== undefined) op.ts_ms = ts;
    const rec: DraftRecord = {
      id: stableId("op_", this.cid, bubbleId, block),
      connection: "main",
      order: { ts_ms: this.lastTs, rank: this.unit.rank, line, block },
      op,
    };
    this.ops.push(rec);
    return rec;
  }

  private finish(created?: number, updated?: number): DeltaDraft {
    const c = this.composer;
    const issues = this.issueList();
    if (this.models.size === 1) this.conn.server.model = [...this.models][0];
    else if (this.models.size > 1) {
      issues.push({
        code: "conflicting_model",
        message: `several models answered (${
          [...this.models].join(", ")
        }); each operation keeps its own`,
        severity: "info",
        file: this.unit.path,
      });
    } else {
      issues.push({
        code: "missing_model",
        message: "no record names the model; server model left absent",
        severity: "info",
        file: this.unit.path,
      });
    }
    issues.push({
      code: "missing_client_version",
      message: "Cursor's chat store does not record the Cursor version; client version left absent",
      severity: "info",
      file: this.unit.path,
    });
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${this.cid}`,
      native_id: this.cid,
      source: SOURCE,
      project: this.projectPath ? { path: this.projectPath } : {},
    };
    if (typeof c.name === "string" && c.name) info.title = c.name;
    if (this.lastPrompt) info.last_prompt = this.lastPrompt;
    const start = created ?? this.minTs;
    const end = this.maxTs ?? updated;
    if (start !== null && start !== undefined) info.started_at = new Date(start).toISOString();
    if (end !== null && end !== undefined) info.ended_at = new Date(end).toISOString();
    const ext: Json = {};
    for (const k of ["status", "unifiedMode", "forceMode", "isAgentic", "subtitle"]) {
      if (c[k] !== undefined && c[k] !== null && c[k] !== "") ext[k] = c[k];
    }
    if (typeof c._v === "number") ext.schema = c._v;
    if (Array.isArray(c.subComposerIds) && c.subComposerIds.length) {
      ext.sub_composers = c.subComposerIds;
    }
    for (const k of ["totalLinesAdded", "totalLinesRemoved"]) {
      if (typeof c[k] === "number") ext[k] = c[k];
    }
    return {
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: true,
      connections: [this.conn],
      operations: this.ops,
      usage: this.usage,
      loss_windows: [],
      issues,
      extensions: Object.keys(ext).length ? { [SOURCE]: ext } : undefined,
    };
  }
}

/** A bubble's time: `createdAt` (ISO string or ms), else `timestamp`; often absent. */
function bubbleTime(b: Json): number | undefined {
  for (const v of [b.createdAt, b.timestamp]) {
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "string") {
      const t = Date.parse(v);
      if (!Number.isNaN(t)) return t;
    }
  }
  return undefined;
}

/** A bubble's visible text, from whichever field this version used. */
function bubbleText(b: Json): string {
  for (const k of ["text", "rawText", "content", "message"]) {
    const v = b[k];
    if (typeof v === "string" && v.trim()) return v;
  }
  const rich = typeof b.richText === "string"
    ? parseJsonText(b.richText)
    : { ok: true, value: b.richText };
  if (rich.ok && isObj(rich.value)) return lexicalText(rich.value).trim();
  return "";
}

/** Text of a Lexical editor state: text nodes, paragraphs on their own lines. */
function lexicalText(node: Json): string {
  if (typeof node.text === "string") return node.text;
  const kids = Array.isArray(node.children) ? node.children : isObj(node.root) ? [node.root] : [];
  const parts = kids.filter(isObj).map(lexicalText);
  return node.type === "root" ? parts.join("\n") : parts.join("");
}

function thinkingText(b: Json): string {
  if (isObj(b.thinking) && typeof b.thinking.text === "string" && b.thinking.text.trim()) {
    return b.thinking.text;
  }
  if (Array.isArray(b.allThinkingBlocks)) {
    return b.allThinkingBlocks.map((t) => (isObj(t) ? str(t.thinking) ?? str(t.text) ?? "" : ""))
      .filter(Boolean)
      .join("\n\n");
  }
  return "";
}

/**
 * Whether a tool result's JSON text may hold what the call's outcome is read from
 * (`exitCodeV2`, `exitCode`, `rejected`): only then is it parsed. A read's result is the file's
 * whole content (68 of the bench database's 114 MiB, 14,000 results): parsed again for keys it
 * does not hold, it took 180-200 ms of the import worker's 2.8 s. JSON can write a key's letters
 * otherwise only as `\u` escapes, so a text with one is parsed too.
 */
function mayTellOutcome(text: string): boolean {
  return text.includes("exitCode") || text.includes("rejected") || text.includes("\\u");
}
