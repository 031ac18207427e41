/**
 * GitHub Copilot CLI importer: `${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl`
 * (and the earlier flat `session-state/<id>.jsonl`). One file is one session and one unit, read
 * by `CopilotPass` (`pass.ts`); sub-agents' events are in the same file, on connections of their
 * own. The session's name comes from `workspace.yaml` when the user gave one.
 */
import { agentName } from "../../model/agents.ts";
import type { SessionDelta } from "../../model/delta.ts";
import type {
  DiscoverEnv,
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../types.ts";
import { beginJsonlPass, joinPath, passResult, rangeOf, readPass } from "../_import_kit.ts";
import { copilotHome, sessionOfPath, userNameOf, workspaceOf } from "./layout.ts";
import { CopilotPass, freshState, SOURCE, STATE_VERSION } from "./pass.ts";

export { copilotHome, sessionOfPath } from "./layout.ts";

async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const root = joinPath(copilotHome(env), "session-state");
  const units: SourceUnit[] = [];
  for (const e of await fs.readDir(root)) {
    const path = joinPath(root, e.name);
    if (e.isFile && e.name.endsWith(".jsonl")) {
      units.push({ source: SOURCE, path, kind: "jsonl", rank: 0 });
    } else if (e.isDirectory && !e.isSymlink && !e.name.startsWith(".")) {
      const events = (await fs.readDir(path)).find((f) => f.isFile && f.name === "events.jsonl");
      if (events) {
        units.push({
          source: SOURCE,
          path: joinPath(path, "events.jsonl"),
          kind: "jsonl",
          rank: 0,
        });
      }
    }
  }
  return units;
}

async function titleOf(fs: SourceFs, path: string): Promise<string | undefined> {
  const yaml = workspaceOf(path);
  if (!yaml) return undefined;
  try {
    return userNameOf(await fs.readTextFile(yaml));
  } catch {
    return undefined; // no workspace.yaml: the title comes from the first prompt
  }
}

async function importFile(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const pass = new CopilotPass(unit, ctx.epoch, state, sessionOfPath(unit.path) ?? unit.path);
  const outcome = await readPass(
    fs,
    unit.path,
    plan,
    ctx,
    (l, v) => pass.record(v, rangeOf(unit.path, l)),
  );
  const s = pass.state;
  const sid = pass.sid();
  const info: SessionDelta["info"] = { id: `${SOURCE}:${sid}`, native_id: sid, source: SOURCE };
  const started = s.meta.started ??
    (pass.firstTs !== null ? new Date(pass.firstTs).toISOString() : undefined);
  if (started) info.started_at = started;
  if (pass.lastTs !== null) info.ended_at = new Date(pass.lastTs).toISOString();
  if (s.meta.cwd) {
    const git: NonNullable<SessionDelta["info"]["project"]>["git"] = {};
    if (s.meta.branch) git.branch = s.meta.branch;
    if (s.meta.commit) git.commit = s.meta.commit;
    if (s.meta.repository) git.repository = s.meta.repository;
    info.project = { path: s.meta.cwd, ...(Object.keys(git).length ? { git } : {}) };
  }
  const title = await titleOf(fs, unit.path) ?? s.meta.title;
  if (title) info.title = title;
  if (s.lastPrompt) info.last_prompt = s.lastPrompt.slice(0, 2000);
  return passResult({
    mode: plan.mode,
    deltas: [{
      session_id: info.id,
      file: unit.path,
      info,
      primary: true,
      connections: pass.connections(),
      operations: pass.records.values(),
      usage: pass.usage,
      loss_windows: outcome.loss,
      issues: pass.issues.list(),
      ...(Object.keys(s.counted).length
        ? { extensions: { [SOURCE]: { counted_records: { ...s.counted } } } }
        : {}),
    }],
    checkpoint: outcome.checkpoint,
    state: s,
    sink: pass.sink,
    bytesRead: outcome.bytesRead,
  });
}

export const copilot: Importer<"copilot"> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  slices: true,
  discover,
  detect: (path: string) => sessionOfPath(path) !== undefined,
  import: importFile,
};
