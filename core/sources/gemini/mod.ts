/**
 * Gemini CLI importer: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (records re-appended on
 * change: the last record with an id wins; `$set` patches; `$rewindTo` drops a message and all
 * after it), sub-agent chats in `chats/<parentSessionId>/`, and the older `session-*.json`
 * documents rewritten in place. Operation ids derive from message and tool-call ids, so a
 * re-appended message replaces its operations instead of adding new ones.
 */
import { agentName } from "../../model/agents.ts";
import type { SessionDelta } from "../../model/delta.ts";
import type { LossWindow, SourceRange } from "../../model/types.ts";
import { makeJsonlCheckpoint, type ResumePlan } from "../jsonl.ts";
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
  type Json,
  passResult,
  rangeOf,
  readJsonDocument,
  readPass,
  readWhole,
  stemOf,
} from "../_import_kit.ts";
import {
  CHAT_FILE,
  connectionFor,
  geminiHome,
  geminiLayout,
  projectFromRegistry,
} from "./layout.ts";
import { connectionOf, GeminiPass } from "./pass.ts";
import { freshState, type GeminiState, NeedsFullPass, STATE_VERSION } from "./state.ts";

export { geminiHome, geminiLayout } from "./layout.ts";
export { workspaceFromContext } from "./pass.ts";

async function deltaOf(
  pass: GeminiPass,
  ctx: ImportContext,
  loss: LossWindow[],
  { full, more }: { full: boolean; more: boolean },
): Promise<DeltaDraft> {
  const s = pass.state;
  const sid = pass.sid();
  const info: SessionDelta["info"] = { id: `gemini:${sid}`, native_id: sid, source: "gemini" };
  const started = s.meta.started ?? isoOf(pass.firstTs);
  if (started) info.started_at = started;
  const ended = [s.meta.updated, isoOf(pass.lastTs)].filter(Boolean).sort().at(-1);
  if (ended) info.ended_at = ended;
  if (pass.connection.kind === "main") {
    s.meta.project ??= await projectFromRegistry(ctx.fs, pass.unit.path, s.meta.projectHash) ??
      pass.contextProject;
    if (s.meta.project) info.project = { path: s.meta.project };
    if (s.meta.summary) info.title = s.meta.summary;
    if (pass.lastPrompt) info.last_prompt = pass.lastPrompt.slice(0, 2000);
  }
  const issues = pass.issues.list();
  if (full) s.notesDue = { records: false };
  const due = s.notesDue && !more;
  if (s.notesDue) s.notesDue.records ||= pass.records.size > 0;
  if (due && pass.connection.kind === "main") {
    issues.push({
      code: "missing_client_version",
      message: "Gemini CLI logs do not record the CLI version; client version left absent",
      severity: "info",
      file: pass.unit.path,
    });
  }
  if (due && !s.models.length && s.notesDue?.records) {
    issues.push({
      code: "missing_model",
      message: "no message names the model; server model left absent",
      severity: "info",
      file: pass.unit.path,
    });
  }
  if (!more) delete s.notesDue;
  return {
    session_id: `gemini:${sid}`,
    file: pass.unit.path,
    info,
    primary: pass.connection.kind === "main",
    connections: [connectionOf(s, pass.connection)],
    operations: pass.records.values(),
    usage: pass.usage,
    loss_windows: loss,
    issues,
    // A sub-agent chat joins its parent's session: the counts are the main chat's.
    ...(pass.connection.kind === "main" && Object.keys(s.skipped ?? {}).length
      ? { extensions: { gemini: { skipped_records: s.skipped } } }
      : {}),
  };
}

async function importJsonl(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const run = async (plan: ResumePlan, state: GeminiState) => {
    const pass = new GeminiPass(unit, ctx.epoch, state, stemOf(unit.path), connectionFor(unit));
    const outcome = await readPass(
      fs,
      unit.path,
      plan,
      ctx,
      (l, v) => pass.record(v, rangeOf(unit.path, l)),
    );
    pass.finish();
    return { pass, outcome };
  };
  let plan = start.plan;
  let done;
  try {
    done = await run(plan, start.state);
  } catch (e) {
    // A record removed what an earlier pass emitted: read the file again from zero.
    if (!(e instanceof NeedsFullPass)) throw e;
    plan = { ...plan, mode: "full", offset: 0, line: 1 };
    done = await run(plan, freshState());
  }
  const { pass, outcome } = done;
  await readPersistedOutputs(fs, pass);
  return passResult({
    mode: plan.mode,
    deltas: [
      await deltaOf(pass, ctx, outcome.loss, {
        full: plan.mode === "full",
        more: !!outcome.checkpoint.more,
      }),
    ],
    checkpoint: outcome.checkpoint,
    state: pass.state,
    sink: pass.sink,
    bytesRead: outcome.bytesRead,
  });
}

/** The largest kept output read whole; a larger one keeps what the log holds. */
const MAX_PERSISTED_BYTES = 64 * 1024 * 1024;

/**
 * A shell output too large for the log is kept whole in
 * `tmp/<project>/tool-outputs/session-<id>/<call>.txt` (the log holds its head and tail): the
 * whole output becomes the result, what the log held stays in the extensions. Only a file in
 * that folder of this chat's own project folder is read, wherever the log's path pointed.
 */
