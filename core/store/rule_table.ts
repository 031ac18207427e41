/**
 * The rows of custom security rules and of the guard's interception log. Only persistence:
 * what a rule means (validation, claim order, matching) is core/security's `RuleStore`, which
 * reads and writes through this table.
 */
import type { CustomRule, RuleAction } from "../security/glob_rule.ts";
import type { GuardAction, Interception } from "../security/pretooluse.ts";
import type { StoredInterception } from "../security/rule_store.ts";
import type { Sql } from "./_sql.ts";

/** Which interceptions: all, or one session's, or one action's. */
export interface InterceptionFilter {
  sessionId?: string;
  action?: GuardAction;
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

const RULE_COLS = "id, name, pattern, action, enabled, created_at";

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

function filterOf(options: InterceptionFilter) {
  const where: string[] = [];
  const params: string[] = [];
  if (options.sessionId) (where.push("session_id = ?"), params.push(options.sessionId));
  if (options.action) (where.push("action = ?"), params.push(options.action));
  return { clause: where.length ? "WHERE " + where.join(" AND ") : "", params };
}

export class RuleTable {
  constructor(private readonly sql: Sql) {}

  /** Every rule in claim order: oldest first. */
  list(): CustomRule[] {
    return (this.sql.stmt(`SELECT ${RULE_COLS} FROM security_rules ORDER BY created_at, rowid`)
      .all() as unknown as RuleRow[]).map(toRule);
  }

  get(id: string): CustomRule | null {
    const row = this.sql.stmt(`SELECT ${RULE_COLS} FROM security_rules WHERE id = ?`).get(id) as
      | RuleRow
      | undefined;
    return row ? toRule(row) : null;
  }

  /** Stores a rule as given (it is validated by the caller). */
  insert(rule: Required<CustomRule>): void {
    this.sql.stmt(`INSERT INTO security_rules (${RULE_COLS}) VALUES (?, ?, ?, ?, ?, ?)`).run(
      rule.id,
      rule.name,
      rule.pattern,
      rule.action,
      rule.enabled ? 1 : 0,
      rule.created_at,
    );
  }

  /** False when there was no rule with that id. */
  delete(id: string): boolean {
    return Number(this.sql.stmt("DELETE FROM security_rules WHERE id = ?").run(id).changes) > 0;
  }

  /** False when there was no rule with that id. */
  setEnabled(id: string, enabled: boolean): boolean {
    return Number(
      this.sql.stmt("UPDATE security_rules SET enabled = ? WHERE id = ?").run(enabled ? 1 : 0, id)
        .changes,
    ) > 0;
  }

  /** Appends a decision to the interception log; returns its row id. */
  logInterception(i: Interception): number {
    const row = this.sql.stmt(
      `INSERT INTO interceptions (at, session_id, tool, file, rules, sample, action)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
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
  interceptionCount(options: InterceptionFilter = {}): number {
    const { clause, params } = filterOf(options);
    return this.sql.count(`SELECT count(*) AS n FROM interceptions ${clause}`, ...params);
  }

  /** The newest interceptions first. `limit` defaults to 100 (at most 10,000), `offset` to 0. */
  interceptions(
    options: InterceptionFilter & { limit?: number; offset?: number } = {},
  ): StoredInterception[] {
    const { clause, params } = filterOf(options);
    const rows = this.sql.stmt(
      `SELECT id, at, session_id, tool, file, rules, sample, action FROM interceptions ${clause}
       ORDER BY id DESC LIMIT ? OFFSET ?`,
    ).all(
      ...params,
      Math.max(1, Math.min(options.limit ?? 100, 10_000)),
      Math.max(0, options.offset ?? 0),
    ) as unknown as InterceptionRow[];
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
