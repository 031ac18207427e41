/**
 * Exit codes the agents print into a shell tool's output text, for the agents that record no
 * exit status of their own (Codex CLI's shell tools, Gemini CLI's run_shell_command, Copilot CLI's bash when its
 * shellExecution is absent).
 */

/** The forms, in the order they are tried, and how much of the text each may look at. */
export const EXIT_CODE_FORMS: readonly { re: RegExp; head?: number; agent: string }[] = [
  // Codex CLI: "Exit code: 1\nWall time: ..." and unified exec's "Process exited with code 1".
  { re: /^(?:Exit code: |Process exited with code )(-?\d+)\s*$/m, head: 2000, agent: "codex" },
  // Gemini CLI: "...\nError: (none)\nExit Code: 1" after the output, possibly JSON-escaped.
  { re: /(?:^|\n|\\n)Exit Code: (-?\d+)/, agent: "gemini" },
  // GitHub Copilot CLI: "...\n<shellId: 0 completed with exit code 1>" after the output.
  { re: /<shellId: [^>\s]+ completed with exit code (-?\d+)>/, agent: "copilot" },
];

/** The exit code a tool's output text reports, or undefined when it reports none. */
export function exitCodeInText(text: string): number | undefined {
  for (const form of EXIT_CODE_FORMS) {
    const m = form.re.exec(form.head ? text.slice(0, form.head) : text);
    if (m) return Number(m[1]);
  }
  return undefined;
}
