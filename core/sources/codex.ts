/**
 * Codex CLI importer: `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl` and
 * `archived_sessions/`. Reads the `{timestamp,type,payload}` envelope and the older bare
 * header-line layout. Response items are the source of truth; event messages mirror them and
 * are used only where no response item says the same thing (so nothing is counted twice).
 */
import { classifyTool, summarizeToolInput } from "../model/classify.ts";
import type { OperationRecord, SessionDelta, UsageEntry } from "../model/delta.ts";
import { PayloadSink, stableId } from "../model/payload.ts";
import type {
  Connection,
  Evidence,
  Operation,
  OperationKind,
  PayloadRef,
  SessionInfo,
  SessionIssue,
  Usage,
} from "../model/types.ts";
import {
  capList,
  isObj,
  isoOf,
  IssueTally,
  joinPath,
  type Json,
  makeOp,
  num,
  orderKey,
  parseTimeMs,
  planResume,
  rangeOf,
  readPass,
  setCompleteness,
  stemOf,
  str,
  textOfParts,
} from "./_import_kit.ts";
import type { JsonlLine } from "./jsonl.ts";
import { makeJsonlCheckpoint } from "./jsonl.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "./types.ts";

const MAIN = "main";
const STATE_VERSION = 1;
/** How many recent call ids and mirror texts the state remembers across passes. */
const MAX_CALLS = 512;
const MAX_MIRRORS = 64;

/** One file of an apply_patch: what happens to which path. */
export interface PatchFile {
  action: "add" | "update" | "delete";
  path: string;
  move_to?: string;
}

/** The files an apply_patch envelope touches, in order (`*** Add/Update/Delete File: <path>`). */
export function parseApplyPatch(patch: string): PatchFile[] {
  const out: PatchFile[] = [];
  const lines = patch.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(lines[i]);
    if (!m) continue;
    const action = m[1].toLowerCase() as PatchFile["action"];
    const file: PatchFile = { action, path: m[2].trim() };
    const move = action === "update" ? /^\*\*\* Move to: (.+)$/.exec(lines[i + 1] ?? "") : null;
    if (move) file.move_to = move[1].trim();
    out.push(file);
  }
  return out;
}

