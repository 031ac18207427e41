/**
 * The write side of change stamps (migration 5): each unit an import applies takes the next
 * stamp of the store's clock, inside its transaction, so stamps become visible in the order they
 * were taken. Its operations and the sessions it touched carry it. A full re-read writes a
 * file's rows again: an operation that comes back unchanged gets its old stamp back (a live view
 * is not sent what it already has), one the file no longer holds (now kept, apply.ts) is sent
 * again with its mark, and a session that lost operations (a step that moved, no longer
 * doubled) gets a reset stamp (a live view reloads it). The read side is `live_query.ts`.
 */
import { sessionNum, type Sql } from "./_sql.ts";
import { FILE_IS } from "./op_files.ts";
import { COLUMN_FIELDS } from "./prepare.ts";

/** The document without what a new pass changes by itself: the epochs of its provenance. */
const content = (t: string) =>
  `json_remove(${t}.doc, '$.provenance.epoch', '$.provenance.completion.epoch')`;

/** Columns compared to decide that a re-written operation did not change. */
const SAME = ["connection", "rank", "line", "block"]
  .map((c) => `o.${c} = r.${c}`)
  // (the fields a stored doc leaves to its columns, prepare.ts)
  .concat(["ts_ms", "is_error", ...COLUMN_FIELDS].map((c) => `o.${c} IS r.${c}`))
  .concat([
    // an operation the file no longer holds (now kept) is news to a live view
    "o.kept IS r.kept",
    `(o.doc = r.doc OR ${content("o")} = ${content("r")})`,
  ])
  .join(" AND ");

export class ChangeStamps {
  /** Rows were kept since the last `settle`. */
  private kept = false;
  /** The stamp of the unit being applied (from the last `next`). */
  current = 0;

  constructor(private readonly sql: Sql) {
    this.prepareTemp();
  }

  /** Makes the temporary table again (a change of `temp_store` drops it: compact.ts). */
  prepareTemp(): void {
    // Per connection and in memory (temp_store): what a full re-read is about to replace.
    this.sql.db.exec(`CREATE TEMP TABLE IF NOT EXISTS replaced_ops (
      session INTEGER NOT NULL, op_id TEXT NOT NULL, stamp INTEGER NOT NULL,
      connection TEXT NOT NULL, ts_ms REAL, rank INTEGER NOT NULL, line INTEGER NOT NULL,
      block INTEGER NOT NULL, is_error INTEGER, kind TEXT NOT NULL, effect TEXT NOT NULL,
      tool TEXT, target TEXT, completeness TEXT NOT NULL, model TEXT, doc TEXT NOT NULL,
      kept INTEGER, PRIMARY KEY (session, op_id)) WITHOUT ROWID`);
  }

  /** Takes the next stamp. Call inside the unit's transaction. */
  next(): number {
    const row = this.sql.stmt(
      "UPDATE change_clock SET stamp = stamp + 1 WHERE id = 1 RETURNING stamp",
    ).get() as { stamp: number };
    return this.current = Number(row.stamp);
  }

  /** Before a full re-read removes `file`'s operations of a session: remembers them. */
  keep(sessionId: string, file: string): void {
    this.sql.stmt(
      `INSERT OR REPLACE INTO temp.replaced_ops SELECT session, op_id, stamp, connection,
         ts_ms, rank, line, block, is_error, kind, effect, tool, target, completeness, model,
         doc, kept
       FROM operations WHERE session = ${sessionNum("?1")} AND ${FILE_IS()}`,
    ).run(sessionId, file);
    this.kept = true;
  }

  /**
   * After a unit's writes: operations written again unchanged get their stamps back, sessions
   * that lost operations are reset, and every touched session takes `stamp`.
   */
  settle(stamp: number, sessions: Iterable<string>): void {
    if (this.kept) {
      this.kept = false;
      this.sql.stmt(
        `UPDATE operations AS o SET stamp = r.stamp FROM temp.replaced_ops AS r
         WHERE o.session = r.session AND o.op_id = r.op_id AND ${SAME}`,
      ).run();
      const lost = this.sql.stmt(
        `SELECT DISTINCT s.id AS session_id FROM temp.replaced_ops AS r
         JOIN sessions s ON s.num = r.session WHERE NOT EXISTS
           (SELECT 1 FROM operations o WHERE o.session = r.session AND o.op_id = r.op_id)`,
      ).all() as { session_id: string }[];
      const reset = this.sql.stmt("UPDATE sessions SET reset_stamp = ? WHERE id = ?");
      for (const r of lost) reset.run(stamp, r.session_id);
      this.sql.stmt("DELETE FROM temp.replaced_ops").run();
    }
    const mark = this.sql.stmt("UPDATE sessions SET stamp = ? WHERE id = ?");
    for (const id of sessions) mark.run(stamp, id);
  }
}
