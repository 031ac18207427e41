/** Claude Code's `toolUseResult`: the structured extras of a tool result, trimmed for storage. */
import { isObj, type Json } from "../_import_kit.ts";

/** Extras of a tool result this small stay inline in the operation's extensions. */
export const INLINE_TUR_CHARS = 2048;

/**
 * Fields of Claude Code's `toolUseResult` that repeat what the operation already holds (the
 * tool input or result) or whole file copies. They are left out of the stored extras, named in
 * `tool_use_result_dropped`, and remain readable in the source file at the operation's
 * provenance range.
 */
const TUR_BULK_FIELDS = [
  "stdout",
  "stderr",
  "content",
  "originalFile",
  "originalFileContents",
  "oldString",
  "newString",
  "structuredPatch",
  "edits",
  // Glob's and Grep's matching paths: the result lists them (4 MB of a 300 MB history's store)
  "filenames",
];

export function trimToolUseResult(tur: unknown): { kept: unknown; dropped: string[] } {
  if (!isObj(tur)) return { kept: tur, dropped: [] };
  const kept: Json = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(tur)) {
    if (
      TUR_BULK_FIELDS.includes(k) &&
      (typeof v === "string" ? v.length > 256 : Array.isArray(v) && v.length > 0)
    ) {
      dropped.push(k);
    } else if (k === "file" && isObj(v) && typeof v.content === "string") {
      const { content: _content, ...rest } = v;
      kept[k] = rest;
      dropped.push("file.content");
    } else kept[k] = v;
  }
  return { kept, dropped };
}

/**
 * Where Claude Code kept a tool's whole output when the log holds only a preview: the result's
 * `persistedOutputPath`, or the path its `<persisted-output>` text names.
 */
export function persistedOutputPath(tur: unknown, content: unknown): string | undefined {
  if (isObj(tur) && typeof tur.persistedOutputPath === "string" && tur.persistedOutputPath) {
    return tur.persistedOutputPath;
  }
  const text = typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((b) => (isObj(b) && typeof b.text === "string" ? b.text : "")).join("\n")
    : "";
  if (!text.startsWith("<persisted-output>")) return undefined;
  return /Full output saved to: (\S+)/.exec(text)?.[1];
}
