/**
 * How each Claude Code record type becomes operations: user records (prompts, tool results),
 * assistant records (text, thinking, tool calls; a message rewritten as it grows is read once),
 * system records, summaries, session metadata, and attachments (hook errors, queued prompts,
 * task notifications and status).
 */
import {
  classifyTool,
  isInjectedText,
  type PayloadRef,
  summarizeToolInput,
  targetOf,
} from "../../model/mod.ts";
import { isObj, type Json, type OperationDraft, shortHash, str } from "../_import_kit.ts";
import { type At, type ClaudeFileBuilder, SOURCE } from "./builder.ts";
import { INLINE_TUR_CHARS, persistedOutputPath, trimToolUseResult } from "./tool_result.ts";

/** Record types that carry nothing for the timeline; counted in the session's extensions. */
const SKIPPED_TYPES = new Set([
  "file-history-snapshot",
  "progress",
  "queue-operation",
  // 2.1.3xx: each API request's parameters, its system prompt and message blobs (by hash),
  // the tools a turn used, a latch. The calls and replies are the assistant records already.
  "api-request",
  "api-request-shape",
  "api-request-blob",
  "tools-used",
  "atis-latch",
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
  // 2.1.3xx: the session's cost, durations and lines changed so far (the last one wins).
  "cost-state",
]);

export function readRecord(b: ClaudeFileBuilder, v: Json, at: At): void {
  let type = str(v.type);
  if (
    type === undefined && isObj(v.message) &&
    (v.message.role === "user" || v.message.role === "assistant")
  ) {
    type = v.message.role;
    b.issue("missing_record_type", "records without a type; read by their message.role", at.line);
  }
  switch (type) {
    case "user":
      b.noteEnvelope(v, at.line);
      return user(b, v, at);
    case "assistant":
      b.noteEnvelope(v, at.line);
      return assistant(b, v, at);
    case "system":
      b.noteEnvelope(v, at.line);
      return system(b, v, at);
    case "summary":
      return summary(b, v, at);
    case "attachment":
      return attachment(b, v, at);
  }
  if (type && META_TYPES.has(type)) return meta(b, type, v);
  if (type && SKIPPED_TYPES.has(type)) return countSkipped(b, type);
  b.issue(
    "unknown_record_type",
    `unknown record type ${type === undefined ? "(none)" : JSON.stringify(type)}`,
    at.line,
  );
}

/** Records kept only as counts, in the session's extensions (`skipped_records`). */
function countSkipped(b: ClaudeFileBuilder, type: string): void {
  const counts = (b.session().extensions.skipped_records ??= {}) as Record<string, number>;
  counts[type] = (counts[type] ?? 0) + 1;
}

function user(b: ClaudeFileBuilder, v: Json, at: At): void {
  const msg = v.message;
  const content = isObj(msg) ? msg.content : msg;
  if (typeof content === "string") {
    userText(b, v, at, content, undefined);
    return;
  }
  if (!Array.isArray(content)) {
    b.issue("unexpected_shape", "user record without message content", at.line);
    return;
  }
  const texts: string[] = [];
  let nonText = false;
  for (const [i, block] of content.entries()) {
    if (!isObj(block)) continue;
    if (block.type === "tool_result") {
      toolResult(b, v, { ...at, block: i }, block);
    } else if (block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    } else {
      nonText = true;
      if (block.type !== "image" && block.type !== "document") {
        b.issue("unknown_block_type", `unknown user block ${JSON.stringify(block.type)}`, at.line);
      }
    }
  }
  if (texts.length || nonText) {
    userText(b, v, at, texts.join("\n\n"), nonText ? content : undefined);
  }
}

