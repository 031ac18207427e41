/**
 * What a recorded change does to each file's text, for every agent's shape: whole-content
 * writes, old/new string edits (one or several, replace-all or not), Codex patches, deletes,
 * and shell commands (a here-document written, a file removed, moved or copied). Applying an
 * edit to the text before it gives the text after it, or says why it cannot; the text rules
 * themselves (replacements, Codex patches) are replay's (core/replay/edits.ts).
 */
import type { OpFacts } from "../causality/mod.ts";
import { normalizePath } from "../causality/mod.ts";
import { parseToolInput } from "../model/mod.ts";
import type { CodeOperation } from "./code_session.ts";
import {
  applyPatchSection,
  applyReplacements,
  parsePatch,
  type PatchSection,
  type Replacement,
} from "../replay/mod.ts";

export type FileEdit =
  | { kind: "write"; content: string }
  | { kind: "replace"; pairs: Replacement[] }
  | { kind: "patch"; section: PatchSection }
  | { kind: "delete" }
  /** The file now holds what `from` held just before (mv, cp), patched when `section` is given. */
  | { kind: "copy"; from: string; section?: PatchSection }
  /** Changed in a way the recording does not spell out (a script, sed -i, a sketch edit). */
  | { kind: "unknown"; reason: string };

/** One file's part of a change. */
export interface StepEdit {
  seq: number;
  op: string;
  path: string;
  edit: FileEdit;
  /** The file as the agent saw it just before, when the log kept it (Claude's originalFile). */
  before?: string;
  /** The log says the file did not exist before (a create, not an overwrite). */
  created?: boolean;
  /** The change itself failed: the file stays as it was. */
  failed: boolean;
}

export type ApplyStatus = "applied" | "not_applied" | "unknown";

