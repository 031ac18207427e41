/**
 * The `cursor-agent` CLI: `~/.cursor/projects/<p>/agent-transcripts/<id>/<id>.jsonl` (sub-agents
 * in `<id>/subagents/<sub>.jsonl`, or a flat `agent-transcripts/<id>.jsonl`): Anthropic-style
 * content blocks without ids or timestamps, imported line by line. Its
 * `~/.cursor/chats/<hash>/<id>/store.db` keeps a `meta` row (hex JSON: name, createdAt, model)
 * read for the session's title and a content-addressed `blobs` table whose encoding is not
 * documented: reported as unsupported.
 */
import type { DatabaseSync } from "node:sqlite";
import { agentName } from "../../model/agents.ts";
import type { SessionDelta } from "../../model/delta.ts";
import { PayloadSink, stableId } from "../../model/payload.ts";
import { classifyTool, summarizeToolInput, targetOf } from "../../model/tools.ts";
import type { Connection, LossWindow, OperationKind, SourceRange } from "../../model/types.ts";
import type { JsonlLine } from "../jsonl.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../types.ts";
import {
  basename,
  beginJsonlPass,
  type DeltaDraft,
  dirname,
  type DraftRecord,
  fileRank,
  hasFile,
  isObj,
  IssueTally,
  type Json,
  metadataDelta,
  num,
  type OperationDraft,
  parseJsonText,
  passResult,
  rangeOf,
  readPass,
  str,
} from "../_import_kit.ts";
import { cellText, importSqliteUnit } from "../_sqlite_copy.ts";
import { SOURCE } from "./composer.ts";

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  const add = (path: string, kind: SourceUnit["kind"], rank: number) =>
    units.push({ source: SOURCE, path, kind, rank });
  const dotCursor = `${env.home}/.cursor`;
  for (const p of await fs.readDir(`${dotCursor}/projects`)) {
    if (!p.isDirectory) continue;
    const root = `${dotCursor}/projects/${p.name}/agent-transcripts`;
    for (const e of await fs.readDir(root)) {
      const path = `${root}/${e.name}`;
      if (e.isFile && e.name.endsWith(".jsonl")) add(path, "jsonl", 0);
      if (!e.isDirectory) continue;
      for (const f of await fs.readDir(path)) {
        if (f.isFile && f.name.endsWith(".jsonl")) add(`${path}/${f.name}`, "jsonl", 0);
        if (f.isDirectory && f.name === "subagents") {
          for (const s of await fs.readDir(`${path}/subagents`)) {
            if (s.isFile && s.name.endsWith(".jsonl")) {
              add(`${path}/subagents/${s.name}`, "jsonl", 1);
            }
          }
        }
      }
    }
  }
  for (const h of await fs.readDir(`${dotCursor}/chats`)) {
    if (!h.isDirectory) continue;
    for (const s of await fs.readDir(`${dotCursor}/chats/${h.name}`)) {
      const dir = `${dotCursor}/chats/${h.name}/${s.name}`;
      if (s.isDirectory && await hasFile(fs, dir, "store.db")) add(`${dir}/store.db`, "sqlite", 1);
    }
  }
  return units;
}

function detect(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  if (p.endsWith(".jsonl")) return p.includes("/agent-transcripts/");
  return p.endsWith("/store.db") && p.includes("/.cursor/chats/");
}

