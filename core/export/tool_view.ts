/**
 * How a tool call reads: its label, its one-line summary, and the file changes in a write or
 * edit tool's input (every agent's shape) with their diff lines. The UI's session view and the
 * Markdown / HTML exports both use these, so a call reads the same everywhere.
 */
import { structuredPatch } from "diff";

export interface FileChange {
  path: string;
  /** Old and new text of the changed region (or whole file for writes). */
  before?: string;
  after?: string;
  /** A patch as the agent wrote it, when there is no before/after. */
  patch?: string;
  kind: "edit" | "write" | "patch";
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

const PATCH_START = /^\*\*\* Begin Patch|^(---|\+\+\+|@@) /m;

/** Reads the file changes out of a write/edit tool's input, for every agent's shape. */
export function fileChanges(inputText: string): FileChange[] {
  let input: Record<string, unknown> | null = null;
  try {
    const v = JSON.parse(inputText);
    if (v && typeof v === "object" && !Array.isArray(v)) input = v;
  } catch { /* a raw patch, handled below */ }
  if (!input) {
    return PATCH_START.test(inputText)
      ? [{ path: patchPath(inputText), patch: inputText, kind: "patch" }]
      : [];
  }
  const path = str(input.file_path) ?? str(input.filePath) ?? str(input.path) ??
    str(input.target_file) ?? str(input.notebook_path) ?? "";
  const patchText = str(input.patch) ?? str(input.input) ?? str(input.diff);
  if (patchText && PATCH_START.test(patchText)) {
    return [{ path: path || patchPath(patchText), patch: patchText, kind: "patch" }];
  }
  if (Array.isArray(input.edits)) {
    return input.edits.flatMap((e: Record<string, unknown>) => {
      const before = str(e?.old_string) ?? str(e?.oldString);
      const after = str(e?.new_string) ?? str(e?.newString);
      return after !== undefined
        ? [{ path, before: before ?? "", after, kind: "edit" as const }]
        : [];
    });
  }
  const before = str(input.old_string) ?? str(input.oldString) ?? str(input.old_str);
  const after = str(input.new_string) ?? str(input.newString) ?? str(input.new_str);
  if (after !== undefined) return [{ path, before: before ?? "", after, kind: "edit" }];
  const content = str(input.content) ?? str(input.contents) ?? str(input.code_edit) ??
    str(input.new_source);
  if (content !== undefined) return [{ path, before: "", after: content, kind: "write" }];
  return [];
}

function patchPath(patch: string): string {
  const m = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(patch) ??
    /^\+\+\+ (?:b\/)?(.+)$/m.exec(patch);
  return m ? m[1].trim() : "";
}

/** One line of a diff as a reader sees it. */
export interface DiffLine {
  type: "add" | "del" | "ctx" | "hunk" | "meta";
  text: string;
  oldNo?: number;
  newNo?: number;
}

/** The lines of a change: a real diff (3 lines of context) or the agent's patch as written. */
export function diffLines(change: FileChange): DiffLine[] {
  if (change.patch !== undefined) {
    return change.patch.split("\n").map((l): DiffLine => {
      if (/^(\*\*\* |--- |\+\+\+ )/.test(l)) return { type: "meta", text: l };
      if (l.startsWith("@@")) return { type: "hunk", text: l };
      if (l.startsWith("+")) return { type: "add", text: l.slice(1) };
      if (l.startsWith("-")) return { type: "del", text: l.slice(1) };
      return { type: "ctx", text: l.startsWith(" ") ? l.slice(1) : l };
    });
  }
  const p = structuredPatch(
    change.path,
    change.path,
    change.before ?? "",
    change.after ?? "",
    "",
    "",
    {
      context: 3,
    },
  );
  const out: DiffLine[] = [];
  for (const hunk of p.hunks) {
    out.push({
      type: "hunk",
      text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
    });
    let o = hunk.oldStart;
    let n = hunk.newStart;
    for (const l of hunk.lines) {
      if (l.startsWith("\\")) continue;
      const text = l.slice(1);
      if (l[0] === "+") out.push({ type: "add", text, newNo: n++ });
      else if (l[0] === "-") out.push({ type: "del", text, oldNo: o++ });
      else out.push({ type: "ctx", text, oldNo: o++, newNo: n++ });
    }
  }
  return out;
}

/** A file's lines as a read tool returned them, with their line numbers. */
export interface NumberedLines {
  lines: { no: number; text: string }[];
  /** What follows the numbered lines (a note the agent appended), if anything. */
  rest: string;
}

const NUMBERED = /^ *(\d+)(?:\t|→)(.*)$/;

/**
 * A read's result in the numbered form Claude Code and others print (`   12\tcode`,
 * `12→code`), read back into line numbers and text; null when the text does not open that way.
 */
export function numberedLines(text: string): NumberedLines | null {
  const all = text.split("\n");
  const lines: NumberedLines["lines"] = [];
  let i = 0;
  for (; i < all.length; i++) {
    const m = NUMBERED.exec(all[i]);
    if (!m) break;
    const no = Number(m[1]);
    if (lines.length && no !== lines[lines.length - 1].no + 1) break;
    lines.push({ no, text: m[2] });
  }
  if (!lines.length) return null;
  return { lines, rest: all.slice(i).join("\n").trim() };
}

/** How many lines of a failed call's result are its reason, shown without a click. */
export const REASON_LINES = 12;

/**
 * Why a failed call failed, as a reader wants it up front: the opening of its result with the
 * agent's wrapper tags (`<tool_use_error>`, `<error>`) taken off, at most {@link REASON_LINES}
 * lines. `cut` says whether more of the result follows.
 */
export function failureReason(resultText: string | undefined): { text: string; cut: boolean } {
  const plain = (resultText ?? "")
    .replace(/^\s*<(tool_use_error|error)>\s*/, "")
    .replace(/\s*<\/(tool_use_error|error)>\s*$/, "")
    .trim();
  const lines = plain.split("\n");
  const text = lines.slice(0, REASON_LINES).join("\n");
  return { text, cut: lines.length > REASON_LINES };
}

/** The label of each tool kind. */
export const KIND_LABEL: Readonly<Record<string, string>> = {
  read: "Read",
  search: "Search",
  write: "Write",
  edit: "Edit",
  exec: "Run",
  web: "Web",
  task: "Sub-agent",
  plan: "Plan",
  mcp: "MCP",
  other: "Tool",
};

/** The keys of a tool input that name what the call is about, in the order they are tried. */
const SUMMARY_KEYS = [
  "command",
  "cmd",
  "file_path",
  "filePath",
  "path",
  "pattern",
  "query",
  "url",
  "description",
  "prompt",
];

/**
 * A one-line description of a tool call: the summary the importer recorded, else its command,
 * path or query from the input, else its target or the opening of the input.
 */
export function callSummary(
  op: { summary?: string; target?: string },
  inputText: string | undefined,
): string {
  if (op.summary) return op.summary;
  const text = inputText ?? "";
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      for (const k of SUMMARY_KEYS) {
        const x = o[k];
        if (typeof x === "string" && x) return x;
        if (Array.isArray(x) && x.every((p) => typeof p === "string")) return x.join(" ");
      }
    }
  } catch { /* not JSON */ }
  return op.target ?? text.slice(0, 200);
}

