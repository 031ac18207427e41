/**
 * @module
 * The local store (node:sqlite, WAL, FTS5): sessions merged idempotently from import deltas,
 * content-addressed payloads, incremental checkpoints, and the queries the CLI and server use.
 */
export * from "./store.ts";
export * from "./import.ts";
export * from "./prepare.ts";
export { MIGRATIONS } from "./schema.ts";
