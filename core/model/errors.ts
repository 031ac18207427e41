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
  | "conflict";

export class ChronicleError extends Error {
  readonly code: ChronicleErrorCode;
  constructor(code: ChronicleErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ChronicleError";
    this.code = code;
  }
}
