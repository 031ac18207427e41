/**
 * Terminal safety: text taken from transcripts, file names or folder names is escaped before
 * a CLI command prints it, so it can never move the cursor, change colours, set the window
 * title, rewrite a line (`\r`) or forge a line of its own (`\n` in a folder name). C0 and C1
 * controls, DEL and the bidirectional overrides are shown as visible escapes (`\n`, `\x1b`,
 * `\u202e`). One helper: every command's output of foreign text goes through it.
 */

// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL_RE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `s` with every control character written as a visible escape. */
export function termSafe(s: string): string {
  return s.replace(CONTROL_RE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ??
      (code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`);
  });
}

/**
 * Foreign text that is meant to span lines (a redacted file printed back): line breaks and
 * tabs kept, every other control escaped.
 */
export function termSafeLines(s: string): string {
  return s.replace(CONTROL_RE, (c) => (c === "\n" || c === "\t" ? c : termSafe(c)));
}