export interface ApplyResult {
  /** The text after; null when the file does not exist after. */
  after: string | null;
  status: ApplyStatus;
  /** Why not applied, or why unknown. */
  detail?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function pair(rec: Record<string, unknown>): Replacement | null {
  const old = str(rec.old_string) ?? str(rec.oldString) ?? str(rec.old_str);
  const next = str(rec.new_string) ?? str(rec.newString) ?? str(rec.new_str);
  if (old === undefined || next === undefined) return null;
  const all = rec.replace_all === true || rec.replaceAll === true ||
    (typeof rec.expected_replacements === "number" && rec.expected_replacements > 1);
  return { old, new: next, all };
}

/** Claude Code keeps the file before an edit as `originalFile` in its structured result. */
function recordedBefore(op: CodeOperation): string | undefined {
  const tur = (op.extensions?.["claude-code"] as Record<string, unknown> | undefined)
    ?.tool_use_result;
  if (!isRecord(tur)) return undefined;
  return str(tur.originalFile) ?? str(tur.originalFileContents);
}

/** Whether the log says a write created the file: Claude's `type: create`, Gemini's words. */
function recordedCreate(op: CodeOperation, result: string | null): boolean {
  const tur = (op.extensions?.["claude-code"] as Record<string, unknown> | undefined)
    ?.tool_use_result;
  if (isRecord(tur) && tur.type === "create") return true;
  return result !== null && /Successfully created and wrote to new file|^File created successfully/
    .test(result.slice(0, 400));
}

/**
 * The per-file edits of one change. `facts` are the causality facts of the operation (its
 * normalised files and what happens to each); `input` the text of its request payload.
 */
export function stepEdits(
  op: CodeOperation,
  facts: OpFacts,
  input: string | null,
  result: string | null = null,
): StepEdit[] {
  const change = facts.change;
  if (!change) return [];
  const base = { seq: facts.seq, op: facts.op, failed: change.failed };
  const one = (path: string, edit: FileEdit, before?: string): StepEdit => ({
    ...base,
    path,
    edit,
    ...(before !== undefined ? { before } : {}),
  });
  if (change.kind === "command") {
    const out: StepEdit[] = [];
    for (const [path, action] of change.actions) {
      if (/[*?[]/.test(path)) continue;
      const content = change.contents?.get(path);
      const from = change.copies?.get(path);
      if (action === "delete") out.push(one(path, { kind: "delete" }));
      else if (content !== undefined) out.push(one(path, { kind: "write", content }));
      else if (from !== undefined) out.push(one(path, { kind: "copy", from }));
      else out.push(one(path, { kind: "unknown", reason: "changed by a shell command" }));
    }
    return out;
  }
  const path = change.files[0];
  if (!path) return [];
  const before = recordedBefore(op);
  if (change.kind === "delete") return [one(path, { kind: "delete" })];
  const tool = (op.tool ?? "").toLowerCase();
  const json = parseToolInput(input);
  if (!isRecord(json)) {
    // Codex apply_patch: the request is the patch; this operation is one of its files.
    if (input !== null && /\*\*\* (Add|Update|Delete) File: /.test(input)) {
      const cwd = facts.cwd;
      const sections = parsePatch(input);
      const section = sections.find((s) => normalizePath(s.path, cwd) === path) ??
        (sections.length === 1 ? sections[0] : undefined);
      if (!section) return [one(path, { kind: "unknown", reason: "the patch has no part for it" })];
      const edits: StepEdit[] = [];
      if (section.action === "add") {
        const text = section.added.length ? section.added.join("\n") + "\n" : "";
        edits.push({ ...one(path, { kind: "write", content: text }), created: true });
      } else if (section.action === "delete") edits.push(one(path, { kind: "delete" }));
      else if (section.moveTo) {
        // The target is the source's text patched; the source then goes.
        const to = normalizePath(section.moveTo, cwd);
        edits.push(one(to, { kind: "copy", from: path, section }), one(path, { kind: "delete" }));
      } else edits.push(one(path, { kind: "patch", section }, before));
      return edits;
    }
    return [one(path, { kind: "unknown", reason: "its input is not readable" })];
  }
  if (Array.isArray(json.edits)) {
    const pairs = json.edits.filter(isRecord).map(pair);
    if (pairs.every((p) => p !== null) && pairs.length) {
      return [
        one(path, { kind: "replace", pairs: pairs as NonNullable<(typeof pairs)[0]>[] }, before),
      ];
    }
  }
  const p = pair(json);
  if (p) return [one(path, { kind: "replace", pairs: [p] }, before)];
  const content = str(json.content) ?? str(json.contents) ?? str(json.file_text);
  if (content !== undefined && tool !== "edit_file" && tool !== "edit_file_v2") {
    const write = one(path, { kind: "write", content }, before);
    return [recordedCreate(op, result) ? { ...write, created: true } : write];
  }
  const patchText = str(json.patch) ?? str(json.input);
  if (patchText && /\*\*\* (Add|Update|Delete) File: /.test(patchText)) {
    return stepEdits(op, facts, patchText, result);
  }
  return [
    one(path, {
      kind: "unknown",
      reason: `${op.tool ?? "this tool"} does not record the whole change`,
    }),
  ];
}

/**
 * Applies one file edit to the text before it (null: the file did not exist). A failed step
 * leaves the text as it was; `copy` needs the source's text, passed as `source`.
 */
export function applyEdit(
  before: string | null,
  step: StepEdit,
  source?: string | null,
): ApplyResult {
  if (step.failed) return { after: before, status: "not_applied", detail: "the step failed" };
  const e = step.edit;
  switch (e.kind) {
    case "write":
      return { after: e.content, status: "applied" };
    case "delete":
      return { after: null, status: "applied" };
    case "copy": {
      if (source === undefined || source === null) {
        return { after: before, status: "unknown", detail: "the source's text is not known" };
      }
      return e.section ? fromChange(before, applyPatchSection(source, e.section)) : {
        after: source,
        status: "applied",
      };
    }
    case "unknown":
      return { after: before, status: "unknown", detail: e.reason };
    case "replace":
      return fromChange(before, applyReplacements(before, e.pairs));
    case "patch":
      return fromChange(before, applyPatchSection(before, e.section));
  }
}

function fromChange(
  before: string | null,
  r: ReturnType<typeof applyReplacements>,
): ApplyResult {
  return r.ok
    ? { after: r.text, status: "applied" }
    : { after: before, status: "not_applied", detail: r.reason };
}
