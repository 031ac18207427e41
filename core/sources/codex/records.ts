/**
 * How each Codex CLI rollout line is routed: the `{timestamp,type,payload}` envelope (session
 * meta, turn context, response items, event messages, compaction) and the older bare layout.
 */
import type { SessionInfo } from "../../model/types.ts";
import type { JsonlLine } from "../jsonl.ts";
import { isObj, isoOf, type Json, nonEmpty, parseTimeMs } from "../_import_kit.ts";
import { compacted, event } from "./events.ts";
import { responseItem } from "./items.ts";
import type { CodexPass } from "./pass.ts";

const RESPONSE_ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
  "tool_search_call",
  "tool_search_output",
  "image_generation_call",
  "ghost_snapshot",
  "compaction",
  "compaction_summary",
  "agent_message",
  "other",
]);

/** Top-level record types that carry nothing the canonical model needs (or only mirrors). */
const QUIET_RECORD_TYPES = new Set([
  "world_state",
  "token_usage_record",
  "inter_agent_communication",
  "inter_agent_communication_metadata",
]);

export function readLine(pass: CodexPass, l: JsonlLine, value: Json): void {
  const first = !pass.sawFirstLine;
  pass.sawFirstLine = true;
  const type = typeof value.type === "string" ? value.type : undefined;
  const ts = parseTimeMs(value.timestamp ?? value.created_at);
  if (ts !== null) {
    pass.firstTs ??= ts;
    pass.lastTs = ts;
    pass.state.lastTs = ts;
  }
  const at = ts ?? pass.state.lastTs;
  if (type && isObj(value.payload)) {
    envelope(pass, type, value.payload, l, at);
    return;
  }
  if (type && "payload" in value) {
    pass.shape(`a ${type} record whose payload is not an object`, l);
    return;
  }
  if (value.record_type !== undefined) return; // pre-envelope `{"record_type":"state"}` marker
  if (!type && first && typeof value.id === "string" && value.role === undefined) {
    sessionMeta(pass, value, l); // pre-envelope header line
    return;
  }
  if (type && RESPONSE_ITEM_TYPES.has(type)) {
    responseItem(pass, value, l, at);
    return;
  }
  pass.issues.add(
    "unknown_record_type",
    `Unknown Codex record type ${JSON.stringify(type ?? "(none)")}`,
    { line: l.line },
  );
}

function envelope(pass: CodexPass, type: string, p: Json, l: JsonlLine, at: number | null): void {
  switch (type) {
    case "session_meta":
      return sessionMeta(pass, p, l);
    case "turn_context":
      return turnContext(pass, p, l);
    case "response_item":
      return responseItem(pass, p, l, at);
    case "event_msg":
      return event(pass, p, l, at);
    case "compacted":
      return compacted(pass, p, l, at);
    default:
      if (QUIET_RECORD_TYPES.has(type)) return pass.skip(type);
      pass.issues.add(
        "unknown_record_type",
        `Unknown Codex record type ${JSON.stringify(type)}`,
        { line: l.line },
      );
  }
}

function sessionMeta(pass: CodexPass, p: Json, l: JsonlLine): void {
  const s = pass.state;
  // `id` is the thread's own id; `session_id` (newer) names the thread tree's root session, the
  // same id for a root thread and the parent's for a spawned one.
  const id = nonEmpty(p.id) ?? nonEmpty(p.session_id);
  if (!s.sid && id) {
    s.sid = id;
    s.meta.parent = spawnedBy(p);
  }
  if (id && !s.meta.metaIds.includes(id)) s.meta.metaIds.push(id);
  if (
    id && id !== s.sid && s.meta.parent && (id === s.meta.forkedFrom || id === s.meta.parent.thread)
  ) {
    // A forked thread's rollout goes on with the parent's history, copied: marked inherited
    // until the thread's own part begins.
    s.inherited = true;
    return;
  }
  if (id && id !== s.sid) {
    pass.issues.add(
      "repeated_session_meta",
      "A later session_meta names another session (fork, resume or sub-agent); its records are kept in this session",
      { severity: "info", line: l.line },
    );
    return;
  }
  const m = s.meta;
  m.cwd ??= nonEmpty(p.cwd);
  if (!m.version && nonEmpty(p.cli_version)) {
    m.version = nonEmpty(p.cli_version);
    m.evidence.version = { file: pass.file, line: l.line, field: "session_meta.cli_version" };
  }
  m.originator ??= nonEmpty(p.originator);
  m.forkedFrom ??= nonEmpty(p.forked_from_id);
  if (!m.provider && nonEmpty(p.model_provider)) {
    m.provider = nonEmpty(p.model_provider);
    m.evidence.provider = { file: pass.file, line: l.line, field: "session_meta.model_provider" };
  }
  m.started ??= isoOf(parseTimeMs(p.timestamp));
  if (isObj(p.git) && !m.git) {
    const git: NonNullable<SessionInfo["project"]["git"]> = {};
    if (nonEmpty(p.git.branch)) git.branch = nonEmpty(p.git.branch);
    if (nonEmpty(p.git.commit_hash)) git.commit = nonEmpty(p.git.commit_hash);
    if (nonEmpty(p.git.repository_url)) git.repository = nonEmpty(p.git.repository_url);
    m.git = git;
  }
}

/** Who spawned this thread: `source.subagent.thread_spawn` (or `parent_thread_id`). */
function spawnedBy(p: Json): NonNullable<CodexPass["state"]["meta"]["parent"]> | undefined {
  const spawn = isObj(p.source) && isObj(p.source.subagent) && isObj(p.source.subagent.thread_spawn)
    ? p.source.subagent.thread_spawn
    : undefined;
  const thread = nonEmpty(spawn?.parent_thread_id) ?? nonEmpty(p.parent_thread_id);
  if (!thread) return undefined;
  const out: NonNullable<CodexPass["state"]["meta"]["parent"]> = { thread };
  const path = nonEmpty(spawn?.agent_path) ?? nonEmpty(p.agent_path);
  const nickname = nonEmpty(spawn?.agent_nickname) ?? nonEmpty(p.agent_nickname);
  const role = nonEmpty(spawn?.agent_role) ?? nonEmpty(p.agent_role);
  if (path) out.path = path;
  if (nickname) out.nickname = nickname;
  if (role) out.role = role;
  return out;
}

function turnContext(pass: CodexPass, p: Json, l: JsonlLine): void {
  const model = nonEmpty(p.model);
  if (model) {
    pass.state.model = model;
    pass.noteModel(model, l, "turn_context.model");
  }
  pass.state.meta.cwd ??= nonEmpty(p.cwd);
}

// ---- mirrors: response items and event messages that say the same thing ----
