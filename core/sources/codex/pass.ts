/**
 * The machinery of one Codex CLI import pass: operation ids, mirrored texts (response items and
 * event messages that say the same thing become one operation), tool calls paired with their
 * outputs by call id (across passes, through the state), event evidence about calls, usage.
 */
import type { UsageEntry } from "../../model/delta.ts";
import { PayloadSink, stableId } from "../../model/payload.ts";
import { summarizeToolInput } from "../../model/tools.ts";
import type { OperationKind, PayloadRef, Usage } from "../../model/types.ts";
import type { JsonlLine } from "../jsonl.ts";
import type { SourceUnit } from "../types.ts";
import {
  type DraftRecord,
  fileRank,
  isObj,
  IssueTally,
  type Json,
  nonEmpty,
  type OperationDraft,
  orderKey,
  parseJsonText,
  rangeOf,
} from "../_import_kit.ts";
import { applySignalTarget, isErrorOf, outputFacts, type Signal } from "./output.ts";
import {
  type CodexState,
  isZero,
  MAIN,
  MAX_CALLS,
  MAX_MIRRORS,
  type Mirror,
  mirrorKey,
  threadConnection,
} from "./state.ts";

const isMissingRef = (v: unknown): v is PayloadRef =>
  typeof v === "object" && v !== null && "missing" in v &&
  (v as { missing: unknown }).missing === true;

