/**
 * The export document: a session as a reader sees it (prompts, replies, optional thinking,
 * tool calls with their inputs, truncated results and diffs, sub-agents nested under the call
 * that spawned them, errors marked) with every text already redacted. The Markdown and HTML
 * renderers draw it, and a share freezes it: it holds nothing the redaction took out.
 */
import { drain, drainInTurns, PAGE_STEPS } from "../paged.ts";
import { isErrorResult } from "../analytics/error_heuristic.ts";
import { promptTitle } from "../model/titles.ts";
import { textLine } from "../model/text_line.ts";
import type {
  CanonicalSession,
  Completeness,
  Connection,
  Operation,
  OperationKind,
  PayloadRef,
} from "../model/types.ts";
import { type SpawnParent, spawnParents } from "../model/spawn.ts";
import {
  callSummary,
  type DiffLine,
  diffLines,
  type FileChange,
  fileChanges,
} from "./tool_view.ts";
import type { RedactionSummary, Redactor } from "./redactor.ts";

export const EXPORT_DOCUMENT_VERSION = 1;

/** A text as shown: its opening, and its end when the middle was left out. */
export interface TextBlock {
  head: string;
  /** The end of the text, when `omitted` characters between head and tail were left out. */
  tail?: string;
  /** Characters left out (0 when the text is shown whole). */
  omitted: number;
}

export interface DiffBlock {
  path: string;
  kind: FileChange["kind"];
  lines: DiffLine[];
  adds: number;
  dels: number;
  /** Diff lines left out after the shown ones. */
  omitted: number;
}

export type StepType = "prompt" | "reply" | "thinking" | "event" | "tool" | "thread";

export interface DocStep {
  type: StepType;
  /** 1-based position in the session's timeline. */
  n: number;
  /** Milliseconds from the session's start, when known. */
  offset_ms: number | null;
  /** ISO time of the step, when the log had one. */
  at?: string;
  /** Prompts, replies, thinking, events. */
  text?: TextBlock;
  /** A prompt that is injected context (system reminders), not the user's words. */
  injected?: boolean;
  /** For events: what happened (`compaction`, `summary`, ...). */
  event?: string;
  kind?: OperationKind;
  tool?: string;
  summary?: string;
  input?: TextBlock;
  result?: TextBlock;
  diffs?: DiffBlock[];
  error?: boolean;
  completeness?: Completeness;
  /** Sub-agent threads this call spawned (or, for a `thread` step, the one thread). */
  threads?: DocThread[];
}

export interface DocThread {
  connection: string;
  agent_type?: string;
  model?: string;
  /** True when the log did not name the spawning call and it was matched by time. */
  guessed?: boolean;
  /** Every step of the thread, counted (thinking included even when it is left out). */
  step_count: number;
  steps: DocStep[];
}

