/**
 * Where Claude Code keeps its transcripts, and what a file's place says about it: its session
 * (from a `<session>/subagents/` folder) and whether it is a sub-agent's (`agent-<id>.jsonl`).
 */
import type { DiscoverEnv } from "../types.ts";
import { basename } from "../_import_kit.ts";

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

/** Sub-agent transcripts and workflow journals sort after their session's main file. */
export function isSubagentFile(path: string): boolean {
  return basename(path).startsWith("agent-") || subagentsAt(path.split("/")) > 0;
}

/** Where `subagents` is among a file's last folders (-1 when it is not). */
function subagentsAt(segs: string[]): number {
  const at = segs.lastIndexOf("subagents");
  return at >= segs.length - 4 ? at : -1;
}

/** The layout a file belongs to decides its session and connection. */
export interface FileRole {
  subagent: boolean;
  /** Session native id known from the layout (the `<session>/subagents/` folder). */
  sessionFromLayout?: string;
  /** The sub-agent id from the file name (`agent-<id>.jsonl`). */
  agentId?: string;
  /** The workflow run a file belongs to (`<session>/subagents/workflows/<run>/`). */
  workflowRun?: string;
  /** The run's `journal.jsonl`: which agents a workflow started and what they returned. */
  journal?: boolean;
}

/**
 * `<enc>/<session>.jsonl` is a session; `<enc>/agent-<id>.jsonl` (2.0.x) and
 * `<enc>/<session>/subagents/agent-<id>.jsonl` are sub-agents; a workflow's agents and its run
 * journal live in `<enc>/<session>/subagents/workflows/<run>/`.
 */
export function roleOf(path: string): FileRole {
  const name = basename(path);
  const agentId = name.startsWith("agent-") ? name.slice(6, -".jsonl".length) : undefined;
  const segs = path.split("/");
  const at = subagentsAt(segs);
  if (at > 0) {
    const workflowRun = segs[at + 1] === "workflows" && at + 3 < segs.length
      ? segs[at + 2]
      : undefined;
    const role: FileRole = { subagent: true, sessionFromLayout: segs[at - 1], agentId };
    if (workflowRun) role.workflowRun = workflowRun;
    if (workflowRun && name === "journal.jsonl") role.journal = true;
    return role;
  }
  return { subagent: agentId !== undefined, agentId };
}

/** A sub-agent file's name that could be the one a task call spawned (not a journal). */
export function isAgentFileName(name: string): boolean {
  return name.startsWith("agent-") && name.endsWith(".jsonl");
}
