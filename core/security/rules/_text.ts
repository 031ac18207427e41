/**
 * Small string predicates the built-in rules share: entropy, placeholder and template checks,
 * character classes. Private to core/security.
 */

const charCounts = new Uint32Array(65536);
const seen: number[] = [];

/**
 * Shannon entropy in bits per character of the first 128 characters (enough to tell a random
 * key from a word or a pattern, and bounded for very long values).
 */
export function shannonEntropy(s: string): number {
  const n = Math.min(s.length, 128);
  if (n === 0) return 0;
  seen.length = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (charCounts[c]++ === 0) seen.push(c);
  }
  let h = 0;
  for (const c of seen) {
    const p = charCounts[c] / n;
    h -= p * Math.log2(p);
    charCounts[c] = 0;
  }
  return h;
}

/** Letters, digits and underscore: the characters of an identifier or a key body. */
export function isWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export function isAlnumCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Space, tab, CR, LF, FF, VT. */
export function isSpaceCode(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** Words that mark a documentation or test value. */
const PLACEHOLDER_WORDS_RE =
  /example|sample|dummy|placeholder|change[_-]?me|replace[_-]?(?:me|with)|insert[_-]|fake|redacted|not[_-]?a[_-]?secret/i;
const YOUR_RE = /(?:^|[^a-z])(?:your|my)[_-]?(?:[a-z]{1,20}[_-])?(?:key|token|secret|pass)/i;

/** The longest run of one repeated character, for each of the characters masks are made of. */
function maskRun(value: string): boolean {
  let run = 1;
  for (let i = 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === value.charCodeAt(i - 1)) {
      run++;
      // xxxxx, XXXXX (5); ####, .... (4); ***, ••• (3)
      if (
        (run >= 5 && (c === 120 || c === 88)) || (run >= 4 && (c === 35 || c === 46)) ||
        (run >= 3 && (c === 42 || c === 0x2022))
      ) return true;
    } else {
      run = 1;
    }
  }
  return false;
}

/**
 * Values that stand for a secret without being one: masks, documentation words, `your-key`
 * stand-ins. Checked on the captured value, never on the whole line.
 */
export function looksLikePlaceholder(value: string): boolean {
  return maskRun(value) || PLACEHOLDER_WORDS_RE.test(value) || YOUR_RE.test(value);
}

/** Six or more of one character in a row: `aaaaaa`, `000000`. Random keys almost never do it. */
export function hasLongRun(value: string): boolean {
  let run = 1;
  for (let i = 1; i < value.length; i++) {
    if (value.charCodeAt(i) === value.charCodeAt(i - 1)) {
      if (++run >= 6) return true;
    } else {
      run = 1;
    }
  }
  return false;
}

const SEQ = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";

/**
 * True when `value` holds a run of at least `min` consecutive alphabet letters or digits
 * (`abcdefghijklmnopqrstuvwxyz`, `0123456789`): documentation keys are built that way.
 */
export function hasSequentialRun(value: string, min: number): boolean {
  const v = value.toLowerCase();
  let run = 1;
  for (let i = 1; i < v.length; i++) {
    const a = v[i - 1];
    const b = v[i];
    const ia = SEQ.indexOf(a);
    const da = DIGITS.indexOf(a);
    const next = ia >= 0 && ia < 25 ? SEQ[ia + 1] : da >= 0 && da < 9 ? DIGITS[da + 1] : "";
    if (b === next) {
      run++;
      if (run >= min) return true;
    } else {
      run = 1;
    }
  }
  return false;
}

/** A whole value that is a template or variable reference: `${X}`, `{{ x }}`, `<x>`, `%X%`, `$X`. */
const TEMPLATE_RE =
  /^(?:\$\{[^}]*\}|\$\{\{.*\}\}|\{\{.*\}\}|\{%.*%\}|#\{[^}]*\}|<[^<>]*>|%[A-Za-z_][\w.]*%|\$[A-Za-z_][\w]*|\$\(.*\)?|\{[A-Za-z_][\w.]*\}|ENC\(.*\)|@[A-Za-z_][\w.]*@)$/;

export function isTemplate(value: string): boolean {
  return TEMPLATE_RE.test(value);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes base64url (or base64) to a string, or null when it is not valid base64. */
export function decodeBase64Url(part: string): string | null {
  let s = part.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (s.length % 4 === 1) return null;
  while (s.length % 4 !== 0) s += "=";
  try {
    const bin = atob(s);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** True when the base64url part decodes to a JSON object. */
export function isJsonObjectPart(part: string): boolean {
  const decoded = decodeBase64Url(part);
  if (decoded === null) return false;
  try {
    const v = JSON.parse(decoded);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * A JWT checked by structure, not by regex alone: its header and payload must decode to JSON
 * objects (detect-secrets' rule), so `eyJAAAA.eyJBBB` and a corrupted header do not count.
 */
export function isStructuralJwt(token: string): boolean {
  const parts = token.split(".");
  if (parts.length < 2 || parts.length > 5) return false;
  if (!parts[0].startsWith("eyJ")) return false;
  if (!isJsonObjectPart(parts[0])) return false;
  // JWE (5 parts) carries an encrypted key in part two; only the header is JSON.
  if (parts.length === 5) return true;
  return isJsonObjectPart(parts[1]);
}

export function isAlphaCode(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}
