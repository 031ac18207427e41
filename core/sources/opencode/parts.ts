/**
 * OpenCode message parts as operations: text, reasoning, tool (pending / running / completed /
 * error), patch, step-finish (usage per step), compaction, subtask, file, agent and retry;
 * unknown part types are counted as issues.
 */
import type { UsageEntry } from "../../model/delta.ts";
import { classifyTool, summarizeToolInput, targetOf } from "../../model/tools.ts";
import type { OperationKind, PayloadRef } from "../../model/types.ts";
import { addExtensions, isObj, type Json, num, type OperationDraft, str } from "../_import_kit.ts";
import { type ConnState, QUIET_PARTS, type SessionBuilder, SOURCE, tokensUsage } from "./build.ts";
import { INVALID_JSON, type MessageRow, type PartRow, type SessionRow } from "./rows.ts";

export function part(
  b: SessionBuilder,
  c: ConnState,
  s: SessionRow,
  m: MessageRow,
  role: string | undefined,
  modelId: string | undefined,
  p: PartRow,
  block: number,
  msgCreated: number | undefined,
  stepUsage: UsageEntry[],
): void {
  if (p.data === null || p.data === undefined) {
    b.issue("null_part", "parts with NULL data were skipped", p.file);
    return;
  }
  if (!isObj(p.data)) {
    b.issue(
      "malformed_part",
      p.data === INVALID_JSON
        ? "parts whose data is not valid JSON were skipped"
        : "parts whose data is not a JSON object were skipped",
      p.file,
    );
    return;
  }
  const d = p.data;
  const type = str(d.type);
  const ptime = isObj(d.time) ? d.time : {};
  const ts = num(ptime.start) ?? p.created ?? msgCreated;
  const common: Partial<OperationDraft> = modelId && role === "assistant" ? { model: modelId } : {};
  const ext: Json = {};
  if (d.synthetic === true) ext.synthetic = true;
  if (d.ignored === true) ext.ignored = true;
  if (isObj(d.metadata) && Object.keys(d.metadata).length) ext.metadata = d.metadata;
  switch (type) {
    case "text": {
      if (typeof d.text !== "string") {
        b.issue("malformed_part", "text parts without text", p.file);
      }
      const text = str(d.text) ?? "";
      if (!text.trim()) return;
      if (role === "user") {
        const rec = b.push(c, s, m, p.id, block, "prompt", {
          text,
          request: b.sink.text(text),
        }, ts);
        if (d.synthetic === true) rec.op.injected = true;
        else if (c.conn.kind === "main" && d.ignored !== true) b.lastPrompt = text;
        addExtensions(rec.op, SOURCE, ext);
      } else {
        const rec = b.push(c, s, m, p.id, block, "reply", {
          ...common,
          text,
          response: b.sink.text(text),
        }, ts);
        if (d.synthetic === true) rec.op.injected = true;
        addExtensions(rec.op, SOURCE, ext);
      }
      return;
    }
    case "reasoning": {
      if (typeof d.text !== "string") {
        b.issue("malformed_part", "reasoning parts without text", p.file);
      }
      const text = str(d.text) ?? "";
      if (!text.trim()) return;
      const rec = b.push(c, s, m, p.id, block, "thinking", {
        ...common,
        text,
        response: b.sink.text(text),
      }, ts);
      addExtensions(rec.op, SOURCE, ext);
      return;
    }
    case "tool":
      tool(b, c, s, m, p, d, block, common, msgCreated);
      return;
    case "patch": {
      const files = Array.isArray(d.files)
        ? d.files.filter((f) => typeof f === "string") as string[]
        : [];
      const rec = b.push(c, s, m, p.id, block, "event", {
        event: "patch",
        text: files.length ? `changed ${files.join(", ")}` : "changed files",
      }, ts);
      addExtensions(rec.op, SOURCE, { hash: d.hash, files });
      return;
    }
    case "step-finish": {
      if (role !== "assistant" || !modelId) return;
      const u = tokensUsage(d.tokens);
      if (u) stepUsage.push({ key: p.id, model: modelId, usage: u });
      return;
    }
    case "compaction": {
      const rec = b.push(c, s, m, p.id, block, "event", {
        event: "compaction",
        text: d.auto === true ? "Conversation compacted (auto)" : "Conversation compacted",
      }, ts);
      addExtensions(rec.op, SOURCE, {
        auto: d.auto,
        overflow: d.overflow,
        tail_start_id: d.tail_start_id,
      });
      return;
    }
    case "subtask": {
      const text = str(d.description) ?? str(d.prompt) ?? "subtask";
      const rec = b.push(c, s, m, p.id, block, "event", {
        event: "subtask",
        text,
        request: b.sink.json({ prompt: d.prompt, description: d.description, agent: d.agent }),
      }, ts);
      addExtensions(rec.op, SOURCE, { agent: d.agent, model: d.model, command: d.command });
      return;
    }
    case "file": {
      const name = str(d.filename) ?? str(d.url) ?? "file";
      const rec = b.push(c, s, m, p.id, block, "event", {
        event: "file",
        text: name,
        request: b.sink.json(d),
        injected: role === "user" ? undefined : true,
      }, ts);
      addExtensions(rec.op, SOURCE, { mime: d.mime, source: d.source });
      return;
    }
    case "agent": {
      b.push(
        c,
        s,
        m,
        p.id,
        block,
        "event",
        { event: "agent", text: str(d.name) ?? "agent" },
        ts,
      );
      return;
    }
    case "retry": {
      const err = d.error;
      const text = isObj(err) ? str(err.message) ?? JSON.stringify(err) : str(err) ?? "retry";
      const rec = b.push(c, s, m, p.id, block, "event", {
        event: "retry",
        text,
        is_error: true,
      }, num(isObj(d.time) ? d.time.created : undefined) ?? ts);
      addExtensions(rec.op, SOURCE, { attempt: d.attempt });
      return;
    }
  }
  if (type && QUIET_PARTS.has(type)) return b.skip(type);
  b.issue("unknown_part_type", `unknown part type ${JSON.stringify(type ?? null)}`, p.file);
}

