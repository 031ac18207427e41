/**
 * The store's `is_error` column, decided by the one error heuristic in core/analytics (the
 * recorded flag first, then exit codes and error text), so the session list, the API's
 * analytics and the UI's session stats count the same errors.
 */
import { ERROR_SCAN_CHARS, isErrorResult } from "../analytics/error_heuristic.ts";
import type { Operation } from "../model/mod.ts";

const decoder = new TextDecoder();

/** Whether a tool call failed, reading at most the opening of its result (bytes or text). */
export function resultFailed(
  op: { kind: Operation["kind"]; flagged: boolean | null },
  result: Uint8Array | string | null,
): boolean {
  const head = result === null
    ? null
    : typeof result === "string"
    ? result.slice(0, ERROR_SCAN_CHARS)
    : decoder.decode(result.subarray(0, ERROR_SCAN_CHARS * 4)).slice(0, ERROR_SCAN_CHARS);
  return isErrorResult({ kind: op.kind, is_error: op.flagged ?? undefined }, head);
}
