/**
 * The store's `is_error` column, decided by the one error heuristic in core/analytics (the
 * recorded flag first, then exit codes and error text), so the session list, the API's
 * analytics and the UI's session stats count the same errors.
 */
import { ERROR_SCAN_CHARS, isErrorResult } from "../analytics/error_heuristic.ts";
import type { Operation } from "../model/mod.ts";

const decoder = new TextDecoder();

/** Whether an operation failed, reading at most the opening of its result payload. */
export function operationFailed(op: Operation, payloads: Map<string, Uint8Array>): boolean {
  let head: string | null = null;
  if (op.response && "sha256" in op.response) {
    const bytes = payloads.get(op.response.sha256);
    if (bytes) {
      head = decoder.decode(bytes.subarray(0, ERROR_SCAN_CHARS * 4)).slice(0, ERROR_SCAN_CHARS);
    }
  } else if (op.response && "inline" in op.response) {
    head = op.response.inline.slice(0, ERROR_SCAN_CHARS);
  }
  return isErrorResult(op, head);
}
