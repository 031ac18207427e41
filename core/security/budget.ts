/**
 * Time budgets for scans: a deadline every long loop checks, so no input (a 300 KB base64 blob,
 * an adversarial glob rule) can hold a scan past it. What happens past it is the caller's
 * choice: the guard blocks (fails closed), a security check reports the session as unfinished.
 */
import { ChronicleError } from "../model/errors.ts";

export interface Deadline {
  /** Throws `ChronicleError("timeout")` once the budget is spent. */
  check(): void;
  /** True once the budget is spent. */
  expired(): boolean;
}

/** A deadline `ms` milliseconds from now, on `clock` (default `performance.now`). */
export function deadlineIn(ms: number, clock: () => number = () => performance.now()): Deadline {
  const at = clock() + ms;
  return {
    expired: () => clock() >= at,
    check() {
      if (clock() >= at) {
        throw new ChronicleError("timeout", `The scan ran out of its ${Math.round(ms)} ms budget`);
      }
    },
  };
}

/** A deadline that never expires. */
export const NO_DEADLINE: Deadline = { check() {}, expired: () => false };

/** True for the timeout a Deadline throws. */
export function isTimeout(e: unknown): boolean {
  return e instanceof ChronicleError && e.code === "timeout";
}
