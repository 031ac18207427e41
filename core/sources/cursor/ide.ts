/**
 * Cursor's IDE chats (Composer / Agent): SQLite `state.vscdb` files (WAL mode) under its `User`
 * folder, never opened in place.
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
 */
import type { DatabaseSync } from "node:sqlite";
import { agentName } from "../../model/agents.ts";
import { sha256Hex } from "../../model/payload.ts";
import type { PayloadSink } from "../../model/payload.ts";
import type { SessionDelta } from "../../model/delta.ts";
import type { SessionIssue } from "../../model/types.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../types.ts";
import {
  type DeltaDraft,
  dirname,
  hasFile,
  isObj,
  IssueTally,
  type Json,
  metadataDelta,
  num,
  parseJsonText,
  str,
} from "../_import_kit.ts";
import {
  cellText,
  importSqliteUnit,
  rowArrays,
  savedMarks,
  type SessionMarks,
  type SqlitePart,
  type SqliteRead,
  startMarks,
} from "../_sqlite_copy.ts";
import { BAD_JSON, ComposerBuilder, NULL_VALUE, SOURCE } from "./composer.ts";
import { uriToPath } from "./uri.ts";

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
  for (const user of cursorUserDirs(env)) {
    if (await hasFile(fs, `${user}/globalStorage`, "state.vscdb")) {
      units.push({
        source: SOURCE,
        path: `${user}/globalStorage/state.vscdb`,
        kind: "sqlite",
        rank: 0,
      });
    }
    for (const e of await fs.readDir(`${user}/workspaceStorage`)) {
      if (!e.isDirectory) continue;
      const dir = `${user}/workspaceStorage/${e.name}`;
      if (await hasFile(fs, dir, "state.vscdb")) {
        units.push({ source: SOURCE, path: `${dir}/state.vscdb`, kind: "sqlite", rank: 1 });
      }
    }
  }
  return units;
}

function detect(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  return p.endsWith("/state.vscdb") && /\/Cursor\/User\//.test(p);
}

