/**
 * The security engine (core/security) in the shape the API serves: rules CRUD over the
 * store's rule table, the security check of one session or all with redacted previews, the
 * interception log, the guard's pre-tool-use decision, and the opt-in hook install (injected,
 * since it writes Claude Code's settings file).
 */
import { ChronicleError } from "../core/model/mod.ts";
import {
  type CustomRule,
  type Finding,
  type Interception,
  RuleStore,
  scanSession,
  scanText,
} from "../core/security/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import type { GuardStatus, SecurityRuleView, SecurityService } from "./deps.ts";

/** How the service installs the guard hook: wired by the CLI to cli/guard.ts. */
export interface GuardHooks {
  status(): Promise<
    { installed: boolean; working?: boolean; detail?: string; settings_path: string }
  >;
  change(options: { install: boolean; dryRun: boolean }): Promise<unknown>;
}

/** The guard's files in the data folder (see core/security/journal.ts). */
export interface GuardFiles {
  /** Interceptions the guard journaled since the last call (consumed). */
  takeJournal(): Interception[];
  /** Rewrites the rules file the guard reads. */
  writeRules(rules: readonly CustomRule[]): void;
}

export interface SecurityServiceOptions {
  store: ChronicleStore;
  guard?: GuardHooks;
  /** Without it the guard sees no custom rules and its interceptions are not ingested. */
  guardFiles?: GuardFiles;
  /** Told of every interception ingested from the guard's journal. */
  onInterception?: (i: Interception) => void;
  now?: () => Date;
}

/** A finding as the check report shows it: where, which rule, and a redacted excerpt. */
export interface CheckFinding {
  op_id: string;
  where: string;
  rule: string;
  preview: string;
}

export interface CheckSessionReport {
  session_id: string;
  title: string | null;
  source: string;
  total: number;
  by_rule: Record<string, number>;
  findings: CheckFinding[];
}

export interface CheckReport {
  sessions_scanned: number;
  total: number;
  by_rule: Record<string, number>;
  sessions: CheckSessionReport[];
}

const PREVIEW = 60;
const FINDINGS_PER_SESSION = 200;

export const GUARD_EXPLANATION =
  "The guard is a Claude Code PreToolUse hook. Before every tool call, Claude Code runs it; " +
  "it decides on its own, with the same rules as this server, whether the call would read or " +
  "send a secret (a .env file, a private key, an API key, password, token or credential URL) " +
  "and blocks the call if so, naming the rule but never the secret. Personal data is flagged " +
  "and allowed. It needs no server: what it intercepts is recorded in the data folder and " +
  "shown here. Installing adds one entry to Claude Code's settings.json (backed up first) and " +
  "changes nothing else; removing takes out exactly that entry.";

/** Excerpts of a redacted field around each finding's replacement, in order. */
function previews(redacted: string, findings: Finding[]): string[] {
  let from = 0;
  return findings.map((f) => {
    let at = redacted.indexOf(f.replacement, from);
    if (at < 0) at = redacted.indexOf(f.replacement);
    if (at < 0) at = 0;
    from = at + f.replacement.length;
    const start = Math.max(0, at - PREVIEW);
    const end = Math.min(redacted.length, at + f.replacement.length + PREVIEW);
    return (start > 0 ? "…" : "") + redacted.slice(start, end).replace(/\s+/g, " ") +
      (end < redacted.length ? "…" : "");
  });
}

function redactText(text: string | null, rules: readonly CustomRule[]): string | null {
  return text === null ? null : scanText(text, { rules }).redacted;
}

