/**
 * Turns an importer's result into rows ready for the store: each operation's JSON document,
 * its indexed columns and its search text. Pure, so it runs in the import worker and the main
 * thread only executes SQL.
 */
import type { Operation, OperationRecord, SessionDelta } from "../model/mod.ts";
import type { UnitResult } from "../sources/types.ts";
import { operationFailed } from "./error_flag.ts";

/**
 * How much of a tool result goes into the search index: its head (commands print what they
 * do first) and its tail (and how they failed last). A shorter result is indexed whole.
 */
export const INDEXED_RESULT_HEAD = 1_536;
export const INDEXED_RESULT_TAIL = 1_024;

export interface PreparedOp {
  id: string;
  connection: string;
  order: OperationRecord["order"];
  kind: Operation["kind"];
  effect: Operation["effect"];
  tool: string | null;
  target: string | null;
  is_error: 0 | 1 | null;
  completeness: Operation["completeness"];
  model: string | null;
  /** The sub-agent connection this call spawned, if any. */
  spawns: string | null;
  /** The canonical Operation as JSON. */
  doc: string;
  /** What full-text search sees. */
  body: string;
}

export interface PreparedDelta extends Omit<SessionDelta, "operations"> {
  operations: PreparedOp[];
}

export interface PreparedUnit extends Omit<UnitResult, "deltas"> {
  deltas: PreparedDelta[];
}

export interface PrepareOptions {
  /** Decides the `is_error` column. Default: the one shared error heuristic. */
  isError?: (op: Operation, payloads: Map<string, Uint8Array>) => boolean;
}

const decoder = new TextDecoder();

export function prepareUnit(result: UnitResult, options: PrepareOptions = {}): PreparedUnit {
  const isError = options.isError ?? operationFailed;
  return {
    ...result,
    deltas: result.deltas.map((d) => ({
      ...d,
      operations: d.operations.map((rec) => prepareOp(rec, result.payloads, isError)),
    })),
  };
}

export function prepareOp(
  rec: OperationRecord,
  payloads: Map<string, Uint8Array>,
  isError: (op: Operation, payloads: Map<string, Uint8Array>) => boolean,
): PreparedOp {
  const op = rec.op;
  return {
    id: rec.id,
    connection: rec.connection,
    order: rec.order,
    kind: op.kind,
    effect: op.effect,
    tool: op.tool ?? null,
    target: op.target ?? null,
    is_error: isError(op, payloads) ? 1 : op.is_error === false ? 0 : null,
    completeness: op.completeness,
    model: op.model ?? null,
    spawns: op.spawns ?? null,
    doc: JSON.stringify(op),
    body: indexText(op, payloads),
  };
}

/** The head and tail of a result, as indexed (one piece when the result is short). */
export function resultExcerpts(bytes: Uint8Array): string[] {
  const whole = INDEXED_RESULT_HEAD + INDEXED_RESULT_TAIL;
  // UTF-8 takes at most 4 bytes a character: decode no more than the excerpts need.
  if (bytes.byteLength <= whole) return [decoder.decode(bytes)];
  const head = decoder.decode(bytes.subarray(0, INDEXED_RESULT_HEAD * 4)).slice(
    0,
    INDEXED_RESULT_HEAD,
  );
  if (bytes.byteLength <= whole * 4) {
    const text = decoder.decode(bytes);
    if (text.length <= whole) return [text];
    return [head, text.slice(-INDEXED_RESULT_TAIL)];
  }
  const tail = decoder.decode(bytes.subarray(bytes.byteLength - INDEXED_RESULT_TAIL * 4)).slice(
    -INDEXED_RESULT_TAIL,
  );
  return [head, tail];
}

/** The text search sees: message text, the call's tool, summary and target, and its result. */
export function indexText(
  op: Operation,
  payloads: Pick<Map<string, Uint8Array>, "get">,
): string {
  const parts: string[] = [];
  if (op.text) parts.push(op.text);
  if (op.tool) parts.push(op.tool);
  if (op.summary) parts.push(op.summary);
  if (op.target && op.target !== op.summary) parts.push(op.target);
  if (op.kind !== "reply" && op.kind !== "thinking" && op.response && "sha256" in op.response) {
    const bytes = payloads.get(op.response.sha256);
    if (bytes) parts.push(...resultExcerpts(bytes));
  }
  return parts.join("\n");
}
