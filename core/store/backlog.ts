/**
 * The search backlog: operations whose rows are stored (their sessions browsable) but whose
 * search text is not in the index yet. A bulk import (a first import, `import --full`) writes
 * rows only, then indexes the backlog in slices (`indexBacklog`): the sessions are there to
 * open seconds earlier, and the index of a whole pass is built in a few large transactions.
 * Search says how many operations are still waiting (`SearchResult.unindexed`).
 *
 * Every write keeps one rule: an operation is in the index or in the backlog, never both, so
 * nothing is indexed twice. A deferred write queues its rowid; an inline write (a live
 * import) takes its rowid out of a non-empty backlog. A backlog row may outlive its operation
 * (deleted meanwhile, its rowid maybe reused by a new one): indexing reads the operation the
 * rowid names when it gets there, or skips it.
 */
import type { Operation } from "../model/mod.ts";
import type { PayloadStore } from "./payloads.ts";
import { indexText } from "./prepare.ts";
import type { Sql } from "./_sql.ts";

/**
 * Operations indexed per transaction: short write locks. FTS5 holds a transaction's terms in
 * memory until it commits: indexing a 300 MB backlog alone peaked at 202 MB with 4,000 a
 * slice, 137 MB with 1,000, 121 MB with 500, as fast.
 */
export const BACKLOG_SLICE = 500;

/** Puts operations in the backlog (their rows are written). */
export function queueForSearch(sql: Sql, rowids: readonly number[]): void {
  const ins = sql.stmt("INSERT OR IGNORE INTO search_backlog (rowid) VALUES (?)");
  for (const r of rowids) ins.run(r);
}

/** Takes operations out of the backlog: their text goes in the index now. */
export function unqueue(sql: Sql, rowids: readonly number[]): void {
  if (!rowids.length || !sql.stmt("SELECT 1 FROM search_backlog LIMIT 1").get()) return;
  const del = sql.stmt("DELETE FROM search_backlog WHERE rowid = ?");
  for (const r of rowids) del.run(r);
}

/** How many operations are waiting to be indexed. */
export function backlogSize(sql: Sql): number {
  return sql.count("SELECT count(*) AS n FROM search_backlog");
}

/**
 * Indexes up to `max` operations of the backlog, oldest rowid first, in the caller's
 * transaction. Returns how many it took off the backlog (indexed, or gone).
 */
export function indexBacklog(sql: Sql, payloads: PayloadStore, max = BACKLOG_SLICE): number {
  const rows = sql.stmt(
    `SELECT b.rowid AS rowid, o.doc AS doc FROM search_backlog b
       LEFT JOIN operations o ON o.rowid = b.rowid ORDER BY b.rowid LIMIT ?`,
  ).all(max) as { rowid: number; doc: string | null }[];
  if (!rows.length) return 0;
  const ops = rows.map((r) => r.doc === null ? null : JSON.parse(r.doc) as Operation);
  // The slice's payloads in one query (77,000 lookups one by one took 1.4 s of a 300 MB
  // corpus's 6.6 s backlog).
  const wanted = new Set<string>();
  for (const op of ops) {
    for (const ref of [op?.request, op?.response]) {
      if (ref && "sha256" in ref) wanted.add(ref.sha256);
    }
  }
  const bytes = payloads.many([...wanted]);
  const insert = sql.stmt("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
  for (let i = 0; i < rows.length; i++) {
    const op = ops[i];
    if (!op) continue; // deleted since it was queued
    const body = indexText(op, bytes);
    if (body) insert.run(rows[i].rowid, body);
  }
  sql.stmt("DELETE FROM search_backlog WHERE rowid <= ?").run(rows[rows.length - 1].rowid);
  return rows.length;
}
