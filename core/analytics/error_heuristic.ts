/**
 * The one rule for "is this tool result an error?". The API's analytics and the UI's session
 * view both import it, so their counts never disagree.
 */
import type { Operation, OperationKind } from "../model/types.ts";

/** How much of a result's text the heuristic reads; callers need fetch no more than this. */
export const ERROR_SCAN_CHARS = 600;

const NOT_TOOLS: ReadonlySet<OperationKind> = new Set(["prompt", "reply", "thinking", "event"]);

/** Exit-code forms the agents print: Codex "Process exited with code 1", "Exit code: 2", ... */
const EXIT_CODE = [
  /Process exited with code (-?\d+)/,
  /^Exit code:? (-?\d+)/m,
  /"exit_code"\s*:\s*(-?\d+)/,
  /\bexit (?:status|code) (-?\d+)/i,
];

/** Text that opens a failed result. Only the start counts, so file contents rarely match. */
const ERROR_OPENINGS = [
  /^<tool_use_error>/,
  /^(?:Error|ERROR|error)\b[:!\s]/,
  /^[A-Za-z]*Error: /,
  /^Traceback \(most recent call last\):/,
  /^apply_patch verification failed/,
  /^Could not find /,
  /^File not found: /,
  /^(?:bash|sh|zsh): .*(?:command not found|No such file or directory)/,
  /^User rejected tool use/,
  /^The user doesn't want to proceed/,
];

/** True when a tool kind is one whose result can fail (not prompts, replies, thinking, events). */
export function isToolKind(kind: OperationKind): boolean {
  return !NOT_TOOLS.has(kind);
}

/** The exit code a result's opening text reports, or null when it reports none. */
export function exitCodeOf(text: string): number | null {
  const head = text.slice(0, ERROR_SCAN_CHARS);
  for (const re of EXIT_CODE) {
    const m = re.exec(head);
    if (m) return Number(m[1]);
  }
  return null;
}

/**
 * Whether a tool result is an error. The recorded flag decides first; a shell step whose text
 * reports a non-zero exit code is an error even if the flag says otherwise (agents that do
 * not record exit status set the flag by guessing). Without a flag: the exit code, then the
 * opening of the text. Only the first {@link ERROR_SCAN_CHARS} characters are read.
 */
export function isErrorResult(
  op: Pick<Operation, "kind" | "is_error">,
  resultText?: string | null,
): boolean {
  if (!isToolKind(op.kind)) return false;
  if (op.is_error === true) return true;
  const head = resultText ? resultText.slice(0, ERROR_SCAN_CHARS) : "";
  const code = head ? exitCodeOf(head) : null;
  if (op.is_error === false) return op.kind === "exec" && code !== null && code !== 0;
  if (code !== null) return code !== 0;
  if (!head) return false;
  const opening = head.trimStart();
  return ERROR_OPENINGS.some((re) => re.test(opening));
}
