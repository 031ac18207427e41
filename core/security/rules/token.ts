/** token: Bearer and Authorization header tokens, and JWTs that decode as JWTs. */
import { type BuiltinRule, leftBoundary, type Push } from "./_shared.ts";
import { hasLongRun, isStructuralJwt, looksLikePlaceholder, shannonEntropy } from "./_text.ts";

export const TOKEN_RULE: BuiltinRule = {
  name: "token",
  severity: "high",
  description: "Bearer and Authorization header tokens, and JWTs that decode as JWTs",
};

/** `Authorization: ` (JSON-escaped quotes allowed) before a scheme word, for the anchor regex. */
export const AUTH_PREFIX = String.raw`[Aa]uthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?`;

const TOKEN_VALUE_RE = /[A-Za-z0-9._~+/=-]+/y;
const JWT_RE = /eyJ[A-Za-z0-9_-]{4,}={0,2}\.[A-Za-z0-9_-]{4,}={0,2}(?:\.[A-Za-z0-9_-]*={0,2})?/y;
const AUTH_SCHEME_RE =
  /[Aa]uthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(Bearer|bearer|Token|token|Basic|basic|Bot)[ \t]+/y;

function plausibleOpaqueToken(v: string): boolean {
  if (v.length < 12 || v.length > 4096) return false;
  if (looksLikePlaceholder(v) || hasLongRun(v)) return false;
  if (!/\d/.test(v) || !/[A-Za-z]/.test(v)) return false;
  return shannonEntropy(v) >= 3;
}

function emitTokenValue(text: string, start: number, emit: Push, scheme: string): void {
  TOKEN_VALUE_RE.lastIndex = start;
  const m = TOKEN_VALUE_RE.exec(text);
  if (!m) return;
  const v = m[0].replace(/[.]+$/, "");
  if (v.startsWith("eyJ") && isStructuralJwt(v)) {
    emit(start, start + v.length, "eyJ****", "jwt");
  } else if (plausibleOpaqueToken(v)) {
    emit(start, start + v.length, "****", scheme);
  }
}

/** `i` is the index of `Bearer ` (a capital B: lowercase ones come with Authorization). */
export function onBearer(text: string, i: number, push: Push): void {
  if (!leftBoundary(text, i)) return;
  let p = i + 6;
  while (text[p] === " " || text[p] === "\t") p++;
  emitTokenValue(text, p, push, "bearer");
}

/** `z` is the index of the `z` in `Authorization`. */
function onAuthorization(text: string, z: number, push: Push): void {
  const start = z - 7; // z is the index of the "z" in "Authorization"
  AUTH_SCHEME_RE.lastIndex = start;
  const m = AUTH_SCHEME_RE.exec(text);
  if (m) emitTokenValue(text, start + m[0].length, push, m[1].toLowerCase());
}

/** `j` is the index of the `J` in `eyJ`. */
export function onJwt(text: string, j: number, push: Push): void {
  const start = j - 2;
  if (!leftBoundary(text, start)) return;
  JWT_RE.lastIndex = start;
  const m = JWT_RE.exec(text);
  if (m && isStructuralJwt(m[0].replace(/\.$/, ""))) {
    push(start, start + m[0].length, "eyJ****", "jwt");
  }
}

/** `i` is the scheme word (`Basic`, `Token`) after an Authorization key. */
export function onAuthorizationScheme(text: string, i: number, push: Push): void {
  const start = text.lastIndexOf("uthorization", i);
  if (start > 0 && i - start < 40) onAuthorization(text, start + 6, push);
}
