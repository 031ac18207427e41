/**
 * The tool vocabulary of every agent, in one place: which canonical kind each native tool name
 * is, which tools read a file named in their input or run a shell command, and which input keys
 * name a path, a command, a query or a URL. Importers classify calls with it; the guard decides
 * what to scan with it; the UI describes calls with it.
 */
import type { OperationKind } from "./types.ts";
import { textLine } from "./text_line.ts";

/**
 * What a call does to files, for the guard: `read` and `edit` read the files their input
 * names, `search` reads the files under the folders it names, `shell` runs a command, `list`,
 * `write` and `web` read no file content.
 */
export type ToolRole = "read" | "edit" | "search" | "shell" | "write" | "list" | "web";

/** What a native tool does, as far as Chronicle needs to know. */
export interface ToolFacts {
  kind: OperationKind;
  /** Reads the content of files its input names (the guard scans those files). */
  readsFiles?: true;
  /** Runs a shell command its input holds. */
  runsShell?: true;
  /** Its role where the kind does not decide it (see `toolRole`). */
  role?: ToolRole;
}

const READS = { readsFiles: true } as const;
const SHELL = { runsShell: true } as const;

/** Native tool names (lower-cased) of every agent. MCP tools are recognised by prefix. */
const TOOLS: Record<string, ToolFacts> = {
  // Claude Code
  read: { kind: "read", ...READS },
  notebookread: { kind: "read", ...READS },
  write: { kind: "write" },
  edit: { kind: "edit" },
  multiedit: { kind: "edit" },
  notebookedit: { kind: "edit" },
  bash: { kind: "exec", ...SHELL },
  bashoutput: { kind: "exec" },
  killbash: { kind: "exec" },
  killshell: { kind: "exec" },
  taskoutput: { kind: "exec" },
  taskstop: { kind: "exec" },
  grep: { kind: "search", ...READS },
  glob: { kind: "search" },
  ls: { kind: "search" },
  toolsearch: { kind: "search" },
  webfetch: { kind: "web" },
  websearch: { kind: "web" },
  task: { kind: "task" },
  agent: { kind: "task" },
  workflow: { kind: "task" },
  todowrite: { kind: "plan" },
  exitplanmode: { kind: "plan" },
  enterplanmode: { kind: "plan" },
  // Codex CLI
  shell: { kind: "exec", ...SHELL },
  shell_command: { kind: "exec", ...SHELL },
  local_shell: { kind: "exec", ...SHELL },
  local_shell_call: { kind: "exec", ...SHELL },
  exec_command: { kind: "exec", ...SHELL },
  write_stdin: { kind: "exec" },
  container_exec: { kind: "exec", ...SHELL },
  unified_exec: { kind: "exec", ...SHELL },
  apply_patch: { kind: "edit", role: "write" },
  update_plan: { kind: "plan" },
  spawn_agent: { kind: "task" },
  wait_agent: { kind: "other" },
  send_message: { kind: "other" },
  followup_task: { kind: "other" },
  interrupt_agent: { kind: "other" },
  list_agents: { kind: "other" },
  close_agent: { kind: "other" },
  view_image: { kind: "read", ...READS },
  web_search: { kind: "web" },
  web_search_call: { kind: "web" },
  // OpenCode (read, write, edit, bash, grep, glob, task, webfetch, todowrite as above)
  view: { kind: "read", ...READS },
  patch: { kind: "edit", role: "write" },
  list: { kind: "search" },
  webfetch_tool: { kind: "web" },
  todoread: { kind: "plan" },
  // Gemini CLI
  read_file: { kind: "read", ...READS },
  read_many_files: { kind: "read", ...READS },
  write_file: { kind: "write" },
  replace: { kind: "edit" },
  run_shell_command: { kind: "exec", ...SHELL },
  search_file_content: { kind: "search", ...READS },
  grep_search: { kind: "search", ...READS },
  glob_search: { kind: "search" },
  list_directory: { kind: "search" },
  google_web_search: { kind: "web" },
  web_fetch: { kind: "web" },
  save_memory: { kind: "other" },
  write_todos: { kind: "plan" },
  // Qwen Code (edit, write_file, read_file, grep_search, glob, run_shell_command, list_directory,
  // web_fetch, save_memory, todo_write, agent as above)
  exit_plan_mode: { kind: "plan" },
  task_stop: { kind: "exec" },
  monitor: { kind: "exec" },
  tool_search: { kind: "search" },
  lsp: { kind: "search" },
  // GitHub Copilot CLI (bash, view, edit, grep, glob, task as above)
  create: { kind: "write" },
  read_bash: { kind: "exec" },
  stop_bash: { kind: "exec" },
  list_bash: { kind: "exec" },
  // Cursor
  read_file_v2: { kind: "read", ...READS },
  edit_file: { kind: "edit" },
  edit_file_v2: { kind: "edit" },
  search_replace: { kind: "edit" },
  delete_file: { kind: "edit", role: "write" },
  run_terminal_cmd: { kind: "exec", ...SHELL },
  run_terminal_command_v2: { kind: "exec", ...SHELL },
  codebase_search: { kind: "search", ...READS },
  grep_search_v2: { kind: "search", ...READS },
  file_search: { kind: "search" },
  list_dir: { kind: "search" },
  glob_file_search: { kind: "search" },
  todo_write: { kind: "plan" },
  // Generic names other agents and MCP bridges use
  open_file: { kind: "read", ...READS },
  view_file: { kind: "read", ...READS },
  cat: { kind: "read", ...READS },
  str_replace_editor: { kind: "edit" },
  str_replace_based_edit_tool: { kind: "edit" },
  create_file: { kind: "write" },
  notebookwrite: { kind: "write" },
  ripgrep: { kind: "search", ...READS },
  rg: { kind: "search", ...READS },
  search_files: { kind: "search", ...READS },
  grep_files: { kind: "search", ...READS },
  find_files: { kind: "search" },
  execute_command: { kind: "exec", ...SHELL },
  terminal: { kind: "exec", ...SHELL },
  fetch: { kind: "web" },
};

