/**
 * The agents Chronicle knows: their source ids (stable: they appear in session ids and URLs)
 * and the names people see. The importers, the CLI and the UI all read this one list.
 */

/** Every agent, in display order. */
export const AGENTS = [
  { id: "claude-code", name: "Claude Code", short: "Claude Code" },
  { id: "codex", name: "Codex CLI", short: "Codex" },
  { id: "cursor", name: "Cursor", short: "Cursor" },
  { id: "opencode", name: "OpenCode", short: "OpenCode" },
  { id: "gemini", name: "Gemini CLI", short: "Gemini" },
  { id: "qwen", name: "Qwen Code", short: "Qwen" },
  { id: "copilot", name: "GitHub Copilot CLI", short: "Copilot" },
] as const;

/** An agent's source id. */
export type SourceId = typeof AGENTS[number]["id"];

export interface AgentInfo {
  id: SourceId;
  /** The product's own name ("Codex CLI"). */
  name: string;
  /** A shorter name for tight places such as badges ("Codex"). */
  short: string;
}

export const SOURCE_IDS: readonly SourceId[] = AGENTS.map((a) => a.id);

const BY_ID: ReadonlyMap<string, AgentInfo> = new Map(AGENTS.map((a) => [a.id, a]));

/** The agent with this source id, if Chronicle knows it. */
export function agentInfo(id: string): AgentInfo | undefined {
  return BY_ID.get(id);
}

/** True for a source id Chronicle knows. */
export function isSourceId(id: string): id is SourceId {
  return BY_ID.has(id);
}

/** The agent's display name; an unknown id is shown as it is. */
export function agentName(id: string, options: { short?: boolean } = {}): string {
  const a = BY_ID.get(id);
  return a ? (options.short ? a.short : a.name) : id;
}
