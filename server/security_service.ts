/**
 * The security engine (core/security) in the shape the API serves: rules CRUD over the
 * store's rule table, the security check of one session or all with redacted previews, the
 * interception log, the guard's pre-tool-use decision, and the opt-in hook install (injected,
 * since it writes Claude Code's settings file).
 */
import { ChronicleError } from "../core/model/mod.ts";
import { pagedTurns } from "../core/paged.ts";
import { oneAtATime, type SessionWork } from "./session_work.ts";
import { type CustomRule, type Interception, RuleStore } from "../core/security/mod.ts";
import {
  type CheckInput,
  checkSession,
  type CheckSessionReport,
  FINDINGS_PER_SESSION,
} from "./security_check.ts";
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
  /**
   * Runs one session's check: the check worker (server/check_runner.ts) in `chronicle serve`,
   * so the API keeps answering; default: in process (the service still yields between sessions).
   */
  runCheck?: (input: CheckInput) => Promise<CheckSessionReport> | CheckSessionReport;
  /** Told of every interception ingested from the guard's journal. */
  onInterception?: (i: Interception) => void;
  now?: () => Date;
  /** Operations a session's check sends at once, with their payloads. Default `PAGE_STEPS`. */
  checkPage?: number;
  /** Where each session's check waits its turn (server/session_work.ts). Default: its own. */
  sessionWork?: SessionWork;
}

export type { CheckFinding, CheckSessionReport } from "./security_check.ts";

export interface CheckReport {
  sessions_scanned: number;
  /** Sessions whose check ran out of its time budget (their counts are a lower bound). */
  unfinished: number;
  total: number;
  by_rule: Record<string, number>;
  sessions: CheckSessionReport[];
}

export const GUARD_EXPLANATION =
  "The guard is a Claude Code PreToolUse hook. Before every tool call, Claude Code runs it; " +
  "it decides on its own, with the same rules as this server, whether the call would read or " +
  "send a secret (a .env file, a private key, an API key, password, token or credential URL) " +
  "and blocks the call if so, naming the rule but never the secret. Personal data is flagged " +
  "and allowed. It needs no server: what it intercepts is recorded in the data folder and " +
  "shown here. Installing adds one entry to Claude Code's settings.json (backed up first) and " +
  "changes nothing else; removing takes out exactly that entry.";

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

  const runCheck = options.runCheck ?? checkSession;
  const work = options.sessionWork ?? oneAtATime();
  /**
   * One session's check, never holding the session whole: its head (info, threads) read once,
   * then its operations a page at a time in its timeline's order, each page scanned by
   * `runCheck` (the worker in serve) with its payload texts alone. The pages' reports add up to
   * the whole session's (an operation is scanned on its own, the session's own fields with the
   * first page), and the budget is the session's.
   */
  const checkOne = async (id: string): Promise<CheckSessionReport | null> => {
    const turn = pagedTurns();
    const summary = store.getSession(id);
    const budget = 30_000;
    const started = Date.now();
    let report: CheckSessionReport | null = null;
    for (const part of store.sessionParts(id, { steps: options.checkPage })) {
      const payloads: Record<string, string | null> = {};
      for (const op of Object.values(part.operations)) {
        for (const ref of [op.request, op.response]) {
          if (ref && "sha256" in ref && !(ref.sha256 in payloads)) {
            payloads[ref.sha256] = store.payloadText(ref);
          }
        }
      }
      const one = await runCheck({
        session: part,
        payloads,
        rules: rules.active(),
        fallbackTitle: summary?.first_prompt ?? null,
        userTitle: summary?.user_title ?? null,
        budgetMs: Math.max(0, budget - (Date.now() - started)),
      });
      if (one.unfinished) return { ...one, title: report?.title ?? one.title };
      report = report ? addChecks(report, one) : one;
      await turn();
    }
    return report;
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
    check: async ({ session_id, limit }) => {
      // what `chronicle show` accepts: an id, a native id, a unique prefix
      const ids = session_id
        ? [store.requireSessionId(session_id)]
        : store.listSessions({ limit: Math.min(limit ?? 500, 1000), sort: "started_at" }).items
          .map((s) => s.id);
      const report: CheckReport = {
        sessions_scanned: 0,
        unfinished: 0,
        total: 0,
        by_rule: {},
        sessions: [],
      };
      for (const id of ids) {
        const one = await work.run(() => checkOne(id), { room: true });
        // let other requests in between two sessions, whoever runs the scan
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (!one) continue;
        report.sessions_scanned++;
        if (one.unfinished) report.unfinished++;
        if (!one.total && !one.unfinished) continue;
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

/** Two reports of pages of one session's check as one (the first page's title). */
function addChecks(a: CheckSessionReport, b: CheckSessionReport): CheckSessionReport {
  const by_rule = { ...a.by_rule };
  for (const [k, v] of Object.entries(b.by_rule)) by_rule[k] = (by_rule[k] ?? 0) + v;
  return {
    ...a,
    total: a.total + b.total,
    by_rule,
    findings: [...a.findings, ...b.findings].slice(0, FINDINGS_PER_SESSION),
  };
}
