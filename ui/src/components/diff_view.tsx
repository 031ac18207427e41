/**
 * File changes as real diffs. Edits (old/new strings) and writes (new content) are diffed
 * with the `diff` library; patches the agent wrote itself (Codex apply_patch, unified diffs)
 * are shown line by line as they are.
 */
import { structuredPatch } from "diff";
import type { VNode } from "preact";
import { useState } from "preact/hooks";

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

/** Reads the file changes out of a write/edit tool's input, for every agent's shape. */
export function fileChanges(inputText: string): FileChange[] {
  let input: Record<string, unknown> | null = null;
  try {
    const v = JSON.parse(inputText);
    if (v && typeof v === "object" && !Array.isArray(v)) input = v;
  } catch { /* a raw patch, handled below */ }
  if (!input) {
    return /^\*\*\* Begin Patch|^(---|\+\+\+|@@) /m.test(inputText)
      ? [{ path: patchPath(inputText), patch: inputText, kind: "patch" }]
      : [];
  }
  const path = str(input.file_path) ?? str(input.filePath) ?? str(input.path) ??
    str(input.target_file) ?? str(input.notebook_path) ?? "";
  const patchText = str(input.patch) ?? str(input.input) ?? str(input.diff);
  if (patchText && /^\*\*\* Begin Patch|^(---|\+\+\+|@@) /m.test(patchText)) {
    return [{ path: path || patchPath(patchText), patch: patchText, kind: "patch" }];
  }
  if (Array.isArray(input.edits)) {
    return input.edits.flatMap((e: Record<string, unknown>) => {
      const before = str(e.old_string) ?? str(e.oldString);
      const after = str(e.new_string) ?? str(e.newString);
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

interface Line {
  type: "add" | "del" | "ctx" | "hunk" | "meta";
  text: string;
  oldNo?: number;
  newNo?: number;
}

function diffLines(change: FileChange): Line[] {
  if (change.patch !== undefined) {
    return change.patch.split("\n").map((l): Line => {
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
  const out: Line[] = [];
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

const SHOWN = 80;

export function DiffView({ change }: { change: FileChange }): VNode {
  const [all, setAll] = useState(false);
  const lines = diffLines(change);
  const adds = lines.filter((l) => l.type === "add").length;
  const dels = lines.filter((l) => l.type === "del").length;
  const shown = all ? lines : lines.slice(0, SHOWN);
  return (
    <div class="diff" data-kind={change.kind}>
      <div class="diff-head">
        <span class="diff-path">{change.path || "(file)"}</span>
        <span class="diff-stat">
          <span class="add">+{adds}</span> <span class="del">−{dels}</span>
          {change.kind === "write" ? " · new content" : ""}
        </span>
      </div>
      <table class="diff-lines">
        <tbody>
          {shown.map((l, i) => (
            <tr key={i} class={`dl-${l.type}`}>
              <td class="ln">{l.oldNo ?? ""}</td>
              <td class="ln">{l.newNo ?? ""}</td>
              <td class="sign">{l.type === "add" ? "+" : l.type === "del" ? "−" : ""}</td>
              <td class="code">{l.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {lines.length > SHOWN && !all && (
        <button
          type="button"
          class="link"
          onClick={() => setAll(true)}
        >
          Show all {lines.length} lines
        </button>
      )}
    </div>
  );
}
