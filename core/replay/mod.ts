/**
 * @module
 * Replay: play a recorded session's file edits and commands again, step by step, in a sandbox
 * seeded from the project's git history, and report where reality diverges from the
 * recording. Consumes canonical sessions only (from the store or from checked artifacts).
 * The sandbox's files and the shell jail are injected adapters (runtime/).
 */
export * from "./edits.ts";
export * from "./fidelity.ts";
export * from "./plan.ts";
export * from "./replay.ts";
export * from "./artifacts.ts";
export type * from "./types.ts";
