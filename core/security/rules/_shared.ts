/**
 * What every built-in rule module shares: the candidate a rule proposes, the sink it proposes
 * into (one per rule, addressed by the rule's name), and the checks provider keys share.
 * Private to core/security/rules.
 */
import { hasLongRun, isAlnumCode, looksLikePlaceholder, shannonEntropy } from "./_text.ts";

export type BuiltinRuleName =
  | "api_key"
  | "db_conn"
  | "password"
  | "token"
  | "email"
  | "phone"
  | "private_ip";

/** `high` findings block a tool call; `low` ones are flagged and allowed. */
export type Severity = "high" | "low";

export interface BuiltinRule {
  name: BuiltinRuleName;
  severity: Severity;
  description: string;
}

/** A span a built-in rule proposes; the scan decides which proposals are kept. */
export interface Candidate {
  start: number;
  end: number;
  replacement: string;
  detail: string;
  /**
   * A costlier check, run only when the span is not already claimed (a key after
   * `API_KEY=` is the api_key rule's, so the password rule need not judge it).
   */
  verify?: () => boolean;
}

/** Proposes one span for the rule the push belongs to. */
export type Push = (
  start: number,
  end: number,
  replacement: string,
  detail: string,
  verify?: () => boolean,
) => void;

/** One push per rule: a handler proposes into its rule's sink by name, never by position. */
export type Sinks = Readonly<Record<BuiltinRuleName, Push>>;

/** Example keys from vendor documentation: never secrets. */
export const KNOWN_EXAMPLES: ReadonlySet<string> = new Set([
  "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
  "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
]);

/** True when the character before `i` cannot continue a token: start, punctuation or `\n`. */
export function leftBoundary(text: string, i: number): boolean {
  if (i === 0) return true;
  const c = text.charCodeAt(i - 1);
  if (!isAlnumCode(c) && c !== 95 && c !== 45) return true;
  // A JSON-escaped line break (`\n`, `\r`, `\t`) right before the token.
  return (c === 110 || c === 114 || c === 116) && i >= 2 && text.charCodeAt(i - 2) === 92;
}

/** A key-shaped match that is not a documented example, a placeholder or a low-entropy run. */
export function plausibleKey(m: string, minEntropy: number): boolean {
  if (KNOWN_EXAMPLES.has(m)) return false;
  if (looksLikePlaceholder(m) || hasLongRun(m)) return false;
  return shannonEntropy(m) >= minEntropy;
}
