/** OpenCode's SQLite database: sessions, messages and parts, from a private copy. */
import type { DatabaseSync } from "node:sqlite";
import { sha256Hex } from "../../model/payload.ts";
import type { SessionIssue } from "../../model/types.ts";
import type { ImportContext, SourceUnit, UnitResult } from "../types.ts";
import { isObj, type Json, num, str } from "../_import_kit.ts";
import {
  cellText,
  importSqliteUnit,
  rowArrays,
  savedMarks,
  sqlOrder,
  startMarks,
} from "../_sqlite_copy.ts";
import { buildAll } from "./build.ts";
import { type MessageRow, parseJson, rowIssue, type SessionRow } from "./rows.ts";

/**
 * One pass over `opencode.db`: every session, with its messages and parts; or, read in parts
 * (`SqlitePart`), the root sessions (with their sub-agents) after the last one read, until
 * their rows reach the part's budget.
 */
export function importDb(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return importSqliteUnit(unit, ctx, async (db, tables, sink, part, saved) => {
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
      return { deltas: [], issues: unitIssues, counts };
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
    const marks = startMarks(saved, part);
    const { known, seen } = marks;
    /** The groups to read, by root: the hash of their session rows, half of their mark. */
    const reading = new Map<string, string>();
    let loaded = 0;
    const { deltas, next, unchanged } = await buildAll(
      sessions,
      (id) => (loaded++, reader.messages(id)),
      unit,
      ctx.epoch,
      sink,
      unitIssues,
      // a byte of rows counts once (cursor/ide.ts's chats count three times): 1000 sessions,
      // 138 MB of parts, peaked at 243 MB in 12 MiB parts (171 MB counted three times, but
      // 10% slower; 598 MB read whole)
      {
        ...part,
        spent: () => reader.bytes,
        // a root session and its sub-agents as the last read found them are not read again
        // (one the last read did not find is read without asking for its rows' sizes)
        unchanged: (members) => {
          const rows = reader.rowsMark(members);
          const last = known[members[0].id];
          const mark = last === undefined ? undefined : reader.mark(members, rows);
          if (mark === undefined || mark.mark !== last) {
            reading.set(members[0].id, rows);
            return false;
          }
          seen[members[0].id] = mark.mark;
          loaded += members.length;
          reader.messageCount += mark.messages;
          reader.partCount += mark.parts;
          return true;
        },
        // a group read whole is marked from its rows as read (`markAsRead`)
        read: (members) => {
          const rows = reading.get(members[0].id);
          if (rows !== undefined) seen[members[0].id] = reader.markAsRead(rows, members);
        },
      },
    );
    // the sessions this part read (a part's counts add up to one read's)
    counts.session = next === undefined && part.after === undefined ? sessions.length : loaded;
    counts.message = reader.messageCount;
    counts.part = reader.partCount;
    return {
      deltas,
      issues: unitIssues,
      counts,
      next,
      unchanged,
      state: savedMarks(marks, next),
    };
  });
}

/** Reads sessions, messages and parts from an open copy of opencode.db. */
class DbReader {
  messageCount = 0;
  partCount = 0;
  /** How much text the message and part rows read held. */
  bytes = 0;
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

  /**
   * A root session's mark, with its sub-agents: a hash of their session rows as read (times
   * updated included) and how many message and part rows they have and how long those are.
   * OpenCode updates a session's `time_updated` as it writes to it, and a part that changes
   * (a streamed text, a tool's state) changes its length. `rows`: the group's
   * {@link rowsMark}.
   */
  mark(members: SessionRow[], rows: string): { mark: string; messages: number; parts: number } {
    let messages = 0, parts = 0;
    const sizes: string[] = [];
    for (const m of members) {
      const size = this.sizeOf(m.id);
      messages += size.messages.n;
      parts += size.parts.n;
      sizes.push(sizeText(size));
    }
    return { mark: `${rows} ${sizes.join(" ")}`, messages, parts };
  }

  /** The first half of a group's mark: the hash of its session rows as read. */
  rowsMark(members: SessionRow[]): string {
    return sha256Hex(JSON.stringify(members)).slice(0, 32);
  }

  /**
   * The mark of a group just read (`rows`: its {@link rowsMark} before the read), from the
   * counts and lengths its rows gave as they were read (`messages`): the same mark as
   * {@link mark} (the copy does not change), without reading every row a second time. A new
   * database's first read asked both, and the counting was 9% of its import worker's time.
   */
  markAsRead(rows: string, members: SessionRow[]): string {
    const sizes = members.map((m) => {
      const size = this.readSizes.get(m.id) ?? this.sizeOf(m.id);
      this.readSizes.delete(m.id);
      return sizeText(size);
    });
    return `${rows} ${sizes.join(" ")}`;
  }

