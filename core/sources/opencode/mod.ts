/**
 * OpenCode importer: the SQLite database `opencode.db` (channel builds `opencode-<name>.db`)
 * in OpenCode's data folder, and the older `storage/` JSON tree it migrated from.
 *
 * Data folder: `$OPENCODE_DATA_DIR`, else `$XDG_DATA_HOME/opencode`, else
 * `~/.local/share/opencode` (OpenCode uses the XDG layout on every platform).
 *
 * One database (or one storage tree) is one unit yielding one delta per session. A session
 * with a `parent_id` (a sub-agent run by the `task` tool) joins its root session as a
 * sub-agent connection. Messages hold parts: text, reasoning, tool (state pending / running /
 * completed / error), patch, step-start / step-finish (usage per step), compaction, subtask,
 * file, agent, retry, snapshot; unknown part types are counted as issues.
 *
 * SQLite rows have no lines: an operation's `source_range.lines` holds the row's ordinal in
 * the session's read order and `bytes` is [0, 0]; `record_ids` name the part and message.
 */
import { agentName } from "../../model/agents.ts";
import type { ImportContext, Importer, SourceUnit, UnitResult } from "../types.ts";
import { SOURCE } from "./build.ts";
import { importDb } from "./db.ts";
import { detect, discover } from "./layout.ts";
import { importTree } from "./tree.ts";

export { opencodeDataDirs } from "./layout.ts";

function importUnit(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  return unit.kind === "tree" ? importTree(unit, ctx) : importDb(unit, ctx);
}

export const opencode: Importer<typeof SOURCE> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  discover,
  detect,
  import: importUnit,
  // a big opencode.db is read in parts of whole root sessions (db.ts); the JSON tree whole
  slices: true,
};
