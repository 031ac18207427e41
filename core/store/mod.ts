/**
 * @module
 * The local store (node:sqlite, WAL, FTS5): sessions merged idempotently from import deltas,
 * content-addressed payloads (the big ones in pack files), incremental checkpoints, and the
 * queries the CLI and server use.
 */
export * from "./store.ts";
export * from "./import.ts";
export * from "./prepare.ts";
export * from "./packs.ts";
export { MIGRATIONS } from "./schema.ts";
