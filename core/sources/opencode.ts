/**
 * OpenCode importer: the SQLite database `opencode.db` (channel builds `opencode-<name>.db`)
 * in OpenCode's data folder, and the older `storage/` JSON tree it migrated from.
 *
 * Data folder: `$OPENCODE_DATA_DIR`, else `$XDG_DATA_HOME/opencode`, else
 * `~/.local/share/opencode` (OpenCode uses the XDG layout on every platform).
 *
 * One database (or one storage tree) is one unit yielding one delta per session. A session
 * with a `parent_id` (a sub-agent run by the `task` tool) joins its root session as a
 * sub-agent connection. Messages hold parts: text, reasoning, tool (state pending / running /
 * completed / error), patch, step-start / step-finish (usage per step), compaction, subtask,
 * file, agent, retry, snapshot; unknown part types are counted as issues.
 *
 * SQLite rows have no lines: an operation's `source_range.lines` holds the row's ordinal in
 * the session's read order and `bytes` is [0, 0]; `record_ids` name the part and message.
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
import {
  cellText,
  readSqliteCopy,
  sameSqliteCheckpoint,
  sqliteCheckpoint,
} from "./_sqlite_copy.ts";
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
import type { DatabaseSync } from "node:sqlite";

const SOURCE = "opencode" as const;

const DB_NAME = /^opencode(-[A-Za-z0-9._-]+)?\.db$/;

/** OpenCode's data folders, most specific first. */
export function opencodeDataDirs(env: DiscoverEnv): string[] {
  const dirs: string[] = [];
  const explicit = env.env.OPENCODE_DATA_DIR;
  if (explicit) dirs.push(explicit);
  const xdg = env.env.XDG_DATA_HOME;
  if (xdg) dirs.push(`${xdg}/opencode`);
  dirs.push(`${env.home}/.local/share/opencode`);
  return [...new Set(dirs.map((d) => d.replace(/\/+$/, "")))];
}

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  for (const dir of opencodeDataDirs(env)) {
    for (const e of await fs.readDir(dir)) {
      if (e.isFile && DB_NAME.test(e.name)) {
        units.push({ source: SOURCE, path: `${dir}/${e.name}`, kind: "sqlite", rank: 0 });
      } else if (e.isDirectory && e.name === "storage") {
        // Listings only: discovery costs no stat.
        const inner = await fs.readDir(`${dir}/storage`);
        if (inner.some((x) => x.isDirectory && x.name === "session")) {
          units.push({ source: SOURCE, path: `${dir}/storage`, kind: "tree", rank: 0 });
        }
      }
    }
  }
  return units;
}

function detect(path: string): boolean {
  if (DB_NAME.test(basename(path))) return true;
  return basename(path) === "storage" && basename(dirname(path)) === "opencode";
}

// ---------------------------------------------------------------------------------------------
// Rows, whatever they were read from

interface SessionRow {
  id: string;
  parentId?: string;
  title?: string;
  directory?: string;
  version?: string;
  created?: number;
  updated?: number;
  /** Where the session record lives (db path or JSON file). */
  file: string;
  extensions: Json;
}

interface PartRow {
  id: string;
  /** The part object; anything else (NULL, a string) is reported and skipped. */
  data: unknown;
  created?: number;
  file: string;
}

interface MessageRow {
  id: string;
  data: unknown;
  created?: number;
  file: string;
  parts: PartRow[];
}

/** Loads the messages (with their parts, in order) of one session. */
type MessageLoader = (sessionId: string) => MessageRow[] | Promise<MessageRow[]>;

// ---------------------------------------------------------------------------------------------
// Import

async function importUnit(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return unit.kind === "tree" ? await importTree(unit, ctx) : await importDb(unit, ctx);
}

function emptyResult(ctx: ImportContext, issues: SessionIssue[] = []): UnitResult {
  return unchangedResult(ctx.resume, issues);
}

