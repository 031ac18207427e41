/**
 * Bytes of a file as text worth scanning: UTF-8 (a BOM dropped), UTF-16 with or without a BOM,
 * and for binary files (NUL bytes: SQLite credential stores, keychains, pickles) their printable
 * strings, ASCII and UTF-16LE, one per line, as `strings` would show them.
 */

const utf8 = new TextDecoder("utf-8");
const utf16le = new TextDecoder("utf-16le");
const utf16be = new TextDecoder("utf-16be");

/** Shortest printable run kept from a binary file. */
const MIN_STRING = 6;

/** True when every other byte is NUL (UTF-16 text without a BOM); `odd` for little-endian. */
function looksUtf16(b: Uint8Array, odd: boolean): boolean {
  const n = Math.min(b.length, 4096) & ~1;
  if (n < 8) return false;
  let zeros = 0;
  let others = 0;
  for (let i = 0; i < n; i += 2) {
    const hi = odd ? b[i + 1] : b[i];
    const lo = odd ? b[i] : b[i + 1];
    if (hi === 0 && lo !== 0) zeros++;
    else if (lo === 0) others++;
  }
  return zeros > n / 2 * 0.7 && others < n / 2 * 0.05;
}

function hasNul(b: Uint8Array): boolean {
  return b.indexOf(0) >= 0;
}

const printable = (c: number) => (c >= 0x20 && c < 0x7f) || c === 9;

/** Printable ASCII runs and UTF-16LE runs of a binary buffer, one per line. */
export function printableStrings(b: Uint8Array): string {
  const out: string[] = [];
  let run = "";
  for (let i = 0; i < b.length; i++) {
    if (printable(b[i])) run += String.fromCharCode(b[i]);
    else {
      if (run.length >= MIN_STRING) out.push(run);
      run = "";
    }
  }
  if (run.length >= MIN_STRING) out.push(run);
  for (const start of [0, 1]) {
    run = "";
    for (let i = start; i + 1 < b.length; i += 2) {
      if (printable(b[i]) && b[i + 1] === 0) run += String.fromCharCode(b[i]);
      else {
        if (run.length >= MIN_STRING) out.push(run);
        run = "";
      }
    }
    if (run.length >= MIN_STRING) out.push(run);
  }
  return out.join("\n");
}

/** The text a scan should see in `bytes`. */
export function decodeForScan(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return utf8.decode(bytes.subarray(3));
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16le.decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16be.decode(bytes.subarray(2));
  if (!hasNul(bytes)) return utf8.decode(bytes);
  if (looksUtf16(bytes, true)) return utf16le.decode(bytes);
  if (looksUtf16(bytes, false)) return utf16be.decode(bytes);
  return printableStrings(bytes);
}
