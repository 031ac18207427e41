/** Results every importer returns alike. */
import type { SessionIssue } from "../model/mod.ts";
import type { ImportContext, UnitResult } from "./types.ts";

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