function importDb(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return importSqliteUnit(unit, ctx, async (db, tables, sink, part, saved) => {
    const issues = new IssueTally(unit.path);
    const out: SqliteRead = { deltas: [], issues: [], counts: {} };
    if (!tables.has("cursorDiskKV") && !tables.has("ItemTable")) {
      issues.add(
        "db_missing_table",
        `Cannot import "${unit.path}": it has neither a cursorDiskKV nor an ItemTable table`,
        { severity: "error" },
      );
    } else {
      const folder = await workspaceFolder(ctx.fs, unit.path);
      const reader = new DbReader(db, unit, ctx.epoch, sink, issues, folder);
      const marks = startMarks(saved, part);
      if (tables.has("cursorDiskKV")) {
        const read = reader.composers(out.counts, part, marks);
        out.deltas.push(...read.deltas);
        out.next = read.next;
        out.unchanged = read.unchanged;
      }
      out.state = savedMarks(marks, out.next);
      // (a workspace's chat index, small, comes with the database's last part)
      if (tables.has("ItemTable") && out.next === undefined) {
        out.deltas.push(...reader.workspaceIndex(out.counts));
      }
    }
    out.issues = issues.list();
    return out;
  });
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

/**
 * How many bytes of a part's budget a byte of a chat's rows counts for: what a part costs in
 * memory. A bubble's tool call holds its arguments and result as JSON inside JSON, parsed
 * twice; counted once, 12 MiB parts of 114 MiB of chats peaked at 355 MB, counted three times
 * (4 MiB of rows a part) at 227 MB, in the same time.
 */
const ROW_WEIGHT = 3;

/**
 * A chat's mark: a hash of its `composerData` row, and how many bubble rows it has and their
 * values' SQL `length()` in all (see `DbReader.mark`).
 */
function chatMark(composerRow: string, bubbles: number, length: number): string {
  return `${sha256Hex(composerRow).slice(0, 32)} ${bubbles} ${length}`;
}

class DbReader {
  constructor(
    private readonly db: DatabaseSync,
    private readonly unit: SourceUnit,
    private readonly epoch: number,
    private readonly sink: PayloadSink,
    private readonly issues: IssueTally,
    private readonly folder: string | undefined,
  ) {}

  private unitIssue(code: string, message: string, severity: SessionIssue["severity"] = "warning") {
    this.issues.add(code, message, { severity });
  }

  /**
   * The `composerData:` rows of a part (in key order, after `part.after`) with their bubbles:
   * one delta per chat that holds anything. The part ends before the first chat once its
   * rows add up to `part.budget` bytes (`next`: the key of its last chat); a chat is never cut.
   */
  composers(
    counts: Record<string, number>,
    part: SqlitePart,
    marks: SessionMarks,
  ): { deltas: DeltaDraft[]; next?: string; unchanged: string[] } {
    const out: DeltaDraft[] = [];
    const unchanged: string[] = [];
    const rows = this.db.prepare(
      `SELECT key, value FROM cursorDiskKV WHERE key ${part.after === undefined ? ">=" : ">"} ?
         AND key < 'composerData;' ORDER BY key`,
    );
    counts.composers = 0;
    counts.bubbles = 0;
    let empty = 0;
    let bytes = 0;
    let last: string | undefined;
    let next: string | undefined;
    for (const row of rows.iterate(part.after ?? "composerData:") as Iterable<Json>) {
      const key = String(row.key);
      if (bytes >= part.budget && last !== undefined) {
        next = last;
        break;
      }
      last = key;
      counts.composers++;
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
      bytes += ROW_WEIGHT * text.length;
      // a chat as the last read found it is not read again (an empty one, cheap, always is:
      // its issues are said again); a chat the last read did not mark is marked as it is read
      const known = marks.known[key];
      if (known !== undefined) {
        const { mark, bubbles: rows } = this.mark(cid, text);
        if (known === mark) {
          marks.seen[key] = mark;
          counts.bubbles += rows;
          unchanged.push(`${SOURCE}:${cid}`);
          continue;
        }
      }
      try {
        const bubbles = this.bubbles(cid);
        const mark = chatMark(text, bubbles.size, bubbles.length);
        counts.bubbles += bubbles.size;
        bytes += ROW_WEIGHT * bubbles.bytes;
        const b = new ComposerBuilder(
          this.unit,
          this.epoch,
          this.sink,
          cid,
          parsed.value,
          this.folder,
        );
        const delta = b.build(bubbles);
        if (delta) {
          marks.seen[key] = mark;
          out.push(delta);
        } else {
          empty++;
          for (const i of b.issueList()) {
            this.issues.add(i.code, `composer ${cid}: ${i.message}`, {
              severity: i.severity,
              count: i.count,
            });
          }
        }
      } catch (e) {
        this.issues.add(
          "session_unreadable",
          `Cannot read Cursor chat "${cid}" in "${this.unit.path}": ${(e as Error).message}`,
          { severity: "error" },
        );
      }
    }
    if (empty) {
      this.issues.add("empty_composer", `${empty} chat(s) without any message were skipped`, {
        severity: "info",
        count: empty,
      });
    }
    return { deltas: out, next, unchanged };
  }

  /**
   * A chat's mark: a hash of its `composerData` row, and how many bubble rows it has and how
   * long they are. Cursor rewrites the row (its `lastUpdatedAt`, its bubble list) whenever the
   * chat changes, and a bubble that changes changes its length (a reply streamed, a tool's
   * status and result), so a chat whose mark has not moved is taken as unchanged.
   */
  private mark(cid: string, text: string): { mark: string; bubbles: number } {
    const row = this.db.prepare(
      "SELECT count(*) AS n, sum(length(value)) AS bytes FROM cursorDiskKV WHERE key >= ? AND key < ?",
    ).get(`bubbleId:${cid}:`, `bubbleId:${cid};`) as { n: number; bytes: number | null };
    const n = Number(row.n);
    return { mark: chatMark(text, n, Number(row.bytes ?? 0)), bubbles: n };
  }

  /**
   * The bubble rows of one chat, by bubble id; NULL and malformed values stay as markers.
   * `bytes`: how much text the rows held; `length`: their values' SQL `length()` in all, what
   * `mark` counts, so a chat read for the first time is marked without reading it twice (the
   * second read was 0.15 s of the import worker's 2.6 s on a 100 MiB database).
   */
  private bubbles(cid: string): Map<string, unknown> & { bytes: number; length: number } {
    const map = Object.assign(new Map<string, unknown>(), { bytes: 0, length: 0 });
    const prefix = `bubbleId:${cid}:`;
    // (rows as arrays, rowArrays: [key, value, length(value)])
    const rows = rowArrays(
      this.db,
      "SELECT key, value, length(value) FROM cursorDiskKV WHERE key >= ? AND key < ?",
      prefix,
      `bubbleId:${cid};`,
    );
    for (const [key, value, length] of rows) {
      const id = String(key).slice(prefix.length);
      const text = cellText(value);
      if (text === null) {
        map.set(id, NULL_VALUE);
        continue;
      }
      map.length += Number(length);
      map.bytes += text.length;
      const parsed = parseJsonText(text);
      map.set(id, parsed.ok ? parsed.value : BAD_JSON);
    }
    return map;
  }

  /** A workspace's chat index: title, times and the workspace folder for each chat. */
  workspaceIndex(counts: Record<string, number>): DeltaDraft[] {
    const get = (key: string) =>
      (this.db.prepare("SELECT value FROM ItemTable WHERE key = ?").get(key) as Json | undefined)
        ?.value;
    const out: DeltaDraft[] = [];
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
}

/** Cursor's IDE chats: the `state.vscdb` databases. */
export const cursorIde: Importer<typeof SOURCE> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  discover,
  detect,
  import: importDb,
};
