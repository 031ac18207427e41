/** Test helpers for importer tests: run passes, assemble sessions, read payloads and scenarios. */
import {
  assembleSession,
  type CanonicalSession,
  mergeDeltas,
  type Operation,
} from "../../../core/model/mod.ts";
import type { Importer, SourceFs, SourceUnit, UnitResult } from "../../../core/sources/types.ts";

export { FIXTURES as SHARED } from "../../_helpers/fixtures.ts";

const decoder = new TextDecoder();

/** Imports units in one pass each and assembles their sessions (what the store would hold). */
export async function importUnits(
  importer: Importer,
  fs: SourceFs,
  units: SourceUnit[],
  options: { closed?: boolean } = {},
) {
  const results: UnitResult[] = [];
  for (const u of units) {
    results.push(await importer.import(u, { fs, epoch: 0, closed: options.closed }));
  }
  return { results, ...assemble(results) };
}

/** Assembles the sessions of several pass results, later passes upserting earlier ones. */
export function assemble(results: UnitResult[]) {
  const payloads = new Map<string, Uint8Array>();
  for (const r of results) for (const [k, v] of r.payloads) payloads.set(k, v);
  const sessions = mergeDeltas(results.flatMap((r) => r.deltas), {
    pipelineVersion: "test",
    recordingId: "rec_test",
  }).map(assembleSession);
  return { sessions, payloads };
}

/** Runs a unit again from the previous result's checkpoint and state. */
export function resume(
  importer: Importer,
  fs: SourceFs,
  unit: SourceUnit,
  prev: UnitResult,
  epoch: number,
  closed = false,
): Promise<UnitResult> {
  return importer.import(unit, {
    fs,
    epoch,
    closed,
    resume: prev.checkpoint ? { checkpoint: prev.checkpoint, state: prev.state } : undefined,
  });
}

export function payloadText(payloads: Map<string, Uint8Array>, ref: unknown): string | undefined {
  if (!ref || typeof ref !== "object" || !("sha256" in ref)) return undefined;
  const b = payloads.get((ref as { sha256: string }).sha256);
  return b ? decoder.decode(b) : undefined;
}

export type TimelineOp = Operation & { id: string; conn: string };

/** Operations in timeline order. */
export function ops(s: CanonicalSession): TimelineOp[] {
  return s.timeline.map((t) => ({ id: t.op, conn: t.connection, ...s.operations[t.op] }));
}

/** Every file under `root` (recursively) whose name matches, sorted. */
export async function filesUnder(root: string, match: RegExp): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (match.test(e.name)) out.push(p);
    }
  };
  await walk(root);
  return out.sort();
}

/** One scripted tool call of a real-client scenario (`scenario.json` `tool_calls`). */
export interface ScenarioCall {
  seq: number;
  agent: string;
  op: string;
  native_tool: string;
  input: unknown;
  path: string | null;
  expected_error: boolean;
}

export async function readScenario(dir: string): Promise<{
  session_id: string;
  cwd: string;
  tool_calls: ScenarioCall[];
  final_texts: string[];
}> {
  return JSON.parse(await Deno.readTextFile(`${dir}/scenario.json`));
}

/** A path as the scenario writes it: relative to the project, "." for the project itself. */
export function relativeTo(cwd: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  if (path === cwd) return ".";
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
}
