/**
 * Test helpers for importer tests: run passes, merge them through a real (in-memory) store and
 * load the sessions back, read payloads and scenarios. The store's merge is the only one: what
 * a snapshot shows is what `chronicle import` would hold.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import type { CanonicalSession, Operation } from "../../../core/model/mod.ts";
import type {
  ImportContext,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../../../core/sources/types.ts";
import { ChronicleStore, prepareUnit } from "../../../core/store/mod.ts";

export { FIXTURES as SHARED } from "../../_helpers/fixtures.ts";

const decoder = new TextDecoder();

/**
 * Runs the importer over units (one pass each), merges the passes through a fresh in-memory store
 * and loads their sessions back. (Not `core/store`'s `importUnits`, the import pass itself.)
 */
export async function importThroughStore(
  importer: Importer,
  fs: SourceFs,
  units: SourceUnit[],
  options: { closed?: boolean } = {},
) {
  const results: UnitResult[] = [];
  for (const u of units) {
    results.push(await importer.import(u, { fs, epoch: 0, closed: options.closed }));
  }
  return { results, ...assemble(results, units) };
}

/**
 * Applies pass results in order to a fresh in-memory store, as `chronicle import` would (a
 * later pass of the same unit appends to, or replaces, what the earlier one stored), and loads
 * every session they touched. `units[i]` is the unit of `results[i]`; without it the unit is
 * the file its checkpoint or first delta names.
 *
 * Sessions come in the order the passes first mention them. What only the store decides and
 * the importer tests do not check (a random recording id, the pipeline version, the epochs of
 * the passes, all covered by tests/unit/store/) is pinned to fixed values, so a snapshot holds
 * what the importer decided.
 */
export function assemble(results: UnitResult[], units: SourceUnit[] = []) {
  const payloads = new Map<string, Uint8Array>();
  for (const r of results) for (const [k, v] of r.payloads) payloads.set(k, v);
  const store = ChronicleStore.open(":memory:");
  try {
    const epochs = new Map<string, number>();
    const ids = new Set<string>();
    results.forEach((r, i) => {
      const unit = units[i] ?? unitOf(r);
      if (!unit) return; // nothing read, nothing to store
      const epoch = epochs.get(unit.path) ?? 0;
      epochs.set(unit.path, epoch + 1);
      store.applyUnit(unit, prepareUnit(r), epoch);
      for (const d of r.deltas) ids.add(d.session_id);
    });
    const sessions = [...ids].flatMap((id) => {
      const s = store.loadSession(id);
      if (!s) return [];
      s.recording.id = "rec_test";
      s.recording.pipeline_version = "test";
      s.provenance.epochs = [];
      return [s];
    });
    return { sessions, payloads };
  } finally {
    store.close();
  }
}

/** The unit a result was read from, when the test did not say. */
function unitOf(r: UnitResult): SourceUnit | null {
  const path = r.checkpoint?.file ?? r.deltas[0]?.file;
  const source = r.deltas[0]?.info.source;
  if (!path || !source) return null;
  return { source, path, kind: r.checkpoint?.kind ?? "jsonl", rank: 0 };
}

/** Every record key a unit's passes up to a result gave, as the store keeps them (`source_seen`). */
const seenOf = new WeakMap<UnitResult, Uint8Array>();

function seenThrough(r: UnitResult): Uint8Array | undefined {
  return seenOf.get(r) ?? (r.seen && r.seen.from === 0 ? r.seen.added : undefined);
}

/** What the store gives a pass after `prev`: its checkpoint, state and seen records. */
export function resumeOf(prev: UnitResult): ImportContext["resume"] {
  return prev.checkpoint
    ? { checkpoint: prev.checkpoint, state: prev.state, seen: seenThrough(prev) }
    : undefined;
}

/** Runs a unit again from the previous result's checkpoint and state. */
export async function resume(
  importer: Importer,
  fs: SourceFs,
  unit: SourceUnit,
  prev: UnitResult,
  epoch: number,
  closed = false,
): Promise<UnitResult> {
  const before = seenThrough(prev);
  const next = await importer.import(unit, { fs, epoch, closed, resume: resumeOf(prev) });
  const seen = !next.seen
    ? before
    : next.seen.from === 0 || !before
    ? next.seen.added
    : new Uint8Array([...before, ...next.seen.added]);
  if (seen) seenOf.set(next, seen);
  return next;
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
  /** One entry per CLI process (two for a resumed scenario). */
  runs?: { prompt: string }[];
}> {
  return JSON.parse(await Deno.readTextFile(`${dir}/scenario.json`));
}

/** A path as the scenario writes it: relative to the project, "." for the project itself. */
export function relativeTo(cwd: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  if (path === cwd) return ".";
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
}

/**
 * Checks a real-client session against its scenario, call by call: one tool operation per
 * scripted call with its native tool, kind, input, target, error flag and a kept result; the
 * last reply; one prompt of the user's per run. Kinds whose target is not a file (`exec`,
 * `search` over a folder) skip the target check.
 */
export function checkScenarioCalls(
  s: CanonicalSession,
  payloads: Map<string, Uint8Array>,
  truth: Awaited<ReturnType<typeof readScenario>>,
  where: string,
  classify: (tool: string) => string,
): void {
  const calls = ops(s).filter((o) => o.tool !== undefined);
  assertEquals(calls.length, truth.tool_calls.length, `${where}: one operation per scripted call`);
  calls.forEach((c, i) => {
    const exp = truth.tool_calls[i];
    const at = `${where} call ${exp.seq} (${exp.native_tool})`;
    assertEquals(c.tool, exp.native_tool, at);
    assertEquals(c.kind, classify(exp.native_tool), at);
    assertEquals(JSON.parse(payloadText(payloads, c.request)!), exp.input, at);
    if (exp.path !== null && c.kind !== "exec" && c.kind !== "search") {
      assertEquals(relativeTo(truth.cwd, c.target), exp.path, at);
    }
    assertEquals(c.is_error, exp.expected_error, `${at}: error flag`);
    assertEquals(c.completeness, "complete", at);
    assert(payloadText(payloads, c.response) !== undefined, `${at}: the result is kept`);
  });
  const replies = ops(s).filter((o) => o.kind === "reply").map((o) => o.text);
  assertEquals(replies.at(-1), truth.final_texts.at(-1), `${where}: the last reply`);
  assertEquals(
    ops(s).filter((o) => o.kind === "prompt" && !o.injected).length,
    truth.runs?.length ?? 1,
    `${where}: one prompt per run`,
  );
}
