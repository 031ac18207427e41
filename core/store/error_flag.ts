/**
 * The store's `is_error` column. Until the shared heuristic in core/analytics exists, the
 * recorded flag is the only evidence used.
 */
import type { Operation } from "../model/mod.ts";

export function defaultIsError(op: Operation): boolean {
  return op.is_error === true;
}
