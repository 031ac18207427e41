/** The one error class callers handle by `code`. Misuse throws built-in errors instead. */

export type ChronicleErrorCode =
  | "unsupported_schema"
  | "invalid_session"
  | "not_found"
  | "usage"
  | "checksum_mismatch"
  | "io"
  | "locked"
  | "forbidden"
  | "conflict"
  /** A folder that is not inside a git repository (core/git). */
  | "not_a_repo"
  /** A path that leaves the folder it must stay in (a repository, a replay sandbox). */
  | "outside"
  /** A scan that ran out of its time budget (core/security). */
  | "timeout"
  /** A configuration file in the data folder that cannot be used as written (the exclude list). */
  | "invalid_config";

export class ChronicleError extends Error {
  readonly code: ChronicleErrorCode;
  constructor(code: ChronicleErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ChronicleError";
    this.code = code;
  }
}
