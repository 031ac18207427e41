/**
 * The export document: a session as a reader sees it (prompts, replies, optional thinking,
 * tool calls with their inputs, truncated results and diffs, sub-agents nested under the call
 * that spawned them, errors marked) with every text already redacted. The Markdown and HTML
 * renderers draw it, and a share freezes it: it holds nothing the redaction took out.
 */
import { jsonLines, jsonLinesPacker } from "../json_lines.ts";
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
  TimelineEntry,
} from "../model/types.ts";
import { outlineOfSession, type PagedSession, type SessionOutline } from "../model/delta.ts";
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

/**
 * An export document whose steps are read one at a time, as often as asked: a big session's,
 * its steps packed as they were built (see {@link buildDocumentInTurns}). What the renderers
 * and a share take; an {@link ExportDocument} is one.
 */
export interface SteppedDocument extends Omit<ExportDocument, "steps"> {
  steps: Iterable<DocStep>;
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
  /**
   * The user's name for the session: the document's title when set (else the session's own,
   * else the first line of the first prompt the user typed, else its native id).
   */
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
  session: CanonicalSession | PagedSession,
  readPayload: ReadPayloadText,
  options: BuildOptions,
): ExportDocument {
  const doc = drain(buildingDocument(pagedSession(session), readPayload, options, false));
  return { ...doc, steps: [...doc.steps] };
}

/**
 * {@link buildDocument} awaiting `turn` after every page of steps ({@link PAGE_STEPS} of a
 * whole session): a server's turn of the event loop, as a session of tens of thousands of
 * steps takes seconds to redact. Its steps are packed as they are built (JSON lines, gzip a
 * megabyte at a time) and read back one at a time: the document of the bench's 35,342-step
 * session held 114 MiB of heap as objects. A call that spawned sub-agents stays an object until
 * its threads are placed, as do the threads' steps.
 */
export async function buildDocumentInTurns(
  session: CanonicalSession | PagedSession,
  readPayload: ReadPayloadText,
  options: BuildOptions & { turn: () => Promise<unknown> },
): Promise<SteppedDocument> {
  return await drainInTurns(
    buildingDocument(pagedSession(session), readPayload, options, true),
    options.turn,
  );
}

/**
 * Top-level steps as they are kept: a step, or a run of them packed as gzip of JSON lines
 * (core/json_lines.ts).
 */
type KeptSteps = (DocStep | Uint8Array)[];

/**
 * The kept steps in order, each thread without a parent call (`loose`, sorted by `n`) placed
 * before the first step after its own first step.
 */
function keptSteps(kept: KeptSteps, loose: DocStep[]): Iterable<DocStep> {
  function* all(): Generator<DocStep> {
    for (const k of kept) {
      if (k instanceof Uint8Array) yield* jsonLines(k).values() as Generator<DocStep>;
      else yield k;
    }
  }
  return {
    *[Symbol.iterator]() {
      let i = 0;
      for (const step of all()) {
        while (i < loose.length && loose[i].n < step.n) yield loose[i++];
        yield step;
      }
      while (i < loose.length) yield loose[i++];
    },
  };
}

/** A whole session as pages of {@link PAGE_STEPS} steps. */
function pagedSession(session: CanonicalSession | PagedSession): PagedSession {
  if ("outline" in session) return session;
  const whole = session;
  function* pages() {
    for (let at = 0; at < whole.timeline.length; at += PAGE_STEPS) {
      yield whole.timeline.slice(at, at + PAGE_STEPS).flatMap((t) => {
        const op = whole.operations[t.op];
        return op ? [{ id: t.op, connection: t.connection, op }] : [];
      });
    }
  }
  return { outline: outlineOfSession(whole), pages: pages() };
}

