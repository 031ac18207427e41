/**
 * Claude Code importer: `~/.claude/projects/<encoded cwd>/<session>.jsonl`, with sub-agents
 * inline (sidechains), in `agent-*.jsonl` beside the session, or in `<session>/subagents/`.
 *
 * One file is one unit. Records form a tree (uuid/parentUuid); one API message spans several
 * lines (one content block each) that share `message.id`; resumed sessions repeat records,
 * deduplicated by uuid. Tool calls stay pending in the importer state until their result
 * arrives, possibly in a later pass.
 */
import { agentName } from "../../model/agents.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../types.ts";
import { beginJsonlPass, isObj, passResult, readPass, str } from "../_import_kit.ts";
import { ClaudeFileBuilder, freshState, SOURCE, STATE_VERSION } from "./builder.ts";
import { claudeRoots, isSubagentFile, roleOf } from "./layout.ts";

export { claudeRoots } from "./layout.ts";
export { trimToolUseResult } from "./tool_result.ts";

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  const seen = new Set<string>();
  async function walk(dir: string, depth: number): Promise<void> {
    if (depth > 6) return;
    for (const e of await fs.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory && !e.isSymlink) {
        if (e.name === "tool-results") continue;
        await walk(path, depth + 1);
      } else if (e.isFile && e.name.endsWith(".jsonl") && !seen.has(path)) {
        seen.add(path);
        units.push({ source: SOURCE, path, kind: "jsonl", rank: isSubagentFile(path) ? 1 : 0 });
      }
    }
  }
  for (const root of claudeRoots(env)) await walk(root, 0);
  return units;
}

function detect(path: string): boolean {
  return path.endsWith(".jsonl") && /\/projects\//.test(path);
}

async function importFile(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const role = roleOf(unit.path);
  const builder = new ClaudeFileBuilder(unit, ctx.epoch, state, role);
  if (role.subagent) builder.agentType = await readAgentType(fs, unit.path);
  const outcome = await readPass(fs, unit.path, plan, ctx, (l, v) => builder.record(v, l));
  return passResult({
    mode: plan.mode,
    deltas: builder.finish(outcome.loss),
    checkpoint: outcome.checkpoint,
    state,
    sink: builder.sink,
    bytesRead: outcome.bytesRead,
  });
}

async function readAgentType(fs: SourceFs, path: string): Promise<string | undefined> {
  const meta = path.replace(/\.jsonl$/, ".meta.json");
  if (!(await fs.stat(meta))?.isFile) return undefined;
  try {
    const v = JSON.parse(await fs.readTextFile(meta));
    return isObj(v) ? str(v.agentType) : undefined;
  } catch {
    return undefined;
  }
}

export const claudeCode: Importer<typeof SOURCE> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  discover,
  detect,
  import: importFile,
};
