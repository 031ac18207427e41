/**
 * Where Qwen Code keeps its chats, and what a file's place says. A session is
 * `<runtime dir>/projects/<project id>/chats/<session id>.jsonl`, the project id being the
 * project path with every character outside `[A-Za-z0-9]` replaced by `-` (not Gemini CLI's
 * SHA-256 of the path: every record names its `cwd`, so the folder name is never decoded). A
 * background sub-agent's transcript is `<project id>/subagents/<session id>/agent-<id>.jsonl`
 * beside its `agent-<id>.meta.json`.
 *
 * The runtime dir is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen` (the CLI's
 * `Storage.getRuntimeBaseDir`); all that are set are searched, since either may have been set
 * for some runs only.
 */
import type { DiscoverEnv } from "../types.ts";
import { basename, joinPath } from "../_import_kit.ts";

/** The folders Qwen Code may have written `projects/` into, most specific first. */
export function qwenRoots(env: DiscoverEnv): string[] {
  const expand = (p: string) =>
    p === "~" ? env.home : p.startsWith("~/") ? joinPath(env.home, p.slice(2)) : p;
  const roots: string[] = [];
  for (const v of [env.env.QWEN_RUNTIME_DIR, env.env.QWEN_HOME]) {
    if (v && v.trim()) roots.push(expand(v.trim()));
  }
  roots.push(joinPath(env.home, ".qwen"));
  return [...new Set(roots.map((r) => r.replace(/\/+$/, "")))];
}

/** What a file's place says: a main chat, or a sub-agent of the session its folder names. */
export interface QwenFileRole {
  /** `chats/<id>.jsonl`: the session's own file. */
  main: boolean;
  /** For `subagents/<session>/agent-<id>.jsonl`: the parent session and the agent id. */
  parentSession?: string;
  agentId?: string;
}

/** The role of a file by its path, or undefined for a path Qwen Code does not write. */
export function qwenRole(path: string): QwenFileRole | undefined {
  const segs = path.split("/");
  const name = basename(path);
  if (!name.endsWith(".jsonl")) return undefined;
  if (segs.at(-2) === "chats" && segs.at(-4) === "projects") return { main: true };
  if (segs.at(-3) === "subagents" && segs.at(-5) === "projects" && name.startsWith("agent-")) {
    return {
      main: false,
      parentSession: segs.at(-2),
      agentId: name.slice("agent-".length, -".jsonl".length),
    };
  }
  return undefined;
}

/** The sidecar a sub-agent transcript has beside it (`agent-<id>.meta.json`). */
export function metaPathOf(path: string): string {
  return path.replace(/\.jsonl$/, ".meta.json");
}