async function readPersistedOutputs(fs: SourceFs, pass: GeminiPass): Promise<void> {
  const { root, projectDir } = geminiLayout(pass.unit.path);
  const project = root !== undefined && projectDir ? `${root}/tmp/${projectDir}` : undefined;
  for (const { op, path } of pass.persisted) {
    const segs = path.split("/");
    const at = segs.lastIndexOf("tool-outputs");
    const name = segs.at(-1) ?? "";
    const ext = (op.extensions?.gemini ?? {}) as Json;
    const note: Json = { path, logged: op.response };
    const local = project && at > 0 && at === segs.length - 3 && name !== ".." && name !== "."
      ? `${project}/tool-outputs/${segs[at + 1]}/${name}`
      : undefined;
    const st = local ? await fs.stat(local) : null;
    if (!local || !st?.isFile || st.size > MAX_PERSISTED_BYTES) {
      pass.issues.add(
        "persisted_output_unread",
        "a shell output kept in its own file is gone or too large; what the log holds stays",
        { severity: "info" },
      );
      continue;
    }
    const bytes = await readWhole(fs, local);
    op.response = pass.sink.bytes(bytes);
    note.size = bytes.byteLength;
    op.extensions = { ...op.extensions, gemini: { ...ext, persisted_output: note } };
  }
}

/** A legacy `.json` chat is one document rewritten in place: any change means a full read. */
async function importJson(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
  const { fs } = ctx;
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh: freshState });
  if ("done" in start) return start.done;
  const { plan } = start;
  // a document over the longest line is read with its long texts cut, in bounded memory
  const read = await readJsonDocument(fs, unit.path);
  const size = read.size;
  const state = freshState();
  const pass = new GeminiPass(unit, ctx.epoch, state, stemOf(unit.path), connectionFor(unit));
  const whole = (n: number): SourceRange => ({
    file: unit.path,
    lines: [n, n],
    bytes: [0, size],
  });
  const loss: LossWindow[] = [];
  const lost = (reason: string) =>
    loss.push({ epoch: ctx.epoch, file: unit.path, lines: [1, 1], bytes: [0, size], reason });
  if (read.error) lost(read.error);
  if (read.cut) lost(read.cut);
  const doc = read.value;
  if (isObj(doc)) {
    pass.metadata({ ...doc, sessionId: doc.sessionId ?? undefined });
    let messages = Array.isArray(doc.messages) ? doc.messages : undefined;
    if (!messages && Array.isArray(doc.history)) {
      // An older shape: `history` of `{role, parts, ts}` entries.
      pass.issues.add(
        "unknown_layout",
        'A chat document with "history" instead of "messages"; read as role/parts entries',
        { file: unit.path },
      );
      messages = doc.history.map((h) =>
        isObj(h) ? { ...h, type: h.role, content: h.parts, timestamp: h.timestamp ?? h.ts } : h
      );
    }
    if (!messages) {
      pass.issues.add(
        "unknown_layout",
        `A chat document without "messages" (keys ${JSON.stringify(Object.keys(doc).slice(0, 6))})`,
        { file: unit.path },
      );
    }
    for (const [i, m] of (messages ?? []).entries()) {
      const id = isObj(m) && (typeof m.id === "string" || typeof m.id === "number")
        ? String(m.id)
        : `#${i + 1}`;
      if (isObj(m)) pass.upsert(id, m, whole(i + 1));
      else pass.record(m, whole(i + 1));
    }
  } else if (doc !== undefined) {
    pass.issues.add("unknown_layout", "The chat document is not a JSON object", {
      file: unit.path,
    });
  }
  pass.finish();
  const checkpoint = await makeJsonlCheckpoint(fs, unit.path, plan.stat, size, 1);
  return passResult({
    mode: "full",
    deltas: [await deltaOf(pass, ctx, loss, { full: true, more: false })],
    checkpoint,
    state: null,
    sink: pass.sink,
    bytesRead: size,
  });
}

export const gemini: Importer<"gemini"> = {
  id: "gemini",
  displayName: agentName("gemini"),
  slices: true,
  async discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
    const tmp = joinPath(geminiHome(env), "tmp");
    const units: SourceUnit[] = [];
    for (const project of await fs.readDir(tmp)) {
      if (!project.isDirectory) continue;
      const chats = joinPath(tmp, project.name, "chats");
      const entries = await fs.readDir(chats);
      const jsonl = new Set(
        entries.filter((e) => e.name.endsWith(".jsonl")).map((e) => stemOf(e.name)),
      );
      for (const e of entries) {
        const path = joinPath(chats, e.name);
        if (e.isFile && CHAT_FILE.test(e.name)) {
          // A resumed legacy chat is migrated to .jsonl: read that one only.
          if (e.name.endsWith(".json") && jsonl.has(stemOf(e.name))) continue;
          units.push({
            source: "gemini",
            path,
            kind: e.name.endsWith(".json") ? "json" : "jsonl",
            rank: 0,
          });
        } else if (e.isDirectory) {
          for (const sub of await fs.readDir(path)) {
            if (sub.isFile && sub.name.endsWith(".jsonl")) {
              units.push({
                source: "gemini",
                path: joinPath(path, sub.name),
                kind: "jsonl",
                rank: 1,
              });
            }
          }
        }
      }
    }
    return units;
  },
  detect(path: string): boolean {
    const { projectDir } = geminiLayout(path);
    return projectDir !== undefined && /\.(jsonl|json)$/.test(path);
  },
  import(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult> {
    return unit.path.endsWith(".json") ? importJson(unit, ctx) : importJsonl(unit, ctx);
  },
};
