/**
 * Codex CLI event messages: the UI's mirror of the history (used only where no response item
 * says the same), evidence about calls (exec and patch ends), errors, compaction, titles and
 * token counts.
 */
import { isInjectedText } from "../../model/injected.ts";
import { classifyTool } from "../../model/tools.ts";
import type { JsonlLine } from "../jsonl.ts";
import { isObj, type Json, nonEmpty, num, textOfParts } from "../_import_kit.ts";
import { parsedTarget } from "./output.ts";
import type { CodexPass } from "./pass.ts";
import { openaiUsage, threadConnection, USAGE_KEYS } from "./state.ts";

/** Event messages that only mirror response items or carry telemetry. */
const QUIET_EVENTS = new Set([
  "task_started",
  "turn_started",
  "token_count",
  "thread_settings_applied",
  "session_configured",
  "turn_diff",
  "plan_update",
  "background_event",
  "stream_error",
  "account/rateLimits/updated",
  "codex/event/raw_item",
  "agent_message_delta",
  "agent_reasoning_delta",
  "agent_reasoning_raw_content_delta",
  "agent_reasoning_section_break",
  "exec_command_output_delta",
  "exec_approval_request",
  "apply_patch_approval_request",
  "item_started",
  "mcp_tool_call_begin",
  "mcp_tool_call_end",
  "mcp_list_tools_response",
  "list_custom_prompts_response",
  "web_search_begin",
  "web_search_end",
  "image_generation_begin",
  "image_generation_end",
  "view_image_tool_call",
  "dynamic_tool_call_request",
  "dynamic_tool_call_response",
  "sub_agent_activity",
  "collab_agent_spawn_begin",
  "collab_agent_interaction_begin",
  "collab_agent_interaction_end",
  "collab_waiting_begin",
  "collab_waiting_end",
  "collab_close_begin",
  "collab_close_end",
  "guardian_assessment",
  "thread_goal_updated",
  "undo_started",
  "shutdown_complete",
  "turn.completed",
  "turn.started",
  "thread.started",
]);

export function event(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const type = typeof p.type === "string" ? p.type : "(none)";
  switch (type) {
    case "user_message": {
      const text = nonEmpty(p.message) ?? "";
      if (!text) return;
      const injected = isInjectedText(text);
      if (!injected) pass.lastPrompt = text;
      return pass.textOp(l, at, 0, "ev:user_message", injected ? null : `prompt:${text}`, {
        kind: "prompt",
        text,
        ...(injected ? { injected: true } : {}),
      });
    }
    case "agent_message": {
      const text = nonEmpty(p.message) ?? "";
      if (!text) return;
      return pass.textOp(l, at, 0, "ev:agent_message", `reply:${text}`, {
        kind: "reply",
        text,
        model: pass.state.model ?? undefined,
      });
    }
    case "agent_reasoning":
    case "agent_reasoning_raw_content": {
      const text = nonEmpty(p.text) ?? "";
      if (!text) return;
      return pass.textOp(l, at, 0, `ev:${type}`, `thinking:${text}`, {
        kind: "thinking",
        text,
        model: pass.state.model ?? undefined,
      });
    }
    case "item_completed":
      return itemCompleted(pass, p, l, at);
    case "exec_command_begin":
      return pass.signal(nonEmpty(p.call_id), parsedTarget(p.parsed_cmd));
    case "exec_command_end": {
      const exit = num(p.exit_code);
      return pass.signal(nonEmpty(p.call_id), {
        ...(exit !== undefined ? { error: exit !== 0 } : {}),
        ...parsedTarget(p.parsed_cmd),
      });
    }
    case "patch_apply_begin":
      return pass.skip("event_msg:patch_apply_begin");
    case "patch_apply_end":
      return pass.signal(
        nonEmpty(p.call_id),
        typeof p.success === "boolean" ? { error: !p.success } : {},
      );
    case "token_count":
      return tokenCount(pass, p, l);
    case "turn.completed":
      if (isObj(p.usage)) pass.addUsage(openaiUsage(p.usage), l);
      return;
    case "context_compacted":
      return pass.textOp(l, at, 0, "ev:context_compacted", "compaction:", {
        kind: "event",
        event: "compaction",
      });
    case "turn_aborted":
      pass.textOp(l, at, 0, "ev", null, {
        kind: "event",
        event: "turn_aborted",
        text: nonEmpty(p.reason),
      });
      // The parent's turn that a fork copied ends aborted: the thread's own part follows.
      pass.state.inherited = false;
      return;
    case "collab_agent_spawn_end":
      if (nonEmpty(p.new_thread_id)) {
        pass.spawned(nonEmpty(p.call_id), threadConnection(nonEmpty(p.new_thread_id)!));
      }
      return;
    case "error":
    case "warning":
    case "stream_error_final": {
      const err = isObj(p.error) ? p.error : undefined;
      return pass.textOp(l, at, 0, "ev", null, {
        kind: "event",
        event: type === "warning" ? "warning" : "error",
        text: nonEmpty(p.message) ?? nonEmpty(err?.message),
        is_error: type !== "warning",
      });
    }
    case "task_complete":
      if (isObj(p.error)) {
        pass.textOp(l, at, 0, "ev", null, {
          kind: "event",
          event: "error",
          text: nonEmpty(p.error.message),
          is_error: true,
        });
      }
      return;
    case "entered_review_mode":
    case "exited_review_mode":
      return pass.textOp(l, at, 0, "ev", null, {
        kind: "event",
        event: type === "entered_review_mode" ? "review_started" : "review_finished",
        text: nonEmpty(p.user_facing_hint),
      });
    case "undo_completed":
      return pass.textOp(l, at, 0, "ev", null, {
        kind: "event",
        event: "undo",
        text: nonEmpty(p.message),
        is_error: p.success === false,
      });
    case "thread_name_updated":
      pass.title = nonEmpty(p.thread_name) ?? pass.title;
      return;
    case "tool_call": {
      // An early layout recorded tool calls only as events.
      const callId = nonEmpty(p.call_id);
      if (callId && pass.state.calls[callId]) return;
      const name = nonEmpty(p.name);
      return pass.toolCall(l, at, {
        callId,
        tool: name,
        kind: name ? classifyTool(name) : "other",
        input: p.input ?? p.arguments,
        done: false,
      });
    }
    default:
      if (QUIET_EVENTS.has(type)) return pass.skip(`event_msg:${type}`);
      pass.issues.add(
        "unknown_event_type",
        `Unknown Codex event_msg type ${JSON.stringify(type)}`,
        { line: l.line },
      );
  }
}

