/**
 * Custom rules: user globs compiled to regexes. `*` matches any run of non-whitespace
 * characters, `?` exactly one character (not a line break); everything else is literal and
 * case-sensitive. A rule either redacts what it matches or protects it (`allow`).
 */
import { ChronicleError } from "../model/errors.ts";

export type RuleAction = "redact" | "allow";

/** A custom rule as stored (table `security_rules`). */
export interface CustomRule {
  id: string;
  name: string;
  pattern: string;
  action: RuleAction;
  enabled: boolean;
  created_at?: string;
}

/** The longest glob accepted; longer ones are almost certainly pasted data, not a pattern. */
export const MAX_GLOB_LENGTH = 500;

/**
 * Compiles a glob to a global regex. Throws a `ChronicleError` (`usage`) for an empty pattern,
 * one without any literal character (it would match everywhere) or one that is too long.
 */
export function compileGlob(pattern: string): RegExp {
  validateGlob(pattern);
  let source = "";
  for (const ch of pattern) {
    if (ch === "*") source += source.endsWith("\\S*") ? "" : "\\S*";
    else if (ch === "?") source += "[^\\n\\r]";
    else source += ch.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
  }
  return new RegExp(source, "gu");
}

export function validateGlob(pattern: string): void {
  if (typeof pattern !== "string" || pattern.trim() === "") {
    throw new ChronicleError("usage", "Invalid rule pattern: it is empty");
  }
  if (pattern.length > MAX_GLOB_LENGTH) {
    throw new ChronicleError(
      "usage",
      `Invalid rule pattern: it is ${pattern.length} characters long (at most ${MAX_GLOB_LENGTH})`,
    );
  }
  if (!/[^*?\s]/.test(pattern)) {
    throw new ChronicleError(
      "usage",
      `Invalid rule pattern "${pattern}": it needs at least one literal character`,
    );
  }
}

/** Checks a rule's fields; throws a `ChronicleError` (`usage`) naming the bad one. */
export function validateRule(rule: Pick<CustomRule, "name" | "pattern" | "action">): void {
  if (typeof rule.name !== "string" || rule.name.trim() === "") {
    throw new ChronicleError("usage", "Invalid rule: the name is empty");
  }
  if (rule.action !== "redact" && rule.action !== "allow") {
    throw new ChronicleError(
      "usage",
      `Invalid rule "${rule.name}": action must be "redact" or "allow", not "${rule.action}"`,
    );
  }
  validateGlob(rule.pattern);
}

/** Calls `visit(start, end)` for every non-empty match of a compiled glob. */
export function forEachGlobMatch(
  re: RegExp,
  text: string,
  visit: (start: number, end: number) => void,
): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    visit(m.index, m.index + m[0].length);
  }
}