export function tool(
  b: SessionBuilder,
  c: ConnState,
  s: SessionRow,
  m: MessageRow,
  p: PartRow,
  d: Json,
  block: number,
  common: Partial<OperationDraft>,
  msgCreated: number | undefined,
): void {
  const name = str(d.tool) ?? "";
  if (!name) b.issue("malformed_part", "tool parts without a tool name", p.file);
  const state = isObj(d.state) ? d.state : undefined;
  if (!state) b.issue("malformed_part", "tool parts without a state object", p.file);
  const st = state ?? {};
  const status = str(st.status);
  const input = st.input;
  const time = isObj(st.time) ? st.time : {};
  const kind: OperationKind = name ? classifyTool(name) : "other";
  let request: PayloadRef;
  if (isObj(input) && Object.keys(input).length) request = b.sink.json(input);
  else if (typeof st.raw === "string" && st.raw) request = b.sink.text(st.raw);
  else if (input !== undefined && !(isObj(input) && status === "pending")) {
    request = b.sink.json(input);
  } else request = { missing: true, reason: "the tool input was not recorded yet" };
  const meta = isObj(st.metadata) ? st.metadata : {};
  const fields: Partial<OperationDraft> = {
    ...common,
    tool: name || undefined,
    native_id: str(d.callID),
    target: targetOf(input),
    summary: summarizeToolInput(input),
    request,
  };
  const exit = num(meta.exit) ?? num(meta.exitCode);
  let output: unknown;
  switch (status) {
    case "pending":
    case "running":
      fields.completeness = "incomplete";
      break;
    case "completed":
      fields.completeness = "complete";
      output = st.output;
      fields.is_error = exit !== undefined && exit !== 0;
      break;
    case "error":
      fields.completeness = "complete";
      output = st.error;
      fields.is_error = true;
      break;
    default:
      if (state) {
        b.issue(
          "unknown_tool_state",
          `unknown tool state ${JSON.stringify(status ?? null)}`,
          p.file,
        );
      }
      output = st.output ?? st.error;
      fields.completeness = output === undefined ? "incomplete" : "complete";
      if (output !== undefined) {
        fields.is_error = st.error !== undefined || (exit !== undefined && exit !== 0);
      }
  }
  if (output !== undefined) {
    fields.response = typeof output === "string" ? b.sink.text(output) : b.sink.json(output);
  }
  const rec = b.push(
    c,
    s,
    m,
    p.id,
    block,
    kind,
    fields,
    num(time.start) ?? p.created ?? msgCreated,
  );
  const end = num(time.end);
  if (end !== undefined) b.seeTime(end);
  const ext: Json = {};
  if (status) ext.status = status;
  if (exit !== undefined) ext.exit_code = exit;
  if (typeof st.title === "string" && st.title) ext.title = st.title;
  if (end !== undefined && num(time.start) !== undefined) {
    ext.duration_ms = end - num(time.start)!;
  }
  if (num(time.compacted) !== undefined) ext.compacted = true;
  if (typeof meta.diff === "string") ext.diff = b.sink.text(meta.diff);
  if (meta.truncated === true) ext.truncated = true;
  if (Array.isArray(st.attachments) && st.attachments.length) {
    ext.attachments = st.attachments.length;
  }
  if (kind === "task" && isObj(input) && typeof input.subagent_type === "string") {
    ext.subagent_type = input.subagent_type;
  }
  addExtensions(rec.op, SOURCE, ext);
  if (kind === "task") {
    const child = str(meta.sessionId) ?? str(meta.sessionID);
    if (child) b.taskBySession.set(child, rec);
  }
}
