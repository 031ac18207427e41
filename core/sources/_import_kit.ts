/**
 * The importer kit: what every importer does alike, written once. JSON shape checks and path
 * pieces; issues counted per (code, message); loss windows with adjacent lines merged; one
 * JSONL read pass; the start of a pass (unchanged, vanished, or a plan with the importer's
 * state, where a state of another version is dropped and the file read from zero); and the
 * one seam where operation drafts become canonical operations (`finishDelta`), so effect and
 * replay attributes always follow from kind, completeness and request.
 *
 * Private to core/sources.
 */
import { finishOperation, type OperationDraft } from "../model/classify.ts";
import type { OperationRecord, OrderKey, SessionDelta } from "../model/delta.ts";
import type { PayloadSink } from "../model/payload.ts";
import type { JsonlCheckpoint, LossWindow, SessionIssue, SourceRange } from "../model/types.ts";
import {
  type JsonlLine,
  makeJsonlCheckpoint,
  MAX_LINE_BYTES,
  planJsonlResume,
  readJsonl,
  type ResumePlan,
} from "./jsonl.ts";
import { CUT_MARK } from "../model/cut_mark.ts";
import {
  CUT_REASON,
  cutOutcome,
  cutterAfter,
  type JsonCutter,
  KEEP_TEXT_BYTES,
} from "./json_cut.ts";
import { unchangedResult, vanishedResult } from "./results.ts";
import type { FileStat, ImportContext, SourceFs, SourceUnit, UnitResult } from "./types.ts";

export type { OperationDraft };

// ---- JSON shapes ----

export type Json = Record<string, unknown>;

export const isObj = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The value when it is a string (the empty string included). */
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The value when it is a string with at least one character. */
export const nonEmpty = (v: unknown): string | undefined =>
  typeof v === "string" && v !== "" ? v : undefined;

/** The value when it is a finite number. */
export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

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

/** Parses JSON text; `ok: false` for text that is not JSON (or no text). */
export function parseJsonText(text: string | null | undefined): { ok: true; value: unknown } | {
  ok: false;
} {
  if (text === null || text === undefined) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

// ---- paths (importers see POSIX-style paths from SourceFs) ----

export function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

export function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/** The last path segment without its `.jsonl` or `.json` extension. */
export function stemOf(path: string): string {
  const base = path.split(/[\\/]/).pop() ?? path;
  return base.replace(/\.(jsonl|json)$/, "");
}

/** Joins path segments with "/". */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== "").join("/").replace(/\/{2,}/g, "/");
}

/** Whether `dir` holds a file `name`, from a listing (discovery costs no stat per file). */
export async function hasFile(fs: SourceFs, dir: string, name: string): Promise<boolean> {
  return (await fs.readDir(dir)).some((e) => e.isFile && e.name === name);
}

/** A file read whole (an output the agent kept apart; a JSON document: `readJsonDocument`). */
export async function readWhole(fs: SourceFs, path: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of fs.readFrom(path, 0)) {
    chunks.push(c.slice()); // the next chunk reuses this one's buffer
    size += c.byteLength;
  }
  return joined(chunks, size);
}

/** `chunks`, `size` bytes in all, one after the other in one buffer. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/** A JSON document as {@link readJsonDocument} read it. */
export interface JsonDocument {
  /** The bytes the file held. */
  size: number;
  value?: unknown;
  /** Why there is no value: it does not parse, or it is too long even with its texts cut. */
  error?: string;
  /** Set when the document was longer than `maxBytes`: its long texts were cut (a loss). */
  cut?: string;
}

/**
 * A JSON document (a legacy chat, one file of a tree) parsed whole when it is at most `maxBytes`
 * long, and otherwise read in bounded memory with each of its texts cut after `keepTextBytes`
 * (json_cut.ts), as a line that long is.
 */
export async function readJsonDocument(
  fs: SourceFs,
  path: string,
  options: { maxBytes?: number; keepTextBytes?: number } = {},
): Promise<JsonDocument> {
  const max = options.maxBytes ?? MAX_LINE_BYTES;
  const keep = options.keepTextBytes ?? KEEP_TEXT_BYTES;
  let chunks: Uint8Array[] = [];
  let size = 0;
  let cutter: JsonCutter | null = null;
  for await (const c of fs.readFrom(path, 0)) {
    size += c.byteLength;
    if (cutter) cutter.push(c);
    else {
      chunks.push(c.slice()); // the next chunk reuses this one's buffer
      if (size > max) {
        cutter = cutterAfter(chunks, max, keep);
        chunks = [];
      }
    }
  }
  let bytes: Uint8Array;
  let cut: string | undefined;
  if (cutter) {
    const made = cutOutcome(cutter, "document", max);
    if ("error" in made) return { size, error: made.error };
    bytes = made.bytes;
    cut = made.reason;
  } else bytes = joined(chunks, size);
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return cut ? { size, value, cut } : { size, value };
  } catch {
    return { size, error: "the JSON document does not parse (half-written or corrupt)" };
  }
}

