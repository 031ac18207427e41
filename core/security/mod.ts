/**
 * @module
 * Chronicle's security engine: local regex and structure rules that find secrets and personal
 * data in transcripts and redact copies of them (`scanText`, `scanSession`), custom glob rules
 * and their store, SARIF output, and the live guard's decision before a tool call runs
 * (`preToolUseCheck`, `handlePreToolUse`). No model, no network; the original text is never
 * modified.
 */
export * from "./rules/mod.ts";
export * from "./glob_rule.ts";
export * from "./scan.ts";
export * from "./pretooluse.ts";
export * from "./sarif.ts";
export * from "./rule_store.ts";
export * from "./hook_settings.ts";