export interface TokenLine {
  model: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

export interface DocHeader {
  id: string;
  source: string;
  agent: string;
  agent_version?: string;
  title: string;
  project?: string;
  branch?: string;
  started_at?: string;
  ended_at?: string;
  duration_ms?: number;
  models: string[];
  tokens: TokenLine[];
  steps: number;
  tool_calls: number;
  errors: number;
  subagents: number;
  thinking: "included" | "left out" | "none";
}

export interface ExportDocument {
  kind: "chronicle-session-export";
  version: typeof EXPORT_DOCUMENT_VERSION;
  generated_at: string;
  session: DocHeader;
  redaction: RedactionSummary;
  steps: DocStep[];
}

/** How much of each text an export shows. */
export interface ExportLimits {
  /** Prompts, replies, thinking and events: head and tail characters. */
  proseHead: number;
  proseTail: number;
  /** Tool inputs (pretty-printed JSON when they are JSON). */
  inputHead: number;
  inputTail: number;
  /** Tool results. */
  resultHead: number;
  resultTail: number;
  /** Lines of each diff. */
  diffLines: number;
  /** Characters of an edit's old/new text or a patch that are diffed. */
  diffChars: number;
}

export const DEFAULT_LIMITS: ExportLimits = {
  proseHead: 40_000,
  proseTail: 8_000,
  inputHead: 3_000,
  inputTail: 1_000,
  resultHead: 3_000,
  resultTail: 1_500,
  diffLines: 400,
  diffChars: 200_000,
};

export interface BuildOptions {
  redactor: Redactor;
  /** Include thinking steps. Default false. */
  thinking?: boolean;
  limits?: Partial<ExportLimits>;
  /** Display names of the agents (source id → name). Default the ids. */
  agentNames?: Record<string, string>;
  /** The user's name for the session: the document's title when set (else `titleOf`). */
  title?: string | null;
  now?: () => Date;
  /** Keep no step (`steps` empty): the header and the redaction summary only. Default false. */
  summaryOnly?: boolean;
}

/** Reads a payload's text; null when it cannot be read. */
export type ReadPayloadText = (sha256: string) => string | null;

const PRETTY_MAX = 1 << 20;

/** Builds the redacted export document of a session. */
export function buildDocument(
  session: CanonicalSession,
  readPayload: ReadPayloadText,
  options: BuildOptions,
): ExportDocument {
  return drain(buildingDocument(session, readPayload, options));
}

/**
 * {@link buildDocument} awaiting `turn` after every {@link PAGE_STEPS} steps (a server's
 * turn of the event loop: a session of tens of thousands of steps takes seconds to redact).
 */
export async function buildDocumentInTurns(
  session: CanonicalSession,
  readPayload: ReadPayloadText,
  options: BuildOptions & { turn: () => Promise<unknown> },
): Promise<ExportDocument> {
  return await drainInTurns(buildingDocument(session, readPayload, options), options.turn);
}

function* buildingDocument(
  session: CanonicalSession,
  readPayload: ReadPayloadText,
  options: BuildOptions,
): Generator<void, ExportDocument> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const red = options.redactor;
  const thinking = options.thinking ?? false;

  const block = (text: string, head: number, tail: number, where: string): TextBlock => {
    if (text.length <= head + tail) return { head: red.text(text, where), omitted: 0 };
    return {
      head: red.slice(text, 0, head, where),
      tail: red.slice(text, text.length - tail, text.length, where),
      omitted: text.length - head - tail,
    };
  };
  const refText = (ref: PayloadRef | undefined): string | null => {
    if (!ref) return null;
    if ("inline" in ref) return ref.inline;
    if ("sha256" in ref) return readPayload(ref.sha256) ?? "[payload not available]";
    if ("redacted" in ref) return "[redacted]";
    return `[missing: ${ref.reason}]`;
  };

  const conns = new Map(session.connections.map((c) => [c.id, c]));
  const parents = threadParents(session);
  const stepOf = new Map<string, DocStep>();
  const threads = new Map<string, DocThread>();
  const top: DocStep[] = [];
  let toolCalls = 0;
  let errors = 0;
  let thinkingSeen = 0;

  const threadOf = (c: Connection): DocThread => {
    let t = threads.get(c.id);
    if (!t) {
      t = { connection: c.id, step_count: 0, steps: [] };
      if (c.agent_type) t.agent_type = red.text(c.agent_type, "sub-agent type");
      if (c.server.model) t.model = c.server.model;
      if (parents.get(c.id)?.guessed) t.guessed = true;
      threads.set(c.id, t);
    }
    return t;
  };

