/**
 * Custom rules: user globs, matched in linear time (glob_match.ts). `*` matches any run of
 * non-whitespace characters, `?` exactly one character (not a line break); everything else is
 * literal and case-sensitive. A rule either redacts what it matches or protects it (`allow`).
 *
 * A pattern that starts with `path:` is a path rule instead: it names files the guard must
 * never let a tool read (`redact`), or files it may read whatever their name (`allow`), with
 * `*`, `**` and `?` over paths (sensitive_paths.ts).
 */
import { ChronicleError } from "../model/errors.ts";
import type { Deadline } from "./budget.ts";
import { type CompiledGlob, compileGlobMatcher, forEachMatch } from "./glob_match.ts";

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

/** The prefix that makes a rule a path rule. */
export const PATH_RULE_PREFIX = "path:";

/** True for a `path:` rule (the guard's sensitive-path policy), false for a text rule. */
export function isPathRule(rule: Pick<CustomRule, "pattern">): boolean {
  return rule.pattern.startsWith(PATH_RULE_PREFIX);
}

/**
 * Compiles a text glob to a linear-time matcher. Throws a `ChronicleError` (`usage`) for an
 * empty pattern, one without any literal character (it would match everywhere) or one that is
 * too long.
 */
export function compileGlob(pattern: string): CompiledGlob {
  validateGlob(pattern);
  return compileGlobMatcher(pattern, "text");
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
  validateGlob(isPathRule(rule) ? rule.pattern.slice(PATH_RULE_PREFIX.length) : rule.pattern);
}

/** Calls `visit(start, end)` for every leftmost-longest, non-empty match of a compiled glob. */
export function forEachGlobMatch(
  glob: CompiledGlob,
  text: string,
  visit: (start: number, end: number) => void,
  deadline?: Deadline,
): void {
  forEachMatch(glob, text, visit, deadline);
}
