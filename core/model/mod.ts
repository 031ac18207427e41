/**
 * @module
 * The canonical session, schema v1: the one contract between capture (importers) and
 * everything that reads sessions (store, UI, export, replay). Types, validation, payload
 * references by SHA-256, and the delta an import pass produces.
 */
export * from "./types.ts";
export * from "./delta.ts";
export * from "./errors.ts";
export * from "./payload.ts";
export * from "./validate.ts";
export * from "./classify.ts";
