/**
 * @module
 * The canonical session, schema v1: the one contract between capture (importers) and
 * everything that reads sessions (store, UI, export, replay). Types, validation, payload
 * references by SHA-256, the delta an import pass produces, and the shared vocabulary: the
 * agents, their tools, injected context and exit codes in output text.
 */
export * from "./types.ts";
export * from "./agents.ts";
export * from "./delta.ts";
export * from "./errors.ts";
export * from "./payload.ts";
export * from "./validate.ts";
export * from "./classify.ts";
export * from "./tools.ts";
export * from "./injected.ts";
export * from "./titles.ts";
export * from "./text_line.ts";
export * from "./exit_code.ts";
export * from "./spawn.ts";
export * from "./tool_text.ts";
export * from "./cut_mark.ts";
