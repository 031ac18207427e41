/**
 * Reading a foreign SQLite database (Cursor's state.vscdb, OpenCode's opencode.db) without
 * ever opening it in place: the db is copied with its `-wal`, `-shm` (and a rollback
 * `-journal`, if a writer left one) into a scratch folder, the copy is opened read-only, read,
 * closed and deleted. Problems (locked, corrupt, half-written, missing tables) come back as
 * issues, never as exceptions, so one bad database never stops the other sources.
 *
 * Private to core/sources.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { PayloadSink } from "../model/payload.ts";
import type { SessionIssue, SqliteCheckpoint } from "../model/types.ts";
import type { ImportContext, SourceFs, SourceUnit, UnitResult } from "./types.ts";
import { type DeltaDraft, isObj, passResult } from "./_import_kit.ts";
import { sameDatabase, sameSqliteCheckpoint, sqliteCheckpoint } from "./sqlite_checkpoint.ts";
import { FILE_MISSING, unchangedResult, vanishedResult } from "./results.ts";

export { sameSqliteCheckpoint, sqliteCheckpoint };

/** The companion files SQLite keeps beside a database. */
const COMPANIONS = ["-wal", "-shm", "-journal"] as const;

/** How many times a copy is retried when the database changes while it is being copied. */
const COPY_ATTEMPTS = 3;

/** A copy made and opened (`copy`), or why not (`copy` absent). */
interface CopyOpened {
  copy?: OpenCopy;
  /** Problems with the database as a whole (locked, corrupt, changed while copied...). */
  issues: SessionIssue[];
  /** The checkpoint taken before the copy (null when the database is gone). */
  checkpoint: SqliteCheckpoint | null;
  /** Bytes copied (db + companions). */
  bytesCopied: number;
}

/** A private copy of a database, open read-only, and the scratch folder it is in. */
interface OpenCopy {
  path: string;
  dir: string;
  db: DatabaseSync;
  tables: Set<string>;
  /** The database's checkpoint taken before it was copied. */
  checkpoint: SqliteCheckpoint;
}

/**
 * Copies the database at `path` with its companions to a scratch folder and opens the copy
 * read-only. Never throws for a bad database: failures are issues.
 */
async function openSqliteCopy(fs: SourceFs, path: string): Promise<CopyOpened> {
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
    const result = { issues, checkpoint: copied.checkpoint, bytesCopied: copied.bytes };
    const db = openCopy(copied.copyPath);
    if (db instanceof Error) {
      issues.push(dbIssue(path, db));
      return result;
    }
    try {
      const tables = new Set(
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]).map((r) => r.name),
      );
      const copy = { path, dir, db, tables, checkpoint: copied.checkpoint };
      dir = undefined; // the copy's now: closeCopy removes it
      return { ...result, copy };
    } catch (e) {
      closeDb(db);
      issues.push(dbIssue(path, e));
      return result;
    }
  } catch (e) {
    issue("db_unreadable", "error", `Cannot read "${path}": ${messageOf(e)}`);
    return { issues, checkpoint: null, bytesCopied: 0 };
  } finally {
    if (dir) await fs.remove(dir).catch(() => {});
  }
}

async function closeCopy(fs: SourceFs, copy: OpenCopy): Promise<void> {
  closeDb(copy.db);
  await fs.remove(copy.dir).catch(() => {});
}