async function importDb(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const current = await sqliteCheckpoint(ctx.fs, unit.path);
  if (!current) {
    return emptyResult(ctx, [{
      code: "db_missing",
      severity: "warning",
      message: `Cannot import "${unit.path}": it is not a regular file`,
      file: unit.path,
    }]);
  }
  if (sameSqliteCheckpoint(ctx.resume?.checkpoint, current)) return emptyResult(ctx);
  const sink = new PayloadSink();
  const read = await readSqliteCopy(ctx.fs, unit.path, async (db, tables) => {
    const unitIssues: SessionIssue[] = [];
    const counts: Record<string, number> = {};
    if (!tables.has("session")) {
      unitIssues.push({
        code: "db_missing_table",
        severity: "error",
        message:
          `Cannot import "${unit.path}": it has no session table (not an OpenCode database?)`,
        file: unit.path,
      });
      return { deltas: [] as SessionDelta[], unitIssues, counts };
    }
    for (const t of ["message", "part"]) {
      if (!tables.has(t)) {
        unitIssues.push({
          code: "db_missing_table",
          severity: "error",
          message: `"${unit.path}" has no ${t} table; sessions imported without their ${t}s`,
          file: unit.path,
        });
      }
    }
    const reader = new DbReader(db, unit.path, tables);
    reader.unreadTables(unitIssues);
    const sessions = reader.sessions(unitIssues);
    const deltas = await buildAll(
      sessions,
      (id) => reader.messages(id),
      unit,
      ctx.epoch,
      sink,
      unitIssues,
    );
    counts.session = sessions.length;
    counts.message = reader.messageCount;
    counts.part = reader.partCount;
    return { deltas, unitIssues, counts };
  });
  const issues = [...read.issues, ...(read.value?.unitIssues ?? [])];
  if (!read.value) {
    // Unreadable as it is now: what was imported before stays; any change to the file
    // (a writer finishing, a repair) makes the next pass try again.
    return {
      ...emptyResult(ctx, issues),
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

/** Reads sessions, messages and parts from an open copy of opencode.db. */
class DbReader {
  messageCount = 0;
  partCount = 0;
  private readonly partBySession: boolean;

  constructor(
    private readonly db: DatabaseSync,
    private readonly file: string,
    private readonly tables: Set<string>,
  ) {
    this.partBySession = this.columns("part").has("session_id");
    this.messageTime = this.columns("message").has("time_created") ? "time_created" : "NULL";
    this.partTime = this.columns("part").has("time_created") ? "p.time_created" : "NULL";
  }

  private readonly messageTime: string;
  private readonly partTime: string;

  /** The columns of a table (empty when it does not exist): schemas drift between versions. */
  private columns(table: string): Set<string> {
    if (!this.tables.has(table)) return new Set();
    return new Set(
      (this.db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) =>
        c.name
      ),
    );
  }

  /** Rows of tables this importer does not read that may hold conversation in newer versions. */
  unreadTables(issues: SessionIssue[]): void {
    if (!this.tables.has("session_message")) return;
    const n = Number(
      (this.db.prepare("SELECT count(*) AS n FROM session_message").get() as Json).n ?? 0,
    );
    if (n > 0) {
      issues.push({
        code: "unsupported_format",
        severity: "warning",
        message: `"${this.file}" holds ${n} session_message row(s), a table whose format ` +
          "is not known here; they are not imported",
        file: this.file,
        count: n,
      });
    }
  }

  sessions(issues: SessionIssue[]): SessionRow[] {
    const worktrees = new Map<string, string>();
    if (this.tables.has("project")) {
      try {
        for (const r of this.db.prepare("SELECT id, worktree FROM project").all() as Json[]) {
          const id = str(r.id), wt = str(r.worktree);
          if (id && wt) worktrees.set(id, wt);
        }
      } catch (e) {
        issues.push(rowIssue(this.file, `project rows unreadable: ${(e as Error).message}`));
      }
    }
    const order = this.columns("session").has("time_created") ? "time_created, id" : "rowid";
    const rows = this.db.prepare(`SELECT * FROM session ORDER BY ${order}`).all() as Json[];
    const out: SessionRow[] = [];
    for (const r of rows) {
      const id = str(r.id);
      if (!id) {
        issues.push(rowIssue(this.file, "a session row without an id was skipped"));
        continue;
      }
      const ext: Json = {};
      for (const k of ["slug", "agent", "share_url", "cost", "path"]) {
        if (r[k] !== null && r[k] !== undefined && r[k] !== "") ext[k] = r[k];
      }
      for (const k of ["summary_additions", "summary_deletions", "summary_files"]) {
        if (typeof r[k] === "number") ext[k] = r[k];
      }
      const model = parseJson(r.model);
      if (isObj(model)) ext.model = model;
      const projectId = str(r.project_id);
      if (projectId) ext.project_id = projectId;
      const directory = str(r.directory) || (projectId ? worktrees.get(projectId) : undefined);
      out.push({
        id,
        parentId: str(r.parent_id) || undefined,
        title: str(r.title) || undefined,
        directory: directory || undefined,
        version: str(r.version) || undefined,
        created: num(r.time_created),
        updated: num(r.time_updated),
        file: this.file,
        extensions: ext,
      });
    }
    return out;
  }

  messages(sessionId: string): MessageRow[] {
    if (!this.tables.has("message")) return [];
    const msgs = (this.db.prepare(
      `SELECT id, ${this.messageTime} AS time_created, data FROM message WHERE session_id = ? ` +
        `ORDER BY ${this.messageTime}, id`,
    ).all(sessionId) as Json[]).map((r): MessageRow => ({
      id: String(r.id),
      data: withId(parseJson(cellText(r.data)), r.id),
      created: num(r.time_created),
      file: this.file,
      parts: [],
    }));
    this.messageCount += msgs.length;
    if (!this.tables.has("part") || !msgs.length) return msgs;
    const byId = new Map(msgs.map((m) => [m.id, m]));
    const parts = this.partBySession
      ? this.db.prepare(
        `SELECT p.id, p.message_id, ${this.partTime} AS time_created, p.data FROM part p ` +
          "WHERE p.session_id = ? ORDER BY p.message_id, p.id",
      ).all(sessionId) as Json[]
      : this.db.prepare(
        `SELECT p.id, p.message_id, ${this.partTime} AS time_created, p.data FROM part p ` +
          "JOIN message m ON m.id = p.message_id WHERE m.session_id = ? ORDER BY p.message_id, p.id",
      ).all(sessionId) as Json[];
    for (const r of parts) {
      this.partCount++;
      const msg = byId.get(String(r.message_id));
      if (!msg) continue;
      const text = cellText(r.data);
      msg.parts.push({
        id: String(r.id),
        data: text === null ? null : withId(parseJson(text), r.id),
        created: num(r.time_created),
        file: this.file,
      });
    }
    return msgs;
  }
}

/** Parses JSON text; returns a marker string for text that is not JSON. */
function parseJson(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return INVALID_JSON;
  }
}

const INVALID_JSON = Symbol("invalid JSON");

/** Columns hold the ids that the data column had stripped: put them back. */
function withId(data: unknown, id: unknown): unknown {
  return isObj(data) && typeof id === "string" && data.id === undefined ? { ...data, id } : data;
}

function rowIssue(file: string, message: string): SessionIssue {
  return { code: "malformed_row", severity: "warning", message, file };
}

// ---------------------------------------------------------------------------------------------
// The legacy storage tree

async function importTree(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const root = unit.path;
  const siblings = (await fs.readDir(dirname(root))).filter((e) =>
    e.isFile && DB_NAME.test(e.name)
  );
  if (siblings.length) {
    return emptyResult(ctx, [{
      code: "storage_migrated",
      severity: "info",
      message: `"${root}" is OpenCode's old storage tree; ${
        siblings[0].name
      } beside it holds its sessions since the migration, so the tree is not imported again`,
      file: root,
    }]);
  }
  const listing = await listTree(fs, root);
  const fingerprint = listing.fingerprint;
  // A JSON tree is checkpointed like a database: its newest mtime and total size, with the
  // file count in row_counts.
  const checkpoint: SqliteCheckpoint = {
    kind: "sqlite",
    file: root,
    db_mtime_ms: fingerprint.maxMtime,
    db_size: fingerprint.bytes,
    wal_mtime_ms: null,
    wal_size: 0,
    row_counts: { files: fingerprint.files },
  };
  const prev = ctx.resume?.checkpoint;
  if (
    prev?.kind === "sqlite" && sameSqliteCheckpoint(prev, checkpoint) &&
    prev.row_counts?.files === fingerprint.files
  ) {
    return emptyResult(ctx);
  }
  const unitIssues: SessionIssue[] = [];
  const readJson = async (path: string): Promise<unknown> => {
    try {
      return JSON.parse(await fs.readTextFile(path));
    } catch {
      return INVALID_JSON;
    }
  };
  const sessions: SessionRow[] = [];
  const seen = new Set<string>();
  const worktrees = new Map<string, string>();
  for (const path of listing.projects) {
    const p = await readJson(path);
    const wt = isObj(p) ? str(p.worktree) : undefined;
    if (wt) worktrees.set(basename(path).replace(/\.json$/, ""), wt);
  }
  for (const path of listing.sessions) {
    const s = await readJson(path);
    const fileId = basename(path).replace(/\.json$/, "");
    if (!isObj(s)) {
      unitIssues.push(rowIssue(path, `session file "${path}" is not a JSON object; skipped`));
      continue;
    }
    // Real files are named by their id; where they disagree the message folder follows the id.
    const id = str(s.id) && listing.messageDirs.has(str(s.id)!)
      ? str(s.id)!
      : listing.messageDirs.has(fileId)
      ? fileId
      : str(s.id) ?? fileId;
    if (seen.has(id)) continue;
    seen.add(id);
    const time = isObj(s.time) ? s.time : {};
    const projectId = str(s.projectID) ?? basename(dirname(path));
    const ext: Json = { project_id: projectId };
    for (const k of ["slug", "share", "summary", "revert"]) if (s[k] != null) ext[k] = s[k];
    sessions.push({
      id,
      parentId: str(s.parentID) || undefined,
      title: str(s.title) || undefined,
      directory: str(s.directory) || worktrees.get(projectId),
      version: str(s.version) || undefined,
      created: num(time.created),
      updated: num(time.updated),
      file: path,
      extensions: ext,
    });
  }
  // Message folders without a session file still hold a conversation.
  for (const id of listing.messageDirs.keys()) {
    if (seen.has(id)) continue;
    seen.add(id);
    unitIssues.push({
      code: "missing_session_record",
      severity: "warning",
      message: `messages of session "${id}" have no session file; imported without title or folder`,
      file: `${root}/message/${id}`,
    });
    sessions.push({ id, file: `${root}/message/${id}`, extensions: {} });
  }
  // Part files directly under part/ (an older layout) name their message inside.
  const flatParts = new Map<string, PartRow[]>();
  for (const path of listing.flatParts) {
    const p = await readJson(path);
    const mid = isObj(p) ? str(p.messageID) : undefined;
    if (!mid) {
      unitIssues.push(rowIssue(path, `part file "${path}" names no message; skipped`));
      continue;
    }
    const list = flatParts.get(mid) ?? [];
    list.push({
      id: str((p as Json).id) ?? basename(path).replace(/\.json$/, ""),
      data: p,
      file: path,
    });
    flatParts.set(mid, list);
  }
  const loader: MessageLoader = async (sessionId) => {
    const files = listing.messageDirs.get(sessionId) ?? [];
    const msgs: MessageRow[] = [];
    for (const path of files) {
      const data = await readJson(path);
      const id = (isObj(data) && str(data.id)) || basename(path).replace(/\.json$/, "");
      const time = isObj(data) && isObj(data.time) ? data.time : {};
      const parts: PartRow[] = [];
      for (const partPath of await listJson(fs, `${root}/part/${id}`)) {
        const pd = await readJson(partPath);
        parts.push({
          id: (isObj(pd) && str(pd.id)) || basename(partPath).replace(/\.json$/, ""),
          data: pd,
          file: partPath,
        });
      }
      parts.push(...(flatParts.get(id) ?? []));
      msgs.push({ id, data: withId(data, id), created: num(time.created), file: path, parts });
    }
    msgs.sort((a, b) =>
      (a.created ?? 0) - (b.created ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
    return msgs;
  };
  const sink = new PayloadSink();
  sessions.sort((a, b) => (a.created ?? 0) - (b.created ?? 0) || (a.id < b.id ? -1 : 1));
  const deltas = await buildAll(sessions, loader, unit, ctx.epoch, sink, unitIssues);
  return {
    mode: "full",
    deltas,
    checkpoint,
    state: null,
    issues: unitIssues,
    payloads: sink.payloads,
    // Every file of the tree is read once.
    bytesRead: fingerprint.bytes,
  };
}

interface TreeListing {
  projects: string[];
  sessions: string[];
  /** Message files by session id (folder name), sorted by name. */
  messageDirs: Map<string, string[]>;
  flatParts: string[];
  fingerprint: { files: number; bytes: number; maxMtime: number | null };
}

async function listJson(fs: SourceFs, dir: string): Promise<string[]> {
  return (await fs.readDir(dir)).filter((e) => e.isFile && e.name.endsWith(".json")).map((e) =>
    `${dir}/${e.name}`
  ).sort();
}

/** Lists the tree's JSON files and fingerprints them (count, bytes, newest mtime). */
async function listTree(fs: SourceFs, root: string): Promise<TreeListing> {
  const fp = { files: 0, bytes: 0, maxMtime: null as number | null };
  const note = async (path: string) => {
    const st = await fs.stat(path);
    if (!st) return;
    fp.files++;
    fp.bytes += st.size;
    if (st.mtimeMs !== null && (fp.maxMtime === null || st.mtimeMs > fp.maxMtime)) {
      fp.maxMtime = st.mtimeMs;
    }
  };
  const projects = await listJson(fs, `${root}/project`);
  const sessions: string[] = [];
  for (const e of await fs.readDir(`${root}/session`)) {
    if (e.isDirectory) sessions.push(...await listJson(fs, `${root}/session/${e.name}`));
    else if (e.isFile && e.name.endsWith(".json")) sessions.push(`${root}/session/${e.name}`);
  }
  const messageDirs = new Map<string, string[]>();
  for (const e of await fs.readDir(`${root}/message`)) {
    if (e.isDirectory) messageDirs.set(e.name, await listJson(fs, `${root}/message/${e.name}`));
  }
  const flatParts: string[] = [];
  const partFiles: string[] = [];
  for (const e of await fs.readDir(`${root}/part`)) {
    if (e.isDirectory) partFiles.push(...await listJson(fs, `${root}/part/${e.name}`));
    else if (e.isFile && e.name.endsWith(".json")) flatParts.push(`${root}/part/${e.name}`);
  }
  for (
    const p of [
      ...projects,
      ...sessions,
      ...[...messageDirs.values()].flat(),
      ...flatParts,
      ...partFiles,
    ]
  ) {
    await note(p);
  }
  return { projects, sessions, messageDirs, flatParts, fingerprint: fp };
}

// ---------------------------------------------------------------------------------------------
// Mapping sessions, messages and parts to canonical operations

/** Groups sub-agent sessions under their root and builds one delta per root session. */
async function buildAll(
  sessions: SessionRow[],
  load: MessageLoader,
  unit: SourceUnit,
  epoch: number,
  sink: PayloadSink,
  unitIssues: SessionIssue[],
): Promise<SessionDelta[]> {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map<string, SessionRow[]>();
  const roots: SessionRow[] = [];
  for (const s of sessions) {
    if (s.parentId && byId.has(s.parentId) && s.parentId !== s.id) {
      const list = children.get(s.parentId) ?? [];
      list.push(s);
      children.set(s.parentId, list);
    } else {
      if (s.parentId) s.extensions.parent_id = s.parentId;
      roots.push(s);
    }
  }
  const deltas: SessionDelta[] = [];
  const placed = new Set<string>();
  for (const root of roots) {
    const builder = new SessionBuilder(unit, epoch, root, sink);
    const members: { s: SessionRow; conn: string }[] = [];
    // Children after their parent, so a task call is known before the sub-agent it ran.
    const walk = (s: SessionRow, conn: string) => {
      if (placed.has(s.id)) return;
      placed.add(s.id);
      members.push({ s, conn });
      for (const c of children.get(s.id) ?? []) walk(c, c.id);
    };
    walk(root, "main");
    try {
      for (const m of members) {
        builder.member(m.s, m.conn, await load(m.s.id));
      }
      deltas.push(builder.finish());
    } catch (e) {
      // One session's rows failing (a damaged page) leaves the others importable.
      unitIssues.push({
        code: "session_unreadable",
        severity: "error",
        message: `Cannot read session "${root.id}" in "${unit.path}": ${(e as Error).message}`,
        file: unit.path,
      });
    }
  }
  // A cycle of parent ids leaves sessions unplaced: import them on their own.
  for (const s of sessions) {
    if (placed.has(s.id)) continue;
    placed.add(s.id);
    s.extensions.parent_id = s.parentId;
    const builder = new SessionBuilder(unit, epoch, s, sink);
    try {
      builder.member(s, "main", await load(s.id));
      deltas.push(builder.finish());
    } catch (e) {
      unitIssues.push({
        code: "session_unreadable",
        severity: "error",
        message: `Cannot read session "${s.id}" in "${unit.path}": ${(e as Error).message}`,
        file: unit.path,
      });
    }
  }
  return deltas;
}

interface ConnState {
  conn: Connection;
  models: Set<string>;
  providers: Set<string>;
  versions: Set<string>;
  lastTs: number | null;
  line: number;
}

/** Part types that carry nothing for the timeline (their data lives elsewhere). */
const QUIET_PARTS = new Set(["step-start", "snapshot"]);

class SessionBuilder {
  private readonly ops = new Map<string, OperationRecord>();
  private readonly usage = new Map<string, UsageEntry>();
  private readonly issues = new Map<string, SessionIssue>();
  private readonly conns = new Map<string, ConnState>();
  /** task calls by the child session they ran, for linking sub-agent connections. */
  private readonly taskBySession = new Map<string, OperationRecord>();
  private lastPrompt?: string;
  private maxTs: number | null = null;
  private minTs: number | null = null;
  private row = 0;

  constructor(
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly root: SessionRow,
    private readonly sink: PayloadSink,
  ) {}

  private issue(code: string, message: string, file?: string): void {
    const key = code + "\u0000" + message;
    const prev = this.issues.get(key);
    if (prev) prev.count = (prev.count ?? 1) + 1;
    else {
      this.issues.set(key, {
        code,
        message,
        severity: "warning",
        file: file ?? this.unit.path,
        count: 1,
      });
    }
  }

  private seeTime(ts: number | undefined): void {
    if (ts === undefined) return;
    this.minTs = this.minTs === null ? ts : Math.min(this.minTs, ts);
    this.maxTs = this.maxTs === null ? ts : Math.max(this.maxTs, ts);
  }

  member(s: SessionRow, connId: string, messages: MessageRow[]): void {
    const main = connId === "main";
    const state: ConnState = {
      conn: {
        id: connId,
        kind: main ? "main" : "subagent",
        client: { agent: SOURCE, evidence: [] },
        server: { evidence: [] },
      },
      models: new Set(),
      providers: new Set(),
      versions: new Set(),
      lastTs: null,
      line: 0,
    };
    if (s.version) {
      state.versions.add(s.version);
      state.conn.client.evidence.push({ file: s.file, field: `session(${s.id}).version` });
    }
    if (!main) {
      const task = this.taskBySession.get(s.id);
      if (task) {
        state.conn.parent_op = task.id;
        task.op.spawns = connId;
        const taskExt = task.op.extensions?.[SOURCE] as Json | undefined;
        const agentType = str(taskExt?.subagent_type);
        if (agentType) state.conn.agent_type = agentType;
      }
      if (!state.conn.agent_type && typeof s.extensions.agent === "string") {
        state.conn.agent_type = s.extensions.agent;
      }
    }
    this.conns.set(connId, state);
    this.seeTime(s.created);
    this.seeTime(s.updated);
    for (const m of messages) this.message(state, s, m);
  }

  private message(c: ConnState, s: SessionRow, m: MessageRow): void {
    c.line++;
    if (!isObj(m.data)) {
      this.issue(
        "malformed_message",
        m.data === INVALID_JSON
          ? "message data is not valid JSON; its parts imported alone"
          : "message data is not a JSON object; its parts imported alone",
        m.file,
      );
    }
    const msg: Json = isObj(m.data) ? m.data : {};
    const role = str(msg.role);
    const time = isObj(msg.time) ? msg.time : {};
    const created = num(time.created) ?? m.created;
    this.seeTime(created);
    this.seeTime(num(time.completed));
    // Models: assistant messages say who answered; user messages what was asked for.
    const model = isObj(msg.model) ? msg.model : {};
    const modelId = str(msg.modelID) ?? str(model.modelID);
    const providerId = str(msg.providerID) ?? str(model.providerID);
    if (role === "assistant") {
      if (modelId && !c.models.has(modelId)) {
        c.models.add(modelId);
        c.conn.server.evidence.push({ file: m.file, field: `message(${m.id}).modelID` });
      }
      if (providerId && !c.providers.has(providerId)) {
        c.providers.add(providerId);
        c.conn.server.evidence.push({ file: m.file, field: `message(${m.id}).providerID` });
      }
    } else if (role !== "user" && isObj(m.data)) {
      this.issue(
        "unknown_message_role",
        `unknown message role ${JSON.stringify(msg.role ?? null)}`,
        m.file,
      );
    }
    const stepUsage: UsageEntry[] = [];
    for (const [i, p] of m.parts.entries()) {
      this.part(c, s, m, role, modelId, p, i, created, stepUsage);
    }
    if (role === "assistant" && modelId) {
      if (stepUsage.length) { for (const u of stepUsage) this.usage.set(u.key, u); }
      else {
        const u = usageOf(msg.tokens);
        if (u) this.usage.set(`${m.id}`, { key: m.id, model: modelId, usage: u });
      }
    }
    if (role === "assistant" && isObj(msg.error)) {
      const err = msg.error;
      const data = isObj(err.data) ? err.data : {};
      const text = [str(err.name), str(data.message)].filter(Boolean).join(": ") || "error";
      const rec = this.push(c, s, m, `${m.id}#error`, m.parts.length, "event", {
        event: "error",
        text,
        is_error: true,
        response: this.sink.json(err),
      }, num(time.completed) ?? created);
      if (modelId) rec.op.model = modelId;
    }
  }

  private part(
    c: ConnState,
    s: SessionRow,
    m: MessageRow,
    role: string | undefined,
    modelId: string | undefined,
    p: PartRow,
    block: number,
    msgCreated: number | undefined,
    stepUsage: UsageEntry[],
  ): void {
    if (p.data === null || p.data === undefined) {
      this.issue("null_part", "parts with NULL data were skipped", p.file);
      return;
    }
    if (!isObj(p.data)) {
      this.issue(
        "malformed_part",
        p.data === INVALID_JSON
          ? "parts whose data is not valid JSON were skipped"
          : "parts whose data is not a JSON object were skipped",
        p.file,
      );
      return;
    }
    const d = p.data;
    const type = str(d.type);
    const ptime = isObj(d.time) ? d.time : {};
    const ts = num(ptime.start) ?? p.created ?? msgCreated;
    const common: Partial<Operation> = modelId && role === "assistant" ? { model: modelId } : {};
    const ext: Json = {};
    if (d.synthetic === true) ext.synthetic = true;
    if (d.ignored === true) ext.ignored = true;
    if (isObj(d.metadata) && Object.keys(d.metadata).length) ext.metadata = d.metadata;
    switch (type) {
      case "text": {
        if (typeof d.text !== "string") {
          this.issue("malformed_part", "text parts without text", p.file);
        }
        const text = str(d.text) ?? "";
        if (!text.trim()) return;
        if (role === "user") {
          const rec = this.push(c, s, m, p.id, block, "prompt", {
            text,
            request: this.sink.text(text),
          }, ts);
          if (d.synthetic === true) rec.op.injected = true;
          else if (c.conn.kind === "main" && d.ignored !== true) this.lastPrompt = text;
          this.ext(rec, ext);
        } else {
          const rec = this.push(c, s, m, p.id, block, "reply", {
            ...common,
            text,
            response: this.sink.text(text),
          }, ts);
          if (d.synthetic === true) rec.op.injected = true;
          this.ext(rec, ext);
        }
        return;
      }
      case "reasoning": {
        if (typeof d.text !== "string") {
          this.issue("malformed_part", "reasoning parts without text", p.file);
        }
        const text = str(d.text) ?? "";
        if (!text.trim()) return;
        const rec = this.push(c, s, m, p.id, block, "thinking", {
          ...common,
          text,
          response: this.sink.text(text),
        }, ts);
        this.ext(rec, ext);
        return;
      }
      case "tool":
        this.tool(c, s, m, p, d, block, common, msgCreated);
        return;
      case "patch": {
        const files = Array.isArray(d.files)
          ? d.files.filter((f) => typeof f === "string") as string[]
          : [];
        const rec = this.push(c, s, m, p.id, block, "event", {
          event: "patch",
          text: files.length ? `changed ${files.join(", ")}` : "changed files",
        }, ts);
        this.ext(rec, { hash: d.hash, files });
        return;
      }
      case "step-finish": {
        if (role !== "assistant" || !modelId) return;
        const u = usageOf(d.tokens);
        if (u) stepUsage.push({ key: p.id, model: modelId, usage: u });
        return;
      }
      case "compaction": {
        const rec = this.push(c, s, m, p.id, block, "event", {
          event: "compaction",
          text: d.auto === true ? "Conversation compacted (auto)" : "Conversation compacted",
        }, ts);
        this.ext(rec, { auto: d.auto, overflow: d.overflow, tail_start_id: d.tail_start_id });
        return;
      }
      case "subtask": {
        const text = str(d.description) ?? str(d.prompt) ?? "subtask";
        const rec = this.push(c, s, m, p.id, block, "event", {
          event: "subtask",
          text,
          request: this.sink.json({ prompt: d.prompt, description: d.description, agent: d.agent }),
        }, ts);
        this.ext(rec, { agent: d.agent, model: d.model, command: d.command });
        return;
      }
      case "file": {
        const name = str(d.filename) ?? str(d.url) ?? "file";
        const rec = this.push(c, s, m, p.id, block, "event", {
          event: "file",
          text: name,
          request: this.sink.json(d),
          injected: role === "user" ? undefined : true,
        }, ts);
        this.ext(rec, { mime: d.mime, source: d.source });
        return;
      }
      case "agent": {
        this.push(
          c,
          s,
          m,
          p.id,
          block,
          "event",
          { event: "agent", text: str(d.name) ?? "agent" },
          ts,
        );
        return;
      }
      case "retry": {
        const err = d.error;
        const text = isObj(err) ? str(err.message) ?? JSON.stringify(err) : str(err) ?? "retry";
        const rec = this.push(c, s, m, p.id, block, "event", {
          event: "retry",
          text,
          is_error: true,
        }, num(isObj(d.time) ? d.time.created : undefined) ?? ts);
        this.ext(rec, { attempt: d.attempt });
        return;
      }
    }
    if (type && QUIET_PARTS.has(type)) return;
    this.issue("unknown_part_type", `unknown part type ${JSON.stringify(type ?? null)}`, p.file);
  }

  private tool(
    c: ConnState,
    s: SessionRow,
    m: MessageRow,
    p: PartRow,
    d: Json,
    block: number,
    common: Partial<Operation>,
    msgCreated: number | undefined,
  ): void {
    const name = str(d.tool) ?? "";
    if (!name) this.issue("malformed_part", "tool parts without a tool name", p.file);
    const state = isObj(d.state) ? d.state : undefined;
    if (!state) this.issue("malformed_part", "tool parts without a state object", p.file);
    const st = state ?? {};
    const status = str(st.status);
    const input = st.input;
    const time = isObj(st.time) ? st.time : {};
    const kind: OperationKind = name ? classifyTool(name) : "other";
    let request: PayloadRef;
    if (isObj(input) && Object.keys(input).length) request = this.sink.json(input);
    else if (typeof st.raw === "string" && st.raw) request = this.sink.text(st.raw);
    else if (input !== undefined && !(isObj(input) && status === "pending")) {
      request = this.sink.json(input);
    } else request = { missing: true, reason: "the tool input was not recorded yet" };
    const meta = isObj(st.metadata) ? st.metadata : {};
    const fields: Partial<Operation> = {
      ...common,
      tool: name || undefined,
      native_id: str(d.callID),
      target: targetOf(input),
      summary: summarizeToolInput(input),
      request,
    };
    const exit = num(meta.exit) ?? num(meta.exitCode);
    let output: unknown;
    switch (status) {
      case "pending":
      case "running":
        fields.completeness = "incomplete";
        break;
      case "completed":
        fields.completeness = "complete";
        output = st.output;
        fields.is_error = exit !== undefined && exit !== 0;
        break;
      case "error":
        fields.completeness = "complete";
        output = st.error;
        fields.is_error = true;
        break;
      default:
        if (state) {
          this.issue(
            "unknown_tool_state",
            `unknown tool state ${JSON.stringify(status ?? null)}`,
            p.file,
          );
        }
        output = st.output ?? st.error;
        fields.completeness = output === undefined ? "incomplete" : "complete";
        if (output !== undefined) {
          fields.is_error = st.error !== undefined || (exit !== undefined && exit !== 0);
        }
    }
    if (output !== undefined) {
      fields.response = typeof output === "string"
        ? this.sink.text(output)
        : this.sink.json(output);
    }
    const rec = this.push(
      c,
      s,
      m,
      p.id,
      block,
      kind,
      fields,
      num(time.start) ?? p.created ?? msgCreated,
    );
    const end = num(time.end);
    if (end !== undefined) this.seeTime(end);
    const ext: Json = {};
    if (status) ext.status = status;
    if (exit !== undefined) ext.exit_code = exit;
    if (typeof st.title === "string" && st.title) ext.title = st.title;
    if (end !== undefined && num(time.start) !== undefined) {
      ext.duration_ms = end - num(time.start)!;
    }
    if (num(time.compacted) !== undefined) ext.compacted = true;
    if (typeof meta.diff === "string") ext.diff = this.sink.text(meta.diff);
    if (meta.truncated === true) ext.truncated = true;
    if (Array.isArray(st.attachments) && st.attachments.length) {
      ext.attachments = st.attachments.length;
    }
    if (kind === "task" && isObj(input) && typeof input.subagent_type === "string") {
      ext.subagent_type = input.subagent_type;
    }
    this.ext(rec, ext);
    if (kind === "task") {
      const child = str(meta.sessionId) ?? str(meta.sessionID);
      if (child) this.taskBySession.set(child, rec);
    }
  }

  private ext(rec: OperationRecord, ext: Json): void {
    const clean = Object.fromEntries(Object.entries(ext).filter(([, v]) => v !== undefined));
    if (Object.keys(clean).length) {
      rec.op.extensions = {
        ...rec.op.extensions,
        [SOURCE]: { ...(rec.op.extensions?.[SOURCE] as Json), ...clean },
      };
    }
  }

  private push(
    c: ConnState,
    s: SessionRow,
    m: MessageRow,
    recordId: string,
    block: number,
    kind: OperationKind,
    fields: Partial<Operation>,
    ts: number | undefined,
  ): OperationRecord {
    this.row++;
    this.seeTime(ts);
    // Order follows the rows; a time earlier than the one before keeps its place.
    if (ts !== undefined) c.lastTs = c.lastTs === null ? ts : Math.max(c.lastTs, ts);
    const id = stableId("op_", s.id, m.id, recordId);
    const op: Operation = {
      kind,
      effect: effectOf(kind),
      completeness: "complete",
      provenance: {
        epoch: this.epoch,
        source_range: {
          file: m.file === this.unit.path ? this.unit.path : fileOf(m, recordId),
          lines: [this.row, this.row],
          bytes: [0, 0],
        },
        record_ids: recordId.includes("#") ? [m.id] : [recordId, m.id],
      },
      replay: { replayable: false, blockers: [] },
      ...fields,
    };
    for (const k of Object.keys(op) as (keyof Operation)[]) if (op[k] === undefined) delete op[k];
    if (ts !== undefined) op.ts_ms = ts;
    const rec: OperationRecord = {
      id,
      connection: c.conn.id,
      order: {
        ts_ms: c.lastTs,
        rank: c.conn.kind === "main" ? this.unit.rank : this.unit.rank + 1,
        line: c.line,
        block,
      },
      op,
    };
    this.ops.set(id, rec);
    return rec;
  }

  finish(): SessionDelta {
    const s = this.root;
    const issues = [...this.issues.values()];
    for (const c of this.conns.values()) {
      const { conn } = c;
      if (c.versions.size === 1) conn.client.version = [...c.versions][0];
      if (c.models.size === 1) conn.server.model = [...c.models][0];
      else if (c.models.size > 1) {
        issues.push({
          code: "conflicting_model",
          message: `connection ${conn.id}: several models answered (${
            [...c.models].join(", ")
          }); each operation keeps its own`,
          severity: "info",
          file: this.unit.path,
        });
      }
      if (c.providers.size === 1) conn.server.provider = [...c.providers][0];
      else if (c.providers.size > 1) {
        issues.push({
          code: "conflicting_provider",
          message: `connection ${conn.id}: several providers answered (${
            [...c.providers].join(", ")
          }); provider left absent`,
          severity: "info",
          file: this.unit.path,
        });
      }
    }
    const main = this.conns.get("main");
    if (main && !main.versions.size) {
      issues.push({
        code: "missing_client_version",
        message: "the session record names no OpenCode version; client version left absent",
        severity: "info",
        file: s.file,
      });
    }
    if (main && !main.models.size && [...this.ops.values()].some((r) => r.op.kind !== "prompt")) {
      issues.push({
        code: "missing_model",
        message: "no assistant message names its model; server model left absent",
        severity: "info",
        file: s.file,
      });
    }
    for (const rec of this.ops.values()) rec.op.replay = replayAttributes(rec.op);
    const info: SessionDelta["info"] = {
      id: `${SOURCE}:${s.id}`,
      native_id: s.id,
      source: SOURCE,
      project: s.directory ? { path: s.directory } : {},
    };
    if (s.title) info.title = s.title;
    if (this.lastPrompt) info.last_prompt = this.lastPrompt;
    const start = s.created ?? this.minTs;
    const end = s.updated !== undefined && this.maxTs !== null
      ? Math.max(s.updated, this.maxTs)
      : s.updated ?? this.maxTs;
    if (start !== null && start !== undefined) info.started_at = new Date(start).toISOString();
    if (end !== null && end !== undefined) info.ended_at = new Date(end).toISOString();
    const ext: Json = { ...s.extensions };
    const subs = [...this.conns.values()].filter((c) => c.conn.kind === "subagent").map((c) =>
      c.conn.id
    );
    if (subs.length) ext.child_sessions = subs;
    return {
      session_id: info.id,
      file: this.unit.path,
      info,
      primary: true,
      connections: [...this.conns.values()].map((c) => c.conn),
      operations: [...this.ops.values()],
      usage: [...this.usage.values()],
      loss_windows: [],
      issues,
      extensions: Object.keys(ext).length ? { [SOURCE]: ext } : undefined,
    };
  }
}

function fileOf(m: MessageRow, recordId: string): string {
  const part = m.parts.find((p) => p.id === recordId);
  return part?.file ?? m.file;
}

/** Token usage of a step or message; null when it names no token counts. */
function usageOf(tokens: unknown): UsageEntry["usage"] | null {
  if (!isObj(tokens)) return null;
  const cache = isObj(tokens.cache) ? tokens.cache : {};
  const input = num(tokens.input), output = num(tokens.output);
  if (input === undefined && output === undefined) return null;
  // OpenCode counts reasoning apart from output; canonical usage has no reasoning bucket.
  return {
    input: input ?? 0,
    output: (output ?? 0) + (num(tokens.reasoning) ?? 0),
    cache_read: num(cache.read) ?? 0,
    cache_write: num(cache.write) ?? 0,
  };
}

export const opencode: Importer = {
  id: SOURCE,
  displayName: "OpenCode",
  discover,
  detect,
  import: importUnit,
};
