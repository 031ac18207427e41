/**
 * Codex CLI importer: `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl` and
 * `archived_sessions/`. Reads the `{timestamp,type,payload}` envelope and the older bare
 * header-line layout. Response items are the source of truth; event messages mirror them and
 * are used only where no response item says the same thing (so nothing is counted twice).
 */
import { agentName } from "../../model/agents.ts";
import type { SessionDelta } from "../../model/delta.ts";
import type { Connection, SessionIssue } from "../../model/types.ts";
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
  isObj,
  isoOf,
  joinPath,
  type Json,
  nonEmpty,
  parseJsonText,
  passResult,
  readPass,
  stemOf,
} from "../_import_kit.ts";
import { CodexPass } from "./pass.ts";
import { readLine } from "./records.ts";
import { type CodexState, freshState, MAIN, STATE_VERSION, threadConnection } from "./state.ts";

export { outputFacts, parseApplyPatch, patchFromCommand } from "./output.ts";
export type { PatchFile } from "./output.ts";

/** `rollout-<time>-<uuid>.jsonl` -> the uuid; else the file's stem. */
function codexIdFromPath(path: string): string {
  const stem = stemOf(path);
  const m = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(stem);
  return m ? m[1] : stem;
}

function connectionOf(state: CodexState, sid: string): Connection {
  const m = state.meta;
  const client: Connection["client"] = { agent: "codex", evidence: [] };
  if (m.version) {
    client.version = m.version;
    if (m.evidence.version) client.evidence.push(m.evidence.version);
  }
  if (m.originator) client.entrypoint = m.originator;
  const server: Connection["server"] = { evidence: [] };
  if (m.provider) {
    server.provider = m.provider;
    if (m.evidence.provider) server.evidence.push(m.evidence.provider);
  }
  if (state.models.length === 1) {
    server.model = state.models[0];
    server.evidence.push(...state.modelEvidence.slice(0, 1));
  }
  if (m.parent) {
    const conn: Connection = {
      id: threadConnection(sid, m.parent.path),
      kind: "subagent",
      agent_type: m.parent.role ?? "thread",
      client,
      server,
    };
    return conn;
  }
  return { id: MAIN, kind: "main", client, server };
}

async function importRollout(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const pass = new CodexPass(unit, ctx.epoch, state, codexIdFromPath(unit.path));
  pass.sawFirstLine = plan.offset > 0;
  const outcome = await readPass(fs, unit.path, plan, ctx, (l, v) => readLine(pass, l, v));
  pass.keyMirrors();
  if (plan.mode === "full") state.endpointsDue = true;
  const endpoints = state.endpointsDue && !outcome.checkpoint.more
    ? endpointIssues(state, unit)
    : [];
  if (!outcome.checkpoint.more) delete state.endpointsDue;
  const sid = pass.sid();
  // A spawned thread is a sub-agent of its parent's session.
  const parent = state.meta.parent;
  const session = parent?.thread ?? sid;
  const info: SessionDelta["info"] = {
    id: `codex:${session}`,
    native_id: session,
    source: "codex",
  };
  const started = state.meta.started ?? isoOf(pass.firstTs);
  if (started) info.started_at = started;
  const ended = isoOf(pass.lastTs);
  if (ended) info.ended_at = ended;
  if (state.meta.cwd || state.meta.git) {
    info.project = {};
    if (state.meta.cwd) info.project.path = state.meta.cwd;
    if (state.meta.git) info.project.git = state.meta.git;
  }
  const title = pass.title ?? (parent ? undefined : await indexedTitle(fs, unit.path, sid));
  if (title) info.title = title;
  if (pass.lastPrompt) info.last_prompt = pass.lastPrompt.slice(0, 2000);
  const ext: Json = {};
  const skipped = Object.keys(state.skipped ?? {}).length ? { skipped_records: state.skipped } : {};
  if (parent) {
    // A thread's counts stay with its thread: the parent session's own are the parent's.
    ext.threads = [{
      id: sid,
      ...parent,
      ...(state.meta.forkedFrom ? { forked_from: state.meta.forkedFrom } : {}),
      ...skipped,
    }];
  } else {
    if (state.meta.metaIds.length > 1) ext.session_ids = state.meta.metaIds;
    if (state.meta.forkedFrom) ext.forked_from = state.meta.forkedFrom;
    Object.assign(ext, skipped);
  }
  return passResult({
    mode: plan.mode,
    deltas: [{
      session_id: info.id,
      file: unit.path,
      info,
      primary: !parent,
      connections: [connectionOf(state, sid)],
      operations: pass.records.values(),
      usage: pass.usage,
      loss_windows: outcome.loss,
      issues: [...pass.issues.list(), ...endpoints],
      ...(Object.keys(ext).length ? { extensions: { codex: ext } } : {}),
    }],
    checkpoint: outcome.checkpoint,
    state,
    sink: pass.sink,
    bytesRead: outcome.bytesRead,
  });
}

