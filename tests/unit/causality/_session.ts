/** Small canonical sessions built from a list of tool calls, with inline payloads. */
import {
  type CanonicalSession,
  classifyTool,
  effectOf,
  type Operation,
  type OperationKind,
  type PayloadRef,
} from "../../../core/model/mod.ts";

export interface Step {
  tool: string;
  input: unknown;
  result?: string;
  /** Default: from the tool name. */
  kind?: OperationKind;
  target?: string;
  connection?: string;
  is_error?: boolean;
  extensions?: Record<string, unknown>;
  /** Default: a second after the previous step. */
  ts_ms?: number;
}

export const PROJECT = "/work/app";

/** A session of `steps`, one operation each, a second apart; ids are `op-<index>`. */
export function sessionOf(
  steps: Step[],
  options: { project?: string | null; startMs?: number } = {},
): CanonicalSession {
  const project = options.project === null ? undefined : options.project ?? PROJECT;
  const start = options.startMs ?? Date.parse("2026-01-01T10:00:00Z");
  const operations: Record<string, Operation> = {};
  const timeline = steps.map((s, i) => {
    const kind = s.kind ?? classifyTool(s.tool);
    const op: Operation = {
      kind,
      effect: effectOf(kind),
      tool: s.tool,
      request: { inline: typeof s.input === "string" ? s.input : JSON.stringify(s.input) },
      completeness: "complete",
      provenance: {
        epoch: 0,
        source_range: { file: "x.jsonl", lines: [i + 1, i + 1], bytes: [0, 1] },
      },
      replay: { replayable: false, blockers: [] },
      ts_ms: s.ts_ms ?? start + i * 1000,
    };
    if (s.result !== undefined) op.response = { inline: s.result };
    if (s.target) op.target = s.target;
    if (s.is_error !== undefined) op.is_error = s.is_error;
    if (s.extensions) op.extensions = s.extensions;
    operations[`op-${i}`] = op;
    const offset_ns = ((s.ts_ms ?? start + i * 1000) - start) * 1e6;
    return { seq: i, op: `op-${i}`, connection: s.connection ?? "main", offset_ns };
  });
  const connections = [...new Set(timeline.map((t) => t.connection))];
  return {
    schema_version: 1,
    recording: {
      id: "rec_test",
      source: "claude-code",
      source_paths: [],
      pipeline_version: "test",
    },
    session: {
      id: "claude-code:test",
      native_id: "test",
      source: "claude-code",
      project: project ? { path: project } : {},
      started_at: new Date(start).toISOString(),
      ended_at: new Date(steps.at(-1)?.ts_ms ?? start + steps.length * 1000).toISOString(),
    },
    connections: connections.map((id) => ({
      id,
      kind: id === "main" ? "main" : "subagent",
      client: { agent: "claude-code", evidence: [] },
      server: { evidence: [] },
    })),
    timeline,
    operations,
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  };
}

/** Reads inline payloads (the only kind these sessions have). */
export function inlineReader(ref: PayloadRef | undefined, max?: number): string | null {
  if (!ref || !("inline" in ref)) return null;
  return max === undefined ? ref.inline : ref.inline.slice(0, max);
}

export const read = (path: string, extra: Partial<Step> = {}): Step => ({
  tool: "Read",
  input: { file_path: path },
  target: path,
  result: "1\tcontent",
  ...extra,
});
export const edit = (path: string, extra: Partial<Step> = {}): Step => ({
  tool: "Edit",
  input: { file_path: path, old_string: "a", new_string: "b" },
  target: path,
  result: "The file has been updated successfully.",
  ...extra,
});
export const write = (path: string, content = "x\n"): Step => ({
  tool: "Write",
  input: { file_path: path, content },
  target: path,
  result: "File created successfully",
});
export const bash = (command: string, result = ""): Step => ({
  tool: "Bash",
  input: { command },
  result,
});