/** A short hash of text (53 bits, base 36): to tell texts apart without keeping them in state. */
export function shortHash(text: string): string {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

// ---- time ----

/**
 * Milliseconds since the epoch from an ISO string or a number (seconds below 1e11, else ms).
 * Null for anything else, including placeholders such as "[trimmed]".
 */
export function parseTimeMs(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v < 1e11 ? v * 1000 : v;
  if (typeof v !== "string") return null;
  const utc = v.length === 24 ? utcMs(v) : null;
  if (utc !== null) return utc;
  if (!/^\d{4}-\d{2}-\d{2}/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ`, the form every agent writes most times in, read digit by digit:
 * twice as fast as `Date.parse` (a line or two of every log has one). Null for anything else
 * (`Date.parse` decides), and for days past the 28th, which not every month has.
 */
function utcMs(v: string): number | null {
  if (
    v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(10) !== 84 ||
    v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58 || v.charCodeAt(19) !== 46 ||
    v.charCodeAt(23) !== 90
  ) return null;
  const year = digits(v, 0, 4), month = digits(v, 5, 2), day = digits(v, 8, 2);
  const hour = digits(v, 11, 2), minute = digits(v, 14, 2), second = digits(v, 17, 2);
  const ms = digits(v, 20, 3);
  if (
    year < 1000 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 ||
    minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0
  ) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** The number the `n` decimal digits at `at` write, or -1. */
function digits(v: string, at: number, n: number): number {
  let value = 0;
  for (let i = at; i < at + n; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

export const isoOf = (ms: number | null | undefined): string | undefined =>
  ms === null || ms === undefined ? undefined : new Date(ms).toISOString();

// ---- issues and loss windows ----

/** Issues counted per (code, message): one entry per kind of problem, with how often it occurred. */
export class IssueTally {
  #by = new Map<string, SessionIssue>();

  /** `file` is named on every issue that does not name its own. */
  constructor(readonly file?: string) {}

  add(
    code: string,
    message: string,
    options: {
      severity?: SessionIssue["severity"];
      file?: string;
      line?: number;
      /** How many occurrences this one stands for. Default 1. */
      count?: number;
    } = {},
  ): void {
    const key = `${code}\u0000${message}`;
    const known = this.#by.get(key);
    const n = options.count ?? 1;
    if (known) {
      known.count = (known.count ?? 1) + n;
      return;
    }
    const issue: SessionIssue = { code, message, severity: options.severity ?? "warning" };
    const file = options.file ?? this.file;
    if (file !== undefined) issue.file = file;
    if (options.line !== undefined) issue.line = options.line;
    issue.count = n;
    this.#by.set(key, issue);
  }

  get size(): number {
    return this.#by.size;
  }

  list(): SessionIssue[] {
    return [...this.#by.values()];
  }
}

/** Collects loss windows, merging adjacent lines lost for the same reason. */
class LossCollector {
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

// ---- reading a JSONL unit ----

export function rangeOf(file: string, line: JsonlLine): SourceRange {
  return { file, lines: [line.line, line.line], bytes: [line.start, line.end] };
}

/**
 * A unit's rank in order keys: 0 for a session's main file; another file (a sub-agent's) gets
 * a rank of its own, from its name and folder, so operations of two files never share a key.
 */
export function fileRank(unit: SourceUnit): number {
  if (unit.rank === 0) return 0;
  const tail = unit.path.split("/").slice(-2).join("/");
  let h = 0x811c9dc5;
  for (let i = 0; i < tail.length; i++) h = Math.imul(h ^ tail.charCodeAt(i), 0x01000193);
  return unit.rank + (h >>> 0) % 1_000_000;
}

export function orderKey(ts: number | null, rank: number, line: number, block = 0): OrderKey {
  return { ts_ms: ts, rank, line, block };
}

/** Importer state saved with a checkpoint: a version, so a state of another shape is dropped. */
export interface VersionedState {
  v: number;
}

/** How a JSONL pass begins: nothing to do (`done`), or where to read from with which state. */
export type JsonlStart<S> = { done: UnitResult } | { plan: ResumePlan; state: S };

/**
 * Starts a pass over a JSONL unit: an unchanged file costs one stat; a vanished one is a
 * `file_missing` issue; an appended one resumes from its checkpoint with a copy of the saved
 * state, unless that state is missing or of another version that `upgrade` does not carry over,
 * in which case the state is dropped and the file read from zero (a state of another shape is
 * never resumed).
 */
export async function beginJsonlPass<S extends VersionedState>(
  unit: SourceUnit,
  ctx: ImportContext,
  options: {
    version: number;
    fresh: () => S;
    /** A copy of a saved state of another version as this version's, or undefined. */
    upgrade?: (prior: VersionedState) => S | undefined;
  },
): Promise<JsonlStart<S>> {
  const cp = ctx.resume?.checkpoint;
  const plan = await planJsonlResume(
    ctx.fs,
    unit.path,
    cp && cp.kind === "jsonl" ? cp as JsonlCheckpoint : undefined,
  );
  if (!plan) return { done: vanishedResult(unit, ctx.resume) };
  if (plan.mode === "unchanged") return { done: unchangedResult(ctx.resume) };
  const prior = ctx.resume?.state;
  if (plan.mode === "append" && isObj(prior) && typeof prior.v === "number") {
    const copy = () => structuredClone(prior) as unknown as VersionedState;
    const state = prior.v === options.version ? copy() as S : options.upgrade?.(copy());
    if (state) return { plan, state };
  }
  return { plan: { ...plan, mode: "full", offset: 0, line: 1 }, state: options.fresh() };
}

export interface PassOutcome {
  offset: number;
  line: number;
  bytesRead: number;
  loss: LossWindow[];
  /** Where the next pass resumes: after the last complete line read. */
  checkpoint: JsonlCheckpoint;
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
  plan: Pick<ResumePlan, "offset" | "line" | "stat">,
  ctx: Pick<ImportContext, "epoch" | "closed" | "maxPassBytes" | "resume">,
  onLine: (line: JsonlLine, value: Json) => void,
): Promise<PassOutcome> {
  const state = { offset: plan.offset, line: plan.line, bytesRead: 0 };
  const loss = new LossCollector(path, ctx.epoch);
  // A slice only where the store takes it as an append: reading on, or a log it holds nothing of
  // (a file read again from its start replaces what the store holds of it, in one pass).
  const max = ctx.maxPassBytes && (plan.offset > 0 || !ctx.resume) ? ctx.maxPassBytes : Infinity;
  const sliced = await readJsonl(fs, path, state, { closed: ctx.closed ?? true }, (l) => {
    if (l.error) loss.add(l.line, l.start, l.end, l.error);
    else if (l.value !== undefined && !isObj(l.value)) {
      loss.add(l.line, l.start, l.end, "not a JSON object");
    } else if (l.value !== undefined) {
      if (l.cut) loss.add(l.line, l.start, l.end, l.cut); // kept, but its long texts were cut
      onLine(l, l.value);
    }
    return l.end + 1 - plan.offset < max || l.end + 1 >= plan.stat.size;
  });
  if (sliced) {
    const { offset, line } = state;
    return {
      offset,
      line,
      bytesRead: offset - plan.offset,
      loss: loss.windows,
      checkpoint: await makeJsonlCheckpoint(fs, path, plan.stat, offset, line, true),
    };
  }
  const end = plan.offset + state.bytesRead;
  if (ctx.closed === true && state.offset < end) {
    const tail = await fs.readRange(path, state.offset, Math.min(end - state.offset, 4096));
    if (end - state.offset > 4096 || new TextDecoder().decode(tail).trim() !== "") {
      loss.add(state.line, state.offset, end, "unterminated last line that is not valid JSON");
    }
  }
  return {
    offset: state.offset,
    line: state.line,
    bytesRead: state.bytesRead,
    loss: loss.windows,
    checkpoint: await makeJsonlCheckpoint(
      fs,
      path,
      await statOfRead(fs, path, plan.stat, end),
      state.offset,
      state.line,
    ),
  };
}

/**
 * The file's stat that the checkpoint records. A read streams to the file's end, so an agent
 * appending between the plan's stat and the read leaves bytes read that the planned stat does
 * not count: recorded with it, the checkpoint would never match the file again, and every later
 * pass would read the file's tail to find it unchanged (a live view waiting for the checkpoint to
 * settle waited for ever). When the file now ends where the read ended, its new stat describes
 * what was read; otherwise it is still being written, and the planned stat makes the next pass
 * look again.
 */
async function statOfRead(
  fs: SourceFs,
  path: string,
  planned: FileStat,
  end: number,
): Promise<FileStat> {
  if (planned.size === end) return planned;
  const now = await fs.stat(path);
  return now?.isFile && now.size === end && now.ino === planned.ino ? now : planned;
}

// ---- drafts, deltas and results ----

/** An operation record as an importer builds it (see `OperationDraft`). */
export interface DraftRecord {
  id: string;
  connection: string;
  order: OrderKey;
  op: OperationDraft;
}

/** A delta as an importer builds it: operation drafts, and empty lists that may be left out. */
export type DeltaDraft =
  & Omit<SessionDelta, "operations" | "usage" | "loss_windows" | "issues" | "connections">
  & {
    operations?: Iterable<DraftRecord>;
    usage?: SessionDelta["usage"];
    loss_windows?: LossWindow[];
    issues?: SessionIssue[];
    connections?: SessionDelta["connections"];
  };

/**
 * The one seam between importers and the canonical model: every operation's effect and replay
 * attributes are derived here from its kind, completeness and request. An operation whose text,
 * input or result was cut on import (its log's line was over `MAX_LINE_BYTES`) is `truncated`,
 * which also keeps replay from running what it no longer holds whole.
 */
function finishDelta(d: DeltaDraft, payloads: Map<string, Uint8Array>): SessionDelta {
  const operations: OperationRecord[] = [];
  // only a delta that lost part of a line to a cut looks for the mark (rare, and never mistaken
  // for a text that merely quotes one)
  const cut = d.loss_windows?.some((w) => CUT_REASON.test(w.reason)) ?? false;
  for (const r of d.operations ?? []) {
    if (cut && r.op.completeness === "complete" && wasCut(r.op, payloads)) {
      r.op.completeness = "truncated";
    }
    finishOperation(r.op);
    operations.push(r as OperationRecord);
  }
  const out: SessionDelta = {
    session_id: d.session_id,
    file: d.file,
    info: d.info,
    primary: d.primary,
    connections: d.connections ?? [],
    operations,
    usage: d.usage ?? [],
    loss_windows: d.loss_windows ?? [],
    issues: d.issues ?? [],
  };
  if (d.extensions !== undefined) out.extensions = d.extensions;
  return out;
}

/** Whether an operation's text, input or result (made in this pass) holds a cut's mark. */
function wasCut(op: OperationDraft, payloads: Map<string, Uint8Array>): boolean {
  if (op.text !== undefined && CUT_MARK.test(op.text)) return true;
  return [op.request, op.response].some((ref) => {
    const bytes = ref && "sha256" in ref ? payloads.get(ref.sha256) : undefined;
    return bytes !== undefined && CUT_MARK.test(new TextDecoder().decode(bytes));
  });
}

/** The result of a pass that read the unit: its deltas finished, payloads from the sink. */
export function passResult(r: {
  mode: UnitResult["mode"];
  deltas: DeltaDraft[];
  checkpoint: UnitResult["checkpoint"];
  state: unknown;
  sink: PayloadSink;
  bytesRead: number;
  issues?: SessionIssue[];
}): UnitResult {
  return {
    mode: r.mode,
    deltas: r.deltas.map((d) => finishDelta(d, r.sink.payloads)),
    checkpoint: r.checkpoint,
    state: r.state,
    issues: r.issues ?? [],
    payloads: r.sink.payloads,
    bytesRead: r.bytesRead,
  };
}

/** Merges agent-specific fields (those not undefined) into `op.extensions[source]`. */
export function addExtensions(op: OperationDraft, source: string, ext: Json): void {
  const clean = Object.fromEntries(Object.entries(ext).filter(([, v]) => v !== undefined));
  if (!Object.keys(clean).length) return;
  op.extensions = {
    ...op.extensions,
    [source]: { ...(op.extensions?.[source] as Json), ...clean },
  };
}

/** A delta that only says what a session is (title, times, project): no operations. */
export function metadataDelta(info: SessionDelta["info"], file: string): DeltaDraft {
  return { session_id: info.id, file, info, primary: false };
}

/** Keeps a list (used as a FIFO in importer state) at most `max` long. */
export function capList<T>(list: T[], max: number): void {
  if (list.length > max) list.splice(0, list.length - max);
}
