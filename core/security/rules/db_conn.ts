/** db_conn: connection URLs that carry a password (`postgres://user:pass@host`). */
import type { BuiltinRule, Push } from "./_shared.ts";
import { isAlnumCode, isAlphaCode, isSpaceCode, looksLikePlaceholder } from "./_text.ts";

export const DB_CONN_RULE: BuiltinRule = {
  name: "db_conn",
  severity: "high",
  description: "Connection URLs that carry a password (postgres://user:pass@host ...)",
};

const PLACEHOLDER_CREDENTIALS = new Set(
  "password pass passwd pwd secret changeme pw xxx x user username test".split(" "),
);

function isUrlTerminator(c: number): boolean {
  // whitespace, " ' ` < > and backslash (JSON escapes end the URL too)
  return isSpaceCode(c) || c === 34 || c === 39 || c === 96 || c === 60 || c === 62 || c === 92;
}

/** `i` is the index of `://`: read the scheme back and the authority forward. */
export function onSchemeSeparator(text: string, i: number, push: Push): void {
  // scheme: letters, digits, + . - (and a jdbc: prefix)
  let s = i;
  while (s > 0 && i - s < 32) {
    const c = text.charCodeAt(s - 1);
    if (isAlnumCode(c) || c === 43 || c === 46 || c === 45) s--;
    else break;
  }
  if (s === i || !isAlphaCode(text.charCodeAt(s))) return;
  if (text.startsWith("jdbc:", s - 5)) s -= 5;
  const p = i + 3;
  const limit = Math.min(text.length, p + 2048);
  // the authority ends at the first / (passwords may hold ? and #); the userinfo at its last @
  let e = p;
  let at = -1;
  let colon = -1;
  for (; e < limit; e++) {
    const c = text.charCodeAt(e);
    if (c === 47 || isUrlTerminator(c)) break;
    if (c === 64) at = e;
    else if (c === 58 && colon < 0) colon = e;
  }
  if (at < 0 || colon < 0 || colon > at) return;
  while (e < limit && !isUrlTerminator(text.charCodeAt(e))) e++;
  const user = text.slice(p, colon);
  const password = text.slice(colon + 1, at);
  if (!password || !isAlnumCode(text.charCodeAt(at + 1)) && text[at + 1] !== "[") return;
  if (!plausibleUrlCredential(user, password)) return;
  // trailing punctuation belongs to the sentence, not the URL
  while (e > at + 1 && /[.,;:)\]}]/.test(text[e - 1])) e--;
  const scheme = text.slice(s, i).toLowerCase();
  push(s, e, `${scheme}://****`, scheme);
}

function plausibleUrlCredential(user: string, password: string): boolean {
  if (/^(?:\*+|(?:%2A)+|x+)$/i.test(password)) return false;
  if (/[{}<>]|\$\{|\$\(|^\$[A-Za-z_]|%s/.test(password)) return false;
  if (PLACEHOLDER_CREDENTIALS.has(password.toLowerCase())) return false;
  if (looksLikePlaceholder(password) || looksLikePlaceholder(user)) return false;
  return true;
}
