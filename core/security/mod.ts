/**
 * @module
 * Chronicle's security engine: local regex and structure rules that find secrets and personal
 * data in transcripts and redact copies of them (`scanText`, `scanSession`), custom glob rules
 * (matched in linear time) and their store, SARIF output, and the live guard's decision before
 * a tool call runs (`preToolUseCheck`: a shell lexer, the sensitive-path policy, file reads
 * with a time budget). No model, no network; the original text is never modified.
 */
export * from "./rules/mod.ts";
export * from "./glob_rule.ts";
export * from "./scan.ts";
export * from "./pretooluse.ts";
export * from "./sarif.ts";
export * from "./rule_store.ts";
export * from "./hook_settings.ts";
export * from "./budget.ts";
export * from "./journal.ts";
export * from "./sensitive_paths.ts";
export {
  type DirChange,
  dirChange,
  parseShell,
  type ShellParse,
  type ShellWord,
  type SimpleCommand,
} from "./shell_words.ts";
export { decodeForScan } from "./decode.ts";
export { isLoopbackHostname, TOKEN_HEADER } from "./local_access.ts";
export { compileGlobMatcher, forEachMatch, globMatches } from "./glob_match.ts";
export { termSafe, termSafeLines } from "./terminal.ts";
