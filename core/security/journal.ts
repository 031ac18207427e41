/**
 * What the guard and the server share on disk, in the data folder, so the guard decides and
 * records without any server: the custom rules it reads (`guard_rules.json`, written by
 * whoever changes the rules) and the journal of interceptions it appends to
 * (`interceptions.jsonl`, ingested into the store by the server and by `chronicle import`).
 * Both 0600. Pure formats here; the I/O is the caller's.
 */
import type { CustomRule } from "./glob_rule.ts";
import type { GuardAction, Interception } from "./pretooluse.ts";

export const RULES_FILE = "guard_rules.json";
export const JOURNAL_FILE = "interceptions.jsonl";
/** Where the ingester remembers how far it has read the journal. */
export const JOURNAL_OFFSET_FILE = "interceptions.offset";

const RULES_VERSION = 1;

/** The rules file's text for the enabled rules, in claim order. */
export function rulesFileText(rules: readonly CustomRule[]): string {
  const kept = rules.filter((r) => r.enabled).map(({ id, name, pattern, action }) => ({
    id,
    name,
    pattern,
    action,
    enabled: true,
  }));
  return JSON.stringify({ version: RULES_VERSION, rules: kept }) + "\n";
}

/** The rules in a rules file; throws a SyntaxError for anything else. */
export function parseRulesFile(text: string): CustomRule[] {
  const value = JSON.parse(text);
  if (!value || value.version !== RULES_VERSION || !Array.isArray(value.rules)) {
    throw new SyntaxError(`not a version ${RULES_VERSION} rules file`);
  }
  return value.rules.map((r: Record<string, unknown>): CustomRule => {
    if (
      typeof r.id !== "string" || typeof r.name !== "string" || typeof r.pattern !== "string" ||
      (r.action !== "redact" && r.action !== "allow")
    ) {
      throw new SyntaxError("a rule in the rules file is malformed");
    }
    return { id: r.id, name: r.name, pattern: r.pattern, action: r.action, enabled: true };
  });
}

/** One journal line (with its line break) for an interception. */
export function journalLine(i: Interception): string {
  return JSON.stringify(i) + "\n";
}

const ACTIONS = new Set<GuardAction>(["block", "flag", "allow"]);

/** The interception on one journal line, or null when the line is not one. */
export function parseJournalLine(line: string): Interception | null {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (
    !v || typeof v.at !== "string" || typeof v.tool !== "string" ||
    !ACTIONS.has(v.action as GuardAction) || !Array.isArray(v.rules) ||
    !v.rules.every((r) => typeof r === "string")
  ) return null;
  const i: Interception = {
    at: v.at.slice(0, 40),
    tool: v.tool.slice(0, 500),
    rules: (v.rules as string[]).slice(0, 50).map((r) => r.slice(0, 200)),
    action: v.action as GuardAction,
  };
  if (typeof v.session_id === "string") i.session_id = v.session_id.slice(0, 200);
  if (typeof v.file === "string") i.file = v.file.slice(0, 4096);
  if (typeof v.sample === "string") i.sample = v.sample.slice(0, 400);
  return i;
}

/**
 * The complete lines of `text` (what follows the last line break is left for next time):
 * the interceptions, the bad lines' count and how many bytes were consumed.
 */
export function readJournal(bytes: Uint8Array): {
  records: Interception[];
  bad: number;
  consumed: number;
} {
  const end = bytes.lastIndexOf(10) + 1;
  const text = new TextDecoder().decode(bytes.subarray(0, end));
  const records: Interception[] = [];
  let bad = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const i = parseJournalLine(line);
    if (i) records.push(i);
    else bad++;
  }
  return { records, bad, consumed: end };
}
