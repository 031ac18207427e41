/**
 * @module
 * The git engine, for replay (seed a sandbox from the commit before a session) and causality
 * (the code at a moment): commit at a time, tree and file at a commit, commits between two
 * times, changed files, archiving a commit. Runs git through an injected ProcessRunner with
 * argument vectors only; paths outside the repository are refused.
 */
export * from "./git.ts";
export * from "./paths.ts";
export type * from "./runner.ts";