function closeDb(db: DatabaseSync): void {
  try {
    db.close();
  } catch {
    // closing a copy that failed to read: nothing left to do
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

/**
 * A query's rows as arrays of their cells, in the SELECT's order. node:sqlite (Deno 2.9) makes
 * each row an object in dictionary mode, slow to build and to read: a reader of thousands of
 * rows reads them as arrays.
 */
export function rowArrays(
  db: DatabaseSync,
  sql: string,
  ...params: (string | number | null)[]
): unknown[][] {
  const stmt = db.prepare(sql) as StatementSync & { setReturnArrays(on: boolean): void };
  stmt.setReturnArrays(true);
  return stmt.all(...params) as unknown as unknown[][];
}

/**
 * Orders two cells as SQLite's ORDER BY does with its BINARY collation: NULL first, then
 * numbers, then text (by its UTF-8 bytes, so by code point), then bytes. For rows a reader
 * sorts itself rather than have SQLite sort them with every cell they carry.
 */
export function sqlOrder(a: unknown, b: unknown): number {
  const ra = rankOf(a), rb = rankOf(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (ra === 2) return textOrder(a as string, b as string);
  if (ra === 3) return bytesOrder(a as Uint8Array, b as Uint8Array);
  return 0;
}

/** NULL 0, a number 1, text 2, bytes 3 (anything else sorts with NULL). */
function rankOf(v: unknown): number {
  return typeof v === "number" || typeof v === "bigint"
    ? 1
    : typeof v === "string"
    ? 2
    : v instanceof Uint8Array
    ? 3
    : 0;
}

/**
 * Two strings in code point order (UTF-8's byte order): UTF-16 code units order the same but
 * for a surrogate (a character above U+FFFF), which sorts after U+E000-U+FFFF.
 */
function textOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number) =>
  unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;

function bytesOrder(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.byteLength, b.byteLength);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.byteLength - b.byteLength;
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
  /**
   * The read stopped at its part's budget: the key of the last row read, which the next part
   * reads on after. Absent when the database was read to its end.
   */
  next?: string;
  /**
   * Sessions the database still holds as the store has them (the reader found them unchanged
   * since its saved state) and did not read again: the store keeps them as they are.
   */
  unchanged?: string[];
  /** The reader's state, saved with the checkpoint and given back to its next read. */
  state?: unknown;
}

/**
 * Which part of a database a read reads: on after the key `after` (absent: from the start),
 * stopping at the first whole session past `budget` bytes of rows read (Infinity: to the end).
 */
export interface SqlitePart {
  after?: string;
  budget: number;
}

/**
 * What a database reader that skips unchanged sessions saves with its checkpoint: each
 * session's mark (its own fingerprint of the rows) as the last whole read found it (`marks`),
 * and the marks a read in parts has taken so far (`read`).
 */
interface MarksState {
  v: 1;
  marks: Record<string, string>;
  read?: Record<string, string>;
}

/** The marks a read compares with (`known`) and those it takes as it goes (`seen`). */
export interface SessionMarks {
  known: Record<string, string>;
  seen: Record<string, string>;
}

/** The marks a read starts from, given the state its last read saved. */
export function startMarks(saved: unknown, part: SqlitePart): SessionMarks {
  const state = isObj(saved) && saved.v === 1 && isObj(saved.marks)
    ? saved as unknown as MarksState
    : undefined;
  // a read in parts going on keeps the marks its earlier parts took
  return {
    known: state?.marks ?? {},
    seen: part.after !== undefined ? { ...state?.read } : {},
  };
}

/** The state a read saves: a whole read's marks, or, for a part with more to come, both. */
export function savedMarks(marks: SessionMarks, next: string | undefined): MarksState {
  return next === undefined
    ? { v: 1, marks: marks.seen }
    : { v: 1, marks: marks.known, read: marks.seen };
}

/**
 * The copy a read in parts keeps open between its parts (at most one, in the thread that
 * reads): the next part reads on in it, so a big database is copied once. It is closed with
 * the read's last part, or when anything else is read first.
 */
let keptCopy: OpenCopy | null = null;

async function releaseKeptCopy(fs: SourceFs): Promise<void> {
  const copy = keptCopy;
  keptCopy = null;
  if (copy) await closeCopy(fs, copy);
}

/**
 * One pass over a database unit: an unchanged database (same db and wal stats) costs two
 * stats; a vanished one is a `file_missing` issue; otherwise a private copy is read by `read`,
 * whole, or (with `ImportContext.maxPassBytes`, for a reader that honours its part) a part of
 * whole sessions at a time, its checkpoint saying `more` until the last, the copy kept open
 * between parts. A read in parts goes on only while the database is as its first part found
 * it; a database that changed starts a read again from its start. A database that cannot be
 * read as it is now keeps what was imported before, and any change to it makes the next pass
 * try again.
 */
export async function importSqliteUnit(
  unit: SourceUnit,
  ctx: ImportContext,
  read: (
    db: DatabaseSync,
    tables: Set<string>,
    sink: PayloadSink,
    part: SqlitePart,
    /** The state the reader's last read saved (undefined for a read from nothing). */
    saved: unknown,
  ) => SqliteRead | Promise<SqliteRead>,
): Promise<UnitResult> {
  const current = await sqliteCheckpoint(ctx.fs, unit.path);
  const prior = ctx.resume?.checkpoint?.kind === "sqlite" ? ctx.resume.checkpoint : undefined;
  // the read in parts to go on with, while the database is as it was
  const more = prior?.more && current && sameDatabase(prior, current) ? prior.more : undefined;
  let copy = keptCopy?.path === unit.path && more && sameDatabase(keptCopy.checkpoint, prior!)
    ? keptCopy
    : null;
  if (copy) keptCopy = null;
  else await releaseKeptCopy(ctx.fs);
  if (!current) return vanishedResult(unit, ctx.resume);
  if (sameSqliteCheckpoint(ctx.resume?.checkpoint, current)) return unchangedResult(ctx.resume);
  const issues: SessionIssue[] = [];
  let bytesRead = 0;
  if (!copy) {
    const opened = await openSqliteCopy(ctx.fs, unit.path);
    issues.push(...opened.issues);
    bytesRead = opened.bytesCopied;
    if (!opened.copy) {
      return {
        ...unchangedResult(ctx.resume, issues),
        checkpoint: opened.checkpoint ?? current,
        bytesRead,
      };
    }
    copy = opened.copy;
  }
  // a new copy of a database that changed since the read's last part starts the read again
  const goOn = more && sameDatabase(copy.checkpoint, prior!) ? more : undefined;
  const sink = new PayloadSink();
  let value: SqliteRead;
  try {
    value = await read(copy.db, copy.tables, sink, {
      after: goOn?.after,
      budget: ctx.maxPassBytes ?? Infinity,
    }, ctx.resume?.state);
  } catch (e) {
    await closeCopy(ctx.fs, copy);
    issues.push(dbIssue(unit.path, e));
    return { ...unchangedResult(ctx.resume, issues), checkpoint: copy.checkpoint, bytesRead };
  }
  // the rows counted so far: the read's last part counts what one read would
  const counts = { ...value.counts };
  for (const [k, n] of Object.entries(goOn ? prior?.row_counts ?? {} : {})) {
    counts[k] = (counts[k] ?? 0) + n;
  }
  const checkpoint: SqliteCheckpoint = { ...copy.checkpoint, row_counts: counts };
  const unchanged = value.unchanged ?? [];
  if (value.next !== undefined) {
    const read = value.deltas.map((d) => d.session_id);
    const held = new Set([...(goOn?.held ?? []), ...read, ...unchanged]);
    checkpoint.more = { after: value.next, held: [...held] };
    keptCopy = copy;
  } else await closeCopy(ctx.fs, copy);
  const result: UnitResult = passResult({
    mode: "full",
    deltas: value.deltas,
    checkpoint,
    state: value.state ?? null,
    sink,
    bytesRead,
    issues: [...issues, ...value.issues],
  });
  if (goOn) result.partsBefore = goOn.held;
  if (unchanged.length) result.unchangedSessions = unchanged;
  return result;
}