/** One import pass over one rollout file: the operations it makes, its issues and usage. */
export class CodexPass {
  readonly sink = new PayloadSink();
  readonly issues: IssueTally;
  readonly records = new Map<string, DraftRecord>();
  readonly usage: UsageEntry[] = [];
  firstTs: number | null = null;
  lastTs: number | null = null;
  title?: string;
  lastPrompt?: string;
  sawFirstLine = false;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: CodexState,
    readonly fallbackId: string,
  ) {
    this.issues = new IssueTally(unit.path);
    this.carried = new Set(state.mirrors);
  }

  get file(): string {
    return this.unit.path;
  }

  sid(): string {
    return this.state.sid ??= this.fallbackId;
  }

  /** A known record shown nowhere: counted in the session's `skipped_records`. */
  skip(key: string): void {
    const counts = this.state.skipped ??= {};
    counts[key] = (counts[key] ?? 0) + 1;
  }

  opId(line: number, block: number): string {
    return stableId("op_", "codex", this.sid(), line, block);
  }

  /** The connection this rollout's steps are on: main, or the thread it is in its parent. */
  get connection(): string {
    const parent = this.state.meta.parent;
    return parent ? threadConnection(this.sid(), parent.path) : MAIN;
  }

  /** The rank of this rollout's steps: a spawned thread's file ranks apart from its parent's. */
  get rank(): number {
    return this.state.meta.parent ? fileRank({ ...this.unit, rank: 1 }) : this.unit.rank;
  }

  emit(rec: DraftRecord): void {
    if (this.state.inherited) rec.op.inherited = true;
    this.records.set(rec.id, rec);
  }

  /** The call `callId` spawned the thread that is connection `conn`. */
  spawned(callId: string | undefined, conn: string): void {
    for (const id of (callId && this.state.calls[callId]) || []) {
      const rec = this.recordOf(id);
      if (rec) rec.op.spawns = conn;
    }
  }

  noteModel(model: string, l: JsonlLine, field: string): void {
    const s = this.state;
    if (!s.models.includes(model)) {
      s.models.push(model);
      s.modelEvidence.push({ file: this.file, line: l.line, field });
      if (s.models.length === 2) {
        this.issues.add(
          "conflicting_model",
          "The session used several models; the connection's model is left absent and each operation carries its own",
          { severity: "info", line: l.line },
        );
      }
    }
  }

  /**
   * The mirrors this pass made, by text, and the text of each. Within a pass a text is matched
   * as it is; only the mirrors the state keeps for the next pass get their key (`keyMirrors`),
   * and only a mirror an earlier pass made (`carried`) is matched by key. Hashing every text
   * for its key was 5% of the import worker's time on a 300 MB Codex corpus. They are found by
   * the text's length, then compared: a map by the text itself hashed every text whole (V8
   * hashes a string of up to 16k characters entirely), 4% of the worker's time on that corpus,
   * where a length is found at once and only the texts of the same length are compared.
   */
  private readonly byLength = new Map<number, Mirror[]>();
  private readonly mirrorTexts = new Map<Mirror, string>();
  /** The mirrors an earlier pass made that the state still holds (matched by key). */
  private readonly carried: Set<Mirror>;

  /**
   * Finds the op that `source` would duplicate. An event never adds an op that a response
   * item (or another kind of event) already made; a response item takes over an op an event made
   * first, keeping its id and place. The oldest such mirror: an earlier pass's first.
   */
  mirror(text: string, source: string): Mirror | undefined {
    const open = (x: Mirror) => !x.sources.includes(source);
    let m: Mirror | undefined;
    if (this.carried.size) {
      const key = mirrorKey(text);
      for (const x of this.carried) {
        if (x.key === key && open(x)) {
          m = x;
          break;
        }
      }
    }
    m ??= this.byLength.get(text.length)?.find((x) => this.mirrorTexts.get(x) === text && open(x));
    if (m) m.sources.push(source);
    return m;
  }

  /** Remembers an op under its text (its key is made by `keyMirrors`, if the state keeps it). */
  remember(text: string, op: string, order: DraftRecord["order"], source: string): void {
    const m: Mirror = { key: "", op, order, sources: [source] };
    this.mirrorTexts.set(m, text);
    const same = this.byLength.get(text.length);
    if (same) same.push(m);
    else this.byLength.set(text.length, [m]);
    this.state.mirrors.push(m);
    const over = this.state.mirrors.length - MAX_MIRRORS;
    if (over > 0) { for (const gone of this.state.mirrors.splice(0, over)) this.forget(gone); }
  }

  /** Lets go of a mirror the state no longer holds. */
  private forget(m: Mirror): void {
    if (this.carried.delete(m)) return;
    const text = this.mirrorTexts.get(m)!;
    this.mirrorTexts.delete(m);
    const same = this.byLength.get(text.length)!;
    if (same.length === 1) this.byLength.delete(text.length);
    else same.splice(same.indexOf(m), 1);
  }

  /** Gives the mirrors the state keeps for the next pass their keys (`mirrorKey` of the text). */
  keyMirrors(): void {
    for (const m of this.state.mirrors) {
      const text = this.mirrorTexts.get(m);
      if (text !== undefined) m.key = mirrorKey(text);
    }
  }

  /** Adds a text operation (prompt, reply, thinking, compaction) unless it mirrors a known one. */
  textOp(
    l: JsonlLine,
    at: number | null,
    block: number,
    source: string,
    mirrorText: string | null,
    init: Omit<OperationDraft, "completeness" | "provenance">,
  ): void {
    const known = mirrorText === null ? undefined : this.mirror(mirrorText, source);
    if (known && source !== "item") return; // an event repeating what an item said
    // An item takes over the op an event made first: its id and place.
    const id = known ? known.op : this.opId(l.line, block);
    const order = known ? known.order : orderKey(at, this.rank, l.line, block);
    if (mirrorText !== null && !known) this.remember(mirrorText, id, order, source);
    const op: OperationDraft = {
      ...init,
      completeness: "complete",
      provenance: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
    };
    if (op.text !== undefined) {
      if (op.kind === "prompt") op.request = this.sink.text(op.text);
      else if (op.kind === "reply" || op.kind === "thinking") op.response = this.sink.text(op.text);
    }
    if (op.extensions) op.extensions = { codex: op.extensions };
    if (at !== null) op.ts_ms = at;
    this.emit({ id, connection: this.connection, order, op });
  }

  /** Records a field of an unexpected type (null, a string for an object, ...). */
  shape(what: string, l: JsonlLine): void {
    this.issues.add("unexpected_shape", `Codex record with ${what}`, { line: l.line });
  }

  toolCall(
    l: JsonlLine,
    at: number | null,
    c: {
      callId: string | undefined;
      tool: string | undefined;
      kind: OperationKind;
      input: unknown;
      done: boolean;
      /** The result, for a call done when it is written; a payload reference is kept as it is. */
      response?: unknown;
      ext?: Json;
      target?: string;
    },
  ): void {
    const ext = c.ext && Object.keys(c.ext).length ? c.ext : undefined;
    const id = this.newCallOp(l, at, 0, c.callId, {
      kind: c.kind,
      tool: c.tool,
      target: c.target,
      request: c.input === undefined ? undefined : this.sink.json(c.input),
      summary: summarizeToolInput(c.input),
      extensions: ext,
    }, c.done);
    const rec = this.records.get(id)!;
    if (c.done) {
      if (isMissingRef(c.response)) rec.op.response = c.response;
      else if (c.response !== undefined) rec.op.response = this.sink.json(c.response);
      delete this.state.open[id];
    }
    if (c.callId && !c.done) this.trackCall(c.callId, [id]);
  }

  newCallOp(
    l: JsonlLine,
    at: number | null,
    block: number,
    callId: string | undefined,
    init: {
      kind: OperationKind;
      tool?: string;
      target?: string;
      request?: PayloadRef;
      summary?: string;
      extensions?: Json;
    },
    done: boolean,
  ): string {
    const id = this.opId(l.line, block);
    const op: OperationDraft = {
      kind: init.kind,
      completeness: done ? "complete" : "incomplete",
      provenance: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
    };
    if (init.tool) op.tool = init.tool;
    if (callId) op.native_id = callId;
    if (init.target) op.target = init.target;
    if (init.request) op.request = init.request;
    if (this.state.model) op.model = this.state.model;
    if (at !== null) op.ts_ms = at;
    if (init.summary) op.summary = init.summary;
    if (init.extensions) op.extensions = { codex: init.extensions };
    const rec: DraftRecord = {
      id,
      connection: this.connection,
      order: orderKey(at, this.rank, l.line, block),
      op,
    };
    this.emit(rec);
    if (!done) this.state.open[id] = rec;
    return id;
  }

  trackCall(callId: string, ids: string[]): void {
    const s = this.state;
    if (!(callId in s.calls)) s.callOrder.push(callId);
    s.calls[callId] = ids;
    while (s.callOrder.length > MAX_CALLS) {
      const old = s.callOrder.shift()!;
      delete s.calls[old];
      delete s.signals[old];
    }
  }

  /** The record of an op of this session: emitted in this pass, or still open from an earlier one. */
  recordOf(id: string): DraftRecord | undefined {
    const rec = this.records.get(id) ?? this.state.open[id];
    if (rec && !this.records.has(id)) this.records.set(id, rec);
    return rec;
  }

  callOutput(p: Json, l: JsonlLine, at: number | null): void {
    const callId = nonEmpty(p.call_id);
    // A tool_search_output holds the tools it found, not an `output`.
    const output = p.output ?? (p.type === "tool_search_output" ? p.tools : undefined);
    const response = output === undefined
      ? undefined
      : typeof output === "string"
      ? this.sink.text(output)
      : this.sink.json(output);
    const ids = callId ? this.state.calls[callId] : undefined;
    if (!ids) {
      const op: OperationDraft = {
        kind: "other",
        completeness: "unmatched",
        provenance: {
          epoch: this.epoch,
          source_range: rangeOf(this.file, l),
          completion: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
        },
      };
      if (callId) op.native_id = callId;
      if (response) op.response = response;
      if (at !== null) op.ts_ms = at;
      const facts = outputFacts(output);
      op.is_error = isErrorOf(facts, undefined, undefined);
      this.emit({
        id: this.opId(l.line, 0),
        connection: this.connection,
        order: orderKey(at, this.rank, l.line, 0),
        op,
      });
      return;
    }
    const facts = outputFacts(output);
    const signal = this.state.signals[callId!];
    for (const id of ids) {
      const rec = this.recordOf(id);
      if (!rec) continue;
      const op = rec.op;
      if (response) op.response = response;
      op.is_error = isErrorOf(facts, signal, op.tool);
      if (signal) applySignalTarget(op, signal);
      op.provenance = {
        ...op.provenance,
        completion: { epoch: this.epoch, source_range: rangeOf(this.file, l) },
      };
      if (op.kind === "task") {
        // spawn_agent answers with the new thread's task path (or, older, its id).
        const out = parseJsonText(facts.text ?? (typeof output === "string" ? output : undefined));
        const o = out.ok && isObj(out.value) ? out.value : {};
        const path = nonEmpty(o.task_name) ?? nonEmpty(o.agent_path);
        const thread = nonEmpty(o.agent_id) ?? nonEmpty(o.thread_id);
        if (path || thread) op.spawns = threadConnection(thread ?? "", path);
      }
      op.completeness = "complete";
      delete this.state.open[id];
    }
  }

  /** Evidence from an event about a call: stored for its output, or applied if already done. */
  signal(callId: string | undefined, sig: Signal): void {
    if (!callId) return;
    const s = this.state;
    const merged = { ...s.signals[callId], ...sig };
    s.signals[callId] = merged;
    const ids = s.calls[callId];
    if (!ids) return;
    for (const id of ids) {
      const rec = this.records.get(id);
      if (!rec || rec.op.completeness !== "complete") continue;
      if (merged.error) rec.op.is_error = true;
      applySignalTarget(rec.op, merged);
    }
  }

  addUsage(usage: Usage, l: JsonlLine, model?: string): void {
    if (isZero(usage)) return;
    const m = model ?? this.state.model;
    if (!m) {
      this.issues.add(
        "usage_without_model",
        "Token usage recorded before any model was named; not attributed",
        { severity: "info", line: l.line },
      );
      return;
    }
    this.usage.push({ key: stableId("u_", "codex", this.sid(), l.line), model: m, usage });
  }
}