/** True for an MCP tool name (`mcp__server__tool`, `mcp_server_tool`). */
export function isMcpTool(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith("mcp__") || n.startsWith("mcp_");
}

/** What Chronicle knows about a native tool name (undefined for a name it does not know). */
export function toolFacts(name: string): ToolFacts | undefined {
  return TOOLS[name.toLowerCase()];
}

/** The canonical kind of a native tool name; MCP tools are recognised by their prefix. */
export function classifyTool(name: string): OperationKind {
  if (isMcpTool(name)) return "mcp";
  return TOOLS[name.toLowerCase()]?.kind ?? "other";
}

/**
 * The role of a tool by name, across agents: from its kind (a search that reads files is
 * `search`, one that only lists is `list`; only a shell-running exec is `shell`), or as the
 * table says. MCP and unknown tools have none.
 */
export function toolRole(name: string): ToolRole | undefined {
  const f = toolFacts(name);
  if (!f) return undefined;
  if (f.role) return f.role;
  switch (f.kind) {
    case "read":
    case "edit":
    case "write":
    case "web":
      return f.kind;
    case "search":
      return f.readsFiles ? "search" : "list";
    case "exec":
      return f.runsShell ? "shell" : undefined;
    default:
      return undefined;
  }
}

const namesWhere = (test: (f: ToolFacts) => boolean): ReadonlySet<string> =>
  new Set(Object.entries(TOOLS).filter(([, f]) => test(f)).map(([n]) => n));

/** Tools (lower-cased names) that read the content of files named in their input. */
export const FILE_READING_TOOLS: ReadonlySet<string> = namesWhere((f) => f.readsFiles === true);

/** Tools (lower-cased names) that run a shell command given in their input. */
export const SHELL_TOOLS: ReadonlySet<string> = namesWhere((f) => f.runsShell === true);

/** Input keys that name one file, most specific first. */
export const FILE_KEYS: readonly string[] = [
  "file_path",
  "filePath",
  "notebook_path",
  "target_file",
  "targetFile",
  "relative_workspace_path",
  "relativeWorkspacePath",
  "absolute_path",
  "path",
  "file",
  "filename",
];

/** Input keys that name a folder (listings, searches). */
export const FOLDER_KEYS: readonly string[] = ["dir_path", "directory", "target_directory"];

/** Input keys that name one file or folder: files first. */
export const PATH_KEYS: readonly string[] = [...FILE_KEYS, ...FOLDER_KEYS];

/** Input keys that hold a list of files. */
export const PATH_LIST_KEYS: readonly string[] = [
  "paths",
  "file_paths",
  "files",
  "absolute_paths",
  "target_directories",
];

/** Input keys that hold a shell command (a string or an argument vector). */
export const COMMAND_KEYS: readonly string[] = ["command", "cmd", "script"];

/** Input keys that hold a search pattern or query. */
export const QUERY_KEYS: readonly string[] = ["pattern", "query", "glob_pattern"];

/** Input keys that hold a URL. */
export const URL_KEYS: readonly string[] = ["url"];

/** Input keys that describe a call in words (sub-agent tasks). */
export const DESCRIPTION_KEYS: readonly string[] = ["description", "prompt"];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function firstString(input: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = input[k];
    if (typeof v === "string" && v) return v;
  }
  return undefined;
}

/** The file or resource a tool input names (its path, else its URL), if any. */
export function targetOf(input: unknown): string | undefined {
  if (!isRecord(input)) return undefined;
  return firstString(input, PATH_KEYS) ?? firstString(input, URL_KEYS);
}

/** Every file a tool input names: the path keys, then the path lists. */
export function pathsOf(input: unknown): string[] {
  if (!isRecord(input)) return [];
  const out: string[] = [];
  for (const k of PATH_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v) out.push(v);
  }
  for (const k of PATH_LIST_KEYS) {
    const v = input[k];
    if (Array.isArray(v)) { for (const p of v) if (typeof p === "string" && p) out.push(p); }
  }
  return out;
}

/** The shell command a tool input holds (an argument vector joined by spaces), if any. */
export function commandOf(input: unknown): string | undefined {
  if (!isRecord(input)) return undefined;
  for (const k of COMMAND_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v) return v;
    if (Array.isArray(v) && v.length && v.every((x) => typeof x === "string")) return v.join(" ");
  }
  return undefined;
}

/** The keys a one-line description of a call is taken from, in order. */
export const SUMMARY_KEYS: readonly string[] = [
  ...COMMAND_KEYS,
  ...FILE_KEYS,
  ...QUERY_KEYS,
  ...URL_KEYS,
  ...DESCRIPTION_KEYS,
];

/** A one-line description of a tool input: its command, path, pattern, query or URL. */
export function summarizeToolInput(input: unknown, max = 200): string | undefined {
  if (typeof input === "string") return textLine(input, max);
  if (!isRecord(input)) return undefined;
  for (const k of SUMMARY_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v.trim()) return textLine(v, max);
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) {
      return textLine(v.join(" "), max);
    }
  }
  return undefined;
}
