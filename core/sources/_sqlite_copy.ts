/**
 * Reading a foreign SQLite database (Cursor's state.vscdb, OpenCode's opencode.db) without
 * ever opening it in place: the db is copied with its `-wal`, `-shm` (and a rollback
 * `-journal`, if a writer left one) into a scratch folder, the copy is opened read-only, read,
 * closed and deleted. Problems (locked, corrupt, half-written, missing tables) come back as
 * issues, never as exceptions, so one bad database never stops the other sources.
 *
 * Private to core/sources.
 */
import { DatabaseSync } from "node:sqlite";
import { PayloadSink } from "../model/payload.ts";
import type { SessionIssue, SqliteCheckpoint } from "../model/types.ts";
import type { ImportContext, SourceFs, SourceUnit, UnitResult } from "./types.ts";
import { type DeltaDraft, passResult } from "./_import_kit.ts";
import { sameSqliteCheckpoint, sqliteCheckpoint } from "./sqlite_checkpoint.ts";
import { FILE_MISSING, unchangedResult, vanishedResult } from "./results.ts";

export { sameSqliteCheckpoint, sqliteCheckpoint };

/** The companion files SQLite keeps beside a database. */
const COMPANIONS = ["-wal", "-shm", "-journal"] as const;

/** How many times a copy is retried when the database changes while it is being copied. */
const COPY_ATTEMPTS = 3;

/** What reading a copy produced. `value` is absent when the database could not be read. */
export interface SqliteCopyResult<T> {
  value?: T;
  /** Problems with the database as a whole (locked, corrupt, changed while copied...). */
  issues: SessionIssue[];
  /** The checkpoint taken before the copy (null when the database is gone). */
  checkpoint: SqliteCheckpoint | null;
  /** Bytes copied (db + companions). */
  bytesCopied: number;
}

/** A read over an open copy; `tables` holds the names of its tables. */
export type SqliteReader<T> = (db: DatabaseSync, tables: Set<string>) => T | Promise<T>;

/**
 * Copies the database at `path` with its companions to a scratch folder, opens the copy
 * read-only and runs `read` on it. Never throws for a bad database: failures are issues.
 */
export async function readSqliteCopy<T>(
  fs: SourceFs,
  path: string,
  read: SqliteReader<T>,
): Promise<SqliteCopyResult<T>> {
  const issues: SessionIssue[] = [];
  const issue = (code: string, severity: SessionIssue["severity"], message: string) =>
    issues.push({ code, severity, message, file: path });
  let dir: string | undefined;
  try {
    dir = await fs.makeTempDir();
    const copied = await stableCopy(fs, path, dir);
    if (!copied) {
      issue(FILE_MISSING, "warning", `Cannot read "${path}": the database is gone`);
      return { issues, checkpoint: null, bytesCopied: 0 };
    }
    if (!copied.stable) {
      issue(
        "db_changing",
        "warning",
        `"${path}" kept changing while it was copied; read what the last copy holds`,
      );
    }
    if (copied.journal) {
      issue(
        "db_locked",
        "warning",
        `"${path}" was being written (a rollback journal was present); ` +
          "imported the last committed state",
      );
    }
    const db = openCopy(copied.copyPath);
    if (db instanceof Error) {
      issues.push(dbIssue(path, db));
      return { issues, checkpoint: copied.checkpoint, bytesCopied: copied.bytes };
    }
    try {
      const tables = new Set(
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]).map((r) => r.name),
      );
      const value = await read(db, tables);
      return { value, issues, checkpoint: copied.checkpoint, bytesCopied: copied.bytes };
    } catch (e) {
      issues.push(dbIssue(path, e));
      return { issues, checkpoint: copied.checkpoint, bytesCopied: copied.bytes };
    } finally {
      try {
        db.close();
      } catch {
        // closing a copy that failed to read: nothing left to do
      }
    }
  } catch (e) {
    issue("db_unreadable", "error", `Cannot read "${path}": ${messageOf(e)}`);
    return { issues, checkpoint: null, bytesCopied: 0 };
  } finally {
    if (dir) await fs.remove(dir).catch(() => {});
  }
}

interface Copied {
  copyPath: string;
  checkpoint: SqliteCheckpoint;
  stable: boolean;
  journal: boolean;
  bytes: number;
}

/**
 * Copies db and companions; when db or wal changed during the copy (a writer was busy),
 * copies again, up to COPY_ATTEMPTS times.
 */
