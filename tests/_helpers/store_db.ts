/**
 * The store's database handle, for tests only: no module outside core/store reaches it, but a
 * test may inspect rows or inject a failure (a trigger, a failing commit) to check the store.
 */
import type { DatabaseSync } from "node:sqlite";
import type { ChronicleStore } from "../../core/store/mod.ts";

export const dbOf = (store: ChronicleStore): DatabaseSync =>
  (store as unknown as { db: DatabaseSync }).db;

/** The column names of a table of `db`, in order. */
export const columnsOf = (db: DatabaseSync, table: string): string[] =>
  (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);

/**
 * Puts the operations table back as it was before migration 26: each row names its session by
 * id (`session_id`), not by number; with `fileColumn`, also as before 21: its log by path
 * (`file`), without `op_files`. The migrations are marked not applied, to run on the next open.
 */
export function operationsBefore26(db: DatabaseSync, { fileColumn = false } = {}): void {
  const file = fileColumn
    ? { col: "file TEXT NOT NULL", value: "(SELECT path FROM op_files WHERE id = o.file_id)" }
    : { col: "file_id INTEGER NOT NULL", value: "o.file_id" };
  db.exec(`
    CREATE TABLE operations_v25 (
      rowid INTEGER PRIMARY KEY, session_id TEXT NOT NULL, op_id TEXT NOT NULL,
      connection TEXT NOT NULL, ${file.col}, ts_ms REAL, rank INTEGER NOT NULL,
      line INTEGER NOT NULL, block INTEGER NOT NULL, kind TEXT NOT NULL, effect TEXT NOT NULL,
      tool TEXT, target TEXT, is_error INTEGER, completeness TEXT NOT NULL, model TEXT,
      doc TEXT NOT NULL, stamp INTEGER NOT NULL DEFAULT 0, kept INTEGER,
      UNIQUE (session_id, op_id));
    INSERT INTO operations_v25 SELECT o.rowid, s.id, o.op_id, o.connection, ${file.value},
      o.ts_ms, o.rank, o.line, o.block, o.kind, o.effect, o.tool, o.target, o.is_error,
      o.completeness, o.model, o.doc, o.stamp, o.kept
      FROM operations o JOIN sessions s ON s.num = o.session ORDER BY o.rowid;
    DROP TABLE operations;
    ALTER TABLE operations_v25 RENAME TO operations;
    CREATE INDEX operations_order ON operations(session_id, ts_ms, rank, line, block);
    CREATE INDEX operations_changes ON operations(session_id, stamp);
    ${fileColumn ? "DROP TABLE op_files; DELETE FROM migrations WHERE version = 21;" : ""}
    DELETE FROM migrations WHERE version = 26;`);
}
