/**
 * Codex CLI response items, the model-visible history and the source of truth: messages,
 * reasoning, function and custom tool calls (apply_patch in any of its four forms), shell and
 * web search calls, and their outputs.
 */
import { isInjectedText } from "../../model/injected.ts";
import { classifyTool, toolFacts } from "../../model/tools.ts";
import type { OperationKind } from "../../model/types.ts";
import type { JsonlLine } from "../jsonl.ts";
import { isObj, type Json, nonEmpty, textOfParts } from "../_import_kit.ts";
import { compacted } from "./events.ts";
import { parseApplyPatch, patchFromCommand } from "./output.ts";
import type { CodexPass } from "./pass.ts";

export function responseItem(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const type = typeof p.type === "string" ? p.type : p.role !== undefined ? "message" : undefined;
  switch (type) {
    case "message":
      return message(pass, p, l, at);
    case "reasoning":
      return reasoning(pass, p, l, at);
    case "function_call":
      return functionCall(pass, p, l, at);
    case "custom_tool_call":
      return customToolCall(pass, p, l, at);
    case "local_shell_call":
      return localShellCall(pass, p, l, at);
    case "web_search_call":
      return webSearchCall(pass, p, l, at);
    case "tool_search_call":
      return pass.toolCall(l, at, {
        callId: nonEmpty(p.call_id),
        tool: "tool_search",
        kind: "other",
        input: p.arguments ?? null,
        done: false,
      });
    case "image_generation_call":
      return pass.toolCall(l, at, {
        callId: undefined,
        tool: "image_generation",
        kind: "other",
        input: { revised_prompt: p.revised_prompt ?? null },
        done: true,
        response: p.result,
      });
    case "function_call_output":
    case "custom_tool_call_output":
    case "tool_search_output":
      return pass.callOutput(p, l, at);
    case "compaction":
    case "compaction_summary":
      return compacted(pass, p, l, at);
    case "agent_message":
      return agentMessage(pass, p, l, at);
    case "ghost_snapshot":
    case "other":
      return pass.skip(`response_item:${type}`);
    default:
      pass.issues.add(
        "unknown_item_type",
        `Unknown Codex response item type ${JSON.stringify(type ?? "(none)")}`,
        { line: l.line },
      );
  }
}

/**
 * A message one thread sends another (`Message Type: NEW_TASK`, `FINAL_ANSWER`, with the text
 * under `Payload:`, possibly as `encrypted_content`): a spawned thread's task is its first
 * prompt; anything else is an event in the thread that receives it.
 */
function agentMessage(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const text = textOfParts(p.content, ["text", "encrypted_content"]);
  const parent = pass.state.meta.parent;
  const payload = (/\bPayload:\n([\s\S]*)$/.exec(text)?.[1] ?? text).trim();
  const extensions = { author: p.author ?? null, recipient: p.recipient ?? null };
  if (parent && !pass.state.inherited && /Message Type: NEW_TASK/.test(text)) {
    pass.lastPrompt = payload;
    return pass.textOp(l, at, 0, "item", null, {
      kind: "prompt",
      text: payload,
      extensions: { ...extensions, message_type: "NEW_TASK" },
    });
  }
  return pass.textOp(l, at, 0, "item", null, {
    kind: "event",
    event: "agent_message",
    text,
    extensions,
  });
}

function message(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const role = nonEmpty(p.role) ?? "user";
  if (typeof p.content !== "string" && !Array.isArray(p.content)) {
    pass.shape("message content that is neither text nor a list of parts", l);
  }
  const content = Array.isArray(p.content) ? p.content : [];
  const text = typeof p.content === "string"
    ? p.content
    : textOfParts(content.filter((c) => !isObj(c) || c.type !== "input_image"));
  const images = content.filter((c) => isObj(c) && c.type === "input_image").length;
  const ext: Json = {};
  if (images) ext.images = images;
  if (role === "assistant") {
    if (!text && !images) return;
    pass.textOp(l, at, 0, "item", `reply:${text}`, {
      kind: "reply",
      text,
      model: pass.state.model ?? undefined,
      ...(images ? { extensions: ext } : {}),
    });
    return;
  }
  if (role !== "user" && role !== "developer" && role !== "system") {
    pass.issues.add("unknown_role", `Unknown message role ${JSON.stringify(role)}`, {
      file: pass.file,
      line: l.line,
    });
  }
  if (!text && !images) return;
  if (
    pass.state.inherited && role === "developer" &&
    text.startsWith("You are now a newly spawned child agent")
  ) {
    pass.state.inherited = false; // the thread's own part begins here
  }
  const injected = role !== "user" || isInjectedText(text);
  if (role !== "user") ext.role = role;
  if (!injected) pass.lastPrompt = text;
  pass.textOp(l, at, 0, "item", injected ? null : `prompt:${text}`, {
    kind: "prompt",
    text,
    ...(injected ? { injected: true } : {}),
    ...(Object.keys(ext).length ? { extensions: ext } : {}),
  });
}