/** One item of a to-do list or plan a tool wrote (TodoWrite, update_plan, write_todos, ...). */
export interface TodoItem {
  text: string;
  /** As the agent wrote it, lower-cased: `pending`, `in_progress`, `completed`, `cancelled`. */
  status: string;
}

const TODO_TEXT_KEYS = ["content", "step", "description", "title", "text", "task"];

/**
 * The to-do list in a plan tool's input, for every agent's shape: Claude's and OpenCode's
 * `todos[].content`, Codex's `plan[].step`, Gemini's `todos[].description`; null when the
 * input holds no list.
 */
export function todoItems(inputText: string | undefined): TodoItem[] | null {
  let input: unknown;
  try {
    input = JSON.parse(inputText ?? "");
  } catch {
    return null;
  }
  if (!input || typeof input !== "object") return null;
  const o = input as Record<string, unknown>;
  const list = Array.isArray(o.todos) ? o.todos : Array.isArray(o.plan) ? o.plan : null;
  if (!list) return null;
  const items = list.flatMap((e): TodoItem[] => {
    if (!e || typeof e !== "object") return [];
    const r = e as Record<string, unknown>;
    const text = TODO_TEXT_KEYS.map((k) => r[k]).find((v) => typeof v === "string");
    if (typeof text !== "string") return [];
    return [{ text, status: typeof r.status === "string" ? r.status.toLowerCase() : "pending" }];
  });
  return items.length ? items : null;
}

/** A search result's matches in one file: line numbers and text. */
export interface SearchFile {
  path: string;
  lines: { no: number; text: string }[];
}

const HIT = /^(.+?)[:-](\d+)[:-](.*)$/;

/**
 * A content search's result (grep -n, rg, Claude's Grep in content mode: `path:12:text`)
 * grouped by file; null unless most non-empty lines have that shape.
 */
export function searchHits(resultText: string | undefined): SearchFile[] | null {
  const lines = (resultText ?? "").split("\n").filter((l) => l.trim() && l !== "--");
  if (!lines.length) return null;
  const files: SearchFile[] = [];
  let hits = 0;
  for (const l of lines) {
    const m = HIT.exec(l);
    if (!m) continue;
    hits++;
    const last = files[files.length - 1];
    const line = { no: Number(m[2]), text: m[3] };
    if (last?.path === m[1]) last.lines.push(line);
    else files.push({ path: m[1], lines: [line] });
  }
  return hits * 2 > lines.length ? files : null;
}
