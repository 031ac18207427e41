/**
 * @module
 * The local store (node:sqlite, WAL, FTS5): sessions merged idempotently from import deltas,
 * content-addressed payloads (the big ones in pack files), incremental checkpoints, and the
 * typed queries the CLI and server use. No module outside this folder runs SQL.
 */
export * from "./store.ts";
export * from "./types.ts";
export * from "./import.ts";
export * from "./prepare.ts";
export * from "./unit_wire.ts";
export * from "./packs.ts";
export * from "./write_group.ts";
export * from "./search_query.ts";
export {
  FRAME_CHECK_COST,
  makeSnippet,
  PHRASE_CHECKS,
  RANGED_FIRST,
  SEARCH_PAGE_MAX,
  TEXT_FILTER_SPAN,
} from "./search.ts";
export {
  FILTER_STRATEGIES,
  type FilterStrategy,
  inRuns,
  JOIN_COST_OPS,
  ownersOf,
  RUNS_MAX_OPS,
  RUNS_SHARE,
  runsOf,
} from "./filter_runs.ts";
export {
  indexBody,
  INDEXED_PAYLOAD_BYTES,
  INDEXED_TEXT_BYTES,
  INDEXED_TEXT_CHARS,
  joinedPairs,
  searchBody,
} from "./search_text.ts";
export { INDEX_WORD, PAIR_MARK, pairTerm } from "./search_words.ts";
export { RuleTable } from "./rule_table.ts";
export type {
  ChangeCursor,
  ChangedOperation,
  SessionChanges,
  SessionChangesOptions,
} from "./live_query.ts";
export { type NewShareRow, type ShareRow, ShareTable } from "./shares.ts";
export type { CanonicalImportOutcome } from "./canonical.ts";
export { MIGRATIONS } from "./schema.ts";
export type { AdmitOptions } from "./admit.ts";
export { COMPACT_DEAD_SHARE } from "./compact.ts";
export type { CompressedSlice, PlainCursor, PlainSlice } from "./payloads.ts";
export { compressPlainFrames } from "./payload_codec.ts";
