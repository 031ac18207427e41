/**
 * Qwen Code importer: `~/.qwen/projects/<project id>/chats/<session>.jsonl` (or under
 * `$QWEN_RUNTIME_DIR` / `$QWEN_HOME`), and background sub-agents' transcripts in
 * `<project id>/subagents/<session>/agent-<id>.jsonl`, which join their session as sub-agent
 * connections, each under the `agent` call whose `prompt` is its first prompt. One file is one unit, read by `QwenPass` (`pass.ts`); the Gemini `Content` parts
 * inside the records are read by the helpers Gemini CLI's importer uses (`gemini/parts.ts`).
 */
import { agentName } from "../../model/agents.ts";
import type { SessionDelta } from "../../model/delta.ts";
import type { LossWindow } from "../../model/types.ts";
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
  type DeltaDraft,
  isObj,
  isoOf,
  joinPath,
  nonEmpty,
  passResult,
  rangeOf,
  readPass,
  stemOf,
} from "../_import_kit.ts";
import { metaPathOf, qwenRole, qwenRoots } from "./layout.ts";
import { readJsonl } from "../jsonl.ts";
import { callOpId, freshState, QwenPass, SOURCE, STATE_VERSION } from "./pass.ts";

export { qwenRole, qwenRoots } from "./layout.ts";

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  const seen = new Set<string>();
  const add = (path: string, rank: number) => {
    if (seen.has(path)) return;
    seen.add(path);
    units.push({ source: SOURCE, path, kind: "jsonl", rank });
  };
  for (const root of qwenRoots(env)) {
    const projects = joinPath(root, "projects");
    for (const p of await fs.readDir(projects)) {
      if (!p.isDirectory || p.isSymlink) continue;
      const dir = joinPath(projects, p.name);
      for (const e of await fs.readDir(joinPath(dir, "chats"))) {
        if (e.isFile && e.name.endsWith(".jsonl")) add(joinPath(dir, "chats", e.name), 0);
      }
      for (const s of await fs.readDir(joinPath(dir, "subagents"))) {
        if (!s.isDirectory || s.isSymlink) continue;
        for (const e of await fs.readDir(joinPath(dir, "subagents", s.name))) {
          if (e.isFile && e.name.startsWith("agent-") && e.name.endsWith(".jsonl")) {
            add(joinPath(dir, "subagents", s.name, e.name), 1);
          }
        }
      }
    }
  }
  return units;
}

/** The agent type a sub-agent's sidecar names (`agentType`, else `subagentName`). */
async function agentTypeOf(fs: SourceFs, path: string): Promise<string | undefined> {
  try {
    const meta = JSON.parse(await fs.readTextFile(metaPathOf(path)));
    return isObj(meta) ? nonEmpty(meta.agentType) ?? nonEmpty(meta.subagentName) : undefined;
  } catch {
    return undefined; // no sidecar: the connection has no agent type
  }
}

/**
 * The `agent` call in the parent chat whose `prompt` is the sub-agent's first prompt (the
 * transcript names no call id; the CLI seeds it with the launching prompt). The parent chat is
 * `<project>/chats/<session>.jsonl` beside the `subagents/` folder; read once per sub-agent,
 * until the call is found.
 */
async function spawningCall(
  fs: SourceFs,
  path: string,
  parentSession: string,
  prompt: string,
): Promise<string | undefined> {
  const segs = path.split("/");
  const chat = [...segs.slice(0, -3), "chats", `${parentSession}.jsonl`].join("/");
  if (!(await fs.stat(chat))?.isFile) return undefined;
  const at = { offset: 0, line: 1, bytesRead: 0 };
  let found: string | undefined;
  await readJsonl(fs, chat, at, { closed: true }, (l) => {
    const rec = l.value;
    if (!isObj(rec) || rec.type !== "assistant" || !isObj(rec.message)) return true;
    const parts = Array.isArray(rec.message.parts) ? rec.message.parts : [];
    for (const [i, p] of parts.entries()) {
      const fc = isObj(p) && isObj(p.functionCall) ? p.functionCall : undefined;
      if (!fc || fc.name !== "agent" || !isObj(fc.args) || fc.args.prompt !== prompt) continue;
      const uuid = nonEmpty(rec.uuid) ?? `line${l.line}`;
      found = callOpId(
        nonEmpty(rec.sessionId) ?? parentSession,
        uuid,
        `call:${nonEmpty(fc.id) ?? i}`,
      );
      return false;
    }
    return true;
  });
  return found;
}

function deltaOf(pass: QwenPass, loss: LossWindow[], agentType?: string): DeltaDraft {
  const s = pass.state;
  const sid = pass.sid();
  const main = pass.connection.kind === "main";
  const info: SessionDelta["info"] = { id: `${SOURCE}:${sid}`, native_id: sid, source: SOURCE };
  const started = isoOf(s.meta.started ?? pass.firstTs);
  if (started) info.started_at = started;
  const ended = isoOf(pass.lastTs);
  if (ended) info.ended_at = ended;
  if (main) {
    if (s.meta.cwd) {
      info.project = {
        path: s.meta.cwd,
        ...(s.meta.branch ? { git: { branch: s.meta.branch } } : {}),
      };
    }
    if (s.meta.title) info.title = s.meta.title;
    if (s.lastPrompt) info.last_prompt = s.lastPrompt.slice(0, 2000);
  }
  const extensions = Object.keys(s.counted).length
    ? { [SOURCE]: { counted_records: { ...s.counted } } }
    : undefined;
  return {
    session_id: `${SOURCE}:${sid}`,
    file: pass.unit.path,
    info,
    primary: main,
    connections: [pass.connectionInfo(agentType)],
    operations: pass.records.values(),
    usage: pass.usage,
    loss_windows: loss,
    issues: pass.issues.list(),
    ...(main && extensions ? { extensions } : {}),
  };
}

async function importFile(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const role = qwenRole(unit.path);
  const sub = role && !role.main && role.parentSession
    ? { id: `subagent:${role.agentId}`, kind: "subagent" as const, sessionId: role.parentSession }
    : undefined;
  const pass = new QwenPass(
    unit,
    ctx.epoch,
    state,
    stemOf(unit.path),
    sub ?? { id: "main", kind: "main" },
  );
  const outcome = await readPass(
    fs,
    unit.path,
    plan,
    ctx,
    (l, v) => pass.record(v, rangeOf(unit.path, l)),
  );
  const agentType = sub ? await agentTypeOf(fs, unit.path) : undefined;
  if (sub && !state.parentOp && state.firstPrompt) {
    state.parentOp = await spawningCall(fs, unit.path, sub.sessionId, state.firstPrompt);
  }
  return passResult({
    mode: plan.mode,
    deltas: [deltaOf(pass, outcome.loss, agentType)],
    checkpoint: outcome.checkpoint,
    state: pass.state,
    sink: pass.sink,
    bytesRead: outcome.bytesRead,
  });
}

export const qwen: Importer<"qwen"> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  slices: true,
  discover,
  detect: (path: string) => qwenRole(path) !== undefined && /\/\.qwen\/|QWEN/.test(path),
  import: importFile,
};
