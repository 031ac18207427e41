/**
 * Checkpoints of SQLite sources: the db and wal mtimes and sizes, so an unchanged database
 * costs two stats. Shared by the importers and the import pass, which skips an unchanged unit
 * before asking the worker.
 */
import type { Checkpoint, SqliteCheckpoint } from "../model/types.ts";
import type { FileStat, SourceFs } from "./types.ts";

/**
 * The checkpoint of a database: db and wal mtimes and sizes, from two stats. Null when the
 * database file does not exist (or is not a file).
 */
export async function sqliteCheckpoint(
  fs: SourceFs,
  path: string,
): Promise<SqliteCheckpoint | null> {
  const db = await fs.stat(path);
  if (!db || !db.isFile) return null;
  const wal = await fs.stat(`${path}-wal`);
  return checkpointOf(path, db, wal);
}

function checkpointOf(path: string, db: FileStat, wal: FileStat | null): SqliteCheckpoint {
  return {
    kind: "sqlite",
    file: path,
    db_mtime_ms: db.mtimeMs,
    db_size: db.size,
    wal_mtime_ms: wal?.isFile ? wal.mtimeMs : null,
    wal_size: wal?.isFile ? wal.size : 0,
  };
}

/**
 * True when a database has not changed since `previous` (same db and wal mtimes and sizes) and
 * its read is done (a read in parts that stopped half-way, `more`, has more to read).
 */
export function sameSqliteCheckpoint(
  previous: Checkpoint | undefined,
  current: SqliteCheckpoint,
): boolean {
  return previous?.kind === "sqlite" && !previous.more && sameDatabase(previous, current);
}

/** True when two checkpoints describe the same database as it was (db and wal stats). */
export function sameDatabase(a: SqliteCheckpoint, b: SqliteCheckpoint): boolean {
  return a.file === b.file && a.db_mtime_ms === b.db_mtime_ms && a.db_size === b.db_size &&
    a.wal_mtime_ms === b.wal_mtime_ms && a.wal_size === b.wal_size;
}
