/** Every importer Chronicle knows, in display order. Adding an agent = one file + one line here. */
import type { SourceId } from "../model/types.ts";
import type { Importer } from "./types.ts";
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import { gemini } from "./gemini.ts";
import { cursor } from "./cursor.ts";
import { opencode } from "./opencode.ts";

export const IMPORTERS: readonly Importer[] = [
  claudeCode,
  codex,
  cursor,
  opencode,
  gemini,
];

export function importerFor(id: string): Importer | undefined {
  return IMPORTERS.find((i) => i.id === id);
}

export const SOURCE_IDS: readonly SourceId[] = IMPORTERS.map((i) => i.id);
