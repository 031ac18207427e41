/** Results every importer returns alike when it reads nothing. */
import type { Checkpoint, SessionIssue } from "../model/mod.ts";
import type { ImportContext, SourceUnit, UnitResult } from "./types.ts";

/** Nothing read: the previous checkpoint and state stay, with any unit-level issues. */
export function unchangedResult(
  resume: ImportContext["resume"],
  issues: SessionIssue[] = [],
): UnitResult {
  return {
    mode: "unchanged",
    deltas: [],
    checkpoint: resume?.checkpoint ?? null,
    state: resume?.state ?? null,
    issues,
    payloads: new Map(),
    bytesRead: 0,
  };
}

/** The issue code of a unit whose file is gone (or is no longer a regular file). */
export const FILE_MISSING = "file_missing";

/** The unit's file is gone: nothing read, what was imported from it stays, one issue says so. */
export function vanishedResult(unit: SourceUnit, resume: ImportContext["resume"]): UnitResult {
  return unchangedResult(resume, [{
    code: FILE_MISSING,
    message: `Cannot import "${unit.path}": it is gone or not a regular file`,
    severity: "warning",
    file: unit.path,
  }]);
}

/**
 * A checkpoint of a pass that stopped before its log's end on purpose (a slice of a big log, a
 * part of a big database, `ImportContext.maxPassBytes`): the next slice is to come.
 */
export function slicedOn(cp: Checkpoint | null | undefined): boolean {
  return cp?.kind === "jsonl" ? cp.more === true : cp?.kind === "sqlite" && cp.more !== undefined;
}
