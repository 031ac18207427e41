/**
 * The logs a session's rows were read from, by number: each session's log paths are rows of
 * `op_files`, and an operation (migration 21) or a usage row (23) names its own by `file_id`
 * rather than repeating a path of a hundred-odd bytes on every row. A session's paths go with
 * it (`deleteSession`).
 */
import type { Sql } from "./_sql.ts";

/**
 * SQL: an operations or usage row is of the log `path` (its session's file number); by default
 * the session is `?1` and the path `?2`.
 */
export const FILE_IS = (session = "?1", path = "?2") =>
  `file_id = (SELECT id FROM op_files WHERE session_id = ${session} AND path = ${path})`;

/** The number of a session's log `path` in `op_files`, given it the first time. */
export function opFileId(sql: Sql, sessionId: string, path: string): number {
  const row = sql.stmt("SELECT id FROM op_files WHERE session_id = ? AND path = ?")
    .get(sessionId, path) as { id: number } | undefined;
  if (row) return row.id;
  return Number(
    sql.stmt("INSERT INTO op_files (session_id, path) VALUES (?, ?)").run(sessionId, path)
      .lastInsertRowid,
  );
}
