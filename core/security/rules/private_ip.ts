/** private_ip: private and loopback IPv4 addresses, IPv6 unique-local addresses. */
import type { BuiltinRule, Push } from "./_shared.ts";
import { isDigitCode } from "./_text.ts";

export const PRIVATE_IP_RULE: BuiltinRule = {
  name: "private_ip",
  severity: "low",
  description: "Private and loopback IPv4 addresses and IPv6 unique-local addresses",
};

const IPV4_RE = /(?:10|127|172|192)\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)/y;
const ULA_RE = /f[cd][0-9a-f]{2}:[0-9a-f:]*[0-9a-f](?![\w:])/iy;
/** Words that make a dotted quad a version number: `Oracle Database 10.2.0.4`, `build 10.0.1.2`. */
const VERSION_CONTEXT_RE =
  /\b(?:version|ver|v|release|build|rev|revision|firmware|kernel|patch|upgraded?|upgrading|downgraded?|database|oracle|windows)\W{0,3}$/i;

/**
 * Loopback (127/8) counts as private, as the issue specifies. Real transcripts are full of
 * `127.0.0.1:<port>` (every local dev server), which cases.jsonl labels "keep" by policy:
 * flipping this to false is the one change that policy needs.
 */
export const LOOPBACK_IS_PRIVATE = true;

function isPrivateV4(ip: string): boolean {
  const o = ip.split(".").map(Number);
  if (o.some((n) => n > 255)) return false;
  return o[0] === 10 || (LOOPBACK_IS_PRIVATE && o[0] === 127) ||
    (o[0] === 172 && o[1] >= 16 && o[1] <= 31) || (o[0] === 192 && o[1] === 168);
}

function isUlaV6(ip: string): boolean {
  const halves = ip.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h ? h.split(":") : []));
  if (groups.some((g) => g.length === 0 || g.length > 4)) return false;
  return halves.length === 2 ? groups.length < 8 : groups.length === 8;
}

/** `dot` is the first dot of a quad starting with 10, 127, 172 or 192. */
export function onIpv4(text: string, dot: number, push: Push): void {
  let s = dot;
  while (s > 0 && dot - s < 3 && isDigitCode(text.charCodeAt(s - 1))) s--;
  IPV4_RE.lastIndex = s;
  const m = IPV4_RE.exec(text);
  if (!m || !isPrivateV4(m[0])) return;
  const before = text.slice(Math.max(0, s - 40), s);
  const context = before.slice(before.lastIndexOf("\n") + 1);
  if (VERSION_CONTEXT_RE.test(context)) return;
  push(s, s + m[0].length, "***.***.***.***", "ipv4");
}

/** `colon` follows the first group (`fc00`-`fdff`) of a unique-local IPv6 address. */
export function onUla(text: string, colon: number, push: Push): void {
  const s = colon - 4;
  ULA_RE.lastIndex = s;
  const m = ULA_RE.exec(text);
  if (m && isUlaV6(m[0])) push(s, s + m[0].length, "****:****::****", "ipv6");
}
