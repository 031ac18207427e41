/**
 * One run of the PreToolUse hook, with its I/O injected: read the payload Claude Code sends on
 * stdin, decide in this process with the same engine and custom rules as the server
 * (core/security), append the interception to the journal in the data folder, and answer with
 * the exit code. No server is asked, nothing goes over the network: a process on Chronicle's
 * port learns nothing and changes nothing.
 *
 * Exit codes: 2 means blocked, and only that (the reason on stderr reaches the model: it names
 * the rule and the file, never the secret). 0 allows. 1 is the guard failing (a payload it
 * cannot read, a crash): Claude Code shows the one stderr line and the call runs unchecked.
 */
import type { CustomRule } from "../core/security/glob_rule.ts";
import { type GuardFs, preToolUseCheck } from "../core/security/pretooluse.ts";
import { journalLine, parseRulesFile } from "../core/security/journal.ts";

export interface HookDeps {
  readStdin(): Promise<string>;
  fs: GuardFs;
  /** The rules file's text; null when there is none. */
  readRules(): Promise<string | null>;
  /** Appends one line to the journal (creating it 0600). */
  appendJournal(line: string): Promise<void>;
  stderr(text: string): void;
  /** The home folder (for `~`). */
  home?: string;
  now?: () => Date;
  /** Milliseconds for the decision (default: the engine's). */
  budgetMs?: number;
}

/** The session id `chronicle guard status` sends: its decisions are not journaled. */
export const SELF_TEST_SESSION = "chronicle-guard-self-test";

/** Largest payload read from stdin. */
export const MAX_PAYLOAD = 16 << 20;

function fail(deps: HookDeps, why: string): number {
  deps.stderr(`Chronicle guard: ${why}; this call was NOT checked.\n`);
  return 1;
}

/** Runs the hook once and returns the exit code (see the module comment). Never throws. */
export async function runHook(deps: HookDeps): Promise<number> {
  let payload: Record<string, unknown>;
  try {
    const text = await deps.readStdin();
    if (text.length > MAX_PAYLOAD) return fail(deps, "the hook payload is over 16 MiB");
    payload = JSON.parse(text);
  } catch {
    return fail(deps, "the hook payload on stdin is not JSON");
  }
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
    return fail(deps, "the hook payload is not a JSON object");
  }
  if (payload.hook_event_name !== undefined && payload.hook_event_name !== "PreToolUse") return 0;
  if (typeof payload.tool_name !== "string") return fail(deps, "the hook payload has no tool_name");
  let rules: CustomRule[] = [];
  let rulesProblem = "";
  try {
    const text = await deps.readRules();
    if (text !== null) rules = parseRulesFile(text);
  } catch (e) {
    rulesProblem = `the custom rules file cannot be read (${(e as Error).message})`;
  }
  try {
    const d = await preToolUseCheck(
      {
        tool_name: payload.tool_name,
        tool_input: payload.tool_input ?? {},
        cwd: typeof payload.cwd === "string" ? payload.cwd : undefined,
        session_id: typeof payload.session_id === "string" ? payload.session_id : undefined,
      },
      deps.fs,
      { rules, home: deps.home, now: deps.now, budgetMs: deps.budgetMs },
    );
    if (d.action !== "allow" && payload.session_id !== SELF_TEST_SESSION) {
      try {
        await deps.appendJournal(journalLine(d.interception));
      } catch (e) {
        deps.stderr(
          `Chronicle guard: could not record the interception (${(e as Error).message})\n`,
        );
      }
    }
    if (d.decision === "block") {
      deps.stderr((d.reason ?? "Chronicle blocked this tool call.") + "\n");
      return 2;
    }
    if (rulesProblem) {
      deps.stderr(
        `Chronicle guard: ${rulesProblem}; the call was checked with the built-in rules only.\n`,
      );
      return 1;
    }
    return 0;
  } catch (e) {
    return fail(deps, `it failed (${(e as Error).message})`);
  }
}