function itemCompleted(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const item = isObj(p.item) ? p.item : undefined;
  if (!item) return;
  switch (item.type) {
    case "UserMessage": {
      const text = textOfParts(item.content);
      if (!text) return;
      const injected = isInjectedText(text);
      if (!injected) pass.lastPrompt = text;
      return pass.textOp(l, at, 0, "ev:item_completed", injected ? null : `prompt:${text}`, {
        kind: "prompt",
        text,
        ...(injected ? { injected: true } : {}),
      });
    }
    case "AgentMessage": {
      const text = textOfParts(item.content);
      if (!text) return;
      return pass.textOp(l, at, 0, "ev:item_completed", `reply:${text}`, {
        kind: "reply",
        text,
        model: pass.state.model ?? undefined,
      });
    }
    case "Reasoning": {
      const parts = [
        ...(Array.isArray(item.summary_text) ? item.summary_text : []),
        ...(Array.isArray(item.raw_content) ? item.raw_content : []),
      ].filter((x): x is string => typeof x === "string" && x !== "");
      if (!parts.length) return;
      return pass.textOp(l, at, 0, "ev:item_completed", `thinking:${parts[0]}`, {
        kind: "thinking",
        text: parts.join("\n\n"),
        model: pass.state.model ?? undefined,
      });
    }
    case "CommandExecution": {
      const exit = num(item.exit_code);
      const failed = item.status === "failed" || item.status === "declined";
      return pass.signal(nonEmpty(item.id), {
        ...(exit !== undefined ? { error: exit !== 0 } : failed ? { error: true } : {}),
        ...parsedTarget(item.parsed_cmd),
      });
    }
    case "FileChange":
      if (item.status === "completed") return pass.signal(nonEmpty(item.id), { error: false });
      if (item.status === "failed" || item.status === "declined") {
        return pass.signal(nonEmpty(item.id), { error: true });
      }
      return;
    case "McpToolCall":
      if (item.status === "failed" || (isObj(item.result) && item.result.isError === true)) {
        return pass.signal(nonEmpty(item.id), { error: true });
      }
      return;
    default:
      return;
  }
}

export function compacted(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const ext: Json = {};
  for (const k of ["window_number", "window_id", "previous_window_id", "first_window_id"]) {
    if (p[k] !== undefined) ext[k] = p[k];
  }
  if (Array.isArray(p.replacement_history)) {
    ext.replacement_items = p.replacement_history.length;
  }
  pass.textOp(l, at, 0, "item", "compaction:", {
    kind: "event",
    event: "compaction",
    ...(nonEmpty(p.message) ? { text: nonEmpty(p.message) } : {}),
    ...(Object.keys(ext).length ? { extensions: ext } : {}),
  });
}

// ---- usage ----

/**
 * `token_count` totals are cumulative and often repeated: each new total contributes the
 * difference from the previous one, so the entries sum to the last total.
 */
function tokenCount(pass: CodexPass, p: Json, l: JsonlLine): void {
  const info = isObj(p.info) ? p.info : undefined;
  const model = nonEmpty(info?.model);
  if (model) pass.noteModel(model, l, "event_msg.token_count.info.model");
  const total = info && isObj(info.total_token_usage) ? info.total_token_usage : undefined;
  if (!total) {
    // Older layouts: per-request counts directly on the event or in `info`.
    const flat = info && (num(info.prompt) !== undefined || num(info.input_tokens) !== undefined)
      ? info
      : num(p.input_tokens) !== undefined
      ? p
      : undefined;
    if (flat) pass.addUsage(openaiUsage(flat), l, model);
    return;
  }
  const now: Record<string, number> = {};
  for (const k of USAGE_KEYS) now[k] = num(total[k]) ?? 0;
  const sig = JSON.stringify(now);
  if (sig === pass.state.tokenSig) return;
  const prev = pass.state.tokens;
  const delta: Record<string, number> = {};
  let reset = false;
  for (const k of USAGE_KEYS) {
    delta[k] = now[k] - (prev?.[k] ?? 0);
    if (delta[k] < 0) reset = true;
  }
  pass.state.tokens = now;
  pass.state.tokenSig = sig;
  pass.addUsage(openaiUsage(reset ? now : delta), l, model);
}
