/**
 * @module
 * Importers: one per agent (Claude Code, Codex CLI, Cursor, OpenCode, Gemini CLI), each a plain
 * object `{ id, displayName, discover, detect, import }` in the registry. They read the agents'
 * logs through an injected, read-only `SourceFs` and turn them into canonical session deltas,
 * incrementally from checkpoints.
 */
export * from "./types.ts";
export { unchangedResult } from "./results.ts";
export { importerFor, IMPORTERS, SOURCE_IDS } from "./registry.ts";
export { makeJsonlCheckpoint, planJsonlResume, readJsonl } from "./jsonl.ts";
export type { JsonlLine, ReadJsonlOptions, ResumePlan } from "./jsonl.ts";
