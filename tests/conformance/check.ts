/**
 * The comparison at the heart of the suite: the tool calls a scenario scripted (in the order
 * the model server actually served them) against the operations Chronicle imported, call by
 * call: kind, tool, input, error flag, a real result, the right connection, nothing extra,
 * nothing missing. Pure: the session and its payloads come in as data.
 *
 * @module
 */
import type { RequestLogEntry } from "./servers/mod.ts";
import type { ExpectedCall } from "./translate.ts";

const NON_TOOL_KINDS = new Set(["prompt", "reply", "thinking", "event"]);

export interface CheckOutcome {
  ok: boolean;
  /** One line per scripted call, "ok" or what differed. */
  lines: string[];
  /** Every mismatch, one line each. */
  mismatches: string[];
  /** Observations that are not failures (sizes, extra input keys). */
  notes: string[];
}

export interface SessionUnderTest {
  // deno-lint-ignore no-explicit-any
  session: any;
  payload(sha256: string): Promise<Uint8Array | undefined>;
}

/**
 * The scripted calls in the order the server handed them out: a call counts once even when
 * the CLI retried the request that produced it.
 */
export function servedOrder(calls: ExpectedCall[], requests: RequestLogEntry[]): ExpectedCall[] {
  const byThread = {
    main: calls.filter((c) => c.thread === "main"),
    sub: calls.filter((c) => c.thread === "sub"),
  };
  const next = { main: 0, sub: 0 };
  const seen = new Set<string>();
  const out: ExpectedCall[] = [];
  for (const r of requests) {
    if (r.kind !== "main" && r.kind !== "sub") continue;
    const key = `${r.kind}:${r.segment}:${r.turn}`;
    if (seen.has(key)) continue;
    seen.add(key);
    for (const _ of r.reply?.calls ?? []) {
      const c = byThread[r.kind][next[r.kind]++];
      if (c) out.push(c);
    }
  }
  return out;
}

/** Problems with the run itself: the CLI did not walk through the whole script. */
export function scriptProblems(calls: ExpectedCall[], requests: RequestLogEntry[]): string[] {
  const problems: string[] = [];
  const served = servedOrder(calls, requests);
  if (served.length !== calls.length) {
    problems.push(`the CLI asked for ${served.length} of ${calls.length} scripted calls`);
  }
  for (const r of requests) {
    if (r.warning) problems.push(`request ${r.n} (${r.kind} turn ${r.turn}): ${r.warning}`);
  }
  return problems;
}

// deno-lint-ignore no-explicit-any
type Op = any;

/** Where each expected call was served: its request, and the next request of its thread. */
interface Served {
  /** The request whose reply held the call. */
  at: number;
  /** The thread's next request (which carries the call's result), or Infinity. */
  resultAt: number;
}

function servedAt(
  expected: ExpectedCall[],
  requests: RequestLogEntry[],
): Map<ExpectedCall, Served> {
  const out = new Map<ExpectedCall, Served>();
  const next = { main: 0, sub: 0 };
  const byThread = {
    main: expected.filter((c) => c.thread === "main"),
    sub: expected.filter((c) => c.thread === "sub"),
  };
  const seen = new Set<string>();
  const pending: { main: ExpectedCall[]; sub: ExpectedCall[] } = { main: [], sub: [] };
  requests.forEach((r, i) => {
    if (r.kind !== "main" && r.kind !== "sub") return;
    const key = `${r.kind}:${r.segment}:${r.turn}`;
    if (seen.has(key)) return; // a retry: the same answer again
    seen.add(key);
    for (const c of pending[r.kind]) out.get(c)!.resultAt = i;
    pending[r.kind] = [];
    for (const _ of r.reply?.calls ?? []) {
      const c = byThread[r.kind][next[r.kind]++];
      if (!c) continue;
      out.set(c, { at: i, resultAt: Infinity });
      pending[r.kind].push(c);
    }
  });
  return out;
}

/**
 * The order the calls must have in the timeline. Without the request log: the served order.
 * With it, only what causality fixes, since a sub-agent may run beside its parent (Codex's
 * spawn_agent, then wait_agent while the thread works): a call comes before any call of another
 * thread served after its result went back, and the call that started the sub-agent (the
 * parent's last call served before the thread's first request) comes before all of the
 * sub-agent's calls. Calls of one thread keep their order anyway.
 */
function mustPrecede(
  expected: ExpectedCall[],
  requests: RequestLogEntry[] | undefined,
): (a: ExpectedCall, b: ExpectedCall) => boolean {
  const index = new Map(expected.map((c, i) => [c, i]));
  if (!requests) return (a, b) => index.get(a)! < index.get(b)!;
  const served = servedAt(expected, requests);
  const firstSub = requests.findIndex((r) => r.kind === "sub");
  const starter = firstSub < 0
    ? undefined
    : expected.filter((c) => c.thread === "main" && (served.get(c)?.at ?? Infinity) < firstSub).at(
      -1,
    );
  return (a, b) => {
    if (a.thread === b.thread) return index.get(a)! < index.get(b)!;
    if (a === starter && b.thread === "sub") return true;
    const sa = served.get(a), sb = served.get(b);
    return !!sa && !!sb && sa.resultAt < sb.at;
  };
}