async function stableCopy(fs: SourceFs, path: string, dir: string): Promise<Copied | null> {
  const name = path.slice(path.lastIndexOf("/") + 1) || "db.sqlite";
  let last: Copied | null = null;
  for (let attempt = 0; attempt < COPY_ATTEMPTS; attempt++) {
    const before = await sqliteCheckpoint(fs, path);
    if (!before) return last;
    let bytes = 0;
    // WAL first: frames it holds are only read when the db copy's header agrees, and a
    // checkpoint that runs between the two copies then leaves a db at least as new.
    const present: Record<string, boolean> = {};
    for (const suffix of COMPANIONS) {
      await fs.remove(`${dir}/${name}${suffix}`);
      const st = await fs.stat(`${path}${suffix}`);
      present[suffix] = !!st?.isFile;
      if (!st?.isFile) continue;
      try {
        await fs.copyToTemp(`${path}${suffix}`, dir, `${name}${suffix}`);
        bytes += st.size;
      } catch {
        // a companion that vanished mid-copy (wal reset, journal deleted at commit)
        present[suffix] = false;
      }
    }
    // A copy keeps the source's mode: a read-only copy from the last attempt cannot be
    // overwritten, so it is removed first.
    await fs.remove(`${dir}/${name}`);
    const copyPath = await fs.copyToTemp(path, dir, name);
    bytes += before.db_size;
    const after = await sqliteCheckpoint(fs, path);
    const stable = !!after && sameSqliteCheckpoint(before, after);
    last = {
      copyPath,
      checkpoint: before,
      stable,
      journal: present["-journal"] && ((await fs.stat(`${dir}/${name}-journal`))?.size ?? 0) > 0,
      bytes,
    };
    if (stable) return last;
  }
  return last;
}

/**
 * Opens the copy read-only. A copy carrying a hot rollback journal cannot be opened read-only
 * (SQLite must roll it back first), so the private copy is then opened read-write.
 */
function openCopy(copyPath: string): DatabaseSync | Error {
  let first: unknown;
  for (const readOnly of [true, false]) {
    try {
      const db = new DatabaseSync(copyPath, { readOnly });
      // Opening is lazy: touch the schema so a hot journal or a bad header shows up here.
      db.prepare("SELECT count(*) FROM sqlite_master").get();
      return db;
    } catch (e) {
      first ??= e;
    }
  }
  return first instanceof Error ? first : new Error(String(first));
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Turns an SQLite error into an issue with a stable code. */
function dbIssue(path: string, e: unknown): SessionIssue {
  const message = messageOf(e);
  const errcode = (e as { errcode?: number })?.errcode;
  const primary = typeof errcode === "number" ? errcode & 0xff : undefined;
  let code = "db_unreadable";
  let what = "cannot be read";
  if (primary === 26 || primary === 11 || /not a database|malformed|corrupt/i.test(message)) {
    code = "db_corrupt";
    what = "is corrupt or half-written";
  } else if (primary === 5 || primary === 6 || /locked|busy/i.test(message)) {
    code = "db_locked";
    what = "is locked";
  } else if (/no such (table|column)/i.test(message)) {
    code = "db_missing_table";
    what = "lacks an expected table";
  }
  return {
    code,
    severity: "error",
    message: `Cannot read "${path}": the database ${what} (${message})`,
    file: path,
  };
}

/** Decodes a TEXT or BLOB cell holding UTF-8 text; null for NULL and other types. */
export function cellText(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return null;
}

/** What reading one database produced: deltas, problems with the database, row counts. */
export interface SqliteRead {
  deltas: DeltaDraft[];
  issues: SessionIssue[];
  counts: Record<string, number>;
}

/**
 * One pass over a database unit: an unchanged database (same db and wal stats) costs two
 * stats; a vanished one is a `file_missing` issue; otherwise a private copy is read whole by
 * `read`. A database that cannot be read as it is now keeps what was imported before, and any
 * change to it makes the next pass try again.
 */
export async function importSqliteUnit(
  unit: SourceUnit,
  ctx: ImportContext,
  read: (
    db: DatabaseSync,
    tables: Set<string>,
    sink: PayloadSink,
  ) => SqliteRead | Promise<SqliteRead>,
): Promise<UnitResult> {
  const current = await sqliteCheckpoint(ctx.fs, unit.path);
  if (!current) return vanishedResult(unit, ctx.resume);
  if (sameSqliteCheckpoint(ctx.resume?.checkpoint, current)) return unchangedResult(ctx.resume);
  const sink = new PayloadSink();
  const copy = await readSqliteCopy(ctx.fs, unit.path, (db, tables) => read(db, tables, sink));
  const issues = [...copy.issues, ...(copy.value?.issues ?? [])];
  if (!copy.value) {
    return {
      ...unchangedResult(ctx.resume, issues),
      checkpoint: copy.checkpoint ?? current,
      bytesRead: copy.bytesCopied,
    };
  }
  return passResult({
    mode: "full",
    deltas: copy.value.deltas,
    checkpoint: { ...(copy.checkpoint ?? current), row_counts: copy.value.counts },
    state: null,
    sink,
    bytesRead: copy.bytesCopied,
    issues,
  });
}