function reasoning(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const summary = textOfParts(p.summary);
  const content = textOfParts(p.content);
  const text = [summary, content].filter(Boolean).join("\n\n");
  const encrypted = typeof p.encrypted_content === "string";
  const init = {
    kind: "thinking" as const,
    model: pass.state.model ?? undefined,
    ...(text ? { text } : {}),
    ...(encrypted ? { extensions: { encrypted: true } } : {}),
  };
  // Events mirror each summary part separately; a reasoning item takes over the first.
  const parts = Array.isArray(p.summary) ? p.summary.map((s) => textOfParts([s])) : [];
  const key = parts.find(Boolean) ?? summary;
  pass.textOp(l, at, 0, "item", text ? `thinking:${key}` : null, init);
  for (const extra of parts.slice(1)) if (extra) pass.mirror(`thinking:${extra}`, "item");
}

function functionCall(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const name = nonEmpty(p.name) ?? (isObj(p.function) ? nonEmpty(p.function.name) : undefined);
  const raw = p.arguments ?? p.input;
  let input: unknown = raw;
  const ext: Json = {};
  if (typeof raw === "string") {
    try {
      input = JSON.parse(raw);
    } catch {
      ext.raw_arguments = raw;
      pass.issues.add(
        "unparsed_arguments",
        "function_call arguments are not valid JSON; kept as raw text",
        { severity: "info", line: l.line },
      );
    }
  }
  if (nonEmpty(p.namespace)) ext.namespace = p.namespace;
  const args = isObj(input) ? input : undefined;
  const patch = name === "apply_patch" || name === "applypatch"
    ? (typeof input === "string" ? input : nonEmpty(args?.input) ?? nonEmpty(args?.patch))
    : (name === "shell" || name === "shell_command" || name === "exec_command" ||
        name === "container.exec" || name === "local_shell")
    ? patchFromCommand(args?.command ?? args?.cmd)
    : undefined;
  if (patch !== undefined) {
    if (name !== "apply_patch") ext.via = name;
    return patchCall(pass, l, at, nonEmpty(p.call_id), name ?? "apply_patch", patch, ext);
  }
  let kind: OperationKind = name ? classifyTool(name) : "other";
  // A tool Chronicle does not know, from a namespace or named server__tool, is an MCP tool.
  if (kind === "other" && name && !toolFacts(name) && (name.includes("__") || ext.namespace)) {
    kind = "mcp";
  }
  if (raw === undefined || raw === null) {
    ext.arguments_missing = true;
    pass.shape("a function_call without arguments", l);
  }
  pass.toolCall(l, at, {
    callId: nonEmpty(p.call_id),
    tool: name,
    kind,
    input: raw === undefined || raw === null ? undefined : input,
    done: false,
    ext,
    target: kind === "read" ? nonEmpty(args?.path) : undefined,
  });
}

function customToolCall(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const name = nonEmpty(p.name);
  const input = p.input;
  if ((name === "apply_patch" || name === "applypatch") && typeof input === "string") {
    return patchCall(pass, l, at, nonEmpty(p.call_id), name, input, {});
  }
  let parsed: unknown = input;
  if (typeof input === "string") {
    try {
      parsed = JSON.parse(input);
    } catch { /* freeform tools take raw text */ }
  }
  const kind: OperationKind = name ? classifyTool(name) : "other";
  pass.toolCall(l, at, {
    callId: nonEmpty(p.call_id),
    tool: name,
    kind,
    input: parsed,
    done: false,
  });
}

function localShellCall(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const action = isObj(p.action) ? p.action : {};
  const patch = patchFromCommand(action.command);
  if (patch !== undefined) {
    return patchCall(pass, l, at, nonEmpty(p.call_id), "local_shell", patch, {
      via: "local_shell",
    });
  }
  pass.toolCall(l, at, {
    callId: nonEmpty(p.call_id) ?? nonEmpty(p.id),
    tool: "local_shell",
    kind: "exec",
    input: action,
    done: !nonEmpty(p.call_id) && p.status === "completed",
  });
}

function webSearchCall(pass: CodexPass, p: Json, l: JsonlLine, at: number | null): void {
  const action = isObj(p.action) ? p.action : {};
  pass.toolCall(l, at, {
    callId: undefined,
    tool: "web_search",
    kind: "web",
    input: action,
    done: p.status !== "in_progress",
    // The rollout keeps what was searched for, not what came back.
    response: { missing: true, reason: "Codex does not record web search results" },
    target: nonEmpty(action.url),
  });
}

/** One operation per file of the patch, each keeping the whole patch text as its request. */
function patchCall(
  pass: CodexPass,
  l: JsonlLine,
  at: number | null,
  callId: string | undefined,
  tool: string,
  patch: string,
  ext: Json,
): void {
  const files = parseApplyPatch(patch);
  const request = pass.sink.text(patch);
  if (!files.length) {
    pass.issues.add(
      "patch_without_files",
      "An apply_patch names no file; kept as one edit without a target",
      { severity: "info", line: l.line },
    );
  }
  const ids: string[] = [];
  const targets = files.length ? files : [undefined];
  for (const [block, f] of targets.entries()) {
    const e: Json = { ...ext };
    if (f) e.patch_action = f.action;
    if (f?.move_to) e.move_to = f.move_to;
    if (targets.length > 1) e.patch_files = targets.length;
    ids.push(pass.newCallOp(l, at, block, callId, {
      kind: f?.action === "add" ? "write" : "edit",
      tool,
      target: f?.path,
      request,
      summary: f ? `${f.action} ${f.path}${f.move_to ? ` -> ${f.move_to}` : ""}` : undefined,
      extensions: Object.keys(e).length ? e : undefined,
    }, false));
  }
  if (callId) pass.trackCall(callId, ids);
}