function* buildingDocument(
  paged: PagedSession,
  readPayload: ReadPayloadText,
  options: BuildOptions,
  pack: boolean,
): Generator<void, SteppedDocument> {
  const { outline } = paged;
  const session = outline.session;
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
  const parents = parentsOf(outline);
  const entryOf = new Map(outline.timeline.map((t) => [t.op, t]));
  let firstPrompt: string | undefined;
  // the calls that spawned a thread: kept as objects until their threads are placed
  const hosts = new Set([...parents.values()].map((p) => p.op));
  const stepOf = new Map<string, DocStep>();
  const threads = new Map<string, DocThread>();
  const top: KeptSteps = [];
  const packer = jsonLinesPacker({ level: 1 });
  const keep = (member: Uint8Array | null) => member && top.push(member);
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

  let first = true;
  for (const page of paged.pages) {
    if (!first) yield;
    first = false;
    for (const rec of page) addStep(rec.op, entryOf.get(rec.id));
  }

  function addStep(op: Operation, entry: TimelineEntry | undefined): void {
    if (!entry) return;
    if (
      firstPrompt === undefined && op.kind === "prompt" && !op.injected && op.text?.trim()
    ) {
      firstPrompt = promptTitle(op.text, { firstLine: true, max: Infinity });
    }
    const n = entry.seq + 1;
    const conn = conns.get(entry.connection);
    const thread = conn?.kind === "subagent" ? threadOf(conn) : null;
    if (thread) thread.step_count++;
    if (op.kind === "thinking") {
      thinkingSeen++;
      if (!thinking) return;
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
    if (options.summaryOnly) return; // every text of the step is redacted: counted
    if (hosts.has(entry.op)) stepOf.set(entry.op, step);
    if (thread) thread.steps.push(step);
    else if (!pack || hosts.has(entry.op)) (keep(packer.flush()), top.push(step));
    else keep(packer.add(step));
  }
  keep(packer.flush());

  // Each sub-agent thread goes under the call that spawned it; one whose parent is unknown
  // stands alone where its first step was.
  const loose: DocStep[] = [];
  for (const c of session.connections) {
    if (c.kind !== "subagent" || options.summaryOnly) continue;
    const t = threads.get(c.id);
    if (!t) continue;
    const parent = parents.get(c.id);
    const host = parent ? stepOf.get(parent.op) : undefined;
    if (host) (host.threads ??= []).push(t);
    else {
      const first = outline.timeline.find((e) => e.connection === c.id);
      const n = first ? first.seq + 1 : outline.timeline.length + 1;
      loose.push({
        type: "thread",
        n,
        offset_ms: first ? first.offset_ns / 1e6 : null,
        threads: [t],
      });
    }
  }
  loose.sort((a, b) => a.n - b.n); // stable: threads with one place keep the threads' order

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
    title: textLine(
      red.text(
        options.title?.trim() || session.session.title?.trim() || firstPrompt ||
          session.session.native_id,
        "title",
      ),
      100,
    ),
    models: [...models].sort(),
    tokens: Object.entries(session.usage.by_model).map(([model, u]) => ({ model, ...u })),
    steps: outline.timeline.length,
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
    steps: keptSteps(top, loose),
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

/** The call that spawned each sub-agent thread (the one rule, core/model/spawn.ts). */
export function threadParents(session: CanonicalSession): Map<string, SpawnParent> {
  return parentsOf(outlineOfSession(session));
}

function parentsOf(outline: SessionOutline): Map<string, SpawnParent> {
  const { timeline, session } = outline;
  const connOf = new Map(timeline.map((t) => [t.op, t.connection]));
  const kinds = new Map(session.connections.map((c) => [c.id, c.kind]));
  return spawnParents({
    connections: session.connections,
    tasks: () =>
      timeline
        .filter((t) => kinds.get(t.connection) === "main" && outline.kinds.get(t.op) === "task")
        .map((t) => ({ op: t.op, at: t.offset_ns })),
    firstAt: (id) => timeline.find((t) => t.connection === id)?.offset_ns ?? null,
    connectionOf: (op) => connOf.get(op),
  });
}
