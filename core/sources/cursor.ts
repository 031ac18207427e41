/**
 * Cursor importer.
 *
 * The IDE keeps chats (Composer / Agent) in SQLite `state.vscdb` files (WAL mode) under its
 * `User` folder:
 * - `globalStorage/state.vscdb`, table `cursorDiskKV`: `composerData:<composerId>` (the chat:
 *   name, times, model, and either `fullConversationHeadersOnly` — the order of its bubbles —
 *   or, in old chats, an inline `conversation` array) and `bubbleId:<composerId>:<bubbleId>`
 *   (one message; tool calls carry `toolFormerData` whose rawArgs/params/result are JSON
 *   strings);
 * - `workspaceStorage/<hash>/state.vscdb`, table `ItemTable`: `composer.composerData` lists
 *   the chats of one workspace, whose folder `workspace.json` beside it names.
 *
 * `User` folders: `$CURSOR_USER_DIR` (an override naming the `User` folder itself, e.g. for a
 * portable install or `--user-data-dir`), then per platform `~/.config/Cursor/User` (Linux,
 * `$XDG_CONFIG_HOME` honoured), `~/Library/Application Support/Cursor/User` (macOS),
 * `%APPDATA%/Cursor/User` (Windows; `$APPDATA` is also looked at elsewhere when set).
 *
 * The `cursor-agent` CLI writes `~/.cursor/projects/<p>/agent-transcripts/<id>/<id>.jsonl`
 * (sub-agents in `<id>/subagents/<sub>.jsonl`): Anthropic-style content blocks without ids
 * or timestamps, imported line by line. Its `~/.cursor/chats/<hash>/<id>/store.db` keeps a
 * `meta` row (hex JSON: name, createdAt, model) read for the session's title and a
 * content-addressed `blobs` table whose encoding is not documented: reported as unsupported.
 */
import {
  classifyTool,
  type Connection,
  effectOf,
  type Operation,
  type OperationKind,
  type OperationRecord,
  type PayloadRef,
  PayloadSink,
  replayAttributes,
  type SessionDelta,
  type SessionIssue,
  type SqliteCheckpoint,
  stableId,
  summarizeToolInput,
  type UsageEntry,
} from "../model/mod.ts";
import type { JsonlCheckpoint } from "../model/types.ts";
import type { DatabaseSync } from "node:sqlite";
import {
  cellText,
  readSqliteCopy,
  sameSqliteCheckpoint,
  sqliteCheckpoint,
} from "./_sqlite_copy.ts";
import { makeJsonlCheckpoint, planJsonlResume, readJsonl } from "./jsonl.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "./types.ts";
import { unchangedResult } from "./results.ts";
import { basename, dirname, isObj, type Json, num, str, targetOf } from "./_util.ts";

const SOURCE = "cursor" as const;

/** Cursor's `User` folders, override first. */
export function cursorUserDirs(env: DiscoverEnv): string[] {
  const dirs: string[] = [];
  const e = env.env;
  if (e.CURSOR_USER_DIR) dirs.push(e.CURSOR_USER_DIR);
  const home = env.home;
  if (env.platform === "linux") {
    dirs.push(`${e.XDG_CONFIG_HOME || `${home}/.config`}/Cursor/User`);
  } else if (env.platform === "darwin") {
    dirs.push(`${home}/Library/Application Support/Cursor/User`);
  } else {
    dirs.push(`${e.APPDATA || `${home}/AppData/Roaming`}/Cursor/User`);
  }
  if (e.APPDATA) dirs.push(`${e.APPDATA}/Cursor/User`);
  return [...new Set(dirs.map((d) => d.replace(/\\/g, "/").replace(/\/+$/, "")))];
}

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  const add = (path: string, kind: SourceUnit["kind"], rank: number) =>
    units.push({ source: SOURCE, path, kind, rank });
  // Directory listings only: discovery costs no stat per file.
  const hasFile = async (dir: string, name: string) =>
    (await fs.readDir(dir)).some((e) => e.isFile && e.name === name);
  for (const user of cursorUserDirs(env)) {
    if (await hasFile(`${user}/globalStorage`, "state.vscdb")) {
      add(`${user}/globalStorage/state.vscdb`, "sqlite", 0);
    }
    for (const e of await fs.readDir(`${user}/workspaceStorage`)) {
      if (!e.isDirectory) continue;
      const dir = `${user}/workspaceStorage/${e.name}`;
      if (await hasFile(dir, "state.vscdb")) add(`${dir}/state.vscdb`, "sqlite", 1);
    }
  }
  // cursor-agent CLI
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
      if (s.isDirectory && await hasFile(dir, "store.db")) add(`${dir}/store.db`, "sqlite", 1);
    }
  }
  return units;
}

function detect(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  if (p.endsWith("/state.vscdb")) return /\/Cursor\/User\//.test(p);
  if (p.endsWith(".jsonl")) return p.includes("/agent-transcripts/");
  return p.endsWith("/store.db") && p.includes("/.cursor/chats/");
}

async function importUnit(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return unit.kind === "jsonl" ? await importTranscript(unit, ctx) : await importDb(unit, ctx);
}

