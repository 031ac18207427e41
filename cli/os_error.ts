/**
 * Operating-system errors as a user reads them: one short phrase, never Deno's raw text
 * ("(os error 2): lstat '...'") and never advice about Deno's permission flags.
 */

const PHRASES: [new (...args: never[]) => Error, string][] = [
  [Deno.errors.NotFound, "no such file or folder"],
  [Deno.errors.PermissionDenied, "permission denied"],
  [Deno.errors.AlreadyExists, "something else is already there"],
  [Deno.errors.NotADirectory, "a part of the path is a file, not a folder"],
  [Deno.errors.IsADirectory, "it is a folder, not a file"],
  [Deno.errors.FilesystemLoop, "too many symbolic links"],
  [Deno.errors.Busy, "it is busy"],
  [Deno.errors.BrokenPipe, "the output was closed"],
  [Deno.errors.WriteZero, "nothing could be written"],
  [Deno.errors.UnexpectedEof, "it ended early"],
];

/** True for the errors this module turns into a phrase. */
export function isOsError(e: unknown): e is Error {
  return e instanceof Error &&
    (PHRASES.some(([type]) => e instanceof type) || /\(os error \d+\)/.test(e.message) ||
      e instanceof Deno.errors.NotCapable);
}

/** The one phrase for an OS error (e.g. "no such file or folder"); other errors keep their message. */
export function osPhrase(e: unknown): string {
  if (e instanceof Deno.errors.NotCapable) {
    return "Chronicle's permissions do not allow this (see the chronicle task in deno.json)";
  }
  for (const [type, phrase] of PHRASES) if (e instanceof type) return phrase;
  const msg = e instanceof Error ? e.message : String(e);
  if (/No space left on device|os error 28/i.test(msg)) return "no space left on the disk";
  if (/Read-only file system|os error 30/i.test(msg)) return "the disk is read-only";
  // Deno's text up to its "(os error N)": the OS's own words, without the syscall and path
  const m = /^(.*?)\s*\(os error \d+\)/.exec(msg);
  return (m ? m[1] : msg).split("\n")[0].trim();
}

/** "what failed: why", for an error raised while touching `path`. */
export function osErrorLine(what: string, e: unknown): string {
  return `${what}: ${osPhrase(e)}`;
}

/** A write that failed because the disk (or the store's file system) is full. */
export function isNoSpace(e: unknown): boolean {
  const msg = e instanceof Error
    ? `${e.message} ${(e.cause as Error | undefined)?.message ?? ""}`
    : String(e);
  return /No space left on device|os error 28|database or disk is full|SQLITE_FULL|ENOSPC/i.test(
    msg,
  );
}
