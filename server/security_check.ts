/**
 * The security check of one session, as a pure function of the session, its payload texts and
 * the rules: what the API's check report shows (findings with redacted previews, per-rule
 * counts). Runs in the check worker (check_worker.ts) so long checks never hold the server's
 * main thread, and in process where no worker is wanted (tests). Each session has a time
 * budget; a session that runs out of it is reported as unfinished, never as clean.
 */
import type { CanonicalSession } from "../core/model/mod.ts";
import {
  type CustomRule,
  deadlineIn,
  type Finding,
  isTimeout,
  scanText,
  sessionFindings,
} from "../core/security/mod.ts";

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
  /** Set when the session's budget ran out: the counts are a lower bound. */
  unfinished?: string;
}

/** What one session's check needs, all of it plain data (it crosses to the worker). */
export interface CheckInput {
  session: CanonicalSession;
  /** Payload text by SHA-256; null for one that cannot be read. */
  payloads: Record<string, string | null>;
  rules: CustomRule[];
  /** Shown when the session has no title (redacted like the findings). */
  fallbackTitle: string | null;
  /** The user's name for the session: shown before its own title (redacted too). */
  userTitle?: string | null;
  /** Milliseconds for this session. Default 30 s. */
  budgetMs?: number;
}

const PREVIEW = 60;
export const FINDINGS_PER_SESSION = 200;

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

/** The session's own title, redacted (as its findings say), or null. */
function titleOf(
  session: CanonicalSession,
  scan: { messages: { op: string; field: string; redacted: string }[] },
): string | null {
  const title = session.session.title;
  if (title === undefined || title === null) return null;
  return scan.messages.find((m) => m.op === "" && m.field === "title")?.redacted ?? title;
}

/** Checks one session (see the module comment). */
export function checkSession(input: CheckInput): CheckSessionReport {
  const { session, rules } = input;
  const budget = input.budgetMs ?? 30_000;
  const base = {
    session_id: session.session.id,
    source: session.session.source,
  };
  try {
    const deadline = deadlineIn(budget);
    const scan = sessionFindings(session, {
      rules,
      deadline,
      readPayload: (ref) => ("sha256" in ref ? input.payloads[ref.sha256] ?? null : null),
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
      ...base,
      // The title is shown beside the findings, so it is redacted like them.
      title: input.userTitle
        ? scanText(input.userTitle, { rules }).redacted
        : titleOf(session, scan) ??
          (input.fallbackTitle === null ? null : scanText(input.fallbackTitle, { rules }).redacted),
      total: scan.total,
      by_rule: scan.histogram,
      findings,
    };
  } catch (e) {
    if (!isTimeout(e)) throw e;
    return {
      ...base,
      title: null,
      total: 0,
      by_rule: {},
      findings: [],
      unfinished: `the check ran out of its ${budget} ms budget`,
    };
  }
}
