/**
 * Turns an importer's result into rows ready for the store: each operation's JSON document,
 * its indexed columns, its error flag and its own words. Pure, so it runs in the import worker.
 * The search text of inputs and outputs is built by the store one operation at a time
 * (`opBody`), from the payload bytes it receives anyway, so a unit's whole text never exists
 * twice in memory.
 */
import type { Operation, OperationRecord, SessionDelta, SourceRange } from "../model/mod.ts";
import type { UnitResult } from "../sources/types.ts";
import { resultFailed } from "./error_flag.ts";
import { searchBody } from "./search_text.ts";

export interface PreparedOp {
  id: string;
  connection: string;
  order: OperationRecord["order"];
  kind: Operation["kind"];
  effect: Operation["effect"];
  tool: string | null;
  target: string | null;
  completeness: Operation["completeness"];
  model: string | null;
  /** The sub-agent connection this call spawned, if any. */
  spawns: string | null;
  /** The canonical Operation as JSON. */
  doc: string;
  /** The `is_error` column: the one error heuristic over the recorded flag and the result. */
  is_error: 0 | 1 | null;
  /** What search sees of the operation itself: its text, tool, summary and target. */
  words: string;
  /**
   * Its tool input, where the store reads it: a payload of the same unit (its index in
   * `PreparedUnit.payloads`), inline text, or a payload stored before (its hash: a call a big
   * log's earlier slice began). Null for none.
   */
  input: PayloadPlace;
  /** Its tool result, likewise. Null for none, and for replies and thinking. */
  result: PayloadPlace;
}

/** Where an operation's input or result is: see {@link PreparedOp.input}. */
export type PayloadPlace = number | string | { sha256: string } | null;

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

/** The size of packed payload `i`. */
export function sizeAt(p: PackedPayloads, i: number): number {
  return p.at[3 * i + 2];
}

/** The bytes of packed payload `i` (a view, not a copy). */
export function payloadAt(p: PackedPayloads, i: number): Uint8Array {
  const offset = p.at[3 * i + 1];
  return p.buffers[p.at[3 * i]].subarray(offset, offset + p.at[3 * i + 2]);
}

/**
 * A unit's rows. Its payloads travel raw: the store compresses them as it writes them (on the
 * import worker's side, compressing made the worker, the slower half, slower still: a first
 * import of 300 MB was browsable 6-9% later).
 */
export function prepareUnit(result: UnitResult): PreparedUnit {
  const payloads = packPayloads(result.payloads);
  const index = new Map(payloads.sha256.map((sha, i) => [sha, i]));
  return {
    ...result,
    deltas: result.deltas.map((d) => ({
      ...d,
      operations: d.operations.map((rec) =>
        prepareOp(rec, { file: d.file, bytes: result.payloads, index })
      ),
    })),
    payloads,
  };
}

/**
 * One operation's row. `file` is the delta's source file (its doc leaves it out); `bytes` are
 * the unit's payloads by SHA-256 and `index` their places in the packed payloads.
 */
function prepareOp(
  rec: OperationRecord,
  unit: { file: string; bytes: Map<string, Uint8Array>; index: Map<string, number> },
): PreparedOp {
  const op = rec.op;
  const result = hasResult(op) ? payloadOf(op.response, unit.bytes) : null;
  const failed = resultFailed({ kind: op.kind, flagged: op.is_error ?? null }, result);
  const place = (ref: Operation["request"]): PayloadPlace =>
    ref && "sha256" in ref
      ? unit.index.get(ref.sha256) ?? { sha256: ref.sha256 }
      : ref && "inline" in ref
      ? ref.inline
      : null;
  return {
    id: rec.id,
    connection: rec.connection,
    order: rec.order,
    kind: op.kind,
    effect: op.effect,
    tool: op.tool ?? null,
    target: op.target ?? null,
    completeness: op.completeness,
    model: op.model ?? null,
    spawns: op.spawns ?? null,
    doc: storedDoc(op, unit.file, unit.bytes),
    is_error: failed ? 1 : op.is_error === false ? 0 : null,
    words: opWords(op),
    input: place(op.request),
    result: hasResult(op) ? place(op.response) : null,
  };
}

/** A payload ref's bytes (or inline text), when this unit has them. */
function payloadOf(
  ref: Operation["request"],
  payloads: Pick<Map<string, Uint8Array>, "get">,
): Uint8Array | string | null {
  if (!ref) return null;
  if ("sha256" in ref) return payloads.get(ref.sha256) ?? null;
  return "inline" in ref ? ref.inline : null;
}

/**
 * The fields of an operation its row's columns hold as they are (`kind`, `effect`,
 * `completeness`; `tool`, `target`, `model` or NULL): its stored doc leaves them out.
 */
export const COLUMN_FIELDS = ["kind", "effect", "completeness", "tool", "target", "model"] as const;

/** What a stored doc is read with: the doc and the columns it leaves to its row. */
export interface StoredOp {
  doc: string;
  file: string;
  kind: string;
  effect: string;
  completeness: string;
  tool: string | null;
  target: string | null;
  model: string | null;
}

/**
 * The columns of a {@link StoredOp}, for a SELECT; `alias` is the operations table's. Without
 * `file`, the file is "" (search texts need none: the log's path is looked up for nothing).
 */
export function storedOpColumns(alias = "", { file: withFile = true } = {}): string {
  const file = withFile
    ? `(SELECT path FROM op_files WHERE id = ${alias}file_id) AS file`
    : "'' AS file";
  return [`${alias}doc`, file, ...COLUMN_FIELDS.map((c) => alias + c)].join(", ");
}

