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

/** The bytes of one key of `UnitResult.seen`. */
export const SEEN_KEY_BYTES = 16;

/**
 * A pass asked to resume from seen records its importer's thread kept (`SeenPrior`'s
 * `{ kept }`) that the thread does not hold (a worker started since): the caller reads the
 * pass again with the store's keys.
 */
export const SEEN_NOT_KEPT = "the seen records of this log are not kept here any more";

/** How many keys the seen records are after a pass (the next slice's `{ kept }`). */
export function seenAfter(seen: UnitResult["seen"]): { kept: number } | undefined {
  return seen && { kept: seen.from + seen.added.byteLength / SEEN_KEY_BYTES };
}
