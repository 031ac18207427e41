/**
 * Every importer Chronicle knows, one per agent of `core/model/agents.ts`, in that list's order.
 * Adding an agent: its entry in `AGENTS`, its importer folder, and its line here (the type makes
 * a missing line a compile error).
 */
import { AGENTS, SOURCE_IDS, type SourceId } from "../model/agents.ts";
import type { Importer } from "./types.ts";
import { claudeCode } from "./claude_code/mod.ts";
import { codex } from "./codex/mod.ts";
import { cursor } from "./cursor/mod.ts";
import { gemini } from "./gemini/mod.ts";
import { opencode } from "./opencode/mod.ts";
import { qwen } from "./qwen/mod.ts";
import { copilot } from "./copilot/mod.ts";

const BY_SOURCE: { readonly [K in SourceId]: Importer<K> } = {
  "claude-code": claudeCode,
  codex,
  cursor,
  opencode,
  gemini,
  qwen,
  copilot,
};

export const IMPORTERS: readonly Importer[] = AGENTS.map((a) => BY_SOURCE[a.id]);

export function importerFor(id: string): Importer | undefined {
  return (BY_SOURCE as Record<string, Importer | undefined>)[id];
}

export { SOURCE_IDS };