  for (const entry of session.timeline) {
    if (entry.seq > 0 && entry.seq % PAGE_STEPS === 0) yield;
    const op = session.operations[entry.op];
    if (!op) continue;
    const n = entry.seq + 1;
    const conn = conns.get(entry.connection);
    const thread = conn?.kind === "subagent" ? threadOf(conn) : null;
    if (thread) thread.step_count++;
    if (op.kind === "thinking") {
      thinkingSeen++;
      if (!thinking) continue;
    }
    const step = buildStep(op, n, entry.offset_ns);
    const where = `step ${n}`;
    if (
      op.kind === "prompt" || op.kind === "reply" || op.kind === "thinking" || op.kind === "event"
    ) {
      const text = op.text ?? refText(op.response) ?? refText(op.request) ?? "";
      step.text = block(text, limits.proseHead, limits.proseTail, `${where} (${op.kind})`);
      if (op.injected) step.injected = true;
      if (op.event) step.event = op.event;
    } else {
      toolCalls++;
      const input = refText(op.request);
      const result = refText(op.response);
      step.kind = op.kind;
      if (op.tool) step.tool = op.tool;
      // Redacted whole, then shortened: a cut first could leave half a secret unrecognised.
      const summary = textLine(
        red.text(callSummary(op, input ?? undefined), `${where} (summary)`),
        300,
      );
      if (summary) step.summary = summary;
      if (op.completeness !== "complete") step.completeness = op.completeness;
      step.error = isErrorResult(op, result);
      if (step.error) errors++;
      const changes = (op.kind === "write" || op.kind === "edit") && input !== null
        ? fileChanges(input)
        : [];
      if (changes.length) {
        step.diffs = changes.map((c) => diffBlock(c, red, limits, `${where} (diff)`));
      } else if (input !== null && input !== "") {
        step.input = block(pretty(input), limits.inputHead, limits.inputTail, `${where} (input)`);
      }
      if (result !== null) {
        const text = contentText(result);
        step.result = block(text, limits.resultHead, limits.resultTail, `${where} (result)`);
      }
    }
    if (options.summaryOnly) continue; // every text of the step is redacted: counted
    stepOf.set(entry.op, step);
    if (thread) thread.steps.push(step);
    else top.push(step);
  }

  // Each sub-agent thread goes under the call that spawned it; one whose parent is unknown
  // stands alone where its first step was.
  for (const c of session.connections) {
    if (c.kind !== "subagent" || options.summaryOnly) continue;
    const t = threads.get(c.id);
    if (!t) continue;
    const parent = parents.get(c.id);
    const host = parent ? stepOf.get(parent.op) : undefined;
    if (host) (host.threads ??= []).push(t);
    else {
      const first = session.timeline.find((e) => e.connection === c.id);
      const n = first ? first.seq + 1 : session.timeline.length + 1;
      const at = top.findIndex((s) => s.n > n);
      const step: DocStep = {
        type: "thread",
        n,
        offset_ms: first ? first.offset_ns / 1e6 : null,
        threads: [t],
      };
      top.splice(at < 0 ? top.length : at, 0, step);
    }
  }

  const info = session.session;
  const main = session.connections.find((c) => c.kind === "main") ?? session.connections[0];
  const models = new Set<string>();
  for (const c of session.connections) if (c.server.model) models.add(c.server.model);
  for (const m of Object.keys(session.usage.by_model)) models.add(m);
  const started = info.started_at ? Date.parse(info.started_at) : NaN;
  const ended = info.ended_at ? Date.parse(info.ended_at) : NaN;
  const header: DocHeader = {
    id: info.id,
    source: info.source,
    agent: options.agentNames?.[info.source] ?? info.source,
    title: textLine(red.text(options.title?.trim() || titleOf(session), "title"), 100),
    models: [...models].sort(),
    tokens: Object.entries(session.usage.by_model).map(([model, u]) => ({ model, ...u })),
    steps: session.timeline.length,
    tool_calls: toolCalls,
    errors,
    subagents: session.connections.filter((c) => c.kind === "subagent").length,
    thinking: thinkingSeen === 0 ? "none" : thinking ? "included" : "left out",
  };
  if (main?.client.version) header.agent_version = main.client.version;
  if (info.project.path) header.project = red.text(info.project.path, "project");
  if (info.project.git?.branch) header.branch = red.text(info.project.git.branch, "branch");
  if (info.started_at) header.started_at = info.started_at;
  if (info.ended_at) header.ended_at = info.ended_at;
  if (!Number.isNaN(started) && !Number.isNaN(ended)) {
    header.duration_ms = Math.max(0, ended - started);
  }