/** Thread names from `session_index.jsonl`, per index file, kept while it does not change. */
const INDEX_CACHE = new Map<
  string,
  { size: number; mtime: number | null; names: Map<string, string> }
>();

/**
 * A thread's name from `${CODEX_HOME}/session_index.jsonl` (`{id, thread_name, updated_at}`,
 * appended, the newest entry of an id wins), for a rollout that names none itself.
 */
async function indexedTitle(
  fs: SourceFs,
  rollout: string,
  id: string,
): Promise<string | undefined> {
  const segs = rollout.split("/");
  const at = Math.max(segs.lastIndexOf("sessions"), segs.lastIndexOf("archived_sessions"));
  if (at < 1) return undefined;
  const path = `${segs.slice(0, at).join("/")}/session_index.jsonl`;
  const st = await fs.stat(path);
  if (!st?.isFile) return undefined;
  let cached = INDEX_CACHE.get(path);
  if (!cached || cached.size !== st.size || cached.mtime !== st.mtimeMs) {
    const names = new Map<string, string>();
    for (const line of (await fs.readTextFile(path)).split("\n")) {
      const v = parseJsonText(line);
      if (!v.ok || !isObj(v.value)) continue;
      const key = nonEmpty(v.value.id), name = nonEmpty(v.value.thread_name);
      if (key && name) names.set(key, name);
    }
    cached = { size: st.size, mtime: st.mtimeMs, names };
    INDEX_CACHE.set(path, cached);
  }
  return cached.names.get(id);
}

/**
 * Endpoint evidence the file lacks: recorded once per read from its start (at its last slice),
 * never filled with guesses.
 */
function endpointIssues(state: CodexState, unit: SourceUnit): SessionIssue[] {
  const out: SessionIssue[] = [];
  if (!state.meta.version) {
    out.push({
      code: "missing_client_version",
      message: "no session_meta names the Codex CLI version; client version left absent",
      severity: "info",
      file: unit.path,
    });
  }
  if (!state.models.length) {
    out.push({
      code: "missing_model",
      message: "no turn_context names the model; server model left absent",
      severity: "info",
      file: unit.path,
    });
  }
  return out;
}

async function walkRollouts(fs: SourceFs, dir: string, depth: number, out: string[]) {
  for (const e of await fs.readDir(dir)) {
    const path = joinPath(dir, e.name);
    if (e.isDirectory && depth > 0) await walkRollouts(fs, path, depth - 1, out);
    else if (e.isFile && /^rollout-.*\.jsonl$/.test(e.name)) out.push(path);
  }
}

/** `$CODEX_HOME` or `~/.codex`. */
function codexHome(env: DiscoverEnv): string {
  return env.env.CODEX_HOME || joinPath(env.home, ".codex");
}

export const codex: Importer<"codex"> = {
  id: "codex",
  displayName: agentName("codex"),
  slices: true,
  async discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
    const home = codexHome(env);
    const live: string[] = [];
    const archived: string[] = [];
    await walkRollouts(fs, joinPath(home, "sessions"), 4, live);
    await walkRollouts(fs, joinPath(home, "archived_sessions"), 4, archived);
    // A session both live and archived is read once, from sessions/.
    const names = new Set(live.map((p) => p.split("/").pop()));
    const units = [...live, ...archived.filter((p) => !names.has(p.split("/").pop()))];
    return units.map((path) => ({ source: "codex", path, kind: "jsonl", rank: 0 }));
  },
  detect(path: string): boolean {
    return /(^|[\\/])rollout-[^\\/]*\.jsonl$/.test(path);
  },
  import: importRollout,
};
