/**
 * Custom rules and the interception log: what a rule must be (validated, named, enabled or
 * not, in claim order) over the rows the store keeps (`ChronicleStore.ruleTable`, or anything
 * with the same surface).
 */
import { ChronicleError } from "../model/errors.ts";
import { type CustomRule, type RuleAction, validateRule } from "./glob_rule.ts";
import type { GuardAction, Interception } from "./pretooluse.ts";

/** A logged interception with its row id. */
export interface StoredInterception extends Interception {
  id: number;
}

/** Where rules and interceptions are kept: the store's rule table. */
export interface RuleRows {
  list(): CustomRule[];
  get(id: string): CustomRule | null;
  insert(rule: Required<CustomRule>): void;
  delete(id: string): boolean;
  setEnabled(id: string, enabled: boolean): boolean;
  logInterception(i: Interception): number;
  interceptionCount(options?: { sessionId?: string; action?: GuardAction }): number;
  interceptions(
    options?: { limit?: number; offset?: number; sessionId?: string; action?: GuardAction },
  ): StoredInterception[];
}

export interface RuleStoreOptions {
  now?: () => Date;
  /** New rule ids. Default: `rule_` and 16 random hex digits. */
  newId?: () => string;
}

export interface NewRule {
  name: string;
  pattern: string;
  action: RuleAction;
  enabled?: boolean;
}

function randomId(): string {
  return "rule_" + crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

/** Rules CRUD (list, add, delete, toggle) and the interception log. */
export class RuleStore {
  readonly #rows: RuleRows;
  readonly #now: () => Date;
  readonly #newId: () => string;

  constructor(rows: RuleRows, options: RuleStoreOptions = {}) {
    this.#rows = rows;
    this.#now = options.now ?? (() => new Date());
    this.#newId = options.newId ?? randomId;
  }

  /** Every rule in claim order: oldest first. */
  list(): CustomRule[] {
    return this.#rows.list();
  }

  /** The enabled rules in claim order: what scans and the guard use. */
  active(): CustomRule[] {
    return this.list().filter((r) => r.enabled);
  }

  get(id: string): CustomRule | null {
    return this.#rows.get(id);
  }

  /** Validates and adds a rule (enabled unless told otherwise). */
  add(rule: NewRule): CustomRule {
    validateRule(rule);
    const created: Required<CustomRule> = {
      id: this.#newId(),
      name: rule.name.trim(),
      pattern: rule.pattern,
      action: rule.action,
      enabled: rule.enabled ?? true,
      created_at: this.#now().toISOString(),
    };
    this.#rows.insert(created);
    return created;
  }

  /** Deletes a rule; false when there was none with that id. */
  delete(id: string): boolean {
    return this.#rows.delete(id);
  }

  /** Sets (or, without `enabled`, flips) a rule's state. Throws `not_found` for an unknown id. */
  toggle(id: string, enabled?: boolean): CustomRule {
    const rule = this.get(id);
    if (!rule) throw new ChronicleError("not_found", `No security rule with id "${id}"`);
    const next = enabled ?? !rule.enabled;
    this.#rows.setEnabled(id, next);
    return { ...rule, enabled: next };
  }

  /** Appends a decision to the interception log; returns its row id. */
  logInterception(i: Interception): number {
    return this.#rows.logInterception(i);
  }

  /** How many interceptions are logged (optionally for one session or action). */
  interceptionCount(options: { sessionId?: string; action?: GuardAction } = {}): number {
    return this.#rows.interceptionCount(options);
  }

  /** The newest interceptions first. `limit` defaults to 100, `offset` to 0. */
  interceptions(
    options: { limit?: number; offset?: number; sessionId?: string; action?: GuardAction } = {},
  ): StoredInterception[] {
    return this.#rows.interceptions(options);
  }
}