function importUnit(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return unit.kind === "jsonl" ? importTranscript(unit, ctx) : importStore(unit, ctx);
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/** Version of `TranscriptState`: a saved state of another version is dropped, the file read again. */
const STATE_VERSION = 1;

/** What a transcript pass leaves for the next one. Plain JSON. */
interface TranscriptState {
  v: number;
  /** Calls waiting for a result, by tool_use id. */
  pending: Record<string, DraftRecord>;
  /** Calls without an id, waiting in order: results without a known id pair with the oldest. */
  queue: DraftRecord[];
  lastPrompt?: string;
  /** Prompts of task calls not linked to their sub-agent yet, by op id. */
  taskPrompts?: Record<string, string>;
}

const freshState = (): TranscriptState => ({ v: STATE_VERSION, pending: {}, queue: [] });

interface TranscriptRole {
  session: string;
  conn: string;
  subagent: boolean;
}

function transcriptRole(path: string): TranscriptRole {
  const name = basename(path).replace(/\.jsonl$/, "");
  const dir = basename(dirname(path));
  if (dir === "subagents") {
    return { session: basename(dirname(dirname(path))), conn: `agent-${name}`, subagent: true };
  }
  // agent-transcripts/<id>/<id>.jsonl, or a flat agent-transcripts/<id>.jsonl
  return { session: name, conn: "main", subagent: false };
}

const USER_QUERY = /^\s*<user_query>\s*([\s\S]*?)\s*<\/user_query>\s*$/;

/** The first of `keys` that holds a non-empty string. */
function firstStr(b: Json, keys: string[]): string | undefined {
  for (const k of keys) if (typeof b[k] === "string" && b[k]) return b[k] as string;
  return undefined;
}

/** Arguments written as a JSON string are read as the object they hold. */
function jsonOf(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const parsed = parseJsonText(v);
  return parsed.ok ? parsed.value : v;
}

/** The visible text of a block: a text field, or text parts of its content. */
function textOfBlock(b: Json): string {
  for (const k of ["text", "markdown", "content", "value", "body"]) {
    const v = b[k];
    if (typeof v === "string") return v;
    if (Array.isArray(v)) {
      return v.map((x) => (isObj(x) && typeof x.text === "string" ? x.text : "")).filter(Boolean)
        .join("\n");
    }
  }
  return "";
}

/** One pass over one transcript file. */
class TranscriptPass {
  readonly sink = new PayloadSink();
  readonly ops = new Map<string, DraftRecord>();
  readonly issues: IssueTally;
  /** Task calls of this pass and their prompts, for linking the sub-agents they ran. */
  readonly tasks: { rec: DraftRecord; prompt: string }[] = [];

  constructor(
    readonly unit: SourceUnit,
    readonly epoch: number,
    readonly state: TranscriptState,
    readonly role: TranscriptRole,
  ) {
    this.issues = new IssueTally(unit.path);
  }

  private push(
    l: JsonlLine,
    block: number,
    kind: OperationKind,
    fields: Partial<OperationDraft>,
  ): DraftRecord {
    const rec: DraftRecord = {
      id: stableId("op_", this.role.session, this.role.conn, l.line, block),
      connection: this.role.conn,
      order: { ts_ms: null, rank: fileRank(this.unit), line: l.line, block },
      op: {
        kind,
        completeness: "complete",
        provenance: { epoch: this.epoch, source_range: rangeOf(this.unit.path, l) },
        ...fields,
      },
    };
    this.ops.set(rec.id, rec);
    return rec;
  }

  line(l: JsonlLine, v: Json): void {
    const r = str(v.role);
    if (r !== "user" && r !== "assistant") {
      if (v.type === "turn_ended") return;
      this.issues.add(
        "unknown_record_type",
        `unknown record ${JSON.stringify(v.type ?? v.role ?? null)}`,
        { line: l.line },
      );
      return;
    }
    const msg = v.message;
    const content = isObj(msg) ? msg.content : msg;
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    if (!Array.isArray(blocks)) {
      this.issues.add("unexpected_shape", "records without message content", { line: l.line });
      return;
    }
    for (const [i, b] of blocks.entries()) {
      if (!isObj(b)) {
        this.issues.add("unexpected_shape", "content blocks that are not objects", {
          line: l.line,
        });
        continue;
      }
      this.block(l, i, r, b);
    }
  }

  private block(l: JsonlLine, i: number, role: "user" | "assistant", b: Json): void {
    switch (b.type) {
      case "text": {
        const raw = str(b.text) ?? "";
        if (!raw.trim()) return;
        if (role === "user") {
          const m = USER_QUERY.exec(raw);
          const text = m ? m[1] : raw;
          const rec = this.push(l, i, "prompt", { text, request: this.sink.text(raw) });
          if (m) rec.op.extensions = { [SOURCE]: { wrapped: "user_query" } };
          if (!this.role.subagent) this.state.lastPrompt = text;
        } else {
          this.push(l, i, "reply", { text: raw, response: this.sink.text(raw) });
        }
        return;
      }
      case "thinking": {
        const text = str(b.thinking) ?? str(b.text) ?? "";
        if (text.trim()) this.push(l, i, "thinking", { text, response: this.sink.text(text) });
        return;
      }
      case "tool_use":
        return this.toolUse(l, i, b);
      case "tool_call":
      case "tool-call":
        // The same call in the AI SDK's words (toolCallId, toolName, args).
        return this.toolUse(l, i, {
          id: firstStr(b, ["id", "toolCallId", "tool_call_id", "callId"]),
          name: firstStr(b, ["name", "toolName", "tool_name", "tool"]),
          input: jsonOf(b.input ?? b.args ?? b.arguments ?? b.params),
        });
      case "tool_result":
      case "tool-result":
        return this.toolResult(l, i, {
          tool_use_id: firstStr(b, ["tool_use_id", "toolCallId", "tool_call_id", "id", "callId"]),
          content: b.content ?? b.result ?? b.output,
          is_error: b.is_error === true || b.isError === true,
        });
      case "custom_block": {
        // A block Cursor renders itself (a card, a diff, a note): its text is shown.
        const text = textOfBlock(b);
        if (!text.trim()) return;
        const kind = firstStr(b, ["kind", "name", "blockType", "subtype"]);
        this.push(l, i, "event", {
          event: "custom_block",
          text,
          response: this.sink.text(text),
          ...(kind ? { extensions: { [SOURCE]: { block: kind } } } : {}),
        });
        return;
      }
      default:
        this.issues.add(
          "unknown_block_type",
          `unknown content block ${JSON.stringify(b.type ?? null)}`,
          { line: l.line },
        );
    }
  }

  private toolUse(l: JsonlLine, i: number, b: Json): void {
    const name = str(b.name) ?? "";
    if (!name) this.issues.add("unexpected_shape", "tool calls without a name", { line: l.line });
    const input = b.input ?? {};
    const rec = this.push(l, i, name ? classifyTool(name) : "other", {
      tool: name || undefined,
      native_id: str(b.id),
      target: targetOf(input),
      summary: summarizeToolInput(input),
      request: this.sink.json(input),
      completeness: "incomplete",
    });
    if (rec.op.native_id) this.state.pending[rec.op.native_id] = rec;
    else this.state.queue.push(rec);
    if (rec.op.kind === "task" && isObj(input) && typeof input.prompt === "string") {
      this.tasks.push({ rec, prompt: input.prompt });
      (this.state.taskPrompts ??= {})[rec.id] = input.prompt;
    }
  }

  private toolResult(l: JsonlLine, i: number, b: Json): void {
    const useId = str(b.tool_use_id);
    const c = b.content;
    const textBlocks = Array.isArray(c) && c.every((x) => isObj(x) && x.type === "text");
    const response = typeof c === "string"
      ? this.sink.text(c)
      : textBlocks
      ? this.sink.text((c as Json[]).map((x) => str(x.text) ?? "").join("\n"))
      : this.sink.json(c ?? "");
    let rec = useId ? this.state.pending[useId] : undefined;
    let byPosition = false;
    if (rec) delete this.state.pending[useId!];
    else if (this.state.queue.length) {
      rec = this.state.queue.shift();
      byPosition = true;
    }
    if (!rec) {
      this.push(l, i, "other", {
        native_id: useId,
        response,
        is_error: b.is_error === true,
        completeness: "unmatched",
      });
      return;
    }
    const range: SourceRange = rangeOf(this.unit.path, l);
    rec.op.response = response;
    rec.op.is_error = b.is_error === true;
    rec.op.completeness = "complete";
    // A sub-agent written after its call was read is linked when the call completes.
    const prompt = this.state.taskPrompts?.[rec.id];
    if (prompt !== undefined) {
      delete this.state.taskPrompts![rec.id];
      if (!rec.op.spawns && !this.tasks.some((t) => t.rec === rec)) {
        this.tasks.push({ rec, prompt });
      }
    }
    rec.op.provenance.completion = { epoch: this.epoch, source_range: range };
    if (byPosition) {
      rec.op.extensions = { [SOURCE]: { matched_by: "position", result_id: useId } };
    }
    this.ops.set(rec.id, rec);
  }

  delta(loss: LossWindow[], full: boolean): DeltaDraft | null {
    const role = this.role;
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${role.session}`,
      native_id: role.session,
      source: SOURCE,
      project: {},
    };
    if (this.state.lastPrompt) info.last_prompt = this.state.lastPrompt;
    const conn: Connection = {
      id: role.conn,
      kind: role.subagent ? "subagent" : "main",
      client: { agent: SOURCE, evidence: [] },
      server: { evidence: [] },
    };
    const issues = this.issues.list();
    if (full && !role.subagent) {
      issues.push({
        code: "missing_client_version",
        message:
          "cursor-agent transcripts record neither the agent version nor the model; both left absent",
        severity: "info",
        file: this.unit.path,
      });
    }
    if (!this.ops.size && !loss.length && !issues.length) return null;
    return {
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: !role.subagent,
      connections: [conn],
      operations: this.ops.values(),
      loss_windows: loss,
      issues,
      extensions: { [SOURCE]: { entrypoint: "cursor-agent" } },
    };
  }
}

async function importTranscript(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const pass = new TranscriptPass(unit, ctx.epoch, state, transcriptRole(unit.path));
  const outcome = await readPass(ctx.fs, unit.path, plan, ctx, (l, v) => pass.line(l, v));
  if (!pass.role.subagent) await linkSubagents(ctx.fs, unit.path, pass.tasks);
  const delta = pass.delta(outcome.loss, plan.mode === "full");
  return passResult({
    mode: plan.mode,
    deltas: delta ? [delta] : [],
    checkpoint: outcome.checkpoint,
    state,
    sink: pass.sink,
    bytesRead: outcome.bytesRead,
  });
}

const normalize = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * A sub-agent transcript (`<id>/subagents/<sub>.jsonl`, no ids anywhere) belongs to the task
 * call whose prompt is its first message: the call spawns `agent-<sub>` when exactly one
 * transcript matches.
 */
async function linkSubagents(
  fs: SourceFs,
  transcript: string,
  tasks: { rec: DraftRecord; prompt: string }[],
): Promise<void> {
  const open = tasks.filter((t) => !t.rec.op.spawns);
  if (!open.length) return;
  const folder = `${dirname(transcript)}/subagents`;
  const firsts: [string, string][] = [];
  for (const e of await fs.readDir(folder)) {
    if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
    const head = new TextDecoder().decode(await fs.readRange(`${folder}/${e.name}`, 0, 65536));
    for (const line of head.split("\n")) {
      const v = parseJsonText(line);
      if (!v.ok || !isObj(v.value) || v.value.role !== "user" || !isObj(v.value.message)) continue;
      const c = v.value.message.content;
      const raw = typeof c === "string" ? c : textOfBlock({ content: c });
      const text = USER_QUERY.exec(raw)?.[1] ?? raw;
      if (text.trim()) firsts.push([`agent-${e.name.slice(0, -6)}`, normalize(text)]);
      break;
    }
  }
  const claimed = new Set<string>();
  for (const { rec, prompt } of open) {
    const matches = firsts.filter(([id, text]) => !claimed.has(id) && text === normalize(prompt));
    if (matches.length !== 1) continue;
    claimed.add(matches[0][0]);
    rec.op.spawns = matches[0][0];
  }
}

// ---------------------------------------------------------------------------------------------
// store.db

function importStore(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return importSqliteUnit(unit, ctx, (db, tables) => {
    const counts: Record<string, number> = {};
    const issues = new IssueTally(unit.path);
    if (!tables.has("meta") || !tables.has("blobs")) {
      issues.add(
        "db_missing_table",
        `Cannot import "${unit.path}": it lacks the meta and blobs tables of a cursor-agent store`,
        { severity: "error" },
      );
      return { deltas: [], issues: issues.list(), counts };
    }
    const deltas = agentStore(db, unit.path, counts, issues);
    return { deltas, issues: issues.list(), counts };
  });
}

/** A cursor-agent chat store: the title and model from `meta`; blobs are not decoded. */
function agentStore(
  db: DatabaseSync,
  file: string,
  counts: Record<string, number>,
  issues: IssueTally,
): DeltaDraft[] {
  const blobs = Number((db.prepare("SELECT count(*) AS n FROM blobs").get() as Json).n ?? 0);
  counts.blobs = blobs;
  const rows = db.prepare("SELECT key, value FROM meta").all() as Json[];
  let meta: Json | undefined;
  for (const r of rows) {
    const text = cellText(r.value);
    if (text === null) continue;
    const decoded = /^([0-9a-f]{2})+$/i.test(text) ? hexToText(text) : text;
    const parsed = parseJsonText(decoded);
    if (parsed.ok && isObj(parsed.value) && typeof parsed.value.agentId === "string") {
      meta = parsed.value;
      break;
    }
  }
  if (!meta) {
    issues.add("malformed_value", "the cursor-agent store has no readable meta row");
    return [];
  }
  const id = String(meta.agentId);
  const info: SessionDelta["info"] = {
    id: `${SOURCE}:${id}`,
    native_id: id,
    source: SOURCE,
    project: {},
  };
  if (typeof meta.name === "string" && meta.name) info.title = meta.name;
  const created = num(meta.createdAt);
  if (created !== undefined) info.started_at = new Date(created).toISOString();
  const ext: Json = { entrypoint: "cursor-agent" };
  if (typeof meta.mode === "string") ext.mode = meta.mode;
  if (typeof meta.lastUsedModel === "string") ext.last_used_model = meta.lastUsedModel;
  const own = new IssueTally(file);
  if (blobs > 0) {
    own.add(
      "unsupported_format",
      `the cursor-agent store's ${blobs} blob(s) are not decoded (undocumented encoding); ` +
        "the conversation comes from its agent transcript when there is one",
      { severity: "info", count: blobs },
    );
  }
  return [{ ...metadataDelta(info, file), issues: own.list(), extensions: { [SOURCE]: ext } }];
}

function hexToText(hex: string): string {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return new TextDecoder().decode(bytes);
}

/** The cursor-agent CLI: its transcripts and its chat stores. */
export const cursorAgent: Importer<typeof SOURCE> = {
  id: SOURCE,
  displayName: `${agentName(SOURCE)} (cursor-agent)`,
  discover,
  detect,
  import: importUnit,
};