/** The patch inside a shell call: `["apply_patch", patch]` or an `apply_patch <<'EOF'` heredoc. */
export function patchFromCommand(command: unknown): string | undefined {
  if (Array.isArray(command)) {
    if (
      command.length === 2 && (command[0] === "apply_patch" || command[0] === "applypatch") &&
      typeof command[1] === "string"
    ) return command[1];
    const last = command.at(-1);
    return typeof last === "string" ? patchFromCommand(last) : undefined;
  }
  if (typeof command !== "string") return undefined;
  const m =
    /(?:^|[\s;&|(])(?:apply_patch|applypatch)\s*<<-?\s*(['"]?)(\w+)\1\s*\n([\s\S]*?)\n\2\s*(?:$|\n)/
      .exec(command);
  return m ? m[3] : undefined;
}

/** An exit code written into a tool output, in the shapes Codex has used. */
export function exitCodeOfText(text: string): number | undefined {
  const m = /^(?:Exit code: |Process exited with code )(-?\d+)\s*$/m.exec(text.slice(0, 2000));
  return m ? Number(m[1]) : undefined;
}

interface OutputFacts {
  exit?: number;
  success?: boolean;
  text?: string;
}

/** What a function_call_output says about success: string, JSON string, array or object. */
export function outputFacts(output: unknown): OutputFacts {
  if (typeof output === "string") {
    const t = output.trimStart();
    if (t.startsWith("{")) {
      try {
        const parsed = JSON.parse(t);
        if (isObj(parsed)) {
          const inner = outputFacts(parsed);
          if (inner.exit !== undefined || inner.success !== undefined) return inner;
        }
      } catch { /* a plain string that starts with a brace */ }
    }
    return { exit: exitCodeOfText(output), text: output };
  }
  if (Array.isArray(output)) return { text: textOfParts(output) };
  if (isObj(output)) {
    const meta = isObj(output.metadata) ? output.metadata : undefined;
    const exit = num(meta?.exit_code) ?? num(output.exit_code);
    const success = typeof output.success === "boolean" ? output.success : undefined;
    const text = typeof output.output === "string"
      ? output.output
      : typeof output.content === "string"
      ? output.content
      : typeof output.text === "string"
      ? output.text
      : undefined;
    return { exit: exit ?? (text !== undefined ? exitCodeOfText(text) : undefined), success, text };
  }
  return {};
}

/** Error evidence for a call gathered from event messages (exec/patch ends, item_completed). */
interface Signal {
  error?: boolean;
  target?: string;
  parsed?: unknown;
}

interface Mirror {
  key: string;
  op: string;
  order: OperationRecord["order"];
  sources: string[];
}

interface CodexState {
  v: number;
  sid: string | null;
  meta: {
    cwd?: string;
    version?: string;
    originator?: string;
    provider?: string;
    git?: SessionInfo["project"]["git"];
    started?: string;
    evidence: { version?: Evidence; provider?: Evidence };
    metaIds: string[];
    forkedFrom?: string;
  };
  models: string[];
  modelEvidence: Evidence[];
  model: string | null;
  lastTs: number | null;
  /** Open (incomplete) operations by op id, re-emitted when their result arrives. */
  open: Record<string, OperationRecord>;
  /** Recent call ids -> op ids (an apply_patch call has one op per file). */
  calls: Record<string, string[]>;
  callOrder: string[];
  signals: Record<string, Signal>;
  mirrors: Mirror[];
  tokens: Record<string, number> | null;
  tokenSig: string | null;
}

function freshState(): CodexState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: { evidence: {}, metaIds: [] },
    models: [],
    modelEvidence: [],
    model: null,
    lastTs: null,
    open: {},
    calls: {},
    callOrder: [],
    signals: {},
    mirrors: [],
    tokens: null,
    tokenSig: null,
  };
}

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
  "collab_agent_spawn_end",
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

/** Injected context, not the user's own words: `<environment_context>…`, AGENTS.md blobs. */
export function isInjectedText(text: string): boolean {
  const t = text.trim();
  if (/^# AGENTS\.md instructions\b/.test(t)) return true;
  const open = /^<([A-Za-z_][\w -]*)>/.exec(t);
  if (!open) return false;
  return t.endsWith(`</${open[1]}>`);
}

const USAGE_KEYS = [
  "input_tokens",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "output_tokens",
  "reasoning_output_tokens",
  "total_tokens",
];

/** Canonical usage from an OpenAI-style usage object (input excludes cached reads). */
function usageOf(u: Json): Usage {
  const input = num(u.input_tokens) ?? num(u.prompt) ?? 0;
  const cached = num(u.cached_input_tokens) ?? 0;
  return {
    input: Math.max(0, input - cached),
    output: num(u.output_tokens) ?? num(u.completion) ?? 0,
    cache_read: cached,
    cache_write: num(u.cache_write_input_tokens) ?? 0,
  };
}

const isZero = (u: Usage) => u.input + u.output + u.cache_read + u.cache_write === 0;

/** A short key for a mirrored text (state keeps keys, not whole prompts): 53-bit hash + length. */
function mirrorKey(text: string): string {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}:${text.length}`;
}

/** One import pass over one rollout file. */
class CodexPass {
  readonly sink = new PayloadSink();
  readonly issues = new IssueTally();
  readonly records = new Map<string, OperationRecord>();
  readonly usage: UsageEntry[] = [];
  firstTs: number | null = null;
  lastTs: number | null = null;
  title?: string;
  lastPrompt?: string;
  sawFirstLine = false;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: CodexState,
    readonly fallbackId: string,
  ) {}

  get file(): string {
    return this.unit.path;
  }

  sid(): string {
    return this.state.sid ??= this.fallbackId;
  }

  opId(line: number, block: number): string {
    return stableId("op_", "codex", this.sid(), line, block);
  }

  emit(rec: OperationRecord): void {
    this.records.set(rec.id, rec);
  }

  line(l: JsonlLine, value: Json): void {
    const first = !this.sawFirstLine;
    this.sawFirstLine = true;
    const type = typeof value.type === "string" ? value.type : undefined;
    const ts = parseTimeMs(value.timestamp ?? value.created_at);
    if (ts !== null) {
      this.firstTs ??= ts;
      this.lastTs = ts;
      this.state.lastTs = ts;
    }
    const at = ts ?? this.state.lastTs;
    if (type && isObj(value.payload)) {
      this.envelope(type, value.payload, l, at);
      return;
    }
    if (type && "payload" in value) {
      this.shape(`a ${type} record whose payload is not an object`, l);
      return;
    }
    if (value.record_type !== undefined) return; // pre-envelope `{"record_type":"state"}` marker
    if (!type && first && typeof value.id === "string" && value.role === undefined) {
      this.sessionMeta(value, l); // pre-envelope header line
      return;
    }
    if (type && RESPONSE_ITEM_TYPES.has(type)) {
      this.responseItem(value, l, at);
      return;
    }
    this.issues.add(
      "unknown_record_type",
      `Unknown Codex record type ${JSON.stringify(type ?? "(none)")}`,
      { file: this.file, line: l.line },
    );
  }

  envelope(type: string, p: Json, l: JsonlLine, at: number | null): void {
    switch (type) {
      case "session_meta":
        return this.sessionMeta(p, l);
      case "turn_context":
        return this.turnContext(p, l);
      case "response_item":
        return this.responseItem(p, l, at);
      case "event_msg":
        return this.event(p, l, at);
      case "compacted":
        return this.compacted(p, l, at);
      default:
        if (QUIET_RECORD_TYPES.has(type)) return;
        this.issues.add(
          "unknown_record_type",
          `Unknown Codex record type ${JSON.stringify(type)}`,
          { file: this.file, line: l.line },
        );
    }
  }

  sessionMeta(p: Json, l: JsonlLine): void {
    const s = this.state;
    const id = str(p.session_id) ?? str(p.id);
    if (!s.sid && id) s.sid = id;
    if (id && !s.meta.metaIds.includes(id)) s.meta.metaIds.push(id);
    if (id && id !== s.sid) {
      this.issues.add(
        "repeated_session_meta",
        "A later session_meta names another session (fork, resume or sub-agent); its records are kept in this session",
        { severity: "info", file: this.file, line: l.line },
      );
      return;
    }
    const m = s.meta;
    m.cwd ??= str(p.cwd);
    if (!m.version && str(p.cli_version)) {
      m.version = str(p.cli_version);
      m.evidence.version = { file: this.file, line: l.line, field: "session_meta.cli_version" };
    }
    m.originator ??= str(p.originator);
    m.forkedFrom ??= str(p.forked_from_id);
    if (!m.provider && str(p.model_provider)) {
      m.provider = str(p.model_provider);
      m.evidence.provider = { file: this.file, line: l.line, field: "session_meta.model_provider" };
    }
    m.started ??= isoOf(parseTimeMs(p.timestamp));
    if (isObj(p.git) && !m.git) {
      const git: NonNullable<SessionInfo["project"]["git"]> = {};
      if (str(p.git.branch)) git.branch = str(p.git.branch);
      if (str(p.git.commit_hash)) git.commit = str(p.git.commit_hash);
      if (str(p.git.repository_url)) git.repository = str(p.git.repository_url);
      m.git = git;
    }
  }

  noteModel(model: string, l: JsonlLine, field: string): void {
    const s = this.state;
    if (!s.models.includes(model)) {
      s.models.push(model);
      s.modelEvidence.push({ file: this.file, line: l.line, field });
      if (s.models.length === 2) {
        this.issues.add(
          "conflicting_model",
          "The session used several models; the connection's model is left absent and each operation carries its own",
          { severity: "info", file: this.file, line: l.line },
        );
      }
    }
  }

  turnContext(p: Json, l: JsonlLine): void {
    const model = str(p.model);
    if (model) {
      this.state.model = model;
      this.noteModel(model, l, "turn_context.model");
    }
    this.state.meta.cwd ??= str(p.cwd);
  }

  // ---- mirrors: response items and event messages that say the same thing ----

  /**
   * Finds the op that `source` would duplicate. An event never adds an op that a response
   * item (or another kind of event) already made; a response item takes over an op an event made
   * first, keeping its id and place.
   */
  mirror(text: string, source: string, key = mirrorKey(text)): Mirror | undefined {
    const m = this.state.mirrors.find((x) => x.key === key && !x.sources.includes(source));
    if (m) m.sources.push(source);
    return m;
  }

  /** Remembers an op under its text's key (`mirrorKey` of the text). */
  remember(key: string, op: string, order: OperationRecord["order"], source: string): void {
    this.state.mirrors.push({ key, op, order, sources: [source] });
    capList(this.state.mirrors, MAX_MIRRORS);
  }

  /** Adds a text operation (prompt, reply, thinking, compaction) unless it mirrors a known one. */
  textOp(
    l: JsonlLine,
    at: number | null,
    block: number,
    source: string,
    mirrorText: string | null,
    init: Omit<Parameters<typeof makeOp>[0], "completeness" | "provenance">,
  ): void {
    const key = mirrorText === null ? null : mirrorKey(mirrorText);
    const known = key === null ? undefined : this.mirror(mirrorText!, source, key);
    if (known && source !== "item") return; // an event repeating what an item said
    // An item takes over the op an event made first: its id and place.
    const id = known ? known.op : this.opId(l.line, block);
    const order = known ? known.order : orderKey(at, this.unit.rank, l.line, block);
    if (key !== null && !known) this.remember(key, id, order, source);
    const op = makeOp({
      ...init,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
    });
    if (op.text !== undefined) {
      if (op.kind === "prompt") op.request = this.sink.text(op.text);
      else if (op.kind === "reply" || op.kind === "thinking") op.response = this.sink.text(op.text);
    }
    if (op.extensions) op.extensions = { codex: op.extensions };
    if (at !== null) op.ts_ms = at;
    this.emit({ id, connection: MAIN, order, op });
  }

  // ---- response items ----

  responseItem(p: Json, l: JsonlLine, at: number | null): void {
    const type = typeof p.type === "string" ? p.type : p.role !== undefined ? "message" : undefined;
    switch (type) {
      case "message":
        return this.message(p, l, at);
      case "reasoning":
        return this.reasoning(p, l, at);
      case "function_call":
        return this.functionCall(p, l, at);
      case "custom_tool_call":
        return this.customToolCall(p, l, at);
      case "local_shell_call":
        return this.localShellCall(p, l, at);
      case "web_search_call":
        return this.webSearchCall(p, l, at);
      case "tool_search_call":
        return this.toolCall(l, at, {
          callId: str(p.call_id),
          tool: "tool_search",
          kind: "other",
          input: p.arguments ?? null,
          done: false,
        });
      case "image_generation_call":
        return this.toolCall(l, at, {
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
        return this.callOutput(p, l, at);
      case "compaction":
      case "compaction_summary":
        return this.compacted(p, l, at);
      case "agent_message": {
        const text = textOfParts(p.content);
        return this.textOp(l, at, 0, "item", null, {
          kind: "event",
          event: "agent_message",
          text,
          extensions: { author: p.author ?? null, recipient: p.recipient ?? null },
        });
      }
      case "ghost_snapshot":
      case "other":
        return;
      default:
        this.issues.add(
          "unknown_item_type",
          `Unknown Codex response item type ${JSON.stringify(type ?? "(none)")}`,
          { file: this.file, line: l.line },
        );
    }
  }

  /** Records a field of an unexpected type (null, a string for an object, ...). */
  shape(what: string, l: JsonlLine): void {
    this.issues.add("unexpected_shape", `Codex record with ${what}`, {
      file: this.file,
      line: l.line,
    });
  }

  message(p: Json, l: JsonlLine, at: number | null): void {
    const role = str(p.role) ?? "user";
    if (typeof p.content !== "string" && !Array.isArray(p.content)) {
      this.shape("message content that is neither text nor a list of parts", l);
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
      this.textOp(l, at, 0, "item", `reply:${text}`, {
        kind: "reply",
        text,
        model: this.state.model ?? undefined,
        ...(images ? { extensions: ext } : {}),
      });
      return;
    }
    if (role !== "user" && role !== "developer" && role !== "system") {
      this.issues.add("unknown_role", `Unknown message role ${JSON.stringify(role)}`, {
        file: this.file,
        line: l.line,
      });
    }
    if (!text && !images) return;
    const injected = role !== "user" || isInjectedText(text);
    if (role !== "user") ext.role = role;
    if (!injected) this.lastPrompt = text;
    this.textOp(l, at, 0, "item", injected ? null : `prompt:${text}`, {
      kind: "prompt",
      text,
      ...(injected ? { injected: true } : {}),
      ...(Object.keys(ext).length ? { extensions: ext } : {}),
    });
  }

  reasoning(p: Json, l: JsonlLine, at: number | null): void {
    const summary = textOfParts(p.summary);
    const content = textOfParts(p.content);
    const text = [summary, content].filter(Boolean).join("\n\n");
    const encrypted = typeof p.encrypted_content === "string";
    const init = {
      kind: "thinking" as const,
      model: this.state.model ?? undefined,
      ...(text ? { text } : {}),
      ...(encrypted ? { extensions: { encrypted: true } } : {}),
    };
    // Events mirror each summary part separately; a reasoning item takes over the first.
    const parts = Array.isArray(p.summary) ? p.summary.map((s) => textOfParts([s])) : [];
    const key = parts.find(Boolean) ?? summary;
    this.textOp(l, at, 0, "item", text ? `thinking:${key}` : null, init);
    for (const extra of parts.slice(1)) if (extra) this.mirror(`thinking:${extra}`, "item");
  }

  functionCall(p: Json, l: JsonlLine, at: number | null): void {
    const name = str(p.name) ?? (isObj(p.function) ? str(p.function.name) : undefined);
    const raw = p.arguments ?? p.input;
    let input: unknown = raw;
    const ext: Json = {};
    if (typeof raw === "string") {
      try {
        input = JSON.parse(raw);
      } catch {
        ext.raw_arguments = raw;
        this.issues.add(
          "unparsed_arguments",
          "function_call arguments are not valid JSON; kept as raw text",
          { severity: "info", file: this.file, line: l.line },
        );
      }
    }
    if (str(p.namespace)) ext.namespace = p.namespace;
    const args = isObj(input) ? input : undefined;
    const patch = name === "apply_patch" || name === "applypatch"
      ? (typeof input === "string" ? input : str(args?.input) ?? str(args?.patch))
      : (name === "shell" || name === "shell_command" || name === "exec_command" ||
          name === "container.exec" || name === "local_shell")
      ? patchFromCommand(args?.command ?? args?.cmd)
      : undefined;
    if (patch !== undefined) {
      if (name !== "apply_patch") ext.via = name;
      return this.patchCall(l, at, str(p.call_id), name ?? "apply_patch", patch, ext);
    }
    let kind: OperationKind = name ? classifyTool(name) : "other";
    if (kind === "other" && name && (name.includes("__") || ext.namespace)) kind = "mcp";
    if (raw === undefined || raw === null) {
      ext.arguments_missing = true;
      this.shape("a function_call without arguments", l);
    }
    this.toolCall(l, at, {
      callId: str(p.call_id),
      tool: name,
      kind,
      input: raw === undefined || raw === null ? undefined : input,
      done: false,
      ext,
      target: kind === "read" ? str(args?.path) : undefined,
    });
  }

  customToolCall(p: Json, l: JsonlLine, at: number | null): void {
    const name = str(p.name);
    const input = p.input;
    if ((name === "apply_patch" || name === "applypatch") && typeof input === "string") {
      return this.patchCall(l, at, str(p.call_id), name, input, {});
    }
    let parsed: unknown = input;
    if (typeof input === "string") {
      try {
        parsed = JSON.parse(input);
      } catch { /* freeform tools take raw text */ }
    }
    const kind: OperationKind = name ? classifyTool(name) : "other";
    this.toolCall(l, at, { callId: str(p.call_id), tool: name, kind, input: parsed, done: false });
  }

  localShellCall(p: Json, l: JsonlLine, at: number | null): void {
    const action = isObj(p.action) ? p.action : {};
    const patch = patchFromCommand(action.command);
    if (patch !== undefined) {
      return this.patchCall(l, at, str(p.call_id), "local_shell", patch, { via: "local_shell" });
    }
    this.toolCall(l, at, {
      callId: str(p.call_id) ?? str(p.id),
      tool: "local_shell",
      kind: "exec",
      input: action,
      done: !str(p.call_id) && p.status === "completed",
    });
  }

  webSearchCall(p: Json, l: JsonlLine, at: number | null): void {
    const action = isObj(p.action) ? p.action : {};
    this.toolCall(l, at, {
      callId: undefined,
      tool: "web_search",
      kind: "web",
      input: action,
      done: p.status !== "in_progress",
      target: str(action.url),
    });
  }

  /** One operation per file of the patch, each keeping the whole patch text as its request. */
  patchCall(
    l: JsonlLine,
    at: number | null,
    callId: string | undefined,
    tool: string,
    patch: string,
    ext: Json,
  ): void {
    const files = parseApplyPatch(patch);
    const request = this.sink.text(patch);
    if (!files.length) {
      this.issues.add(
        "patch_without_files",
        "An apply_patch names no file; kept as one edit without a target",
        { severity: "info", file: this.file, line: l.line },
      );
    }
    const ids: string[] = [];
    const targets = files.length ? files : [undefined];
    for (const [block, f] of targets.entries()) {
      const e: Json = { ...ext };
      if (f) e.patch_action = f.action;
      if (f?.move_to) e.move_to = f.move_to;
      if (targets.length > 1) e.patch_files = targets.length;
      ids.push(this.newCallOp(l, at, block, callId, {
        kind: f?.action === "add" ? "write" : "edit",
        tool,
        target: f?.path,
        request,
        summary: f ? `${f.action} ${f.path}${f.move_to ? ` -> ${f.move_to}` : ""}` : undefined,
        extensions: Object.keys(e).length ? e : undefined,
      }, false));
    }
    if (callId) this.trackCall(callId, ids);
  }

  toolCall(
    l: JsonlLine,
    at: number | null,
    c: {
      callId: string | undefined;
      tool: string | undefined;
      kind: OperationKind;
      input: unknown;
      done: boolean;
      response?: unknown;
      ext?: Json;
      target?: string;
    },
  ): void {
    const ext = c.ext && Object.keys(c.ext).length ? c.ext : undefined;
    const id = this.newCallOp(l, at, 0, c.callId, {
      kind: c.kind,
      tool: c.tool,
      target: c.target,
      request: c.input === undefined ? undefined : this.sink.json(c.input),
      summary: summarizeToolInput(c.input),
      extensions: ext,
    }, c.done);
    const rec = this.records.get(id)!;
    if (c.done) {
      if (c.response !== undefined) rec.op.response = this.sink.json(c.response);
      delete this.state.open[id];
    }
    if (c.callId && !c.done) this.trackCall(c.callId, [id]);
  }

  newCallOp(
    l: JsonlLine,
    at: number | null,
    block: number,
    callId: string | undefined,
    init: {
      kind: OperationKind;
      tool?: string;
      target?: string;
      request?: PayloadRef;
      summary?: string;
      extensions?: Json;
    },
    done: boolean,
  ): string {
    const id = this.opId(l.line, block);
    const op: Operation = makeOp({
      kind: init.kind,
      completeness: done ? "complete" : "incomplete",
      provenance: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
    });
    if (init.tool) op.tool = init.tool;
    if (callId) op.native_id = callId;
    if (init.target) op.target = init.target;
    if (init.request) op.request = init.request;
    if (this.state.model) op.model = this.state.model;
    if (at !== null) op.ts_ms = at;
    if (init.summary) op.summary = init.summary;
    if (init.extensions) op.extensions = { codex: init.extensions };
    setCompleteness(op, op.completeness);
    const rec: OperationRecord = {
      id,
      connection: MAIN,
      order: orderKey(at, this.unit.rank, l.line, block),
      op,
    };
    this.emit(rec);
    if (!done) this.state.open[id] = rec;
    return id;
  }

  trackCall(callId: string, ids: string[]): void {
    const s = this.state;
    if (!(callId in s.calls)) s.callOrder.push(callId);
    s.calls[callId] = ids;
    while (s.callOrder.length > MAX_CALLS) {
      const old = s.callOrder.shift()!;
      delete s.calls[old];
      delete s.signals[old];
    }
  }

  /** The record of an op of this session: emitted in this pass, or still open from an earlier one. */
  recordOf(id: string): OperationRecord | undefined {
    const rec = this.records.get(id) ?? this.state.open[id];
    if (rec && !this.records.has(id)) this.records.set(id, rec);
    return rec;
  }

  callOutput(p: Json, l: JsonlLine, at: number | null): void {
    const callId = str(p.call_id);
    const output = p.output;
    const response = output === undefined
      ? undefined
      : typeof output === "string"
      ? this.sink.text(output)
      : this.sink.json(output);
    const ids = callId ? this.state.calls[callId] : undefined;
    if (!ids) {
      const op = makeOp({
        kind: "other",
        completeness: "unmatched",
        provenance: {
          epoch: this.epoch,
          source_range: rangeOf(this.file, l),
          completion: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
        },
      });
      if (callId) op.native_id = callId;
      if (response) op.response = response;
      if (at !== null) op.ts_ms = at;
      const facts = outputFacts(output);
      op.is_error = isErrorOf(facts, undefined, undefined);
      this.emit({
        id: this.opId(l.line, 0),
        connection: MAIN,
        order: orderKey(at, this.unit.rank, l.line, 0),
        op,
      });
      return;
    }
    const facts = outputFacts(output);
    const signal = this.state.signals[callId!];
    for (const id of ids) {
      const rec = this.recordOf(id);
      if (!rec) continue;
      const op = rec.op;
      if (response) op.response = response;
      op.is_error = isErrorOf(facts, signal, op.tool);
      if (signal) applySignalTarget(op, signal);
      op.provenance = {
        ...op.provenance,
        completion: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
      };
      setCompleteness(op, "complete");
      delete this.state.open[id];
    }
  }

  // ---- events ----

  /** Evidence from an event about a call: stored for its output, or applied if already done. */
  signal(callId: string | undefined, sig: Signal): void {
    if (!callId) return;
    const s = this.state;
    const merged = { ...s.signals[callId], ...sig };
    s.signals[callId] = merged;
    const ids = s.calls[callId];
    if (!ids) return;
    for (const id of ids) {
      const rec = this.records.get(id);
      if (!rec || rec.op.completeness !== "complete") continue;
      if (merged.error) rec.op.is_error = true;
      applySignalTarget(rec.op, merged);
    }
  }

  event(p: Json, l: JsonlLine, at: number | null): void {
    const type = typeof p.type === "string" ? p.type : "(none)";
    switch (type) {
      case "user_message": {
        const text = str(p.message) ?? "";
        if (!text) return;
        const injected = isInjectedText(text);
        if (!injected) this.lastPrompt = text;
        return this.textOp(l, at, 0, "ev:user_message", injected ? null : `prompt:${text}`, {
          kind: "prompt",
          text,
          ...(injected ? { injected: true } : {}),
        });
      }
      case "agent_message": {
        const text = str(p.message) ?? "";
        if (!text) return;
        return this.textOp(l, at, 0, "ev:agent_message", `reply:${text}`, {
          kind: "reply",
          text,
          model: this.state.model ?? undefined,
        });
      }
      case "agent_reasoning":
      case "agent_reasoning_raw_content": {
        const text = str(p.text) ?? "";
        if (!text) return;
        return this.textOp(l, at, 0, `ev:${type}`, `thinking:${text}`, {
          kind: "thinking",
          text,
          model: this.state.model ?? undefined,
        });
      }
      case "item_completed":
        return this.itemCompleted(p, l, at);
      case "exec_command_begin":
        return this.signal(str(p.call_id), parsedTarget(p.parsed_cmd));
      case "exec_command_end": {
        const exit = num(p.exit_code);
        return this.signal(str(p.call_id), {
          ...(exit !== undefined ? { error: exit !== 0 } : {}),
          ...parsedTarget(p.parsed_cmd),
        });
      }
      case "patch_apply_begin":
        return;
      case "patch_apply_end":
        return this.signal(
          str(p.call_id),
          typeof p.success === "boolean" ? { error: !p.success } : {},
        );
      case "token_count":
        return this.tokenCount(p, l, at);
      case "turn.completed":
        if (isObj(p.usage)) this.addUsage(usageOf(p.usage), l, at);
        return;
      case "context_compacted":
        return this.textOp(l, at, 0, "ev:context_compacted", "compaction:", {
          kind: "event",
          event: "compaction",
        });
      case "turn_aborted":
        return this.textOp(l, at, 0, "ev", null, {
          kind: "event",
          event: "turn_aborted",
          text: str(p.reason),
        });
      case "error":
      case "warning":
      case "stream_error_final": {
        const err = isObj(p.error) ? p.error : undefined;
        return this.textOp(l, at, 0, "ev", null, {
          kind: "event",
          event: type === "warning" ? "warning" : "error",
          text: str(p.message) ?? str(err?.message),
          is_error: type !== "warning",
        });
      }
      case "task_complete":
        if (isObj(p.error)) {
          this.textOp(l, at, 0, "ev", null, {
            kind: "event",
            event: "error",
            text: str(p.error.message),
            is_error: true,
          });
        }
        return;
      case "entered_review_mode":
      case "exited_review_mode":
        return this.textOp(l, at, 0, "ev", null, {
          kind: "event",
          event: type === "entered_review_mode" ? "review_started" : "review_finished",
          text: str(p.user_facing_hint),
        });
      case "undo_completed":
        return this.textOp(l, at, 0, "ev", null, {
          kind: "event",
          event: "undo",
          text: str(p.message),
          is_error: p.success === false,
        });
      case "thread_name_updated":
        this.title = str(p.thread_name) ?? this.title;
        return;
      case "tool_call": {
        // An early layout recorded tool calls only as events.
        const callId = str(p.call_id);
        if (callId && this.state.calls[callId]) return;
        const name = str(p.name);
        return this.toolCall(l, at, {
          callId,
          tool: name,
          kind: name ? classifyTool(name) : "other",
          input: p.input ?? p.arguments,
          done: false,
        });
      }
      default:
        if (QUIET_EVENTS.has(type)) return;
        this.issues.add(
          "unknown_event_type",
          `Unknown Codex event_msg type ${JSON.stringify(type)}`,
          { file: this.file, line: l.line },
        );
    }
  }

  itemCompleted(p: Json, l: JsonlLine, at: number | null): void {
    const item = isObj(p.item) ? p.item : undefined;
    if (!item) return;
    switch (item.type) {
      case "UserMessage": {
        const text = textOfParts(item.content);
        if (!text) return;
        const injected = isInjectedText(text);
        if (!injected) this.lastPrompt = text;
        return this.textOp(l, at, 0, "ev:item_completed", injected ? null : `prompt:${text}`, {
          kind: "prompt",
          text,
          ...(injected ? { injected: true } : {}),
        });
      }
      case "AgentMessage": {
        const text = textOfParts(item.content);
        if (!text) return;
        return this.textOp(l, at, 0, "ev:item_completed", `reply:${text}`, {
          kind: "reply",
          text,
          model: this.state.model ?? undefined,
        });
      }
      case "Reasoning": {
        const parts = [
          ...(Array.isArray(item.summary_text) ? item.summary_text : []),
          ...(Array.isArray(item.raw_content) ? item.raw_content : []),
        ].filter((x): x is string => typeof x === "string" && x !== "");
        if (!parts.length) return;
        return this.textOp(l, at, 0, "ev:item_completed", `thinking:${parts[0]}`, {
          kind: "thinking",
          text: parts.join("\n\n"),
          model: this.state.model ?? undefined,
        });
      }
      case "CommandExecution": {
        const exit = num(item.exit_code);
        const failed = item.status === "failed" || item.status === "declined";
        return this.signal(str(item.id), {
          ...(exit !== undefined ? { error: exit !== 0 } : failed ? { error: true } : {}),
          ...parsedTarget(item.parsed_cmd),
        });
      }
      case "FileChange":
        if (item.status === "completed") return this.signal(str(item.id), { error: false });
        if (item.status === "failed" || item.status === "declined") {
          return this.signal(str(item.id), { error: true });
        }
        return;
      case "McpToolCall":
        if (item.status === "failed" || (isObj(item.result) && item.result.isError === true)) {
          return this.signal(str(item.id), { error: true });
        }
        return;
      default:
        return;
    }
  }

  compacted(p: Json, l: JsonlLine, at: number | null): void {
    const ext: Json = {};
    for (const k of ["window_number", "window_id", "previous_window_id", "first_window_id"]) {
      if (p[k] !== undefined) ext[k] = p[k];
    }
    if (Array.isArray(p.replacement_history)) {
      ext.replacement_items = p.replacement_history.length;
    }
    this.textOp(l, at, 0, "item", "compaction:", {
      kind: "event",
      event: "compaction",
      ...(str(p.message) ? { text: str(p.message) } : {}),
      ...(Object.keys(ext).length ? { extensions: ext } : {}),
    });
  }

  // ---- usage ----

  /**
   * `token_count` totals are cumulative and often repeated: each new total contributes the
   * difference from the previous one, so the entries sum to the last total.
   */
  tokenCount(p: Json, l: JsonlLine, at: number | null): void {
    const info = isObj(p.info) ? p.info : undefined;
    const model = str(info?.model);
    if (model) this.noteModel(model, l, "event_msg.token_count.info.model");
    const total = info && isObj(info.total_token_usage) ? info.total_token_usage : undefined;
    if (!total) {
      // Older layouts: per-request counts directly on the event or in `info`.
      const flat = info && (num(info.prompt) !== undefined || num(info.input_tokens) !== undefined)
        ? info
        : num(p.input_tokens) !== undefined
        ? p
        : undefined;
      if (flat) this.addUsage(usageOf(flat), l, at, model);
      return;
    }
    const now: Record<string, number> = {};
    for (const k of USAGE_KEYS) now[k] = num(total[k]) ?? 0;
    const sig = JSON.stringify(now);
    if (sig === this.state.tokenSig) return;
    const prev = this.state.tokens;
    const delta: Record<string, number> = {};
    let reset = false;
    for (const k of USAGE_KEYS) {
      delta[k] = now[k] - (prev?.[k] ?? 0);
      if (delta[k] < 0) reset = true;
    }
    this.state.tokens = now;
    this.state.tokenSig = sig;
    this.addUsage(usageOf(reset ? now : delta), l, at, model);
  }

  addUsage(usage: Usage, l: JsonlLine, _at: number | null, model?: string): void {
    if (isZero(usage)) return;
    const m = model ?? this.state.model;
    if (!m) {
      this.issues.add(
        "usage_without_model",
        "Token usage recorded before any model was named; not attributed",
        { severity: "info", file: this.file, line: l.line },
      );
      return;
    }
    this.usage.push({ key: stableId("u_", "codex", this.sid(), l.line), model: m, usage });
  }
}

function applySignalTarget(op: Operation, sig: Signal): void {
  if (!op.target && sig.target) op.target = sig.target;
  if (sig.parsed !== undefined) {
    const ext = (op.extensions?.codex ?? {}) as Json;
    op.extensions = { ...op.extensions, codex: { ...ext, parsed_cmd: sig.parsed } };
  }
}

/** The file a parsed shell command reads or searches, when it names exactly one. */
function parsedTarget(parsed: unknown): Signal {
  if (!Array.isArray(parsed) || !parsed.length) return {};
  const kinds = parsed.map((c) => (isObj(c) ? c.type : undefined));
  const sig: Signal = { parsed: kinds.length === 1 ? kinds[0] : kinds };
  if (parsed.length === 1 && isObj(parsed[0])) {
    const p = parsed[0];
    if ((p.type === "read" || p.type === "search" || p.type === "list_files") && str(p.path)) {
      sig.target = str(p.path);
    }
  }
  return sig;
}

/** Whether a finished call failed: recorded exit code first, then event evidence, then text. */
function isErrorOf(facts: OutputFacts, signal: Signal | undefined, tool?: string): boolean {
  if (facts.exit !== undefined) return facts.exit !== 0;
  if (signal?.error !== undefined) return signal.error;
  if (facts.success !== undefined) return !facts.success;
  const text = facts.text?.trimStart() ?? "";
  if (/^(aborted|error:|failed|execution error)/i.test(text)) return true;
  if (tool === "apply_patch" || tool === "applypatch") {
    return /^(apply_patch verification failed|invalid patch|patch rejected)/i.test(text);
  }
  return false;
}

/** `rollout-<time>-<uuid>.jsonl` -> the uuid; else the file's stem. */
export function codexIdFromPath(path: string): string {
  const stem = stemOf(path);
  const m = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(stem);
  return m ? m[1] : stem;
}

function connectionOf(state: CodexState): Connection {
  const m = state.meta;
  const client: Connection["client"] = { agent: "codex", evidence: [] };
  if (m.version) {
    client.version = m.version;
    if (m.evidence.version) client.evidence.push(m.evidence.version);
  }
  if (m.originator) client.entrypoint = m.originator;
  const server: Connection["server"] = { evidence: [] };
  if (m.provider) {
    server.provider = m.provider;
    if (m.evidence.provider) server.evidence.push(m.evidence.provider);
  }
  if (state.models.length === 1) {
    server.model = state.models[0];
    server.evidence.push(...state.modelEvidence.slice(0, 1));
  }
  return { id: MAIN, kind: "main", client, server };
}

async function importRollout(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const plan = await planResume(fs, unit.path, ctx);
  if (!plan) {
    return {
      mode: "unchanged",
      deltas: [],
      checkpoint: ctx.resume?.checkpoint ?? null,
      state: ctx.resume?.state ?? null,
      issues: [{
        code: "file_missing",
        message: `Cannot import "${unit.path}": the file is gone`,
        severity: "warning",
        file: unit.path,
      }],
      payloads: new Map(),
      bytesRead: 0,
    };
  }
  if (plan.mode === "unchanged") {
    return {
      mode: "unchanged",
      deltas: [],
      checkpoint: ctx.resume!.checkpoint,
      state: ctx.resume!.state,
      issues: [],
      payloads: new Map(),
      bytesRead: 0,
    };
  }
  const prior = ctx.resume?.state as CodexState | undefined;
  const state: CodexState = plan.mode === "append" && prior?.v === STATE_VERSION
    ? structuredClone(prior)
    : freshState();
  const pass = new CodexPass(unit, ctx.epoch, state, codexIdFromPath(unit.path));
  pass.sawFirstLine = plan.offset > 0;
  const outcome = await readPass(
    fs,
    unit.path,
    { ...plan, size: plan.stat.size },
    ctx,
    (l, v) => pass.line(l, v),
  );
  const checkpoint = await makeJsonlCheckpoint(
    fs,
    unit.path,
    plan.stat,
    outcome.offset,
    outcome.line,
  );
  const sid = pass.sid();
  const deltas: SessionDelta[] = [];
  {
    const info: SessionDelta["info"] = {
      id: `codex:${sid}`,
      native_id: sid,
      source: "codex",
    };
    const started = state.meta.started ?? isoOf(pass.firstTs);
    if (started) info.started_at = started;
    const ended = isoOf(pass.lastTs);
    if (ended) info.ended_at = ended;
    if (state.meta.cwd || state.meta.git) {
      info.project = {};
      if (state.meta.cwd) info.project.path = state.meta.cwd;
      if (state.meta.git) info.project.git = state.meta.git;
    }
    if (pass.title) info.title = pass.title;
    if (pass.lastPrompt) info.last_prompt = pass.lastPrompt.slice(0, 2000);
    const extensions: Json = {};
    const ext: Json = {};
    if (state.meta.metaIds.length > 1) ext.session_ids = state.meta.metaIds;
    if (state.meta.forkedFrom) ext.forked_from = state.meta.forkedFrom;
    if (Object.keys(ext).length) extensions.codex = ext;
    deltas.push({
      session_id: `codex:${sid}`,
      file: unit.path,
      info,
      primary: true,
      connections: [connectionOf(state)],
      operations: [...pass.records.values()],
      usage: pass.usage,
      loss_windows: outcome.loss,
      issues: [...pass.issues.list(), ...(plan.mode === "full" ? endpointIssues(state, unit) : [])],
      ...(Object.keys(extensions).length ? { extensions } : {}),
    });
  }
  return {
    mode: plan.mode,
    deltas,
    checkpoint,
    state,
    issues: [],
    payloads: pass.sink.payloads,
    bytesRead: outcome.bytesRead,
  };
}

/** Endpoint evidence the file lacks: recorded once per full read, never filled with guesses. */
function endpointIssues(state: CodexState, unit: SourceUnit): SessionIssue[] {
  const out: SessionIssue[] = [];
  if (!state.meta.version) {
    out.push({
      code: "missing_client_version",
      message: "no session_meta names the Codex CLI version; client version left absent",
      severity: "info",
      file: unit.path,
    });
  }
  if (!state.models.length) {
    out.push({
      code: "missing_model",
      message: "no turn_context names the model; server model left absent",
      severity: "info",
      file: unit.path,
    });
  }
  return out;
}

async function walkRollouts(fs: SourceFs, dir: string, depth: number, out: string[]) {
  for (const e of await fs.readDir(dir)) {
    const path = joinPath(dir, e.name);
    if (e.isDirectory && depth > 0) await walkRollouts(fs, path, depth - 1, out);
    else if (e.isFile && /^rollout-.*\.jsonl$/.test(e.name)) out.push(path);
  }
}

/** `$CODEX_HOME` or `~/.codex`. */
export function codexHome(env: DiscoverEnv): string {
  return env.env.CODEX_HOME || joinPath(env.home, ".codex");
}

export const codex: Importer = {
  id: "codex",
  displayName: "Codex CLI",
  async discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
    const home = codexHome(env);
    const live: string[] = [];
    const archived: string[] = [];
    await walkRollouts(fs, joinPath(home, "sessions"), 4, live);
    await walkRollouts(fs, joinPath(home, "archived_sessions"), 4, archived);
    // A session both live and archived is read once, from sessions/.
    const names = new Set(live.map((p) => p.split("/").pop()));
    const units = [...live, ...archived.filter((p) => !names.has(p.split("/").pop()))];
    return units.map((path) => ({ source: "codex", path, kind: "jsonl", rank: 0 }));
  },
  detect(path: string): boolean {
    return /(^|[\\/])rollout-[^\\/]*\.jsonl$/.test(path);
  },
  import: importRollout,
};
