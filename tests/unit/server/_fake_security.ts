/** An in-memory SecurityService for route tests: records calls, answers plainly. */
import { ChronicleError } from "../../../core/model/mod.ts";
import type { NewRule, SecurityRuleView, SecurityService } from "../../../server/deps.ts";

export function fakeSecurity(): SecurityService & { calls: string[] } {
  const rules = new Map<string, SecurityRuleView>();
  const calls: string[] = [];
  let n = 0;
  const get = (id: string) => {
    const r = rules.get(id);
    if (!r) throw new ChronicleError("not_found", `No rule "${id}"`);
    return r;
  };
  return {
    calls,
    listRules: () => [...rules.values()],
    addRule(rule: NewRule) {
      calls.push(`add ${rule.name}`);
      const r = { id: `r${++n}`, ...rule, enabled: true, created_at: "2026-01-01T00:00:00Z" };
      rules.set(r.id, r);
      return r;
    },
    setRuleEnabled(id, enabled) {
      const r = get(id);
      r.enabled = enabled;
      return r;
    },
    deleteRule(id) {
      get(id);
      rules.delete(id);
    },
    check: (o) => ({ scope: o.session_id ?? "all", total: 0, sessions: [] }),
    interceptions: (o) => ({ total: 0, items: [], limit: o.limit } as never),
    guardStatus: () =>
      Promise.resolve({ installed: false, settings_path: "/x", explanation: "adds a hook" }),
    installGuard: (o) => Promise.resolve({ changed: !o.dry_run, dry_run: o.dry_run }),
    uninstallGuard: (o) => Promise.resolve({ changed: false, dry_run: o.dry_run }),
  };
}