function unchanged(ctx: ImportContext, issues: SessionIssue[] = []): UnitResult {
  return unchangedResult(ctx.resume, issues);
}

// ---------------------------------------------------------------------------------------------
// state.vscdb (global and workspace) and cursor-agent store.db

async function importDb(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const current = await sqliteCheckpoint(ctx.fs, unit.path);
  if (!current) {
    return unchanged(ctx, [{
      code: "db_missing",
      severity: "warning",
      message: `Cannot import "${unit.path}": it is not a regular file`,
      file: unit.path,
    }]);
  }
  if (sameSqliteCheckpoint(ctx.resume?.checkpoint, current)) return unchanged(ctx);
  const folder = await workspaceFolder(ctx.fs, unit.path);
  const sink = new PayloadSink();
  const read = await readSqliteCopy(ctx.fs, unit.path, (db, tables) => {
    const out = {
      deltas: [] as SessionDelta[],
      issues: [] as SessionIssue[],
      counts: {} as Record<string, number>,
    };
    const known = tables.has("cursorDiskKV") || tables.has("ItemTable") ||
      (tables.has("meta") && tables.has("blobs"));
    if (!known) {
      out.issues.push({
        code: "db_missing_table",
        severity: "error",
        message:
          `Cannot import "${unit.path}": it has neither a cursorDiskKV nor an ItemTable table`,
        file: unit.path,
      });
      return out;
    }
    const reader = new DbReader(db, unit, ctx.epoch, sink, out.issues, folder);
    if (tables.has("cursorDiskKV")) out.deltas.push(...reader.composers(out.counts));
    if (tables.has("ItemTable")) out.deltas.push(...reader.workspaceIndex(out.counts));
    if (tables.has("meta") && tables.has("blobs")) {
      out.deltas.push(...reader.agentStore(out.counts));
    }
    return out;
  });
  const issues = [...read.issues, ...(read.value?.issues ?? [])];
  if (!read.value) {
    // Unreadable as it is now: what was imported before stays; any change to the file
    // makes the next pass try again.
    return {
      ...unchanged(ctx, issues),
      checkpoint: read.checkpoint ?? current,
      bytesRead: read.bytesCopied,
    };
  }
  const checkpoint: SqliteCheckpoint = {
    ...(read.checkpoint ?? current),
    row_counts: read.value.counts,
  };
  return {
    mode: "full",
    deltas: read.value.deltas,
    checkpoint,
    state: null,
    issues,
    payloads: sink.payloads,
    bytesRead: read.bytesCopied,
  };
}

/** The folder a workspace database belongs to, from `workspace.json` beside it. */
async function workspaceFolder(fs: SourceFs, dbPath: string): Promise<string | undefined> {
  const path = `${dirname(dbPath)}/workspace.json`;
  if (!(await fs.stat(path))?.isFile) return undefined;
  try {
    const v = JSON.parse(await fs.readTextFile(path));
    return isObj(v) ? uriToPath(str(v.folder) ?? str(v.workspace)) : undefined;
  } catch {
    return undefined;
  }
}

