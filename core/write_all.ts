/**
 * Writes all of `bytes` to a file opened for writing: `writeSync` may write less than it is
 * given (a pipe whose reader is behind, a file near a full disk), and what it did not write
 * would be lost. `chronicle export` to a pipe lost 764 of its pieces (816 KB of 54 MB) before
 * the CLI's output went through this.
 */
export function writeAllSync(file: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.byteLength;) at += file.writeSync(bytes.subarray(at));
}
