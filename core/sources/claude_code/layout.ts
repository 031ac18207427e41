/**
 * Where Claude Code keeps its transcripts, and what a file's place says about it: its session
 * (from a `<session>/subagents/` folder) and whether it is a sub-agent's (`agent-<id>.jsonl`).
 */
import type { DiscoverEnv } from "../types.ts";
import { basename, dirname } from "../_import_kit.ts";

/** Where Claude Code keeps projects: CLAUDE_CONFIG_DIR (comma-separated), ~/.claude, ~/.config/claude. */
export function claudeRoots(env: DiscoverEnv): string[] {
  const roots: string[] = [];
  const configured = env.env.CLAUDE_CONFIG_DIR;
  if (configured) {
    for (const r of configured.split(",")) if (r.trim()) roots.push(`${r.trim()}/projects`);
  }
  const xdg = env.env.XDG_CONFIG_HOME || `${env.home}/.config`;
  roots.push(`${env.home}/.claude/projects`, `${xdg}/claude/projects`);
  return [...new Set(roots.map((r) => r.replace(/\/+$/, "")))];
}

export function isSubagentFile(path: string): boolean {
  return basename(path).startsWith("agent-") || basename(dirname(path)) === "subagents";
}

/** The layout a file belongs to decides its session and connection. */
export interface FileRole {
  subagent: boolean;
  /** Session native id known from the layout (the `<session>/subagents/` folder). */
  sessionFromLayout?: string;
  /** The sub-agent id from the file name (`agent-<id>.jsonl`). */
  agentId?: string;
}

export function roleOf(path: string): FileRole {
  const name = basename(path);
  const agentId = name.startsWith("agent-") ? name.slice(6, -".jsonl".length) : undefined;
  if (basename(dirname(path)) === "subagents") {
    return { subagent: true, sessionFromLayout: basename(dirname(dirname(path))), agentId };
  }
  return { subagent: agentId !== undefined, agentId };
}