/** `file:///a%20b` -> `/a b`; `vscode-remote://host/path` -> `/path`; plain paths as they are. */
export function uriToPath(uri: string | undefined): string | undefined {
  if (!uri) return undefined;
  const m = /^([a-z][a-z0-9+.-]*):\/\/[^/]*(\/.*)?$/i.exec(uri);
  if (!m) return uri.startsWith("/") || /^[a-z]:[\\/]/i.test(uri) ? uri : undefined;
  let path: string;
  try {
    path = decodeURIComponent(m[2] ?? "/");
  } catch {
    path = m[2] ?? "/";
  }
  // file:///c%3A/Users/x -> c:/Users/x
  if (/^\/[a-z]:\//i.test(path)) path = path.slice(1);
  return path;
}

/** Tool ids of `toolFormerData.tool`, for bubbles that carry no name. */
const TOOL_IDS: Record<number, string> = {
  9: "codebase_search",
  15: "run_terminal_cmd",
  38: "search_replace",
  39: "list_dir",
  40: "read_file",
  41: "grep",
  42: "glob_file_search",
};

function parseJsonText(text: string | null): { ok: true; value: unknown } | { ok: false } {
  if (text === null) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

class DbReader {
  constructor(
    private readonly db: DatabaseSync,
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly sink: PayloadSink,
    private readonly issues: SessionIssue[],
    private readonly folder: string | undefined,
  ) {}

  private unitIssue(code: string, message: string, severity: SessionIssue["severity"] = "warning") {
    const prev = this.issues.find((i) => i.code === code && i.message === message);
    if (prev) prev.count = (prev.count ?? 1) + 1;
    else this.issues.push({ code, message, severity, file: this.unit.path, count: 1 });
  }

  /** Every `composerData:` row with its bubbles: one delta per chat that holds anything. */
  composers(counts: Record<string, number>): SessionDelta[] {
    const out: SessionDelta[] = [];
    const rows = this.db.prepare(
      "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;' ORDER BY key",
    );
    counts.composers = 0;
    counts.bubbles = 0;
    let empty = 0;
    for (const row of rows.iterate() as Iterable<Json>) {
      counts.composers++;
      const key = String(row.key);
      const cid = key.slice("composerData:".length);
      const text = cellText(row.value);
      if (text === null) {
        this.unitIssue("null_value", "composerData rows with a NULL value were skipped");
        continue;
      }
      const parsed = parseJsonText(text);
      if (!parsed.ok || !isObj(parsed.value)) {
        this.unitIssue(
          "malformed_value",
          "composerData rows that are not a JSON object were skipped",
        );
        continue;
      }
      try {
        const bubbles = this.bubbles(cid);
        counts.bubbles += bubbles.size;
        const b = new ComposerBuilder(
          this.unit,
          this.epoch,
          this.sink,
          cid,
          parsed.value,
          this.folder,
        );
        const delta = b.build(bubbles);
        if (delta) out.push(delta);
        else {
          empty++;
          for (const i of b.issueList()) {
            this.issues.push({ ...i, message: `composer ${cid}: ${i.message}` });
          }
        }
      } catch (e) {
        this.issues.push({
          code: "session_unreadable",
          severity: "error",
          message: `Cannot read Cursor chat "${cid}" in "${this.unit.path}": ${
            (e as Error).message
          }`,
          file: this.unit.path,
        });
      }
    }
    if (empty) {
      this.issues.push({
        code: "empty_composer",
        severity: "info",
        message: `${empty} chat(s) without any message were skipped`,
        file: this.unit.path,
        count: empty,
      });
    }
    return out;
  }

  /** The bubble rows of one chat, by bubble id; NULL and malformed values stay as markers. */
  private bubbles(cid: string): Map<string, unknown> {
    const map = new Map<string, unknown>();
    const prefix = `bubbleId:${cid}:`;
    const stmt = this.db.prepare("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?");
    for (const row of stmt.iterate(prefix, `bubbleId:${cid};`) as Iterable<Json>) {
      const id = String(row.key).slice(prefix.length);
      const text = cellText(row.value);
      if (text === null) {
        map.set(id, NULL_VALUE);
        continue;
      }
      const parsed = parseJsonText(text);
      map.set(id, parsed.ok ? parsed.value : BAD_JSON);
    }
    return map;
  }

  /** A workspace's chat index: title, times and the workspace folder for each chat. */
  workspaceIndex(counts: Record<string, number>): SessionDelta[] {
    const get = (key: string) =>
      (this.db.prepare("SELECT value FROM ItemTable WHERE key = ?").get(key) as Json | undefined)
        ?.value;
    const out: SessionDelta[] = [];
    for (const legacy of ["workbench.panel.aichat.view.aichat.chatdata", "interactive.sessions"]) {
      const v = get(legacy);
      if (v !== undefined && v !== null) {
        this.unitIssue(
          "unsupported_format",
          `the legacy chat store "${legacy}" is not imported (its layout is not documented)`,
          "info",
        );
      }
    }
    const raw = get("composer.composerData");
    if (raw === undefined) return out;
    const parsed = parseJsonText(cellText(raw));
    if (!parsed.ok || !isObj(parsed.value)) {
      this.unitIssue("malformed_value", "composer.composerData is not a JSON object");
      return out;
    }
    const all = parsed.value.allComposers;
    if (!Array.isArray(all)) return out;
    counts.workspace_composers = all.length;
    for (const c of all) {
      if (!isObj(c) || typeof c.composerId !== "string") {
        this.unitIssue(
          "malformed_value",
          "workspace chat entries without a composerId were skipped",
        );
        continue;
      }
      const id = c.composerId;
      const info: SessionDelta["info"] = {
        id: `${SOURCE}:${id}`,
        native_id: id,
        source: SOURCE,
        project: this.folder ? { path: this.folder } : {},
      };
      if (typeof c.name === "string" && c.name) info.title = c.name;
      const created = num(c.createdAt), updated = num(c.lastUpdatedAt);
      if (created !== undefined) info.started_at = new Date(created).toISOString();
      if (updated !== undefined) info.ended_at = new Date(updated).toISOString();
      out.push(metadataDelta(info, this.unit.path));
    }
    return out;
  }

  /** A cursor-agent chat store: the title and model from `meta`; blobs are not decoded. */
  agentStore(counts: Record<string, number>): SessionDelta[] {
    const blobs = Number((this.db.prepare("SELECT count(*) AS n FROM blobs").get() as Json).n ?? 0);
    counts.blobs = blobs;
    const rows = this.db.prepare("SELECT key, value FROM meta").all() as Json[];
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
      this.unitIssue("malformed_value", "the cursor-agent store has no readable meta row");
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
    const issues: SessionIssue[] = [];
    if (blobs > 0) {
      issues.push({
        code: "unsupported_format",
        severity: "info",
        message:
          `the cursor-agent store's ${blobs} blob(s) are not decoded (undocumented encoding); ` +
          "the conversation comes from its agent transcript when there is one",
        file: this.unit.path,
        count: blobs,
      });
    }
    return [{ ...metadataDelta(info, this.unit.path), issues, extensions: { [SOURCE]: ext } }];
  }
}

function hexToText(hex: string): string {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return new TextDecoder().decode(bytes);
}

const NULL_VALUE = Symbol("NULL");
const BAD_JSON = Symbol("invalid JSON");

/** Builds the delta of one chat from its composerData and bubble rows. */
class ComposerBuilder {
  private readonly ops: OperationRecord[] = [];
  private readonly usage: UsageEntry[] = [];
  private readonly issues = new Map<string, SessionIssue>();
  private readonly models = new Set<string>();
  private readonly conn: Connection;
  private lastTs: number | null = null;
  private minTs: number | null = null;
  private maxTs: number | null = null;
  private projectPath?: string;
  private lastPrompt?: string;

  constructor(
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly sink: PayloadSink,
    private readonly cid: string,
    private readonly composer: Json,
    folder: string | undefined,
  ) {
    this.conn = {
      id: "main",
      kind: "main",
      client: { agent: SOURCE, evidence: [] },
      server: { evidence: [] },
    };
    this.projectPath = folder;
  }

  issueList(): SessionIssue[] {
    return [...this.issues.values()];
  }

  private issue(code: string, message: string, severity: SessionIssue["severity"] = "warning") {
    const key = code + "\u0000" + message;
    const prev = this.issues.get(key);
    if (prev) prev.count = (prev.count ?? 1) + 1;
    else this.issues.set(key, { code, message, severity, file: this.unit.path, count: 1 });
  }

  private seeTime(ts: number | undefined) {
    if (ts === undefined) return;
    this.minTs = this.minTs === null ? ts : Math.min(this.minTs, ts);
    this.maxTs = this.maxTs === null ? ts : Math.max(this.maxTs, ts);
  }

  private model(name: unknown, field: string) {
    // "default" is Cursor's automatic model choice, not a model.
    if (typeof name !== "string" || !name || name === "default") return undefined;
    if (!this.models.has(name)) {
      this.models.add(name);
      this.conn.server.evidence.push({ file: this.unit.path, field });
    }
    return name;
  }

  build(bubbleRows: Map<string, unknown>): SessionDelta | null {
    const c = this.composer;
    const created = num(c.createdAt), updated = num(c.lastUpdatedAt);
    this.seeTime(created);
    this.seeTime(updated);
    this.lastTs = created ?? null;
    const composerModel = isObj(c.modelConfig)
      ? this.model(c.modelConfig.modelName, `composerData:${this.cid}.modelConfig.modelName`)
      : undefined;
    // The conversation: headers naming bubble rows (modern), or inline bubbles (old).
    const list: { id: string; bubble: unknown; where: string }[] = [];
    const map = isObj(c.conversationMap) ? c.conversationMap : {};
    const used = new Set<string>();
    if (Array.isArray(c.fullConversationHeadersOnly)) {
      for (const h of c.fullConversationHeadersOnly) {
        const id = isObj(h) ? str(h.bubbleId) : undefined;
        if (!id) {
          this.issue("malformed_value", "conversation headers without a bubbleId were skipped");
          continue;
        }
        used.add(id);
        const bubble = map[id] ?? bubbleRows.get(id);
        if (bubble === undefined) {
          this.issue(
            "missing_bubble",
            "bubbles named in the conversation but absent from the database",
          );
          continue;
        }
        list.push({ id, bubble, where: `bubbleId:${this.cid}:${id}` });
      }
    } else if (Array.isArray(c.conversation)) {
      for (const [i, b] of c.conversation.entries()) {
        const id = (isObj(b) && str(b.bubbleId)) || `#${i}`;
        list.push({ id, bubble: b, where: `composerData:${this.cid}.conversation[${i}]` });
      }
    } else if (c.fullConversationHeadersOnly !== undefined || c.conversation !== undefined) {
      this.issue(
        "malformed_value",
        "the chat's conversation is neither a header list nor an array",
      );
    }
    for (const [id, v] of bubbleRows) {
      if (used.has(id)) continue;
      if (v === NULL_VALUE) this.issue("null_value", "bubble rows with a NULL value were skipped");
      else if (v === BAD_JSON) {
        this.issue("malformed_value", "bubble rows that are not valid JSON were skipped");
      }
    }
    for (const [i, item] of list.entries()) {
      this.bubble(item.id, item.bubble, i + 1, item.where, composerModel);
    }
    if (!this.ops.length) return null;
    return this.finish(created, updated);
  }

  private bubble(id: string, b: unknown, line: number, where: string, composerModel?: string) {
    if (b === NULL_VALUE) {
      this.issue("null_value", "bubble rows with a NULL value were skipped");
      return;
    }
    if (b === BAD_JSON || !isObj(b)) {
      this.issue("malformed_value", "bubbles that are not a JSON object were skipped");
      return;
    }
    const ts = bubbleTime(b);
    this.seeTime(ts);
    if (ts !== undefined) this.lastTs = this.lastTs === null ? ts : Math.max(this.lastTs, ts);
    const type = b.type;
    const text = bubbleText(b);
    if (type === 1 || type === "user") {
      if (!this.projectPath) {
        const dir = str(b.workspaceProjectDir) ??
          (Array.isArray(b.workspaceUris) ? uriToPath(str(b.workspaceUris[0])) : undefined);
        if (dir) this.projectPath = dir;
      }
      if (!text.trim()) return;
      const rec = this.push(
        id,
        0,
        line,
        where,
        "prompt",
        { text, request: this.sink.text(text) },
        ts,
      );
      this.lastPrompt = text;
      if (typeof b.requestId === "string") this.ext(rec, { request_id: b.requestId });
      return;
    }
    if (type !== 2 && type !== "ai" && type !== "assistant") {
      this.issue("unknown_bubble_type", `unknown bubble type ${JSON.stringify(type ?? null)}`);
      if (text.trim()) this.push(id, 0, line, where, "event", { event: "bubble", text }, ts);
      return;
    }
    if (!this.projectPath) {
      const dir = str(b.workspaceProjectDir) ??
        (Array.isArray(b.workspaceUris) ? uriToPath(str(b.workspaceUris[0])) : undefined);
      if (dir) this.projectPath = dir;
    }
    const model =
      (isObj(b.modelInfo)
        ? this.model(b.modelInfo.modelName, `${where}.modelInfo.modelName`)
        : undefined) ?? composerModel;
    const common: Partial<Operation> = model ? { model } : {};
    const thinking = thinkingText(b);
    if (thinking) {
      this.push(id, 0, line, where, "thinking", {
        ...common,
        text: thinking,
        response: this.sink.text(thinking),
      }, ts);
    }
    if (text.trim()) {
      const rec = this.push(id, 1, line, where, "reply", {
        ...common,
        text,
        response: this.sink.text(text),
      }, ts);
      if (Array.isArray(b.codeBlocks) && b.codeBlocks.length) {
        this.ext(rec, { code_blocks: this.sink.json(b.codeBlocks) });
      }
    }
    if (b.toolFormerData !== undefined && b.toolFormerData !== null) {
      if (isObj(b.toolFormerData)) this.tool(id, b, b.toolFormerData, line, where, common, ts);
      else this.issue("malformed_value", "toolFormerData that is not an object was skipped");
    }
    const tc = isObj(b.tokenCount) ? b.tokenCount : undefined;
    if (tc && model) {
      const input = num(tc.inputTokens) ?? 0, output = num(tc.outputTokens) ?? 0;
      if (input || output) {
        this.usage.push({
          key: id,
          model,
          usage: { input, output, cache_read: 0, cache_write: 0 },
        });
      }
    }
  }

  private tool(
    id: string,
    b: Json,
    tf: Json,
    line: number,
    where: string,
    common: Partial<Operation>,
    ts?: number,
  ) {
    const toolId = num(tf.tool);
    let name = str(tf.name);
    if (!name && toolId !== undefined) name = TOOL_IDS[toolId];
    if (!name) {
      this.issue("unknown_tool", `tool calls without a name (tool id ${toolId ?? "none"})`);
    }
    const raw = str(tf.rawArgs) || undefined;
    const params = str(tf.params) || undefined;
    const parsedRaw = raw ? parseJsonText(raw) : { ok: false as const };
    const parsedParams = params ? parseJsonText(params) : { ok: false as const };
    const input = parsedRaw.ok ? parsedRaw.value : parsedParams.ok ? parsedParams.value : undefined;
    let request: PayloadRef;
    if (raw) request = this.sink.text(raw);
    else if (params) request = this.sink.text(params);
    else if (isObj(tf.rawArgs) || isObj(tf.params)) {
      request = this.sink.json(tf.rawArgs ?? tf.params);
    } else request = { missing: true, reason: "the tool call recorded no arguments" };
    const status = str(tf.status);
    const result = tf.result;
    const resultText = typeof result === "string"
      ? result
      : result === undefined || result === null
      ? undefined
      : JSON.stringify(result);
    const parsedResult = typeof result === "string"
      ? parseJsonText(result)
      : { ok: true as const, value: result };
    const res = parsedResult.ok && isObj(parsedResult.value) ? parsedResult.value : {};
    const addStatus = isObj(tf.additionalData) ? str(tf.additionalData.status) : undefined;
    const exit = num(res.exitCodeV2) ?? num(res.exitCode);
    const kind: OperationKind = name ? classifyTool(name) : "other";
    const fields: Partial<Operation> = {
      ...common,
      tool: name,
      native_id: str(tf.toolCallId),
      target: targetOf(input, CURSOR_TARGET_KEYS),
      summary: summarizeToolInput(input),
      request,
    };
    let errored = status === "error" || status === "cancelled" || tf.userDecision === "rejected" ||
      addStatus === "error" || res.rejected === true || (exit !== undefined && exit !== 0);
    switch (status) {
      case "loading":
      case "pending":
      case "running":
        fields.completeness = "incomplete";
        errored = false;
        break;
      case "completed":
      case "error":
      case "cancelled":
        fields.completeness = "complete";
        break;
      default:
        if (status !== undefined) {
          this.issue("unknown_tool_state", `unknown tool status ${JSON.stringify(status)}`);
        }
        fields.completeness = resultText !== undefined ? "complete" : "incomplete";
    }
    if (resultText !== undefined) fields.response = this.sink.text(resultText);
    if (fields.completeness === "complete") fields.is_error = errored;
    const rec = this.push(id, 2, line, where, kind, fields, ts);
    const ext: Json = {};
    if (status) ext.status = status;
    if (toolId !== undefined) ext.tool_id = toolId;
    if (typeof tf.userDecision === "string") ext.user_decision = tf.userDecision;
    if (exit !== undefined) ext.exit_code = exit;
    if (raw && params && raw !== params) ext.params = this.sink.text(params);
    if (isObj(tf.additionalData) && typeof tf.additionalData.codeblockId === "string") {
      ext.codeblock_id = tf.additionalData.codeblockId;
    }
    if (typeof b.capabilityType === "number") ext.capability_type = b.capabilityType;
    this.ext(rec, ext);
  }

  private ext(rec: OperationRecord, ext: Json) {
    const clean = Object.fromEntries(Object.entries(ext).filter(([, v]) => v !== undefined));
    if (Object.keys(clean).length) {
      rec.op.extensions = {
        ...rec.op.extensions,
        [SOURCE]: { ...(rec.op.extensions?.[SOURCE] as Json), ...clean },
      };
    }
  }

  private push(
    bubbleId: string,
    block: number,
    line: number,
    where: string,
    kind: OperationKind,
    fields: Partial<Operation>,
    ts: number | undefined,
  ): OperationRecord {
    const op: Operation = {
      kind,
      effect: effectOf(kind),
      completeness: "complete",
      provenance: {
        epoch: this.epoch,
        source_range: { file: this.unit.path, lines: [line, line], bytes: [0, 0] },
        record_ids: [where],
      },
      replay: { replayable: false, blockers: [] },
      ...fields,
    };
    for (const k of Object.keys(op) as (keyof Operation)[]) if (op[k] === undefined) delete op[k];
    if (ts !== undefined) op.ts_ms = ts;
    const rec: OperationRecord = {
      id: stableId("op_", this.cid, bubbleId, block),
      connection: "main",
      order: { ts_ms: this.lastTs, rank: this.unit.rank, line, block },
      op,
    };
    this.ops.push(rec);
    return rec;
  }

  private finish(created?: number, updated?: number): SessionDelta {
    const c = this.composer;
    const issues = this.issueList();
    if (this.models.size === 1) this.conn.server.model = [...this.models][0];
    else if (this.models.size > 1) {
      issues.push({
        code: "conflicting_model",
        message: `several models answered (${
          [...this.models].join(", ")
        }); each operation keeps its own`,
        severity: "info",
        file: this.unit.path,
      });
    } else {
      issues.push({
        code: "missing_model",
        message: "no record names the model; server model left absent",
        severity: "info",
        file: this.unit.path,
      });
    }
    issues.push({
      code: "missing_client_version",
      message: "Cursor's chat store does not record the Cursor version; client version left absent",
      severity: "info",
      file: this.unit.path,
    });
    for (const rec of this.ops) rec.op.replay = replayAttributes(rec.op);
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${this.cid}`,
      native_id: this.cid,
      source: SOURCE,
      project: this.projectPath ? { path: this.projectPath } : {},
    };
    if (typeof c.name === "string" && c.name) info.title = c.name;
    if (this.lastPrompt) info.last_prompt = this.lastPrompt;
    const start = created ?? this.minTs;
    const end = this.maxTs ?? updated;
    if (start !== null && start !== undefined) info.started_at = new Date(start).toISOString();
    if (end !== null && end !== undefined) info.ended_at = new Date(end).toISOString();
    const ext: Json = {};
    for (const k of ["status", "unifiedMode", "forceMode", "isAgentic", "subtitle"]) {
      if (c[k] !== undefined && c[k] !== null && c[k] !== "") ext[k] = c[k];
    }
    if (typeof c._v === "number") ext.schema = c._v;
    if (Array.isArray(c.subComposerIds) && c.subComposerIds.length) {
      ext.sub_composers = c.subComposerIds;
    }
    for (const k of ["totalLinesAdded", "totalLinesRemoved"]) {
      if (typeof c[k] === "number") ext[k] = c[k];
    }
    return {
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: true,
      connections: [this.conn],
      operations: this.ops,
      usage: this.usage,
      loss_windows: [],
      issues,
      extensions: Object.keys(ext).length ? { [SOURCE]: ext } : undefined,
    };
  }
}

/** A bubble's time: `createdAt` (ISO string or ms), else `timestamp`; often absent. */
function bubbleTime(b: Json): number | undefined {
  for (const v of [b.createdAt, b.timestamp]) {
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "string") {
      const t = Date.parse(v);
      if (!Number.isNaN(t)) return t;
    }
  }
  return undefined;
}

/** A bubble's visible text, from whichever field this version used. */
function bubbleText(b: Json): string {
  for (const k of ["text", "rawText", "content", "message"]) {
    const v = b[k];
    if (typeof v === "string" && v.trim()) return v;
  }
  const rich = typeof b.richText === "string"
    ? parseJsonText(b.richText)
    : { ok: true, value: b.richText };
  if (rich.ok && isObj(rich.value)) return lexicalText(rich.value).trim();
  return "";
}

/** Text of a Lexical editor state: text nodes, paragraphs on their own lines. */
function lexicalText(node: Json): string {
  if (typeof node.text === "string") return node.text;
  const kids = Array.isArray(node.children) ? node.children : isObj(node.root) ? [node.root] : [];
  const parts = kids.filter(isObj).map(lexicalText);
  return node.type === "root" ? parts.join("\n") : parts.join("");
}

function thinkingText(b: Json): string {
  if (isObj(b.thinking) && typeof b.thinking.text === "string" && b.thinking.text.trim()) {
    return b.thinking.text;
  }
  if (Array.isArray(b.allThinkingBlocks)) {
    return b.allThinkingBlocks.map((t) => (isObj(t) ? str(t.thinking) ?? str(t.text) ?? "" : ""))
      .filter(Boolean)
      .join("\n\n");
  }
  return "";
}

/** Cursor names its files in several ways; the first present wins. */
const CURSOR_TARGET_KEYS = [
  "target_file",
  "targetFile",
  "relative_workspace_path",
  "relativeWorkspacePath",
  "file_path",
  "filePath",
  "path",
  "target_directory",
  "url",
];

// ---------------------------------------------------------------------------------------------
// cursor-agent transcripts

/** What a transcript pass leaves for the next one. Plain JSON. */
interface TranscriptState {
  /** Calls waiting for a result, by tool_use id. */
  pending: Record<string, OperationRecord>;
  /** Calls without an id, waiting in order: results without a known id pair with the oldest. */
  queue: OperationRecord[];
  lastPrompt?: string;
}

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

async function importTranscript(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const prev = ctx.resume?.checkpoint as JsonlCheckpoint | undefined;
  const plan = await planJsonlResume(ctx.fs, unit.path, prev?.kind === "jsonl" ? prev : undefined);
  if (!plan) {
    return unchanged(ctx, [{
      code: "not_a_file",
      severity: "warning",
      message: `Cannot import "${unit.path}": it is not a regular file`,
      file: unit.path,
    }]);
  }
  if (plan.mode === "unchanged") return unchanged(ctx);
  const state: TranscriptState = plan.mode === "append" && isObj(ctx.resume?.state)
    ? structuredClone(ctx.resume!.state as unknown as TranscriptState)
    : { pending: {}, queue: [] };
  const role = transcriptRole(unit.path);
  const sink = new PayloadSink();
  const ops = new Map<string, OperationRecord>();
  const issues = new Map<string, SessionIssue>();
  const losses: SessionDelta["loss_windows"] = [];
  const issue = (code: string, message: string, line: number) => {
    const key = code + "\u0000" + message;
    const p = issues.get(key);
    if (p) p.count = (p.count ?? 1) + 1;
    else issues.set(key, { code, message, severity: "warning", file: unit.path, line, count: 1 });
  };
  const pos = { offset: plan.offset, line: plan.line, bytesRead: 0 };
  for await (const l of readJsonl(ctx.fs, unit.path, pos, { closed: ctx.closed ?? true })) {
    if (l.error) {
      losses.push({
        epoch: ctx.epoch,
        file: unit.path,
        lines: [l.line, l.line],
        bytes: [l.start, l.end],
        reason: l.error,
      });
      continue;
    }
    if (l.value === undefined) continue;
    const v = l.value;
    if (!isObj(v)) {
      losses.push({
        epoch: ctx.epoch,
        file: unit.path,
        lines: [l.line, l.line],
        bytes: [l.start, l.end],
        reason: "not a JSON object",
      });
      continue;
    }
    const range = {
      file: unit.path,
      lines: [l.line, l.line] as [number, number],
      bytes: [l.start, l.end] as [number, number],
    };
    const push = (
      block: number,
      kind: OperationKind,
      fields: Partial<Operation>,
    ): OperationRecord => {
      const op: Operation = {
        kind,
        effect: effectOf(kind),
        completeness: "complete",
        provenance: { epoch: ctx.epoch, source_range: range },
        replay: { replayable: false, blockers: [] },
        ...fields,
      };
      for (const k of Object.keys(op) as (keyof Operation)[]) if (op[k] === undefined) delete op[k];
      const rec: OperationRecord = {
        id: stableId("op_", role.session, role.conn, l.line, block),
        connection: role.conn,
        order: { ts_ms: null, rank: unit.rank, line: l.line, block },
        op,
      };
      ops.set(rec.id, rec);
      return rec;
    };
    const r = str(v.role);
    if (r !== "user" && r !== "assistant") {
      if (v.type === "turn_ended") continue;
      issue(
        "unknown_record_type",
        `unknown record ${JSON.stringify(v.type ?? v.role ?? null)}`,
        l.line,
      );
      continue;
    }
    const msg = v.message;
    const content = isObj(msg) ? msg.content : msg;
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
    if (!Array.isArray(blocks)) {
      issue("unexpected_shape", "records without message content", l.line);
      continue;
    }
    for (const [i, b] of blocks.entries()) {
      if (!isObj(b)) {
        issue("unexpected_shape", "content blocks that are not objects", l.line);
        continue;
      }
      switch (b.type) {
        case "text": {
          const raw = str(b.text) ?? "";
          if (!raw.trim()) break;
          if (r === "user") {
            const m = USER_QUERY.exec(raw);
            const text = m ? m[1] : raw;
            const rec = push(i, "prompt", { text, request: sink.text(raw) });
            if (m) rec.op.extensions = { [SOURCE]: { wrapped: "user_query" } };
            if (!role.subagent) state.lastPrompt = text;
          } else {
            push(i, "reply", { text: raw, response: sink.text(raw) });
          }
          break;
        }
        case "thinking": {
          const text = str(b.thinking) ?? str(b.text) ?? "";
          if (text.trim()) push(i, "thinking", { text, response: sink.text(text) });
          break;
        }
        case "tool_use": {
          const name = str(b.name) ?? "";
          if (!name) issue("unexpected_shape", "tool calls without a name", l.line);
          const kind = name ? classifyTool(name) : "other";
          const input = b.input ?? {};
          const rec = push(i, kind, {
            tool: name || undefined,
            native_id: str(b.id),
            target: targetOf(input, CURSOR_TARGET_KEYS),
            summary: summarizeToolInput(input),
            request: sink.json(input),
            completeness: "incomplete",
          });
          if (rec.op.native_id) state.pending[rec.op.native_id] = rec;
          else state.queue.push(rec);
          break;
        }
        case "tool_result": {
          const useId = str(b.tool_use_id);
          const c = b.content;
          const textBlocks = Array.isArray(c) && c.every((x) => isObj(x) && x.type === "text");
          const response = typeof c === "string"
            ? sink.text(c)
            : textBlocks
            ? sink.text((c as Json[]).map((x) => str(x.text) ?? "").join("\n"))
            : sink.json(c ?? "");
          let rec = useId ? state.pending[useId] : undefined;
          let byPosition = false;
          if (rec) delete state.pending[useId!];
          else if (state.queue.length) {
            rec = state.queue.shift();
            byPosition = true;
          }
          if (!rec) {
            push(i, "other", {
              native_id: useId,
              response,
              is_error: b.is_error === true,
              completeness: "unmatched",
            });
            break;
          }
          rec.op.response = response;
          rec.op.is_error = b.is_error === true;
          rec.op.completeness = "complete";
          rec.op.provenance.completion = { epoch: ctx.epoch, source_range: range };
          if (byPosition) {
            rec.op.extensions = { [SOURCE]: { matched_by: "position", result_id: useId } };
          }
          ops.set(rec.id, rec);
          break;
        }
        default:
          issue(
            "unknown_block_type",
            `unknown content block ${JSON.stringify(b.type ?? null)}`,
            l.line,
          );
      }
    }
  }
  const pendingNow = [...Object.values(state.pending), ...state.queue];
  for (const rec of [...ops.values(), ...pendingNow]) rec.op.replay = replayAttributes(rec.op);
  const checkpoint = await makeJsonlCheckpoint(ctx.fs, unit.path, plan.stat, pos.offset, pos.line);
  const info: SessionDelta["info"] = {
    id: `${SOURCE}:${role.session}`,
    native_id: role.session,
    source: SOURCE,
    project: {},
  };
  if (state.lastPrompt) info.last_prompt = state.lastPrompt;
  const conn: Connection = {
    id: role.conn,
    kind: role.subagent ? "subagent" : "main",
    client: { agent: SOURCE, evidence: [] },
    server: { evidence: [] },
  };
  const sessionIssues = [...issues.values()];
  if (plan.mode === "full" && !role.subagent) {
    sessionIssues.push({
      code: "missing_client_version",
      message:
        "cursor-agent transcripts record neither the agent version nor the model; both left absent",
      severity: "info",
      file: unit.path,
    });
  }
  const deltas: SessionDelta[] = ops.size || losses.length || sessionIssues.length
    ? [{
      session_id: info.id,
      file: unit.path,
      info,
      primary: !role.subagent,
      connections: [conn],
      operations: [...ops.values()],
      usage: [],
      loss_windows: losses,
      issues: sessionIssues,
      extensions: { [SOURCE]: { entrypoint: "cursor-agent" } },
    }]
    : [];
  return {
    mode: plan.mode,
    deltas,
    checkpoint,
    state,
    issues: [],
    payloads: sink.payloads,
    bytesRead: pos.bytesRead,
  };
}

export const cursor: Importer = {
  id: SOURCE,
  displayName: "Cursor",
  discover,
  detect,
  import: importUnit,
};

/** A delta that only says what a session is (title, times, project): no operations. */
function metadataDelta(info: SessionDelta["info"], file: string): SessionDelta {
  return {
    session_id: info.id,
    file,
    info,
    primary: false,
    connections: [],
    operations: [],
    usage: [],
    loss_windows: [],
    issues: [],
  };
}