export function createSecurityService(options: SecurityServiceOptions): SecurityService {
  const { store } = options;
  const rules = new RuleStore(store.ruleTable, { now: options.now });
  const view = (r: ReturnType<RuleStore["list"]>[number]): SecurityRuleView => ({
    id: r.id!,
    name: r.name,
    pattern: r.pattern,
    action: r.action,
    enabled: r.enabled !== false,
    created_at: r.created_at ?? "",
  });
  const files = options.guardFiles;
  /** The guard reads the rules from its file: rewrite it whenever they change. */
  const changed = <T>(result: T): T => {
    files?.writeRules(rules.active());
    return result;
  };
  /** Moves what the guard journaled into the store's log. */
  const ingest = () => {
    if (!files) return;
    for (const i of files.takeJournal()) {
      rules.logInterception(i);
      options.onInterception?.(i);
    }
  };
  files?.writeRules(rules.active());
  const guard = (): GuardHooks => {
    if (!options.guard) {
      throw new ChronicleError("usage", "This server cannot install the guard hook");
    }
    return options.guard;
  };

  const checkOne = (id: string): CheckSessionReport | null => {
    const session = store.loadSession(id);
    if (!session) return null;
    const active = rules.active();
    const scan = scanSession(session, {
      rules: active,
      readPayload: (ref) => store.payloadText(ref),
    });
    const findings: CheckFinding[] = [];
    for (const m of scan.messages) {
      const shown = previews(m.redacted, m.findings);
      m.findings.forEach((f, i) => {
        if (findings.length < FINDINGS_PER_SESSION) {
          findings.push({ op_id: m.op, where: m.field, rule: f.rule, preview: shown[i] });
        }
      });
    }
    return {
      session_id: id,
      // The title is shown beside the findings, so it is redacted like them.
      title: scan.redacted.session.title ??
        redactText(store.getSession(id)?.first_prompt ?? null, active),
      source: session.session.source,
      total: scan.total,
      by_rule: scan.histogram,
      findings,
    };
  };

  return {
    listRules: () => rules.list().map(view),
    addRule: (rule) => {
      try {
        return changed(view(rules.add(rule)));
      } catch (e) {
        if (e instanceof SyntaxError || e instanceof RangeError || e instanceof TypeError) {
          throw new ChronicleError("usage", e.message, { cause: e });
        }
        throw e;
      }
    },
    setRuleEnabled: (id, enabled) => changed(view(rules.toggle(id, enabled))),
    deleteRule: (id) => {
      if (!rules.delete(id)) throw new ChronicleError("not_found", `No security rule "${id}"`);
      changed(undefined);
    },
    check: ({ session_id, limit }) => {
      const ids = session_id
        ? [session_id]
        : store.listSessions({ limit: Math.min(limit ?? 500, 1000), sort: "started_at" }).items
          .map((s) => s.id);
      const report: CheckReport = { sessions_scanned: 0, total: 0, by_rule: {}, sessions: [] };
      for (const id of ids) {
        const one = checkOne(id);
        if (!one) continue;
        report.sessions_scanned++;
        if (!one.total) continue;
        report.total += one.total;
        for (const [k, v] of Object.entries(one.by_rule)) {
          report.by_rule[k] = (report.by_rule[k] ?? 0) + v;
        }
        report.sessions.push(one);
      }
      report.sessions.sort((a, b) => b.total - a.total);
      return report;
    },
    ingestInterceptions: ingest,
    interceptions: ({ limit, offset }) => {
      ingest();
      const total = rules.interceptionCount();
      const items = rules.interceptions({ limit, offset });
      return { total, items };
    },
    guardStatus: async (): Promise<GuardStatus> => {
      if (!options.guard) {
        return { installed: false, settings_path: "", explanation: GUARD_EXPLANATION };
      }
      const s = await options.guard.status();
      const status: GuardStatus = {
        installed: s.installed,
        settings_path: s.settings_path,
        explanation: GUARD_EXPLANATION,
      };
      if (s.working !== undefined) status.working = s.working;
      if (s.detail) status.detail = s.detail;
      return status;
    },
    installGuard: ({ dry_run }) => guard().change({ install: true, dryRun: dry_run }),
    uninstallGuard: ({ dry_run }) => guard().change({ install: false, dryRun: dry_run }),
  };
}
