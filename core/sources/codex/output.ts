/**
 * What a Codex CLI tool call's input and output say: the files an apply_patch touches (in any of
 * the four ways a patch reaches the log), and whether a finished call failed (recorded exit
 * code, event evidence, or the output's text).
 */
import { exitCodeInText } from "../../model/exit_code.ts";
import type { OperationDraft } from "../../model/classify.ts";
import { isObj, type Json, nonEmpty, num, textOfParts } from "../_import_kit.ts";

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
    return { exit: exitCodeInText(output), text: output };
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
    return { exit: exit ?? (text !== undefined ? exitCodeInText(text) : undefined), success, text };
  }
  return {};
}

/** Error evidence for a call gathered from event messages (exec/patch ends, item_completed). */
export interface Signal {
  error?: boolean;
  target?: string;
  parsed?: unknown;
}

export function applySignalTarget(op: OperationDraft, sig: Signal): void {
  if (!op.target && sig.target) op.target = sig.target;
  if (sig.parsed !== undefined) {
    const ext = (op.extensions?.codex ?? {}) as Json;
    op.extensions = { ...op.extensions, codex: { ...ext, parsed_cmd: sig.parsed } };
  }
}

/** The file a parsed shell command reads or searches, when it names exactly one. */
export function parsedTarget(parsed: unknown): Signal {
  if (!Array.isArray(parsed) || !parsed.length) return {};
  const kinds = parsed.map((c) => (isObj(c) ? c.type : undefined));
  const sig: Signal = { parsed: kinds.length === 1 ? kinds[0] : kinds };
  if (parsed.length === 1 && isObj(parsed[0])) {
    const p = parsed[0];
    if ((p.type === "read" || p.type === "search" || p.type === "list_files") && nonEmpty(p.path)) {
      sig.target = nonEmpty(p.path);
    }
  }
  return sig;
}

/** Whether a finished call failed: recorded exit code first, then event evidence, then text. */
export function isErrorOf(facts: OutputFacts, signal: Signal | undefined, tool?: string): boolean {
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
