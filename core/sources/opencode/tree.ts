/**
 * OpenCode's old `storage/` JSON tree (project, session, message and part files), which newer
 * versions migrated into `opencode.db`. Ids come from file and folder names where the JSON
 * disagrees. The tree is checkpointed like a database: newest mtime, total size, file count.
 */
import { PayloadSink } from "../../model/payload.ts";
import type { LossWindow, SessionIssue, SqliteCheckpoint } from "../../model/types.ts";
import { unchangedResult, vanishedResult } from "../results.ts";
import type { ImportContext, SourceFs, SourceUnit, UnitResult } from "../types.ts";
import {
  basename,
  dirname,
  isObj,
  type Json,
  num,
  passResult,
  readJsonDocument,
  str,
} from "../_import_kit.ts";
import { sameSqliteCheckpoint } from "../sqlite_checkpoint.ts";
import { buildAll } from "./build.ts";
import { DB_NAME } from "./layout.ts";
import {
  INVALID_JSON,
  type MessageLoader,
  type MessageRow,
  type PartRow,
  rowIssue,
  type SessionRow,
} from "./rows.ts";

/** One pass over the old `storage/` tree; skipped when a database beside it took over. */
export async function importTree(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const root = unit.path;
  if (!(await fs.stat(root))?.isDirectory) return vanishedResult(unit, ctx.resume);
  const siblings = (await fs.readDir(dirname(root))).filter((e) =>
    e.isFile && DB_NAME.test(e.name)
  );
  if (siblings.length) {
    return unchangedResult(ctx.resume, [{
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
    return unchangedResult(ctx.resume);
  }
  const unitIssues: SessionIssue[] = [];
  // A file over the longest line (a part holding a huge output) is read with its texts cut: a
  // loss window of the session it belongs to, so its operations are `truncated` as a cut line's
  // are; a cut file that belongs to no session (a project's) is an issue of the tree.
  const cuts = new Map<string, LossWindow[]>();
  const cutFiles = new Map<string, LossWindow>();
  const cutIn = (sessionId: string, path: string) => {
    const window = cutFiles.get(path);
    if (!window) return;
    cutFiles.delete(path);
    cuts.set(sessionId, [...cuts.get(sessionId) ?? [], window]);
  };
  const readJson = async (path: string): Promise<unknown> => {
    let doc;
    try {
      doc = await readJsonDocument(fs, path);
    } catch {
      return INVALID_JSON; // gone since it was listed
    }
    if (doc.cut) {
      const lines: [number, number] = [1, 1];
      const bytes: [number, number] = [0, doc.size];
      cutFiles.set(path, { epoch: ctx.epoch, file: path, lines, bytes, reason: doc.cut });
    }
    return doc.error ? INVALID_JSON : doc.value;
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
    cutIn(id, path);
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
      cutIn(sessionId, path);
      const id = (isObj(data) && str(data.id)) || basename(path).replace(/\.json$/, "");
      const time = isObj(data) && isObj(data.time) ? data.time : {};
      const parts: PartRow[] = [];
      for (const partPath of await listJson(fs, `${root}/part/${id}`)) {
        const pd = await readJson(partPath);
        cutIn(sessionId, partPath);
        parts.push({
          id: (isObj(pd) && str(pd.id)) || basename(partPath).replace(/\.json$/, ""),
          data: pd,
          file: partPath,
        });
      }
      for (const p of flatParts.get(id) ?? []) {
        cutIn(sessionId, p.file);
        parts.push(p);
      }
      msgs.push({ id, data, created: num(time.created), file: path, parts });
    }
    msgs.sort((a, b) =>
      (a.created ?? 0) - (b.created ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
    return msgs;
  };
  const sink = new PayloadSink();
  sessions.sort((a, b) => (a.created ?? 0) - (b.created ?? 0) || (a.id < b.id ? -1 : 1));
  const { deltas } = await buildAll(sessions, loader, unit, ctx.epoch, sink, unitIssues);
  for (const d of deltas) {
    const lost = cuts.get(d.info.native_id);
    if (lost) d.loss_windows = [...d.loss_windows ?? [], ...lost];
  }
  for (const [path, window] of cutFiles) {
    unitIssues.push({ code: "texts_cut", severity: "warning", message: window.reason, file: path });
  }
  return passResult({
    mode: "full",
    deltas,
    checkpoint,
    state: null,
    issues: unitIssues,
    sink,
    // Every file of the tree is read once.
    bytesRead: fingerprint.bytes,
  });
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
