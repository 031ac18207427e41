/**
 * How a tool call maps onto canonical kinds and effects, and which operations replay may
 * attempt. One table for every agent, so all importers agree.
 */
import type {
  Completeness,
  Effect,
  Operation,
  OperationKind,
  ReplayAttributes,
  ReplayBlocker,
} from "./types.ts";

const TOOL_KINDS: Record<string, OperationKind> = {
  // Claude Code
  read: "read",
  notebookread: "read",
  write: "write",
  edit: "edit",
  multiedit: "edit",
  notebookedit: "edit",
  bash: "exec",
  bashoutput: "exec",
  killbash: "exec",
  killshell: "exec",
  taskoutput: "exec",
  taskstop: "exec",
  grep: "search",
  glob: "search",
  ls: "search",
  toolsearch: "search",
  webfetch: "web",
  websearch: "web",
  task: "task",
  agent: "task",
  todowrite: "plan",
  exitplanmode: "plan",
  enterplanmode: "plan",
  // Codex CLI
  shell: "exec",
  shell_command: "exec",
  local_shell: "exec",
  local_shell_call: "exec",
  exec_command: "exec",
  write_stdin: "exec",
  container_exec: "exec",
  unified_exec: "exec",
  apply_patch: "edit",
  update_plan: "plan",
  view_image: "read",
  web_search: "web",
  web_search_call: "web",
  // OpenCode
  view: "read",
  patch: "edit",
  list: "search",
  webfetch_tool: "web",
  todoread: "plan",
  // Gemini CLI
  read_file: "read",
  read_many_files: "read",
  write_file: "write",
  replace: "edit",
  run_shell_command: "exec",
  search_file_content: "search",
  grep_search: "search",
  glob_search: "search",
  list_directory: "search",
  google_web_search: "web",
  web_fetch: "web",
  save_memory: "other",
  write_todos: "plan",
  // Cursor
  read_file_v2: "read",
  edit_file: "edit",
  edit_file_v2: "edit",
  search_replace: "edit",
  delete_file: "edit",
  run_terminal_cmd: "exec",
  run_terminal_command_v2: "exec",
  codebase_search: "search",
  grep_search_v2: "search",
  file_search: "search",
  list_dir: "search",
  glob_file_search: "search",
  todo_write: "plan",
};

const KIND_EFFECTS: Record<OperationKind, Effect> = {
  prompt: "none",
  reply: "none",
  thinking: "none",
  event: "none",
  read: "fs_read",
  search: "fs_read",
  write: "fs_write",
  edit: "fs_write",
  exec: "process",
  web: "network",
  task: "delegate",
  plan: "none",
  mcp: "network",
  other: "none",
};

/** The canonical kind of a native tool name; MCP tools are recognised by their prefix. */
export function classifyTool(name: string): OperationKind {
  const n = name.toLowerCase();
  if (n.startsWith("mcp__") || n.startsWith("mcp_")) return "mcp";
  return TOOL_KINDS[n] ?? "other";
}

export function effectOf(kind: OperationKind): Effect {
  return KIND_EFFECTS[kind];
}

/**
 * Replay attributes follow from kind and completeness alone: incomplete and continuation-only
 * operations are never replayable; shell steps need confirmation; file edits replay directly.
 */
export function replayAttributes(
  op: Pick<Operation, "kind" | "completeness" | "request">,
): ReplayAttributes {
  const blockers: ReplayBlocker[] = [];
  const c: Completeness = op.completeness;
  if (c === "incomplete" || c === "truncated" || c === "malformed") blockers.push("incomplete");
  if (c === "unmatched") blockers.push("continuation_only");
  if (c === "unsupported") blockers.push("unsupported_tool");
  if (blockers.length) return { replayable: false, blockers };
  switch (op.kind) {
    case "write":
    case "edit":
      if (op.request && !("sha256" in op.request || "inline" in op.request)) {
        blockers.push("missing_payload");
      }
      return { replayable: blockers.length === 0, blockers };
    case "exec":
      if (op.request && !("sha256" in op.request || "inline" in op.request)) {
        blockers.push("missing_payload");
      }
      if (blockers.length) return { replayable: false, blockers };
      return { replayable: true, blockers: ["needs_confirmation"] };
    case "web":
    case "mcp":
      blockers.push("out_of_scope");
      return { replayable: false, blockers };
    case "task":
    case "other":
      blockers.push("unsupported_tool");
      return { replayable: false, blockers };
    default:
      return { replayable: false, blockers };
  }
}

const SUMMARY_KEYS = [
  "command",
  "cmd",
  "file_path",
  "filePath",
  "notebook_path",
  "path",
  "absolute_path",
  "target_file",
  "pattern",
  "query",
  "url",
  "description",
  "prompt",
];

/** A one-line description of a tool input: its command, path, pattern, query or URL. */
export function summarizeToolInput(input: unknown, max = 200): string | undefined {
  if (typeof input === "string") return oneLine(input, max);
  if (typeof input !== "object" || input === null) return undefined;
  const rec = input as Record<string, unknown>;
  for (const k of SUMMARY_KEYS) {
    const v = rec[k];
    if (typeof v === "string" && v.trim()) return oneLine(v, max);
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) {
      return oneLine(v.join(" "), max);
    }
  }
  return undefined;
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}
