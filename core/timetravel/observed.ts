/**
 * What a successful read showed of a whole file, per agent: Claude Code's numbered lines,
 * Gemini's raw text, OpenCode's `N: ` lines up to its end-of-file note, Codex's `sed -n`/`cat`
 * output. A read of part of a file (an offset, a limit, a cut result) shows nothing whole and
 * is left out. These observations let time travel rebuild files without a repository, and
 * check the rebuilt text where it has one.
 */
import { commandLine, type OpFacts, shellEffects } from "../causality/mod.ts";
import { parseToolInput, toolResultText } from "../model/mod.ts";
import type { CodeOperation } from "./code_session.ts";

export interface Observation {
  seq: number;
  path: string;
  text: string;
  /** The format does not show whether the file ends with a newline (OpenCode). */
  eolUnknown: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const PARTIAL_KEYS = ["offset", "limit", "start_line", "end_line", "line", "pages", "startLine"];

function claudeLines(text: string): string | null {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*(\d+)\t(.*)$/.exec(line);
    if (!m) {
      if (line.startsWith("<system-reminder>") || line === "") break;
      return null;
    }
    if (Number(m[1]) !== out.length + 1) return null;
    out.push(m[2]);
  }
  return out.length ? out.join("\n") : null;
}

function opencodeLines(text: string): string | null {
  const start = text.indexOf("<content>\n");
  const end = /\n\(End of file - total (\d+) lines?\)\n/.exec(text);
  if (start < 0 || !end) return null;
  const body = text.slice(start + 10, end.index).replace(/\n$/, "");
  const lines: string[] = [];
  for (const line of body.split("\n")) {
    const m = /^(\d+): ?(.*)$/.exec(line);
    if (!m || Number(m[1]) !== lines.length + 1) return null;
    lines.push(m[2]);
  }
  if (lines.length !== Number(end[1])) return null;
  return lines.length ? lines.join("\n") + "\n" : "";
}

/** The whole-file text a read step showed, or null when it showed part of one or none. */
export function observe(
  op: CodeOperation,
  facts: OpFacts,
  read: (which: "request" | "response") => string | null,
): Observation | null {
  const s = facts.source;
  if (!s || s.failed || s.kind !== "read" || s.files.length !== 1 || s.globs.length) return null;
  const path = s.files[0];
  const input = parseToolInput(read("request"));
  if (isRecord(input) && PARTIAL_KEYS.some((k) => input[k] !== undefined && input[k] !== null)) {
    return null;
  }
  const raw = read("response");
  if (raw === null) return null;
  const tool = (op.tool ?? "").toLowerCase();
  const at = { seq: facts.seq, path };
  if (op.kind === "read") {
    if ((tool === "read" || tool === "view") && raw.startsWith("<path>")) {
      const text = opencodeLines(raw);
      return text === null ? null : { ...at, text, eolUnknown: true };
    }
    if (tool === "read") {
      const claude = op.extensions?.["claude-code"] as Record<string, unknown> | undefined;
      const file = isRecord(claude?.tool_use_result) ? claude.tool_use_result.file : undefined;
      if (isRecord(file) && (file.startLine !== 1 || file.numLines !== file.totalLines)) {
        return null;
      }
      if (claude?.result_type === "file_unchanged") return null;
      const text = claudeLines(raw);
      return text === null ? null : { ...at, text, eolUnknown: false };
    }
    if (tool === "read_file" && raw.trimStart().startsWith("[")) {
      const text = toolResultText(raw);
      if (/content (has been )?truncated|\[File content truncated/i.test(text)) return null;
      return { ...at, text, eolUnknown: false };
    }
    return null;
  }
  if (op.kind === "exec") {
    // One command that prints one whole file: `cat f`, or `sed -n '1,Np' f` that printed fewer.
    const command = commandLine(input);
    if (!command) return null;
    const effects = shellEffects(command, facts.cwd ?? ".");
    if (effects.length !== 1 || effects[0].role !== "read" || effects[0].paths.length !== 1) {
      return null;
    }
    if (/[|;&<>]/.test(command.replace(/'[^']*'|"[^"]*"/g, ""))) return null;
    const text = toolResultText(raw);
    const program = effects[0].program;
    if (program === "cat") return { ...at, text, eolUnknown: false };
    const m = /^sed\s+-n\s+['"]?1,(\d+)p['"]?\s+\S+$/.exec(command.trim());
    if (program === "sed" && m) {
      const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
      if (lines < Number(m[1])) return { ...at, text, eolUnknown: false };
    }
  }
  return null;
}

/** Whether two texts are the same file, allowing for an observation that hides the final newline. */
export function sameText(a: string, b: string, eolUnknown: boolean): boolean {
  if (a === b) return true;
  return eolUnknown && a.replace(/\n$/, "") === b.replace(/\n$/, "");
}
