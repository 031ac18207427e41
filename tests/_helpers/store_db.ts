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
