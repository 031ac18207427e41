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

export interface PreparedUnit extends Omit<UnitResult, "deltas" | "payloads"> {
  deltas: PreparedDelta[];
  payloads: PackedPayloads;
}

/**
 * A unit's payloads for the trip from the import worker to the store: their hashes, and where
 * each one's bytes are in a few buffers, rather than one buffer (and one object) per payload.
 */
export interface PackedPayloads {
  sha256: string[];
  /** Payload i is `buffers[at[3i]]`, from byte `at[3i + 1]`, `at[3i + 2]` bytes long. */
  at: Float64Array;
  buffers: Uint8Array[];
}

/** A view's buffer travels as it is when the payloads use at least this share of it. */
const SHARE_TO_KEEP = 0.5;

/**
 * Packs payloads: a buffer they mostly fill goes as it is; the bytes of views into a buffer
 * they barely use (a slice of a bigger read) are copied out, so no unrelated bytes travel.
 */
export function packPayloads(payloads: Map<string, Uint8Array>): PackedPayloads {
  const used = new Map<ArrayBufferLike, number>();
  for (const bytes of payloads.values()) {
    used.set(bytes.buffer, (used.get(bytes.buffer) ?? 0) + bytes.byteLength);
  }
  const keep = new Map<ArrayBufferLike, number>();
  const buffers: Uint8Array[] = [];
  let spill = 0;
  for (const [buffer, n] of used) {
    if (buffer instanceof ArrayBuffer && n >= buffer.byteLength * SHARE_TO_KEEP) {
      keep.set(buffer, buffers.length);
      buffers.push(new Uint8Array(buffer));
    } else spill += n;
  }
  const copies = spill ? new Uint8Array(spill) : null;
  if (copies) buffers.push(copies);
  const sha256: string[] = [];
  const at = new Float64Array(payloads.size * 3);
  let i = 0;
  let copied = 0;
  for (const [sha, bytes] of payloads) {
    sha256.push(sha);
    const index = keep.get(bytes.buffer);
    if (index !== undefined) {
      at[i] = index;
      at[i + 1] = bytes.byteOffset;
    } else {
      copies!.set(bytes, copied);
      at[i] = buffers.length - 1;
      at[i + 1] = copied;
      copied += bytes.byteLength;
    }
    at[i + 2] = bytes.byteLength;
    i += 3;
  }
  return { sha256, at, buffers };
}

/** The bytes of packed payload `i` (a view, not a copy). */
export function payloadAt(p: PackedPayloads, i: number): Uint8Array {
  const offset = p.at[3 * i + 1];
  return p.buffers[p.at[3 * i]].subarray(offset, offset + p.at[3 * i + 2]);
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
    payloads: packPayloads(result.payloads),
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
