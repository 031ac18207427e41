/**
 * Gemini CLI importer: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (records re-appended on
 * change: the last record with an id wins; `$set` patches; `$rewindTo` drops a message and all
 * after it), sub-agent chats in `chats/<parentSessionId>/`, and the older `session-*.json`
 * documents rewritten in place. Operation ids derive from message and tool-call ids, so a
 * re-appended message replaces its operations instead of adding new ones.
 */
import { classifyTool, summarizeToolInput } from "../model/classify.ts";
import type { OperationRecord, SessionDelta, UsageEntry } from "../model/delta.ts";
import { PayloadSink, sha256Hex, stableId } from "../model/payload.ts";
import type {
  Connection,
  Evidence,
  LossWindow,
  Operation,
  OperationKind,
  SessionIssue,
  SourceRange,
} from "../model/types.ts";
import {
  capList,
  isObj,
  isoOf,
  IssueTally,
  joinPath,
  type Json,
  makeOp,
  num,
  orderKey,
  parseTimeMs,
  planResume,
  readPass,
  setCompleteness,
  stemOf,
  str,
  textOfParts,
} from "./_import_kit.ts";
import { makeJsonlCheckpoint } from "./jsonl.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "./types.ts";
import { unchangedResult } from "./results.ts";

const STATE_VERSION = 1;

/** A message as last recorded, with where it was first and last seen. */
interface Msg {
  id: string;
  rec: Json;
  /** Line of the first record with this id: the message keeps its place when re-appended. */
  first: number;
  range: SourceRange;
}

interface GeminiState {
  v: number;
  sid: string | null;
  meta: {
    started?: string;
    updated?: string;
    project?: string;
    summary?: string;
    kind?: string;
    projectHash?: string;
  };
  /** Known messages in order: id -> first line and the op ids emitted for it. */
  messages: Record<string, { first: number; ops: string[] }>;
  order: string[];
  models: string[];
  modelEvidence: Evidence[];
  lastTs: number | null;
  /** Recent tool-call ids, to tell a result whose call was read from one whose call was not. */
  callIds: string[];
}

function freshState(): GeminiState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: {},
    messages: {},
    order: [],
    models: [],
    modelEvidence: [],
    lastTs: null,
    callIds: [],
  };
}

/** Raised inside an append pass when a record removes what an earlier pass emitted. */
class NeedsFullPass extends Error {}

const TARGET_KEYS = ["file_path", "absolute_path", "path", "dir_path", "directory"];

/** Injected context the CLI adds to the chat (`<session_context>…`), not the user's words. */
export function isInjectedGeminiText(text: string): boolean {
  const t = text.trim();
  if (t.startsWith("This is the Gemini CLI. We are setting up the context for our chat.")) {
    return true; // older CLIs sent the context without tags
  }
  const open = /^<([A-Za-z_][\w-]*)>/.exec(t);
  return open !== null && t.endsWith(`</${open[1]}>`);
}