  /** How many message and part rows a session has, and their data's `length()` in all. */
  private sizeOf(sessionId: string): SessionSize {
    const stats = (sql: string) => {
      const r = this.db.prepare(sql).get(sessionId) as { n: number; bytes: number | null };
      return { n: Number(r.n), bytes: Number(r.bytes ?? 0) };
    };
    return {
      messages: this.tables.has("message")
        ? stats(
          "SELECT count(*) AS n, sum(length(data)) AS bytes FROM message WHERE session_id = ?",
        )
        : { n: 0, bytes: 0 },
      parts: !this.tables.has("part")
        ? { n: 0, bytes: 0 }
        : this.partBySession
        ? stats("SELECT count(*) AS n, sum(length(data)) AS bytes FROM part WHERE session_id = ?")
        : stats(
          "SELECT count(*) AS n, sum(length(p.data)) AS bytes FROM part p JOIN message m ON m.id = p.message_id WHERE m.session_id = ?",
        ),
    };
  }

  /** The sizes `messages` read, by session, until `markAsRead` takes them. */
  private readonly readSizes = new Map<string, SessionSize>();

  /** A row's data cell as text, counted in {@link DbReader.bytes}. */
  private text(cell: unknown): string | null {
    const text = cellText(cell);
    this.bytes += text?.length ?? 0;
    return text;
  }

  messages(sessionId: string): MessageRow[] {
    if (!this.tables.has("message")) return [];
    // (each row's length() too: what `sizeOf` counts, so the mark needs no second read)
    const size: SessionSize = { messages: { n: 0, bytes: 0 }, parts: { n: 0, bytes: 0 } };
    // (rows as arrays, rowArrays: [id, time_created, data, len] and for parts
    // [id, message_id, time_created, data, len])
    const msgs = rowArrays(
      this.db,
      `SELECT id, ${this.messageTime} AS time_created, data, length(data) AS len FROM message ` +
        `WHERE session_id = ? ORDER BY ${this.messageTime}, id`,
      sessionId,
    ).map(([id, created, data, len]): MessageRow => {
      count(size.messages, len);
      return {
        id: String(id),
        data: parseJson(this.text(data)),
        created: num(created),
        file: this.file,
        parts: [],
      };
    });
    this.messageCount += msgs.length;
    // (a session without messages: its parts' sizes, if any, are asked for by `sizeOf`)
    if (!this.tables.has("part") || !msgs.length) {
      if (!this.tables.has("part")) this.readSizes.set(sessionId, size);
      return msgs;
    }
    const byId = new Map(msgs.map((m) => [m.id, m]));
    // in the order of their message and id, sorted here: SQLite sorted each session's rows
    // with their data in a temporary B-tree (OpenCode indexes parts by session alone), 334-368
    // ms of a new copy's 145 MiB against 166-178 read as they are and sorted as arrays
    const parts = rowArrays(
      this.db,
      this.partBySession
        ? `SELECT p.id, p.message_id, ${this.partTime} AS time_created, p.data, ` +
          "length(p.data) AS len FROM part p WHERE p.session_id = ?"
        : `SELECT p.id, p.message_id, ${this.partTime} AS time_created, p.data, ` +
          "length(p.data) AS len FROM part p JOIN message m ON m.id = p.message_id " +
          "WHERE m.session_id = ?",
      sessionId,
    ).sort((x, y) => sqlOrder(x[1], y[1]) || sqlOrder(x[0], y[0]));
    for (const [id, messageId, created, data, len] of parts) {
      this.partCount++;
      count(size.parts, len);
      const msg = byId.get(String(messageId));
      if (!msg) continue;
      const text = this.text(data);
      msg.parts.push({
        id: String(id),
        data: text === null ? null : parseJson(text),
        created: num(created),
        file: this.file,
      });
    }
    this.readSizes.set(sessionId, size);
    return msgs;
  }
}

/** A session's message and part rows: how many, and their data's `length()` in all. */
interface SessionSize {
  messages: { n: number; bytes: number };
  parts: { n: number; bytes: number };
}

/** A row counted in `size`: `len` its data's `length()` (NULL for NULL data, not summed). */
function count(size: { n: number; bytes: number }, len: unknown): void {
  size.n++;
  if (typeof len === "number") size.bytes += len;
}

/** A session's part of a mark, as it has always been written. */
const sizeText = ({ messages, parts }: SessionSize) =>
  `${messages.n} ${messages.bytes} ${parts.n} ${parts.bytes}`;
