/**
 * Custom rules and the interception log, persisted in the store's `security_rules` and
 * `interceptions` tables through a SQLite handle passed in (a `node:sqlite` DatabaseSync or
 * anything with the same `prepare` surface).
 */
import { ChronicleError } from "../model/errors.ts";
import { type CustomRule, type RuleAction, validateRule } from "./glob_rule.ts";
import type { GuardAction, Interception } from "./pretooluse.ts";

type SqlValue = string | number | bigint | null | Uint8Array;

/** The part of `node:sqlite`'s `DatabaseSync` this module uses. */
export interface SqlDatabase {
  prepare(sql: string): {
    run(...params: SqlValue[]): unknown;
    all(...params: SqlValue[]): unknown[];
    get(...params: SqlValue[]): unknown;
  };
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

/** A logged interception with its row id. */
export interface StoredInterception extends Interception {
  id: number;
}

interface RuleRow {
  id: string;
  name: string;
  pattern: string;
  action: RuleAction;
  enabled: number;
  created_at: string;
}

interface InterceptionRow {
  id: number;
  at: string;
  session_id: string | null;
  tool: string;
  file: string | null;
  rules: string;
  sample: string | null;
  action: GuardAction;
}

function toRule(row: RuleRow): CustomRule {
  return {
    id: row.id,
    name: row.name,
    pattern: row.pattern,
    action: row.action,
    enabled: row.enabled === 1,
    created_at: row.created_at,
  };
}

function randomId(): string {
  return "rule_" + crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

function interceptionFilter(options: { sessionId?: string; action?: GuardAction }) {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (options.sessionId) {
    where.push("session_id = ?");
    params.push(options.sessionId);
  }
  if (options.action) {
    where.push("action = ?");
    params.push(options.action);
  }
  return { clause: where.length ? "WHERE " + where.join(" AND ") : "", params };
}

/** Rules CRUD (list, add, delete, toggle) and the interception log. */
export class RuleStore {
  readonly #db: SqlDatabase;
  readonly #now: () => Date;
  readonly #newId: () => string;

  constructor(db: SqlDatabase, options: RuleStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#newId = options.newId ?? randomId;
  }

  /** Every rule in claim order: oldest first. */
  list(): CustomRule[] {
    const rows = this.#db.prepare(
      "SELECT id, name, pattern, action, enabled, created_at FROM security_rules ORDER BY created_at, rowid",
    ).all() as RuleRow[];
    return rows.map(toRule);
  }

  /** The enabled rules in claim order: what scans and the guard use. */
  active(): CustomRule[] {
    return this.list().filter((r) => r.enabled);
  }

  get(id: string): CustomRule | null {
    const row = this.#db.prepare(
      "SELECT id, name, pattern, action, enabled, created_at FROM security_rules WHERE id = ?",
    ).get(id) as RuleRow | undefined;
    return row ? toRule(row) : null;
  }

  /** Validates and adds a rule (enabled unless told otherwise). */
  add(rule: NewRule): CustomRule {
    validateRule(rule);
    const created: CustomRule = {
      id: this.#newId(),
      name: rule.name.trim(),
      pattern: rule.pattern,
      action: rule.action,
      enabled: rule.enabled ?? true,
      created_at: this.#now().toISOString(),
    };
    this.#db.prepare(
      "INSERT INTO security_rules (id, name, pattern, action, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(
      created.id,
      created.name,
      created.pattern,
      created.action,
      created.enabled ? 1 : 0,
      created.created_at!,
    );
    return created;
  }

  /** Deletes a rule; false when there was none with that id. */
  delete(id: string): boolean {
    const existed = this.get(id) !== null;
    if (existed) this.#db.prepare("DELETE FROM security_rules WHERE id = ?").run(id);
    return existed;
  }

  /** Sets (or, without `enabled`, flips) a rule's state. Throws `not_found` for an unknown id. */
  toggle(id: string, enabled?: boolean): CustomRule {
    const rule = this.get(id);
    if (!rule) throw new ChronicleError("not_found", `No security rule with id "${id}"`);
    const next = enabled ?? !rule.enabled;
    this.#db.prepare("UPDATE security_rules SET enabled = ? WHERE id = ?").run(next ? 1 : 0, id);
    return { ...rule, enabled: next };
  }

  /** Appends a decision to the interception log; returns its row id. */
  logInterception(i: Interception): number {
    const row = this.#db.prepare(
      "INSERT INTO interceptions (at, session_id, tool, file, rules, sample, action) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    ).get(
      i.at,
      i.session_id ?? null,
      i.tool,
      i.file ?? null,
      JSON.stringify(i.rules),
      i.sample ?? null,
      i.action,
    ) as { id: number | bigint };
    return Number(row.id);
  }

  /** How many interceptions are logged (optionally for one session or action). */
  interceptionCount(options: { sessionId?: string; action?: GuardAction } = {}): number {
    const { clause, params } = interceptionFilter(options);
    const row = this.#db.prepare(`SELECT count(*) AS n FROM interceptions ${clause}`).get(
      ...params,
    ) as { n: number | bigint };
    return Number(row.n);
  }

  /** The newest interceptions first. `limit` defaults to 100, `offset` to 0. */
  interceptions(
    options: { limit?: number; offset?: number; sessionId?: string; action?: GuardAction } = {},
  ): StoredInterception[] {
    const { clause, params } = interceptionFilter(options);
    params.push(
      Math.max(1, Math.min(options.limit ?? 100, 10_000)),
      Math.max(0, options.offset ?? 0),
    );
    const rows = this.#db.prepare(
      `SELECT id, at, session_id, tool, file, rules, sample, action FROM interceptions ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`,
    ).all(...params) as InterceptionRow[];
    return rows.map((r): StoredInterception => {
      const out: StoredInterception = {
        id: Number(r.id),
        at: r.at,
        tool: r.tool,
        rules: JSON.parse(r.rules),
        action: r.action,
      };
      if (r.session_id !== null) out.session_id = r.session_id;
      if (r.file !== null) out.file = r.file;
      if (r.sample !== null) out.sample = r.sample;
      return out;
    });
  }
}
