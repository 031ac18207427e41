/**
 * A Claude Code workflow run's `journal.jsonl` (`<session>/subagents/workflows/<run>/`): the
 * run's bookkeeping, not a session. Its `started` records (a step key and the agent that runs
 * it) and `result` records become the run's own thread in the parent session: a connection
 * `workflow-<run>` (spawned by the Workflow call whose result names the run) holding one task
 * operation per agent, each spawning that agent's connection. The agents' transcripts beside
 * it are read as sub-agents, so a run nests under the call that started it.
 */
import { PayloadSink, stableId } from "../../model/payload.ts";
import type { Connection } from "../../model/types.ts";
import type { ImportContext, SourceFs, SourceUnit, UnitResult } from "../types.ts";
import {
  beginJsonlPass,
  dirname,
  type DraftRecord,
  fileRank,
  isObj,
  IssueTally,
  type Json,
  passResult,
  rangeOf,
  readPass,
  str,
} from "../_import_kit.ts";
import type { FileRole } from "./layout.ts";

const SOURCE = "claude-code" as const;
const STATE_VERSION = 1;

interface JournalState {
  v: number;
  /** Steps started and not finished yet, by key. */
  open: Record<string, DraftRecord>;
}

const fresh = (): JournalState => ({ v: STATE_VERSION, open: {} });

export async function importJournal(
  unit: SourceUnit,
  ctx: ImportContext,
  role: FileRole,
): Promise<UnitResult> {
  const start = await beginJsonlPass(unit, ctx, { version: STATE_VERSION, fresh });
  if ("done" in start) return start.done;
  const { plan, state } = start;
  const run = role.workflowRun!;
  const conn = `workflow-${run}`;
  const sink = new PayloadSink();
  const issues = new IssueTally(unit.path);
  const ops = new Map<string, DraftRecord>();
  const lines: { v: Json; l: Parameters<typeof rangeOf>[1] }[] = [];
  const outcome = await readPass(ctx.fs, unit.path, plan, ctx, (l, v) => lines.push({ v, l }));
  const dir = dirname(unit.path);
  for (const { v, l } of lines) {
    const type = str(v.type);
    const key = str(v.key) ?? "";
    const agentId = str(v.agentId);
    if (type === "started") {
      const ts = timeOf(v) ?? await firstTimestamp(ctx.fs, `${dir}/agent-${agentId}.jsonl`);
      const rec: DraftRecord = {
        id: stableId("op_", conn, key, agentId ?? "", l.line),
        connection: conn,
        order: { ts_ms: ts ?? null, rank: fileRank(unit), line: l.line, block: 0 },
        op: {
          kind: "task",
          completeness: "incomplete",
          text: key,
          summary: key,
          request: sink.json({ key, agentId }),
          provenance: { epoch: ctx.epoch, source_range: rangeOf(unit.path, l) },
          ...(ts !== undefined ? { ts_ms: ts } : {}),
          ...(agentId ? { spawns: `agent-${agentId}` } : {}),
        },
      };
      ops.set(rec.id, rec);
      state.open[key] = rec;
    } else if (type === "result") {
      const rec = state.open[key];
      if (!rec) {
        issues.add("unmatched_journal_result", "workflow results for steps never started", {
          line: l.line,
        });
        continue;
      }
      delete state.open[key];
      const { type: _t, key: _k, agentId: _a, ...rest } = v;
      rec.op.response = sink.json(rest);
      rec.op.is_error = v.error !== undefined && v.error !== null;
      rec.op.completeness = "complete";
      rec.op.provenance.completion = { epoch: ctx.epoch, source_range: rangeOf(unit.path, l) };
      ops.set(rec.id, rec);
    } else {
      issues.add(
        "unknown_record_type",
        `unknown workflow journal record ${JSON.stringify(v.type ?? null)}`,
        { line: l.line },
      );
    }
  }
  const session = role.sessionFromLayout!;
  const connection: Connection = {
    id: conn,
    kind: "subagent",
    agent_type: "workflow",
    client: { agent: SOURCE, evidence: [] },
    server: { evidence: [] },
  };
  return passResult({
    mode: plan.mode,
    deltas: [{
      session_id: `${SOURCE}:${session}`,
      file: unit.path,
      info: { id: `${SOURCE}:${session}`, native_id: session, source: SOURCE },
      primary: false,
      connections: [connection],
      operations: ops.values(),
      loss_windows: outcome.loss,
      issues: issues.list(),
      extensions: { [SOURCE]: { workflow_runs: [run] } },
    }],
    checkpoint: outcome.checkpoint,
    state,
    sink,
    bytesRead: outcome.bytesRead,
  });
}

function timeOf(v: Json): number | undefined {
  const t = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** The first timestamp in the head of a transcript (when the agent's own run began). */
async function firstTimestamp(fs: SourceFs, path: string): Promise<number | undefined> {
  if (!(await fs.stat(path))?.isFile) return undefined;
  const head = new TextDecoder().decode(await fs.readRange(path, 0, 16384));
  for (const line of head.split("\n")) {
    try {
      const v = JSON.parse(line);
      if (isObj(v)) {
        const t = timeOf(v);
        if (t !== undefined) return t;
      }
    } catch {
      // a line cut by the head's end, or not JSON
    }
  }
  return undefined;
}