/** The exit code a shell tool reports in its output (`Exit Code: 1`). */
export function geminiExitCode(text: string): number | undefined {
  const m = /(?:^|\n|\\n)Exit Code: (-?\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The `Workspace Directories` the CLI lists in its injected session context. */
export function workspaceFromContext(text: string): string | undefined {
  const m = /Workspace Directories:\*{0,2}\s*\n\s*-\s+(\S.*)/.exec(text);
  return m ? m[1].trim() : undefined;
}

interface FunctionResponse {
  output?: string;
  error?: boolean;
}

function responsesOf(result: unknown): FunctionResponse[] {
  if (!Array.isArray(result)) return [];
  const out: FunctionResponse[] = [];
  for (const part of result) {
    if (!isObj(part) || !isObj(part.functionResponse)) continue;
    const r = isObj(part.functionResponse.response) ? part.functionResponse.response : {};
    out.push({
      output: typeof r.output === "string" ? r.output : undefined,
      error: r.error !== undefined && r.error !== null,
    });
  }
  return out;
}

/** One import pass over one Gemini chat file (JSONL log or legacy JSON document). */
class GeminiPass {
  readonly sink = new PayloadSink();
  readonly issues = new IssueTally();
  readonly records = new Map<string, OperationRecord>();
  readonly usage: UsageEntry[] = [];
  /** Messages recorded in this pass (latest record per id), in first-seen order. */
  readonly changed = new Map<string, Msg>();
  /** Tool results recorded as user `functionResponse` parts, by call id. */
  readonly carried = new Map<string, unknown>();
  /** Ids of the tool calls this pass read, and those earlier passes read. */
  readonly knownCalls = new Set<string>();
  readonly priorIds: Set<string>;
  firstTs: number | null = null;
  lastTs: number | null = null;
  lastPrompt?: string;
  contextProject?: string;

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: GeminiState,
    readonly fallbackId: string,
    readonly connection: { id: string; kind: "main" | "subagent"; sessionId?: string },
  ) {
    this.priorIds = new Set(state.order);
  }

  get file(): string {
    return this.unit.path;
  }

  sid(): string {
    return this.connection.sessionId ?? (this.state.sid ??= this.fallbackId);
  }

  seeTime(v: unknown): number | null {
    const ts = parseTimeMs(v);
    if (ts !== null) {
      this.firstTs = this.firstTs === null ? ts : Math.min(this.firstTs, ts);
      this.lastTs = this.lastTs === null ? ts : Math.max(this.lastTs, ts);
    }
    return ts;
  }

  // ---- reading records ----

  record(value: unknown, range: SourceRange): void {
    if (!isObj(value)) {
      this.issues.add("not_object", "A line is valid JSON but not an object", {
        file: this.file,
        line: range.lines[0],
      });
      return;
    }
    if (typeof value.id === "string" || typeof value.id === "number") {
      this.upsert(String(value.id), value, range);
      return;
    }
    if (isObj(value.$set)) return this.set(value.$set, range);
    if (typeof value.$rewindTo === "string") return this.rewind(value.$rewindTo);
    if (typeof value.sessionId === "string") return this.metadata(value);
    this.issues.add(
      "unknown_record_type",
      `Unknown Gemini record with keys ${JSON.stringify(Object.keys(value).slice(0, 5))}`,
      { file: this.file, line: range.lines[0] },
    );
  }

  metadata(m: Json): void {
    const s = this.state;
    if (!s.sid && str(m.sessionId)) s.sid = str(m.sessionId)!;
    s.meta.started ??= isoOf(this.seeTime(m.startTime ?? m.start_time));
    const upd = isoOf(this.seeTime(m.lastUpdated));
    if (upd) s.meta.updated = upd;
    if (str(m.summary)) s.meta.summary = str(m.summary);
    if (str(m.kind)) s.meta.kind = str(m.kind);
    if (str(m.projectHash)) s.meta.projectHash = str(m.projectHash);
    const dirs = Array.isArray(m.directories) ? m.directories : [];
    if (typeof dirs[0] === "string") s.meta.project ??= dirs[0];
  }

  upsert(id: string, rec: Json, range: SourceRange): void {
    const known = this.state.messages[id];
    const prev = this.changed.get(id);
    const first = prev?.first ?? known?.first ?? range.lines[0];
    if (!known && !prev) this.state.order.push(id);
    if (!known) this.state.messages[id] = { first, ops: [] };
    this.changed.set(id, { id, rec, first, range }); // an existing key keeps its place
  }

  set(patch: Json, range: SourceRange): void {
    if (Array.isArray(patch.messages)) {
      const keep = new Set<string>();
      patch.messages.forEach((m, i) => {
        if (isObj(m)) keep.add(m.id === undefined ? `#${range.lines[0]}.${i}` : String(m.id));
      });
      this.drop(this.state.order.filter((id) => !keep.has(id)));
      patch.messages.forEach((m, i) => {
        if (!isObj(m)) return;
        this.upsert(m.id === undefined ? `#${range.lines[0]}.${i}` : String(m.id), m, range);
      });
    }
    const rest: Json = { ...patch };
    delete rest.messages;
    if (Object.keys(rest).length) this.metadata({ ...rest, sessionId: undefined });
  }

  rewind(id: string): void {
    const at = this.state.order.indexOf(id);
    if (at === -1) return;
    this.drop(this.state.order.slice(at));
  }

  drop(ids: string[]): void {
    if (!ids.length) return;
    for (const id of ids) {
      if (this.priorIds.has(id)) throw new NeedsFullPass();
      this.changed.delete(id);
      delete this.state.messages[id];
    }
    const gone = new Set(ids);
    this.state.order = this.state.order.filter((id) => !gone.has(id));
  }

  // ---- turning messages into operations ----

  finish(): void {
    // Tool results carried by user messages complete calls recorded without one.
    for (const m of this.changed.values()) {
      if (m.rec.type !== "user" || !Array.isArray(m.rec.content)) continue;
      for (const part of m.rec.content) {
        if (isObj(part) && isObj(part.functionResponse) && str(part.functionResponse.id)) {
          this.carried.set(str(part.functionResponse.id)!, [part]);
        }
      }
    }
    for (const m of this.changed.values()) {
      const calls = Array.isArray(m.rec.toolCalls) ? m.rec.toolCalls : [];
      for (const tc of calls) if (isObj(tc) && str(tc.id)) this.knownCalls.add(str(tc.id)!);
    }
    for (const id of this.state.callIds) this.knownCalls.add(id);
    for (const m of this.changed.values()) this.message(m);
    const s = this.state;
    const seen = new Set(s.callIds);
    for (const id of this.knownCalls) if (!seen.has(id)) s.callIds.push(id);
    capList(s.callIds, 2048);
  }

  opId(msgId: string, part: string): string {
    return stableId("op_", "gemini", this.sid(), msgId, part);
  }

  emit(m: Msg, block: number, part: string, op: Operation, ts: number | null, out: string[]) {
    const id = this.opId(m.id, part);
    out.push(id);
    this.records.set(id, {
      id,
      connection: this.connection.id,
      order: orderKey(ts, this.unit.rank, m.first, block),
      op,
    });
  }

  /** Records a field of an unexpected type (null, a string for an object, ...). */
  shape(what: string, m: Msg): void {
    this.issues.add("unexpected_shape", `Gemini message with ${what}`, {
      file: this.file,
      line: m.range.lines[0],
    });
  }

  message(m: Msg): void {
    const rec = m.rec;
    const content = rec.content ?? rec.parts;
    if (content !== undefined && typeof content !== "string" && !Array.isArray(content)) {
      this.shape("content that is neither text nor a list of parts", m);
    }
    for (const k of ["toolCalls", "thoughts"]) {
      if (rec[k] !== undefined && rec[k] !== null && !Array.isArray(rec[k])) {
        this.shape(`${k} that is not a list`, m);
      }
    }
    if (rec.tokens !== undefined && !isObj(rec.tokens)) {
      this.shape("tokens that are not an object", m);
    }
    const own = this.seeTime(rec.timestamp);
    const ts = own ?? this.state.lastTs;
    if (own !== null) this.state.lastTs = own;
    const type = str(rec.type) ?? str(rec.role) ?? "(none)";
    const provenance = { epoch: this.epoch, source_range: m.range };
    const ops: string[] = [];
    const base = (kind: OperationKind, extra: Partial<Operation> = {}): Operation => {
      const op = makeOp({ kind, completeness: "complete", provenance, ...extra });
      if (ts !== null) op.ts_ms = ts;
      return op;
    };
    switch (type) {
      case "user": {
        const parts = Array.isArray(rec.content) ? rec.content : [];
        const onlyResults = parts.length > 0 &&
          parts.every((p) => isObj(p) && isObj(p.functionResponse));
        if (onlyResults) {
          // Results of calls that were read are attached to them; others are continuations.
          for (const [i, part] of parts.entries()) {
            const fr = (part as Json).functionResponse as Json;
            const callId = str(fr.id);
            if (callId && this.knownCalls.has(callId)) continue;
            const name = str(fr.name);
            const op = base(name ? classifyTool(name) : "other", {
              completeness: "unmatched",
              response: this.sink.json([part]),
            });
            if (name) op.tool = name;
            if (callId) op.native_id = callId;
            op.provenance = { ...op.provenance, completion: op.provenance };
            setCompleteness(op, "unmatched");
            this.emit(m, i, `result:${callId ?? i}`, op, ts, ops);
          }
          break;
        }
        const text = textOfParts(rec.content ?? rec.parts);
        const attachments = parts.filter((p) => isObj(p) && p.text === undefined).length;
        if (!text && !attachments) break;
        const injected = isInjectedGeminiText(text);
        if (injected) this.contextProject ??= workspaceFromContext(text);
        else this.lastPrompt = text;
        this.emit(
          m,
          0,
          "prompt",
          base("prompt", {
            text,
            ...(injected ? { injected: true } : {}),
            request: this.sink.text(text),
            ...(attachments ? { extensions: { gemini: { attachments } } } : {}),
          }),
          ts,
          ops,
        );
        break;
      }
      case "gemini":
      case "model":
      case "assistant":
        this.assistant(m, ts, base, ops);
        break;
      case "info":
      case "error":
      case "warning":
        this.emit(
          m,
          0,
          "event",
          base("event", {
            event: type,
            text: textOfParts(rec.content),
            ...(type === "error" ? { is_error: true } : {}),
          }),
          ts,
          ops,
        );
        break;
      default:
        this.issues.add(
          "unknown_message_type",
          `Unknown Gemini message type ${JSON.stringify(type)}`,
          { file: this.file, line: m.range.lines[0] },
        );
    }
    const known = this.state.messages[m.id];
    if (known) {
      if (known.ops.some((id) => !ops.includes(id)) && this.priorIds.has(m.id)) {
        throw new NeedsFullPass();
      }
      known.ops = ops;
    }
  }

  assistant(
    m: Msg,
    ts: number | null,
    base: (kind: OperationKind, extra?: Partial<Operation>) => Operation,
    ops: string[],
  ): void {
    const rec = m.rec;
    const model = str(rec.model);
    if (model) this.noteModel(model, m.range);
    let block = 0;
    const thoughts = Array.isArray(rec.thoughts) ? rec.thoughts : [];
    for (const [i, t] of thoughts.entries()) {
      if (!isObj(t)) continue;
      const text = [str(t.subject), str(t.description)].filter(Boolean).join(": ");
      if (!text) continue;
      this.emit(
        m,
        block++,
        `thought:${i}`,
        base("thinking", { text, model, response: this.sink.text(text) }),
        ts,
        ops,
      );
    }
    const text = textOfParts(rec.content ?? rec.parts);
    if (text) {
      this.emit(
        m,
        block++,
        "reply",
        base("reply", { text, model, response: this.sink.text(text) }),
        ts,
        ops,
      );
    }
    const calls = Array.isArray(rec.toolCalls) ? rec.toolCalls : [];
    for (const [i, tc] of calls.entries()) {
      if (!isObj(tc)) {
        this.shape("a tool call that is not an object", m);
        continue;
      }
      if (tc.args !== undefined && !isObj(tc.args)) {
        this.shape("tool-call args that are not an object", m);
      }
      const op = this.toolOp(tc, base, model);
      this.emit(m, block++, `tool:${str(tc.id) ?? i}`, op, ts, ops);
    }
    if (isObj(rec.tokens)) {
      const t = rec.tokens;
      const input = num(t.input) ?? 0, cached = num(t.cached) ?? 0;
      const usage = {
        input: Math.max(0, input - cached) + (num(t.tool) ?? 0),
        output: (num(t.output) ?? 0) + (num(t.thoughts) ?? 0),
        cache_read: cached,
        cache_write: 0,
      };
      if (usage.input + usage.output + usage.cache_read > 0) {
        if (model) {
          this.usage.push({ key: stableId("u_", "gemini", this.sid(), m.id), model, usage });
        } else {
          this.issues.add(
            "usage_without_model",
            "Token usage on a message that names no model; not attributed",
            { severity: "info", file: this.file, line: m.range.lines[0] },
          );
        }
      }
    }
  }

  toolOp(
    tc: Json,
    base: (kind: OperationKind, extra?: Partial<Operation>) => Operation,
    model: string | undefined,
  ): Operation {
    const name = str(tc.name);
    let kind: OperationKind = name ? classifyTool(name) : "other";
    if (kind === "other" && name?.includes("__")) kind = "mcp";
    const args = isObj(tc.args) ? tc.args : undefined;
    const callId = str(tc.id);
    const result = tc.result ?? (callId ? this.carried.get(callId) : undefined);
    const status = str(tc.status);
    const finished = status === "success" || status === "error" || status === "cancelled" ||
      (status === undefined && result !== undefined);
    const op = base(kind, { completeness: finished ? "complete" : "incomplete", model });
    if (name) op.tool = name;
    if (callId) op.native_id = callId;
    for (const k of TARGET_KEYS) {
      if (args && str(args[k])) {
        op.target = str(args[k]);
        break;
      }
    }
    if (tc.args !== undefined) op.request = this.sink.json(tc.args);
    const ext: Json = {};
    if (str(tc.displayName)) ext.display_name = tc.displayName;
    if (status && status !== "success") ext.status = status;
    if (result !== undefined && result !== null) {
      op.response = this.sink.json(result);
      const responses = responsesOf(result);
      const exit = responses.map((r) => (r.output ? geminiExitCode(r.output) : undefined))
        .find((c) => c !== undefined);
      const full = responses.map((r) => /For full output see: (\S+)/.exec(r.output ?? "")?.[1])
        .find(Boolean);
      if (full) ext.full_output_path = full;
      op.is_error = status === "error" || status === "cancelled" ||
        responses.some((r) => r.error) || (exit !== undefined && exit !== 0);
    } else if (finished) {
      op.response = { missing: true, reason: "the log records no result for this call" };
      op.is_error = status === "error" || status === "cancelled";
    }
    if (Object.keys(ext).length) op.extensions = { gemini: ext };
    const summary = summarizeToolInput(tc.args);
    if (summary) op.summary = summary;
    if (finished) op.provenance = { ...op.provenance, completion: op.provenance };
    setCompleteness(op, op.completeness); // replay attributes depend on the request too
    return op;
  }

  noteModel(model: string, range: SourceRange): void {
    const s = this.state;
    if (s.models.includes(model)) return;
    s.models.push(model);
    s.modelEvidence.push({ file: this.file, line: range.lines[0], field: "message.model" });
    if (s.models.length === 2) {
      this.issues.add(
        "conflicting_model",
        "The chat used several models; the connection's model is left absent and each operation carries its own",
        { severity: "info", file: this.file, line: range.lines[0] },
      );
    }
  }
}

function connectionOf(state: GeminiState, conn: GeminiPass["connection"]): Connection {
  const server: Connection["server"] = { evidence: [] };
  if (state.models.length === 1) {
    server.model = state.models[0];
    server.evidence.push(...state.modelEvidence.slice(0, 1));
  }
  return { id: conn.id, kind: conn.kind, client: { agent: "gemini", evidence: [] }, server };
}

/** Where a chat file sits: `<root>/tmp/<project>/chats/[<parent>/]<file>`. */
export function geminiLayout(path: string): {
  root?: string;
  projectDir?: string;
  parentSession?: string;
} {
  const parts = path.split("/");
  const chats = parts.lastIndexOf("chats");
  if (chats < 2 || parts[chats - 2] !== "tmp") return {};
  return {
    root: parts.slice(0, chats - 2).join("/"),
    projectDir: parts[chats - 1],
    parentSession: chats === parts.length - 3 ? parts[chats + 1] : undefined,
  };
}

/** The project folder for a `tmp/<dir>`: from `projects.json` (name or SHA-256 of the path). */
async function projectFromRegistry(
  fs: SourceFs,
  path: string,
  projectHash?: string,
): Promise<string | undefined> {
  const { root, projectDir } = geminiLayout(path);
  if (!root || !projectDir) return undefined;
  try {
    const doc = JSON.parse(await fs.readTextFile(joinPath(root, "projects.json")));
    const projects = isObj(doc) && isObj(doc.projects) ? doc.projects : {};
    for (const [dir, name] of Object.entries(projects)) {
      if (name === projectDir || sha256Hex(dir) === projectDir || sha256Hex(dir) === projectHash) {
        return dir;
      }
    }
  } catch { /* no registry: the project path stays unknown unless the chat names it */ }
  return undefined;
}

function connectionFor(unit: SourceUnit): GeminiPass["connection"] {
  const parent = geminiLayout(unit.path).parentSession;
  if (parent) {
    return { id: `subagent:${stemOf(unit.path)}`, kind: "subagent", sessionId: parent };
  }
  return { id: "main", kind: "main" };
}

function unchanged(ctx: ImportContext, issues: SessionIssue[] = []): UnitResult {
  return unchangedResult(ctx.resume, issues);
}

async function deltaOf(
  pass: GeminiPass,
  ctx: ImportContext,
  loss: LossWindow[],
  full: boolean,
): Promise<SessionDelta> {
  const s = pass.state;
  const sid = pass.sid();
  const info: SessionDelta["info"] = { id: `gemini:${sid}`, native_id: sid, source: "gemini" };
  const started = s.meta.started ?? isoOf(pass.firstTs);
  if (started) info.started_at = started;
  const ended = [s.meta.updated, isoOf(pass.lastTs)].filter(Boolean).sort().at(-1);
  if (ended) info.ended_at = ended;
  if (pass.connection.kind === "main") {
    s.meta.project ??= await projectFromRegistry(ctx.fs, pass.unit.path, s.meta.projectHash) ??
      pass.contextProject;
    if (s.meta.project) info.project = { path: s.meta.project };
    if (s.meta.summary) info.title = s.meta.summary;
    if (pass.lastPrompt) info.last_prompt = pass.lastPrompt.slice(0, 2000);
  }
  const issues = pass.issues.list();
  if (full && pass.connection.kind === "main") {
    issues.push({
      code: "missing_client_version",
      message: "Gemini CLI logs do not record the CLI version; client version left absent",
      severity: "info",
      file: pass.unit.path,
    });
  }
  if (full && !s.models.length && pass.records.size) {
    issues.push({
      code: "missing_model",
      message: "no message names the model; server model left absent",
      severity: "info",
      file: pass.unit.path,
    });
  }
  return {
    session_id: `gemini:${sid}`,
    file: pass.unit.path,
    info,
    primary: pass.connection.kind === "main",
    connections: [connectionOf(s, pass.connection)],
    operations: [...pass.records.values()],
    usage: pass.usage,
    loss_windows: loss,
    issues,
  };
}

async function importJsonl(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const plan = await planResume(fs, unit.path, ctx);
  if (!plan) return unchanged(ctx, [missing(unit)]);
  if (plan.mode === "unchanged") return unchanged(ctx);
  const prior = ctx.resume?.state as GeminiState | undefined;
  const run = async (append: boolean) => {
    const state = append && prior?.v === STATE_VERSION ? structuredClone(prior) : freshState();
    const pass = new GeminiPass(unit, ctx.epoch, state, stemOf(unit.path), connectionFor(unit));
    const from = append ? plan : { ...plan, offset: 0, line: 1 };
    const outcome = await readPass(
      fs,
      unit.path,
      { ...from, size: plan.stat.size },
      ctx,
      (l, v) =>
        pass.record(v, { file: unit.path, lines: [l.line, l.line], bytes: [l.start, l.end] }),
    );
    pass.finish();
    return { pass, outcome };
  };
  let mode: UnitResult["mode"] = plan.mode;
  let done;
  try {
    done = await run(plan.mode === "append");
  } catch (e) {
    if (!(e instanceof NeedsFullPass)) throw e;
    mode = "full";
    done = await run(false);
  }
  const { pass, outcome } = done;
  const checkpoint = await makeJsonlCheckpoint(
    fs,
    unit.path,
    plan.stat,
    outcome.offset,
    outcome.line,
  );
  return {
    mode,
    deltas: [await deltaOf(pass, ctx, outcome.loss, mode === "full")],
    checkpoint,
    state: pass.state,
    issues: [],
    payloads: pass.sink.payloads,
    bytesRead: outcome.bytesRead,
  };
}

/** A legacy `.json` chat is one document rewritten in place: any change means a full read. */
async function importJson(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const plan = await planResume(fs, unit.path, ctx);
  if (!plan) return unchanged(ctx, [missing(unit)]);
  if (plan.mode === "unchanged" && ctx.resume?.checkpoint.kind === "jsonl") {
    if ((ctx.resume.checkpoint.offset ?? 0) === plan.stat.size) return unchanged(ctx);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of fs.readFrom(unit.path, 0)) {
    chunks.push(c);
    size += c.byteLength;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  const state = freshState();
  const pass = new GeminiPass(unit, ctx.epoch, state, stemOf(unit.path), connectionFor(unit));
  const whole = (n: number): SourceRange => ({
    file: unit.path,
    lines: [n, n],
    bytes: [0, size],
  });
  const loss: LossWindow[] = [];
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    loss.push({
      epoch: ctx.epoch,
      file: unit.path,
      lines: [1, 1],
      bytes: [0, size],
      reason: "the JSON document does not parse (half-written or corrupt)",
    });
  }
  if (isObj(doc)) {
    pass.metadata({ ...doc, sessionId: doc.sessionId ?? undefined });
    let messages = Array.isArray(doc.messages) ? doc.messages : undefined;
    if (!messages && Array.isArray(doc.history)) {
      // An older shape: `history` of `{role, parts, ts}` entries.
      pass.issues.add(
        "unknown_layout",
        'A chat document with "history" instead of "messages"; read as role/parts entries',
        { file: unit.path },
      );
      messages = doc.history.map((h) =>
        isObj(h) ? { ...h, type: h.role, content: h.parts, timestamp: h.timestamp ?? h.ts } : h
      );
    }
    if (!messages) {
      pass.issues.add(
        "unknown_layout",
        `A chat document without "messages" (keys ${JSON.stringify(Object.keys(doc).slice(0, 6))})`,
        { file: unit.path },
      );
    }
    for (const [i, m] of (messages ?? []).entries()) {
      const id = isObj(m) && (typeof m.id === "string" || typeof m.id === "number")
        ? String(m.id)
        : `#${i + 1}`;
      if (isObj(m)) pass.upsert(id, m, whole(i + 1));
      else pass.record(m, whole(i + 1));
    }
  } else if (doc !== undefined) {
    pass.issues.add("unknown_layout", "The chat document is not a JSON object", {
      file: unit.path,
    });
  }
  pass.finish();
  const checkpoint = await makeJsonlCheckpoint(fs, unit.path, plan.stat, size, 1);
  return {
    mode: "full",
    deltas: [await deltaOf(pass, ctx, loss, true)],
    checkpoint,
    state: null,
    issues: [],
    payloads: pass.sink.payloads,
    bytesRead: size,
  };
}

function missing(unit: SourceUnit): SessionIssue {
  return {
    code: "file_missing",
    message: `Cannot import "${unit.path}": the file is gone`,
    severity: "warning",
    file: unit.path,
  };
}

/** `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. */
export function geminiHome(env: DiscoverEnv): string {
  return joinPath(env.env.GEMINI_CLI_HOME || env.home, ".gemini");
}

const CHAT_FILE = /^session-.*\.(jsonl|json)$/;

export const gemini: Importer = {
  id: "gemini",
  displayName: "Gemini CLI",
  async discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
    const tmp = joinPath(geminiHome(env), "tmp");
    const units: SourceUnit[] = [];
    for (const project of await fs.readDir(tmp)) {
      if (!project.isDirectory) continue;
      const chats = joinPath(tmp, project.name, "chats");
      const entries = await fs.readDir(chats);
      const jsonl = new Set(
        entries.filter((e) => e.name.endsWith(".jsonl")).map((e) => stemOf(e.name)),
      );
      for (const e of entries) {
        const path = joinPath(chats, e.name);
        if (e.isFile && CHAT_FILE.test(e.name)) {
          // A resumed legacy chat is migrated to .jsonl: read that one only.
          if (e.name.endsWith(".json") && jsonl.has(stemOf(e.name))) continue;
          units.push({
            source: "gemini",
            path,
            kind: e.name.endsWith(".json") ? "json" : "jsonl",
            rank: 0,
          });
        } else if (e.isDirectory) {
          for (const sub of await fs.readDir(path)) {
            if (sub.isFile && sub.name.endsWith(".jsonl")) {
              units.push({
                source: "gemini",
                path: joinPath(path, sub.name),
                kind: "jsonl",
                rank: 1,
              });
            }
          }
        }
      }
    }
    return units;
  },
  detect(path: string): boolean {
    const { projectDir } = geminiLayout(path);
    return projectDir !== undefined && /\.(jsonl|json)$/.test(path);
  },
  import(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
    return unit.path.endsWith(".json") ? importJson(unit, ctx) : importJsonl(unit, ctx);
  },
};