/**
 * SQL: what a stored operation did, whatever it was read from: its doc (`doc`) without its
 * provenance, and without the fields a doc stored before they moved to the columns still holds,
 * beside those columns' values (`columns`: the row's own, or what to compare them with).
 */
export function stepOf(doc = "doc", columns: readonly string[] = COLUMN_FIELDS): string {
  const fields = COLUMN_FIELDS.map((f) => `'$.${f}'`).join(", ");
  return `json_array(json_remove(${doc}, '$.provenance', ${fields}), ${columns.join(", ")})`;
}

/**
 * An operation as the store keeps it: its JSON without what its row's columns already say
 * (kind, effect, completeness, tool, target, model: an eighth of a document's bytes), without
 * the source file of its ranges where that is the row's own `file` column (every operation
 * names it once or twice, at length), and, for a reply or thinking whose text is exactly its
 * response payload (`payloads` holds it), `"text": null` instead of a second copy of that text
 * (a quarter of all documents' bytes). {@link readStoredDoc} puts them back.
 */
export function storedDoc(
  op: Operation,
  file: string,
  payloads?: Pick<Map<string, Uint8Array>, "get">,
): string {
  const ranges = [op.provenance.source_range, op.provenance.completion?.source_range]
    .filter((r): r is SourceRange => r?.file === file);
  const text = op.text;
  const shared = payloads !== undefined && textIsResponse(op, payloads);
  const own = op as unknown as Record<string, unknown>;
  const columns = COLUMN_FIELDS.filter((f) => own[f] !== undefined).map((f) => [f, own[f]]);
  // JSON leaves out a property whose value is undefined: blank them for the moment of
  // stringifying rather than copy the operation (the values change, not the object's shape).
  for (const r of ranges) (r as { file?: string }).file = undefined;
  for (const [f] of columns) own[f as string] = undefined;
  if (shared) (op as { text?: string | null }).text = null;
  try {
    return JSON.stringify(op);
  } finally {
    for (const r of ranges) r.file = file;
    for (const [f, v] of columns) own[f as string] = v;
    if (shared) op.text = text;
  }
}

const decoder = new TextDecoder();

/** Whether a reply's or thinking's text is its response payload, byte for byte. */
function textIsResponse(op: Operation, payloads: Pick<Map<string, Uint8Array>, "get">): boolean {
  if (op.kind !== "reply" && op.kind !== "thinking") return false;
  if (typeof op.text !== "string" || !op.response || !("sha256" in op.response)) return false;
  const bytes = payloads.get(op.response.sha256);
  return bytes !== undefined && bytes.byteLength === op.response.size &&
    decoder.decode(bytes) === op.text;
}

/** A payload's text by its SHA-256; null when the store cannot read it. */
export type PayloadText = (sha256: string) => string | null;

/**
 * The Operation of a stored doc (see {@link storedDoc}): the fields its row's columns hold, its
 * ranges' source file from the row's `file`, and a reply's or thinking's text from its response
 * payload. A doc stored before the columns were left out reads the same.
 */
export function readStoredDoc(row: StoredOp, payloadText: PayloadText): Operation {
  // (a doc stored before the columns took these fields holds them too, with the same values)
  const parsed = JSON.parse(row.doc) as Omit<Operation, (typeof COLUMN_FIELDS)[number]>;
  const op = {
    kind: row.kind,
    effect: row.effect,
    ...(row.tool !== null ? { tool: row.tool } : {}),
    ...(row.target !== null ? { target: row.target } : {}),
    completeness: row.completeness,
    ...(row.model !== null ? { model: row.model } : {}),
    ...parsed,
  } as Operation;
  const p = op.provenance;
  // A stored range may lack its file: put it back, first, as the importer wrote it.
  const restore = (r: Partial<SourceRange>) => ({ file: row.file, ...r }) as SourceRange;
  if (p?.source_range) {
    p.source_range = restore(p.source_range);
    if (p.completion?.source_range) p.completion.source_range = restore(p.completion.source_range);
  }
  if ((op.text as string | null | undefined) === null) {
    const ref = op.response;
    const text = ref && "sha256" in ref ? payloadText(ref.sha256) : null;
    // An unreadable payload (a pack cut short) loses the text, as it loses any output.
    if (text === null) delete op.text;
    else op.text = text;
  }
  return op;
}

/**
 * The search text of a prepared operation, given its unit's payloads and a reader of the
 * payloads stored before (see `searchBody`).
 */
export function opBody(
  op: PreparedOp,
  payloads: PackedPayloads,
  stored: (sha256: string) => Uint8Array | null,
): string {
  const bytes = (at: PayloadPlace) =>
    typeof at === "number"
      ? payloadAt(payloads, at)
      : at !== null && typeof at === "object"
      ? stored(at.sha256)
      : at;
  return searchBody(op.words, bytes(op.input), bytes(op.result));
}

/** Whether search reads an operation's result (not a reply's or thinking's own words). */
const hasResult = (op: Pick<Operation, "kind">) => op.kind !== "reply" && op.kind !== "thinking";

function opWords(op: Operation): string {
  const parts: string[] = [];
  if (op.text) parts.push(op.text);
  if (op.tool) parts.push(op.tool);
  if (op.summary) parts.push(op.summary);
  if (op.target && op.target !== op.summary) parts.push(op.target);
  return parts.join("\n");
}

/**
 * The text search sees of a stored operation (for rebuilding the index; without its joined
 * pairs, `pairs: false`, for checking a phrase).
 */
export function indexText(
  op: Operation,
  payloads: Pick<Map<string, Uint8Array>, "get">,
  pairs = true,
): string {
  const result = hasResult(op) ? payloadOf(op.response, payloads) : null;
  return searchBody(opWords(op), payloadOf(op.request, payloads), result, pairs);
}
