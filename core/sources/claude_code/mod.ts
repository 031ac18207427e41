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
import {
  beginJsonlPass,
  dirname,
  isObj,
  type Json,
  passResult,
  readPass,
  readWhole,
  str,
} from "../_import_kit.ts";
import { ClaudeFileBuilder, freshState, SOURCE, STATE_VERSION, upgradeState } from "./builder.ts";
import { importJournal } from "./journal.ts";
import { slicedOn } from "../results.ts";
import { claudeRoots, isAgentFileName, isSubagentFile, roleOf } from "./layout.ts";

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
  const role = roleOf(unit.path);
  if (role.journal) return importJournal(unit, ctx, role);
  const start = await beginJsonlPass(unit, ctx, {
    version: STATE_VERSION,
    fresh: freshState,
    upgrade: upgradeState,
  });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const seen = plan.mode === "append" ? ctx.resume?.seen : undefined;
  const builder = new ClaudeFileBuilder(unit, ctx.epoch, state, role, seen);
  if (role.subagent) builder.agentType = await readAgentType(fs, unit.path);
  const outcome = await readPass(fs, unit.path, plan, ctx, (l, v) => builder.record(v, l));
  await readPersistedOutputs(fs, builder);
  await linkTasksByPrompt(fs, builder);
  const result = passResult({
    mode: plan.mode,
    deltas: builder.finish(outcome.loss),
    checkpoint: outcome.checkpoint,
    state,
    sink: builder.sink,
    bytesRead: outcome.bytesRead,
  });
  // a slice with more to come keeps its table for the next (seen.ts)
  result.seen = builder.seenResult(slicedOn(outcome.checkpoint));
  return result;
}

/** The largest persisted output read whole; a larger one keeps its preview. */
const MAX_PERSISTED_BYTES = 64 * 1024 * 1024;

/**
 * Outputs Claude Code kept in `<session>/tool-results/` (the log holds a preview and the path):
 * the whole output, the agent's own record, becomes the result; the preview and the path stay
 * in the operation's extensions. Only a file in that folder of this transcript's own project
 * folder is read, wherever the log's path pointed.
 */
async function readPersistedOutputs(fs: SourceFs, b: ClaudeFileBuilder): Promise<void> {
  for (const { rec, path } of b.persisted) {
    const local = await localPersistedPath(fs, b.unit.path, path);
    const ext = (rec.op.extensions?.[SOURCE] ?? {}) as Json;
    const note: Json = { path, preview: rec.op.response };
    const st = local ? await fs.stat(local) : null;
    if (!local || !st?.isFile || st.size > MAX_PERSISTED_BYTES) {
      b.issue(
        "persisted_output_unread",
        st && st.size > MAX_PERSISTED_BYTES
          ? "a tool output kept in its own file is too large to import; its preview stays"
          : "a tool output kept in its own file is gone; its preview stays",
      );
      rec.op.extensions = { ...rec.op.extensions, [SOURCE]: { ...ext, persisted_output: note } };
      continue;
    }
    const bytes = await readWhole(fs, local);
    rec.op.response = b.sink.bytes(bytes);
    note.size = bytes.byteLength;
    rec.op.extensions = { ...rec.op.extensions, [SOURCE]: { ...ext, persisted_output: note } };
  }
}

/** `<session>/tool-results/<name>` beside this transcript (or its session folder's parent). */
async function localPersistedPath(
  fs: SourceFs,
  transcript: string,
  logged: string,
): Promise<string | undefined> {
  const segs = logged.split("/");
  const at = segs.lastIndexOf("tool-results");
  const name = segs.at(-1) ?? "";
  if (at < 1 || at !== segs.length - 2 || !name || name === ".." || name === ".") return undefined;
  const rel = `${segs[at - 1]}/tool-results/${name}`;
  let dir = dirname(transcript);
  for (let up = 0; up < 4 && dir !== "/"; up++, dir = dirname(dir)) {
    if ((await fs.stat(`${dir}/${rel}`))?.isFile) return `${dir}/${rel}`;
  }
  return undefined;
}

/**
 * A task call whose result names no sub-agent (a teammate carries no agent id) is linked to
 * the sub-agent transcript of its session whose first message is the call's prompt, when
 * exactly one is.
 */
async function linkTasksByPrompt(fs: SourceFs, b: ClaudeFileBuilder): Promise<void> {
  if (!b.unlinkedTasks.length) return;
  const firsts = new Map<string, string>(); // connection id -> first prompt
  const dir = dirname(b.unit.path);
  for (const { session } of b.unlinkedTasks) {
    for (const folder of [`${dir}/${session}/subagents`, dir]) {
      for (const e of await fs.readDir(folder)) {
        if (!e.isFile || !isAgentFileName(e.name)) continue;
        const first = await firstPrompt(fs, `${folder}/${e.name}`);
        if (first) firsts.set(first.conn ?? `agent-${e.name.slice(6, -6)}`, first.text);
      }
    }
  }
  const claimed = new Set<string>();
  for (const { rec, prompt } of b.unlinkedTasks) {
    const want = normalize(prompt);
    const matches = [...firsts].filter(([id, text]) => !claimed.has(id) && text === want);
    if (matches.length !== 1) continue;
    claimed.add(matches[0][0]);
    rec.op.spawns = matches[0][0];
    rec.op.extensions = {
      ...rec.op.extensions,
      [SOURCE]: { ...(rec.op.extensions?.[SOURCE] as Json), spawn_linked_by: "prompt" },
    };
  }
}

const normalize = (s: string) => s.replace(/\s+/g, " ").trim();

/** The first user message of a transcript (from its head) and the agent id it names. */
async function firstPrompt(
  fs: SourceFs,
  path: string,
): Promise<{ text: string; conn?: string } | undefined> {
  const head = new TextDecoder().decode(await fs.readRange(path, 0, 65536));
  for (const line of head.split("\n")) {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObj(v) || v.type !== "user" || !isObj(v.message)) continue;
    const c = v.message.content;
    const text = typeof c === "string"
      ? c
      : Array.isArray(c)
      ? c.map((x) => (isObj(x) && typeof x.text === "string" ? x.text : "")).join("\n")
      : "";
    if (!text) continue;
    const agentId = str(v.agentId);
    return { text: normalize(text), conn: agentId ? `agent-${agentId}` : undefined };
  }
  return undefined;
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
  slices: true,
  discover,
  detect,
  import: importFile,
};