/**
 * Compare the imported session with the expected calls (in served order). Each thread's calls
 * pair with the operations of its connection kind, in order; then the order across threads is
 * checked (`mustPrecede`, which the request log makes causal rather than strict).
 */
export async function checkSession(
  expected: ExpectedCall[],
  sut: SessionUnderTest,
  requests?: RequestLogEntry[],
): Promise<CheckOutcome> {
  const s = sut.session;
  const mismatches: string[] = [];
  const notes: string[] = [];
  const lines: string[] = [];
  const connections = new Map<string, Op>(
    (s.connections ?? []).map((c: Op) => [c.id, c]),
  );
  const timeline: Op[] = [...(s.timeline ?? [])].sort((a: Op, b: Op) => a.seq - b.seq);
  const toolOps = timeline
    .map((t) => ({
      id: t.op as string,
      connection: t.connection as string,
      op: s.operations?.[t.op],
    }))
    // A forked thread's copy of its parent's history is context, not its own calls.
    .filter((t) => t.op && !NON_TOOL_KINDS.has(t.op.kind) && t.op.inherited !== true);

  const dec = new TextDecoder();
  const text = async (ref: Op): Promise<string | undefined> => {
    if (!ref) return undefined;
    if (typeof ref.inline === "string") return ref.inline;
    if (typeof ref.sha256 === "string") {
      const bytes = await sut.payload(ref.sha256);
      return bytes ? dec.decode(bytes) : undefined;
    }
    return undefined;
  };

  // Pair per thread when each thread has as many operations on its connection kind as it has
  // calls; else in timeline order (so a call on the wrong connection reads as that).
  const threadOf = (t: { connection: string }) =>
    connections.get(t.connection)?.kind === "subagent" ? "sub" : "main";
  const pairs: { want?: ExpectedCall; got?: (typeof toolOps)[number] }[] = [];
  const perThread = (["main", "sub"] as const).every((th) =>
    expected.filter((c) => c.thread === th).length ===
      toolOps.filter((t) => threadOf(t) === th).length
  );
  if (perThread) {
    const queues = {
      main: toolOps.filter((t) => threadOf(t) === "main"),
      sub: toolOps.filter((t) => threadOf(t) === "sub"),
    };
    for (const want of expected) pairs.push({ want, got: queues[want.thread].shift() });
  } else {
    const n = Math.max(expected.length, toolOps.length);
    for (let i = 0; i < n; i++) pairs.push({ want: expected[i], got: toolOps[i] });
  }
  const position = new Map(toolOps.map((t, i) => [t.id, i]));
  const precedes = mustPrecede(expected, requests);
  const placed: { want: ExpectedCall; at: number; label: string }[] = [];

  for (const [i, { want, got }] of pairs.entries()) {
    const label = want
      ? `#${i + 1} ${want.thread === "sub" ? "sub-agent " : ""}${want.tool} (${want.step.op})`
      : `#${i + 1}`;
    if (!want) {
      const problem = `${label}: extra operation ${got!.id} kind=${got!.op.kind} tool=${
        got!.op.tool
      }`;
      mismatches.push(problem);
      lines.push(problem);
      continue;
    }
    if (!got) {
      const problem = `${label}: missing (no operation)`;
      mismatches.push(problem);
      lines.push(problem);
      continue;
    }
    const op = got.op;
    const diffs: string[] = [];
    const at = position.get(got.id)!;
    for (const p of placed) {
      if (precedes(p.want, want) && p.at > at) diffs.push(`placed before ${p.label}, want after`);
      else if (precedes(want, p.want) && p.at < at) {
        diffs.push(`placed after ${p.label}, want before`);
      }
    }
    placed.push({ want, at, label: label.split(" ")[0] });
    if (!want.kinds.includes(op.kind)) diffs.push(`kind ${op.kind}, want ${want.kinds.join("|")}`);
    if (op.tool !== want.tool) diffs.push(`tool ${op.tool}, want ${want.tool}`);
    const conn = connections.get(got.connection);
    const wantConn = want.thread === "sub" ? "subagent" : "main";
    if (!conn) diffs.push(`connection ${got.connection} not in connections[]`);
    else if (conn.kind !== wantConn) diffs.push(`on a ${conn.kind} connection, want ${wantConn}`);
    if (op.completeness !== "complete") diffs.push(`completeness ${op.completeness}`);
    const isError = op.is_error;
    if (isError !== want.error) {
      diffs.push(`is_error ${isError === undefined ? "absent" : isError}, want ${want.error}`);
    }
    const input = await text(op.request);
    if (input === undefined) diffs.push(`no request payload (${JSON.stringify(op.request)})`);
    else {
      const d = inputDiff(want.input, input);
      if (d.problem) diffs.push(`input: ${d.problem}`);
      if (d.note) notes.push(`${label}: ${d.note}`);
    }
    const result = await text(op.response);
    if (result === undefined) diffs.push(`no result payload (${JSON.stringify(op.response)})`);
    else if (want.result_has && !hasAny(searchable(result), want.result_has)) {
      diffs.push(
        `result lacks ${JSON.stringify(want.result_has)}: ${JSON.stringify(result.slice(0, 120))}`,
      );
    } else if (result.length > 100_000) {
      notes.push(`${label}: result payload ${result.length} bytes`);
    }
    if (diffs.length) {
      const problem = `${label}: ${diffs.join("; ")}`;
      mismatches.push(problem);
      lines.push(problem);
    } else lines.push(`${label}: ok`);
  }
  return { ok: mismatches.length === 0, lines, mismatches, notes };
}

