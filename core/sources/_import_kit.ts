/**
 * Helpers shared by the line-oriented importers (Codex CLI, Gemini CLI): one JSONL read pass
 * with loss windows, issues counted per type, timestamps, and operation construction with
 * effect and replay attributes derived from the one classification table.
 */
import { effectOf, replayAttributes } from "../model/classify.ts";
import type { OrderKey } from "../model/delta.ts";
import type {
  Completeness,
  JsonlCheckpoint,
  LossWindow,
  Operation,
  OperationKind,
  SessionIssue,
  SourceRange,
} from "../model/types.ts";
import { type JsonlLine, planJsonlResume, readJsonl, type ResumePlan } from "./jsonl.ts";
import type { ImportContext, SourceFs } from "./types.ts";

import { isObj, type Json } from "./_util.ts";

export { isObj, type Json };

export const str = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : undefined;

export { num } from "./_util.ts";

/**
 * Milliseconds since the epoch from an ISO string or a number (seconds below 1e11, else ms).
 * Null for anything else, including placeholders such as "[trimmed]".
 */
export function parseTimeMs(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v < 1e11 ? v * 1000 : v;
  if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}

export const isoOf = (ms: number | null | undefined): string | undefined =>
  ms === null || ms === undefined ? undefined : new Date(ms).toISOString();

/** Issues counted per (code, message): one entry per unknown type, with how often it occurred. */
export class IssueTally {
  #by = new Map<string, SessionIssue>();

  add(
    code: string,
    message: string,
    options: { severity?: SessionIssue["severity"]; file?: string; line?: number } = {},
  ): void {
    const key = `${code}\u0000${message}`;
    const known = this.#by.get(key);
    if (known) {
      known.count = (known.count ?? 1) + 1;
      return;
    }
    const issue: SessionIssue = { code, message, severity: options.severity ?? "warning" };
    if (options.file !== undefined) issue.file = options.file;
    if (options.line !== undefined) issue.line = options.line;
    issue.count = 1;
    this.#by.set(key, issue);
  }

  list(): SessionIssue[] {
    return [...this.#by.values()];
  }
}

/** Fields an importer sets on a new operation; effect and replay attributes are derived. */
export type OpInit = Omit<Operation, "effect" | "replay"> & { kind: OperationKind };

/** Builds an operation: the effect follows from the kind, replay from kind and completeness. */
export function makeOp(init: OpInit): Operation {
  const op = { ...init, effect: effectOf(init.kind) } as Operation;
  for (const k of Object.keys(op) as (keyof Operation)[]) if (op[k] === undefined) delete op[k];
  op.replay = replayAttributes(op);
  return op;
}

/** Sets completeness (and so the replay attributes) after a result arrived or did not. */
export function setCompleteness(op: Operation, completeness: Completeness): void {
  op.completeness = completeness;
  op.replay = replayAttributes(op);
}

export function rangeOf(file: string, line: JsonlLine): SourceRange {
  return { file, lines: [line.line, line.line], bytes: [line.start, line.end] };
}

export function orderKey(ts: number | null, rank: number, line: number, block = 0): OrderKey {
  return { ts_ms: ts, rank, line, block };
}

/** Collects loss windows, merging adjacent lines lost for the same reason. */
export class LossCollector {
  readonly windows: LossWindow[] = [];
  constructor(readonly file: string, readonly epoch: number) {}

  add(line: number, start: number, end: number, reason: string): void {
    const last = this.windows.at(-1);
    if (last && last.reason === reason && last.lines[1] === line - 1) {
      last.lines[1] = line;
      last.bytes[1] = end;
      return;
    }
    this.windows.push({
      epoch: this.epoch,
      file: this.file,
      lines: [line, line],
      bytes: [start, end],
      reason,
    });
  }
}

export interface PassOutcome {
  offset: number;
  line: number;
  bytesRead: number;
  loss: LossWindow[];
}

/**
 * Reads a JSONL file from the planned offset, handing each parsed object to `onLine`. Lines that
 * do not parse, or are not objects, become loss windows; blank lines are skipped. An
 * unterminated last line is read when it parses (a finished file may lack its final newline;
 * a writer's next record then starts with a blank line) and otherwise left for the next pass,
 * or, when the caller says the file is closed (`ctx.closed === true`), recorded as a loss.
 */
export async function readPass(
  fs: SourceFs,
  path: string,
  plan: { offset: number; line: number; size: number },
  ctx: Pick<ImportContext, "epoch" | "closed">,
  onLine: (line: JsonlLine, value: Json) => void,
): Promise<PassOutcome> {
  const state = { offset: plan.offset, line: plan.line, bytesRead: 0 };
  const loss = new LossCollector(path, ctx.epoch);
  for await (const l of readJsonl(fs, path, state, { closed: ctx.closed ?? true })) {
    if (l.error) {
      loss.add(l.line, l.start, l.end, l.error);
      continue;
    }
    if (l.value === undefined) continue;
    if (!isObj(l.value)) {
      loss.add(l.line, l.start, l.end, "not a JSON object");
      continue;
    }
    onLine(l, l.value);
  }
  const end = plan.offset + state.bytesRead;
  if (ctx.closed === true && state.offset < end) {
    const tail = await fs.readRange(path, state.offset, Math.min(end - state.offset, 4096));
    if (end - state.offset > 4096 || new TextDecoder().decode(tail).trim() !== "") {
      loss.add(state.line, state.offset, end, "unterminated last line that is not valid JSON");
    }
  }
  return { offset: state.offset, line: state.line, bytesRead: state.bytesRead, loss: loss.windows };
}

/** Resume planning for a JSONL unit whose previous checkpoint may be of another kind. */
export function planResume(
  fs: SourceFs,
  path: string,
  ctx: ImportContext,
): Promise<ResumePlan | null> {
  const cp = ctx.resume?.checkpoint;
  return planJsonlResume(fs, path, cp && cp.kind === "jsonl" ? cp as JsonlCheckpoint : undefined);
}

/** The text of a content value: a string, or the text parts of an array of parts. */
export function textOfParts(content: unknown, textKeys = ["text"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === "string") out.push(part);
    else if (isObj(part)) {
      for (const k of textKeys) {
        if (typeof part[k] === "string") {
          out.push(part[k] as string);
          break;
        }
      }
    }
  }
  return out.join("\n");
}

/** The last path segment without its extension. */
export function stemOf(path: string): string {
  const base = path.split(/[\\/]/).pop() ?? path;
  return base.replace(/\.(jsonl|json)$/, "");
}

/** Joins path segments with "/" (importers see POSIX-style paths from SourceFs). */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== "").join("/").replace(/\/{2,}/g, "/");
}

/** Keeps a list (used as a FIFO in importer state) at most `max` long. */
export function capList<T>(list: T[], max: number): void {
  if (list.length > max) list.splice(0, list.length - max);
}