  return {
    kind: "chronicle-session-export",
    version: EXPORT_DOCUMENT_VERSION,
    generated_at: (options.now?.() ?? new Date()).toISOString(),
    session: header,
    redaction: red.summary(),
    steps: top,
  };
}

function buildStep(op: Operation, n: number, offsetNs: number): DocStep {
  const type: StepType = op.kind === "prompt" || op.kind === "reply" || op.kind === "thinking" ||
      op.kind === "event"
    ? op.kind
    : "tool";
  const step: DocStep = { type, n, offset_ms: Number.isFinite(offsetNs) ? offsetNs / 1e6 : null };
  if (op.ts_ms !== undefined && Number.isFinite(op.ts_ms)) {
    step.at = new Date(op.ts_ms).toISOString();
  }
  return step;
}

function diffBlock(
  change: FileChange,
  red: Redactor,
  limits: ExportLimits,
  where: string,
): DiffBlock {
  const cut = (s: string | undefined) =>
    s === undefined ? undefined : red.slice(s, 0, limits.diffChars, where);
  const safe: FileChange = {
    path: red.text(change.path, where),
    kind: change.kind,
    ...(change.patch !== undefined ? { patch: cut(change.patch) } : {}),
    ...(change.before !== undefined ? { before: cut(change.before) } : {}),
    ...(change.after !== undefined ? { after: cut(change.after) } : {}),
  };
  const lines = diffLines(safe);
  return {
    path: safe.path,
    kind: change.kind,
    lines: lines.slice(0, limits.diffLines),
    adds: lines.filter((l) => l.type === "add").length,
    dels: lines.filter((l) => l.type === "del").length,
    omitted: Math.max(0, lines.length - limits.diffLines),
  };
}

/**
 * A result recorded as an array of content blocks (`[{"type":"text","text":...}]`, as the
 * Anthropic API returns tool results) as the text a reader sees; anything else as it is.
 */
export function contentText(result: string): string {
  if (result.length > PRETTY_MAX || !result.startsWith("[{")) return result;
  let blocks: unknown;
  try {
    blocks = JSON.parse(result);
  } catch {
    return result;
  }
  if (!Array.isArray(blocks) || !blocks.every((b) => b && typeof b.type === "string")) {
    return result;
  }
  return blocks.map((b: { type: string; text?: unknown }) =>
    typeof b.text === "string" ? b.text : `[${b.type}]`
  ).join("\n\n");
}

/** JSON inputs pretty-printed, so a reader sees their fields; anything else as it is. */
function pretty(text: string): string {
  if (text.length > PRETTY_MAX || !/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The session's title, whole: its own, else the first line of the first prompt typed by the
 * user. (The document redacts it before shortening it.)
 */
export function titleOf(session: CanonicalSession): string {
  if (session.session.title?.trim()) return session.session.title.trim();
  for (const t of session.timeline) {
    const op = session.operations[t.op];
    if (op?.kind === "prompt" && !op.injected && op.text?.trim()) {
      return promptTitle(op.text, { firstLine: true, max: Infinity });
    }
  }
  return session.session.native_id;
}

/** The call that spawned each sub-agent thread (the one rule, core/model/spawn.ts). */
export function threadParents(session: CanonicalSession): Map<string, SpawnParent> {
  const connOf = new Map(session.timeline.map((t) => [t.op, t.connection]));
  const kinds = new Map(session.connections.map((c) => [c.id, c.kind]));
  return spawnParents({
    connections: session.connections,
    tasks: () =>
      session.timeline
        .filter((t) =>
          kinds.get(t.connection) === "main" && session.operations[t.op]?.kind === "task"
        )
        .map((t) => ({ op: t.op, at: t.offset_ns })),
    firstAt: (id) => session.timeline.find((t) => t.connection === id)?.offset_ns ?? null,
    connectionOf: (op) => connOf.get(op),
  });
}
