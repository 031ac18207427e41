/**
 * The store's database handle, for tests only: no module outside core/store reaches it, but a
 * test may inspect rows or inject a failure (a trigger, a failing commit) to check the store.
 */
import type { DatabaseSync } from "node:sqlite";
import type { ChronicleStore } from "../../core/store/mod.ts";

export const dbOf = (store: ChronicleStore): DatabaseSync =>
  (store as unknown as { db: DatabaseSync }).db;