function userText(
  b: ClaudeFileBuilder,
  v: Json,
  at: At,
  text: string,
  blocks: unknown[] | undefined,
): void {
  const request: PayloadRef = blocks ? b.sink.json(blocks) : b.sink.text(text);
  if (v.isCompactSummary === true) {
    b.push(v, at, "event", { event: "compaction_summary", text, request });
    return;
  }
  if (/^\[Request interrupted by user/.test(text)) {
    b.push(v, at, "event", { event: "interrupt", text, request });
    return;
  }
  // A background task's notice handed to the model as a user turn: the task's words, shown as
  // the event it is (the same as a queued task-notification attachment).
  if (
    (isObj(v.origin) && v.origin.kind === "task-notification") ||
    /^\s*<task-notification>/.test(text)
  ) {
    b.push(v, at, "event", {
      event: "task_notification",
      text,
      request,
      extensions: { [SOURCE]: { origin: "task-notification" } },
    });
    return;
  }
  const injected = v.isMeta === true || isInjectedText(text);
  const rec = b.push(v, at, "prompt", { text, request });
  if (injected) rec.op.injected = true;
  if (blocks) {
    const images = blocks.filter((x) => isObj(x) && x.type === "image").length;
    if (images) rec.op.extensions = { [SOURCE]: { images } };
  }
}

function toolResult(b: ClaudeFileBuilder, v: Json, at: At, block: Json): void {
  const s = b.state;
  const useId = str(block.tool_use_id) ?? "";
  const content = block.content;
  const response = typeof content === "string"
    ? b.sink.text(content)
    : content === undefined
    ? b.sink.text("")
    : b.sink.json(content);
  const pending = s.pending[useId];
  const tur = v.toolUseResult;
  const ext: Json = {};
  if (tur !== undefined) {
    const { kept, dropped } = trimToolUseResult(tur);
    ext.tool_use_result = JSON.stringify(kept).length <= INLINE_TUR_CHARS
      ? kept
      : b.sink.json(kept);
    if (dropped.length) ext.tool_use_result_dropped = dropped;
    if (isObj(tur)) {
      if (Array.isArray(tur.structuredPatch)) ext.structured_patch = tur.structuredPatch;
      if (typeof tur.type === "string") ext.result_type = tur.type;
      if (typeof tur.exitCode === "number") ext.exit_code = tur.exitCode;
      if (typeof tur.interrupted === "boolean" && tur.interrupted) ext.interrupted = true;
    }
  }
  const isError = block.is_error === true;
  const persisted = persistedOutputPath(tur, content);
  if (!pending) {
    const rec = b.push(v, at, "other", {
      native_id: useId || undefined,
      response,
      is_error: isError,
      completeness: "unmatched",
    });
    if (Object.keys(ext).length) rec.op.extensions = { [SOURCE]: ext };
    if (persisted) b.persisted.push({ rec, path: persisted });
    return;
  }
  delete s.pending[useId];
  s.openTasks = s.openTasks.filter((id) => id !== pending.rec.id);
  const rec = pending.rec;
  const op = rec.op;
  op.response = response;
  op.is_error = isError;
  op.completeness = "complete";
  op.provenance.completion = { epoch: b.epoch, source_range: b.range(at) };
  const uuid = str(v.uuid);
  if (uuid) op.provenance.record_ids = [...(op.provenance.record_ids ?? []), uuid];
  if (Object.keys(ext).length) {
    op.extensions = {
      ...op.extensions,
      [SOURCE]: { ...(op.extensions?.[SOURCE] as Json), ...ext },
    };
  }
  if (persisted) b.persisted.push({ rec, path: persisted });
  if (op.kind === "task") {
    const prompt = s.taskPrompts[rec.id];
    delete s.taskPrompts[rec.id];
    if (isObj(tur) && typeof tur.agentId === "string") op.spawns = `agent-${tur.agentId}`;
    // A workflow's agents run under the run the Workflow call started.
    else if (isObj(tur) && typeof tur.runId === "string") op.spawns = `workflow-${tur.runId}`;
    else if (!op.spawns && prompt) {
      b.unlinkedTasks.push({ rec, prompt, session: pending.session });
    }
  }
  b.keep(rec, pending.session);
}

function assistant(b: ClaudeFileBuilder, v: Json, at: At): void {
  const msg = v.message;
  const c = b.connFor(v);
  if (!isObj(msg)) {
    if (typeof msg === "string") {
      b.push(v, at, "reply", { text: msg, response: b.sink.text(msg) });
    } else b.issue("unexpected_shape", "assistant record without message", at.line);
    return;
  }
  const model = str(msg.model);
  const realModel = model && model !== "<synthetic>" ? model : undefined;
  if (realModel && !c.models.includes(realModel)) {
    c.models.push(realModel);
    c.conn.server.evidence.push({ line: at.line, field: "message.model" });
  }
  countUsage(b, v, msg, realModel, at);
  const content = typeof msg.content === "string"
    ? [{ type: "text", text: msg.content }]
    : msg.content;
  if (!Array.isArray(content)) return;
  const isApiError = v.isApiErrorMessage === true;
  const messageId = str(msg.id);
  for (const [i, block] of content.entries()) {
    if (!isObj(block)) continue;
    const bat = { ...at, block: i };
    const common: Partial<OperationDraft> = realModel ? { model: realModel } : {};
    switch (block.type) {
      case "text": {
        const text = str(block.text) ?? "";
        const place = messageId ? placeOfBlock(b, messageId, "text", text) : {};
        if (place === null) break;
        const rec = b.push(v, bat, "reply", {
          ...common,
          text,
          response: b.sink.text(text),
        }, place);
        if (isApiError) rec.op.is_error = true;
        if (messageId) remember(b, messageId, "text", text, rec);
        break;
      }
      case "thinking":
      case "redacted_thinking": {
        const text = str(block.thinking) ?? "";
        const key = block.type === "thinking" ? text : `redacted:${str(block.data) ?? ""}`;
        const place = messageId ? placeOfBlock(b, messageId, "thinking", key) : {};
        if (place === null) break;
        const rec = b.push(v, bat, "thinking", {
          ...common,
          text,
          response: block.type === "thinking" ? b.sink.text(text) : { redacted: true },
        }, place);
        if (messageId) remember(b, messageId, "thinking", key, rec);
        break;
      }
      case "tool_use":
      case "server_tool_use": {
        const useId = str(block.id);
        if (messageId && useId && placeOfBlock(b, messageId, "tool_use", useId) === null) break;
        if (useId && b.state.pending[useId]) break; // the same call written again
        const name = str(block.name) ?? "unknown";
        const kind = block.type === "server_tool_use" ? "web" : classifyTool(name);
        const input = block.input ?? {};
        const rec = b.push(v, bat, kind, {
          ...common,
          tool: name,
          native_id: useId,
          target: targetOf(input),
          summary: summarizeToolInput(input),
          request: b.sink.json(input),
          completeness: "incomplete",
        });
        if (messageId && useId) remember(b, messageId, "tool_use", useId, rec);
        if (useId) b.state.pending[useId] = { rec, session: b.sessionKey() };
        if (kind === "task") {
          b.state.openTasks.push(rec.id);
          if (isObj(input) && typeof input.prompt === "string") {
            b.state.taskPrompts[rec.id] = input.prompt;
          }
        }
        break;
      }
      case "web_search_tool_result": {
        const useId = str(block.tool_use_id) ?? "";
        toolResult(b, v, bat, { tool_use_id: useId, content: block.content });
        break;
      }
      default:
        b.issue(
          "unknown_block_type",
          `unknown assistant block ${JSON.stringify(block.type)}`,
          at.line,
        );
    }
  }
}

/**
 * Where a block of an API message goes when the message was seen before (Claude Code may write
 * a message again, whole, each time it grows): `null` for a block already read; the id and place
 * of the operation it extends when its text grew from one read before; `{}` for a new block.
 */
function placeOfBlock(
  b: ClaudeFileBuilder,
  messageId: string,
  type: string,
  text: string,
):
  | { id?: string; order?: { ts_ms: number | null; rank: number; line: number; block: number } }
  | null {
  const known = b.knownBlocks(messageId);
  if (!known) return {};
  const key = `${type}:${text.length}:${shortHash(text)}`;
  if (known.some((k) => k.key === key)) return null;
  if (type === "tool_use") return {};
  const grown = known.find((k) =>
    k.key.startsWith(`${type}:`) && k.len > 0 && k.len < text.length &&
    k.key === `${type}:${k.len}:${shortHash(text.slice(0, k.len))}`
  );
  return grown ? { id: grown.op, order: grown.order } : {};
}

function remember(
  b: ClaudeFileBuilder,
  messageId: string,
  type: string,
  text: string,
  rec: { id: string; order: { ts_ms: number | null; rank: number; line: number; block: number } },
): void {
  const key = `${type}:${text.length}:${shortHash(text)}`;
  const known = b.knownBlocks(messageId);
  const grown = known?.find((k) => k.op === rec.id);
  if (grown) {
    grown.key = key;
    grown.len = text.length;
    return;
  }
  b.rememberBlock(messageId, { key, op: rec.id, order: rec.order, len: text.length });
}

/**
 * Token usage of one API response, counted once per (message id, request id); a record that
 * names neither a message id nor a uuid is counted by its place in the file.
 */
function countUsage(
  b: ClaudeFileBuilder,
  v: Json,
  msg: Json,
  model: string | undefined,
  at: At,
): void {
  const u = msg.usage;
  if (!isObj(u) || !model) return;
  const id = str(msg.id) ?? str(v.uuid);
  const key = id !== undefined
    ? `${id}:${str(v.requestId) ?? ""}`
    : `${b.unit.path.slice(b.unit.path.lastIndexOf("/") + 1)}#L${at.line}`;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  b.addUsage({
    key,
    model,
    usage: {
      input: n(u.input_tokens),
      output: n(u.output_tokens),
      cache_read: n(u.cache_read_input_tokens),
      cache_write: n(u.cache_creation_input_tokens),
    },
  });
}

function system(b: ClaudeFileBuilder, v: Json, at: At): void {
  const subtype = str(v.subtype);
  const text = str(v.content) ?? "";
  if (subtype === "compact_boundary") {
    const meta = isObj(v.compactMetadata) ? v.compactMetadata : {};
    b.push(v, at, "event", {
      event: "compaction",
      text: text || `Conversation compacted (${str(meta.trigger) ?? "auto"})`,
      extensions: { [SOURCE]: { compact_metadata: meta } },
    });
    return;
  }
  const rec = b.push(v, at, "event", { event: subtype ?? "notice", text });
  if (subtype === "api_error") rec.op.is_error = true;
}

function summary(b: ClaudeFileBuilder, v: Json, at: At): void {
  const text = str(v.summary) ?? "";
  b.push(v, at, "event", { event: "summary", text });
  b.setTitle(text, 1);
}

function meta(b: ClaudeFileBuilder, type: string, v: Json): void {
  const ext = b.session().extensions;
  switch (type) {
    case "custom-title":
      b.setTitle(str(v.customTitle), 3);
      return;
    case "ai-title":
      b.setTitle(str(v.aiTitle), 2);
      return;
    case "last-prompt":
      if (typeof v.lastPrompt === "string") b.setLastPrompt(v.lastPrompt);
      return;
    case "agent-name":
      ext.agent_name = v.agentName;
      return;
    case "permission-mode":
      ext.permission_mode = v.permissionMode;
      return;
    case "mode":
      ext.mode = v.mode;
      return;
    case "pr-link":
      ext.pr = { number: v.prNumber, url: v.prUrl, repository: v.prRepository };
      return;
    default: {
      const rest: Json = { ...v };
      delete rest.type;
      delete rest.sessionId;
      ext[type.replace(/-/g, "_")] = rest;
    }
  }
}

/**
 * Attachments the user must see become operations: a hook's blocking or non-blocking error is
 * an error event; a prompt the user queued while the agent worked is the user's words; context
 * a hook added is an injected prompt; a task notification or status is an event. The others
 * (reminders, listings, deltas) stay counted in the session's `attachments`.
 */
function attachment(b: ClaudeFileBuilder, v: Json, at: At): void {
  const a = isObj(v.attachment) ? v.attachment : undefined;
  const type = str(a?.type);
  if (!a || !type) {
    countSkipped(b, "attachment");
    return;
  }
  const hook = [str(a.hookEvent), str(a.hookName)].filter(Boolean).join(" ");
  const hookExt = (extra: Json = {}): Partial<OperationDraft> => ({
    extensions: {
      [SOURCE]: {
        attachment: type,
        ...Object.fromEntries(
          Object.entries({
            hook_event: a.hookEvent,
            hook_name: a.hookName,
            command: a.command,
            exit_code: a.exitCode,
            tool_use_id: a.toolUseID,
            ...extra,
          }).filter(([, x]) => x !== undefined && x !== ""),
        ),
      },
    },
  });
  switch (type) {
    case "hook_blocking_error": {
      const be = isObj(a.blockingError) ? a.blockingError : {};
      const reason = str(be.blockingError) ?? str(a.stderr) ?? str(a.content) ?? "";
      b.push(v, at, "event", {
        event: "hook_blocking_error",
        text: hook ? `${hook}: ${reason}` : reason,
        is_error: true,
        ...hookExt({ command: be.command ?? a.command }),
      });
      return;
    }
    case "hook_non_blocking_error":
    case "hook_error_during_execution": {
      const out = str(a.stderr) || str(a.content) || str(a.stdout) || "";
      b.push(v, at, "event", {
        event: type,
        text: hook ? `${hook}: ${out}` : out,
        is_error: true,
        ...hookExt(),
      });
      return;
    }
    case "hook_additional_context": {
      const text = textOf(a.content);
      if (!text) break;
      b.push(v, at, "prompt", {
        text,
        request: b.sink.text(text),
        injected: true,
        ...hookExt(),
      });
      return;
    }
    case "queued_command": {
      const text = textOf(a.prompt);
      if (!text) break;
      const mode = str(a.commandMode);
      if (mode === "task-notification" || isInjectedText(text)) {
        b.push(v, at, "event", {
          event: "task_notification",
          text,
          extensions: { [SOURCE]: { attachment: type, command_mode: mode } },
        });
        return;
      }
      // What the user typed while the agent was working: their own words.
      b.push(v, at, "prompt", {
        text,
        request: b.sink.text(text),
        extensions: { [SOURCE]: { attachment: type, command_mode: mode, queued: true } },
      });
      b.setLastPrompt(text);
      return;
    }
    case "task_status": {
      const text = [str(a.description), str(a.status)].filter(Boolean).join(": ");
      b.push(v, at, "event", {
        event: "task_status",
        text,
        extensions: {
          [SOURCE]: {
            attachment: type,
            task_id: a.taskId,
            task_type: a.taskType,
            status: a.status,
          },
        },
      });
      return;
    }
  }
  const counts = (b.session().extensions.attachments ??= {}) as Record<string, number>;
  counts[type] = (counts[type] ?? 0) + 1;
}

/** The text of a string, or of text blocks. */
function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) return "";
  return v.map((x) => (isObj(x) && typeof x.text === "string" ? x.text : "")).filter(Boolean)
    .join("\n");
}