/** The prompt and the final reply must be there too, each as its own operation. */
export async function checkConversation(
  sut: SessionUnderTest,
  prompt: string,
  finalText: string,
  subagentFinalText?: string,
): Promise<string[]> {
  const s = sut.session;
  const dec = new TextDecoder();
  const kindOf = new Map<string, string>(
    (s.connections ?? []).map((c: Op) => [c.id as string, c.kind as string]),
  );
  const connOf = new Map<string, string>(
    (s.timeline ?? []).map((t: Op) => [t.op as string, t.connection as string]),
  );
  const textsOf = async (kind: string, connectionKind = "main") => {
    const out: string[] = [];
    for (const [id, op] of Object.entries(s.operations ?? {}) as [string, Op][]) {
      if (op.kind !== kind || kindOf.get(connOf.get(id) ?? "") !== connectionKind) continue;
      for (const ref of [op.request, op.response]) {
        if (typeof ref?.inline === "string") out.push(ref.inline);
        else if (typeof ref?.sha256 === "string") {
          const b = await sut.payload(ref.sha256);
          if (b) out.push(searchable(dec.decode(b)));
        }
      }
    }
    return out;
  };
  const problems: string[] = [];
  if (!(await textsOf("prompt")).some((t) => t.includes(prompt))) {
    problems.push("no prompt operation holds the scripted prompt");
  }
  const tail = finalText.slice(0, 60);
  if (!(await textsOf("reply")).some((t) => t.includes(tail))) {
    problems.push(`no reply operation holds the final text ${JSON.stringify(tail)}`);
  }
  if (subagentFinalText) {
    const subTail = subagentFinalText.slice(0, 60);
    if (!(await textsOf("reply", "subagent")).some((t) => t.includes(subTail))) {
      problems.push(`no sub-agent reply holds its final text ${JSON.stringify(subTail)}`);
    }
  }
  return problems;
}

/**
 * Whether the recorded input holds the scripted one. Objects: every scripted key with an
 * equal value (agents may add keys of their own, which become notes). Strings (free-form
 * tools): the payload itself, its JSON string, or its `input` field.
 */
export function inputDiff(want: unknown, payload: string): { problem?: string; note?: string } {
  let parsed: unknown = payload;
  try {
    parsed = JSON.parse(payload);
    // Arguments recorded as a JSON string inside JSON.
    if (typeof parsed === "string" && typeof want !== "string") parsed = JSON.parse(parsed);
  } catch {
    // Not JSON: compared as text below.
  }
  if (typeof want === "string") {
    const candidates = [payload, parsed, (parsed as Record<string, unknown> | null)?.input];
    if (candidates.some((c) => c === want)) return {};
    return { problem: `got ${JSON.stringify(payload.slice(0, 160))}` };
  }
  if (!isObject(want) || !isObject(parsed)) {
    return { problem: `not a JSON object: ${JSON.stringify(payload.slice(0, 160))}` };
  }
  const wrong: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    if (!(k in parsed)) wrong.push(`${k} missing`);
    else if (!deepEqual(parsed[k], v)) wrong.push(`${k}=${JSON.stringify(parsed[k]).slice(0, 80)}`);
  }
  const extra = Object.keys(parsed).filter((k) => !(k in want));
  return {
    problem: wrong.length ? wrong.join(", ") : undefined,
    note: extra.length ? `input has extra keys ${extra.join(", ")}` : undefined,
  };
}

/** The payload as text plus every string inside it if it is JSON (escapes undone). */
function searchable(payload: string): string {
  try {
    const strings: string[] = [];
    const walk = (v: unknown) => {
      if (typeof v === "string") strings.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (isObject(v)) Object.values(v).forEach(walk);
    };
    walk(JSON.parse(payload));
    return payload + "\n" + strings.join("\n");
  } catch {
    return payload;
  }
}

function hasAny(text: string, wanted: string | string[]): boolean {
  return (Array.isArray(wanted) ? wanted : [wanted]).some((w) => text.includes(w));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
