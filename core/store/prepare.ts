/**
 * Turns an importer's result into rows ready for the store: each operation's JSON document,
 * its indexed columns, its error flag and its own words. Pure, so it runs in the import worker.
 * The search text of inputs and outputs is built by the store one operation at a time
 * (`opBody`), from the payload bytes it receives anyway, so a unit's whole text never exists
 * twice in memory.
 */
import {
  isHashRef,
  type Operation,
  type OperationProvenance,
  type OperationRecord,
  type PayloadRef,
  type ReplayAttributes,
  replayAttributes,
  type SessionDelta,
  type SourceRange,
} from "../model/mod.ts";
import type { UnitResult } from "../sources/types.ts";
import { resultFailed } from "./error_flag.ts";
import { indexedText, searchBody } from "./search_text.ts";

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
  const shared = textIsPayload(op, unit.bytes);
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
    doc: storedDoc(op, { file: unit.file, ...rec.order }, unit.bytes, shared),
    is_error: failed ? 1 : op.is_error === false ? 0 : null,
    words: opWords(op),
    // a prompt kept once, in its request payload: its words are its text's (`indexText`)
    input: shared && textPayload(op) === op.request ? null : place(op.request),
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
  /** The row's order time and line (see {@link DocRow}). */
  ts_ms: number | null;
  line: number;
}

/** The row a doc is stored in, as far as the doc leaves fields to it. */
export interface DocRow {
  /** The log the operation was read from (its ranges name it). */
  file: string;
  /** The row's order time (`OrderKey.ts_ms`): the operation's own time, nearly always. */
  ts_ms: number | null;
  /** The row's order line: the line its call was read from, nearly always. */
  line: number;
}

/**
 * The columns of a {@link StoredOp}, for a SELECT; `alias` is the operations table's. Without
 * `file`, the file is "" (search texts need none: the log's path is looked up for nothing).
 */
export function storedOpColumns(alias = "", { file: withFile = true } = {}): string {
  const file = withFile
    ? `(SELECT path FROM op_files WHERE id = ${alias}file_id) AS file`
    : "'' AS file";
  return [`${alias}doc`, file, ...COLUMN_FIELDS, "ts_ms", "line"].map((c, i) =>
    i < 2 ? c : alias + c
  ).join(", ");
}

/**
 * SQL: what a stored operation did, whatever it was read from: its doc (`doc`) without its
 * provenance and without the fields a doc may leave to its row or derive (a doc stored before
 * that holds them), beside those columns' values (`columns`: the row's own, or what to compare
 * them with) and its own time (`ts`: the row's order time, which an absent `ts_ms` stands for).
 */
export function stepOf(
  doc = "doc",
  columns: readonly string[] = COLUMN_FIELDS,
  ts = "ts_ms",
): string {
  const fields = COLUMN_FIELDS.map((f) => `'$.${f}'`).join(", ");
  const own = `CASE json_type(${doc}, '$.ts_ms') WHEN 'null' THEN NULL
    ELSE coalesce(json_extract(${doc}, '$.ts_ms'), ${ts}) END`;
  return `json_array(json_remove(${doc}, '$.provenance', '$.ts_ms', '$.replay', ${fields}), ${
    columns.join(", ")
  }, ${own})`;
}

/**
 * An operation as the store keeps it: its JSON without what its row already says or what
 * follows from the rest, all put back by {@link readStoredDoc}:
 * - the fields its columns hold (kind, effect, completeness, tool, target, model: an eighth of
 *   a document's bytes);
 * - the source file of its ranges where that is the row's `file` (named once or twice, at
 *   length);
 * - for a reply or thinking whose text is exactly its response payload, or a prompt whose text
 *   is exactly its request payload (`payloads` holds it; `textPayload`), `"text": null` instead
 *   of a second copy of that text (replies and thinking: a quarter of all documents' bytes;
 *   prompts: 8.1 of a Cursor store's 93 MB, 5.6 of a Codex one's 113);
 * - its time where that is the row's order time (an operation without one, in a row with one,
 *   says `"ts_ms": null`);
 * - the line range of its call where that is the row's line, once (and so its completion's,
 *   where the importer gave both the same range object);
 * - an epoch 0, and replay attributes that are what its kind, completeness and request give
 *   (`replayAttributes`).
 *
 * The last three are a seventh of a document's bytes, a fifth of Codex's.
 */
export function storedDoc(
  op: Operation,
  row: DocRow,
  payloads?: Pick<Map<string, Uint8Array>, "get">,
  /**
   * Whether its text is its text payload's (`textIsPayload`), when the caller knows; decided
   * before any field is blanked, as it reads kind, completeness and request.
   */
  shared = payloads !== undefined && textIsPayload(op, payloads),
): string {
  const file = row.file;
  const p = op.provenance;
  const ranges = [p.source_range, p.completion?.source_range]
    .filter((r): r is SourceRange => r?.file === file);
  const derived = op.replay !== undefined && sameReplay(op.replay, replayAttributes(op));
  const lines = p.source_range?.lines;
  // JSON leaves out a property whose value is undefined: blank fields for the moment of
  // stringifying rather than copy the operation (the values change, not the objects' shapes).
  const blanks = new Blanks();
  for (const r of ranges) blanks.set(r, "file", undefined);
  const own = op as unknown as Record<string, unknown>;
  for (const f of COLUMN_FIELDS) if (own[f] !== undefined) blanks.set(own, f, undefined);
  if (shared) blanks.set(own, "text", null);
  if (op.ts_ms !== undefined && op.ts_ms === row.ts_ms) blanks.set(own, "ts_ms", undefined);
  else if (op.ts_ms === undefined && row.ts_ms !== null) blanks.set(own, "ts_ms", null);
  if (lines && lines[0] === row.line && lines[1] === row.line) {
    blanks.set(p.source_range, "lines", undefined);
  }
  if (p.epoch === 0) blanks.set(p, "epoch", undefined);
  if (p.completion?.epoch === 0) blanks.set(p.completion, "epoch", undefined);
  if (derived) blanks.set(own, "replay", undefined);
  try {
    return JSON.stringify(op);
  } finally {
    blanks.restore();
  }
}

/** Fields set for a moment, each put back as it was (or removed again) by `restore`. */
class Blanks {
  private readonly before: [object, string, unknown, boolean][] = [];

  set(target: object, key: string, value: unknown): void {
    const o = target as Record<string, unknown>;
    this.before.push([o, key, o[key], key in o]);
    o[key] = value;
  }

  restore(): void {
    for (let i = this.before.length - 1; i >= 0; i--) {
      const [o, key, value, had] = this.before[i] as [
        Record<string, unknown>,
        string,
        unknown,
        boolean,
      ];
      if (had) o[key] = value;
      else delete o[key];
    }
  }
}

const sameReplay = (a: ReplayAttributes, b: ReplayAttributes) =>
  a.replayable === b.replayable && a.blockers.length === b.blockers.length &&
  a.blockers.every((x, i) => x === b.blockers[i]);

const decoder = new TextDecoder();

/**
 * The payload an operation's text may be left to: a reply's or thinking's response, a prompt's
 * request (as `kind` says; the stored doc leaves the kind to its row).
 */
function textPayload(op: Pick<Operation, "kind" | "request" | "response">): PayloadRef | undefined {
  return op.kind === "prompt"
    ? op.request
    : op.kind === "reply" || op.kind === "thinking"
    ? op.response
    : undefined;
}

/** Whether an operation's text is its `textPayload`, byte for byte. */
function textIsPayload(op: Operation, payloads: Pick<Map<string, Uint8Array>, "get">): boolean {
  const ref = textPayload(op);
  if (typeof op.text !== "string" || !ref || !("sha256" in ref)) return false;
  const bytes = payloads.get(ref.sha256);
  return bytes !== undefined && bytes.byteLength === ref.size && isUtf8Of(bytes, op.text);
}

/** Bytes of a payload decoded at once when it is compared with a text. */
const COMPARED_AT_ONCE = 1 << 20;

/**
 * Whether `bytes` decode to `text`, a megabyte at a time: a pasted 28 MiB prompt is not made a
 * second time to be compared with its payload.
 */
export function isUtf8Of(bytes: Uint8Array, text: string): boolean {
  // (a UTF-16 unit is 1 to 3 bytes of UTF-8, a pair of them 4)
  if (bytes.byteLength < text.length || bytes.byteLength > 3 * text.length) return false;
  if (bytes.byteLength <= COMPARED_AT_ONCE) return decoder.decode(bytes) === text;
  const stream = new TextDecoder();
  let at = 0;
  for (let i = 0; i < bytes.byteLength; i += COMPARED_AT_ONCE) {
    const end = i + COMPARED_AT_ONCE;
    const part = stream.decode(bytes.subarray(i, end), { stream: end < bytes.byteLength });
    if (!text.startsWith(part, at)) return false;
    at += part.length;
  }
  return at === text.length;
}

/** A range as a doc keeps it: its bytes, and its file and lines unless its row has them. */
type StoredRange = Partial<SourceRange> & Pick<SourceRange, "bytes">;

/** A provenance as a doc keeps it: what its row says may be left out (see {@link storedDoc}). */
interface StoredProvenance {
  epoch?: number;
  source_range?: StoredRange;
  /** (its lines are kept, but where it is the call's range itself, one object in both places) */
  completion?: { epoch?: number; source_range: StoredRange };
  record_ids?: string[];
}

/**
 * A payload's text by its SHA-256, only its first `maxChars` characters when given; null when
 * the store cannot read it.
 */
export type PayloadText = (sha256: string, maxChars?: number) => string | null;

/**
 * The Operation of a stored doc (see {@link storedDoc}): what it left to its row's columns or
 * to the rest put back. A doc stored before it left any of them out reads the same.
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
  const p = op.provenance as unknown as StoredProvenance | undefined;
  if (p?.source_range) {
    // A stored range may lack its file, or the call's its lines: put them back, first, as the
    // importer wrote them.
    const { file, line } = row;
    const { completion: c, ...call } = p;
    const whole: OperationProvenance = {
      epoch: 0,
      ...call,
      source_range: { file, lines: [line, line], ...p.source_range },
    };
    if (c) {
      const source_range = { file, lines: whole.source_range.lines, ...c.source_range };
      whole.completion = { epoch: 0, ...c, source_range };
    }
    op.provenance = whole;
  }
  const own = op as { ts_ms?: number | null };
  if (own.ts_ms === null) delete own.ts_ms;
  else if (own.ts_ms === undefined && row.ts_ms !== null) own.ts_ms = Number(row.ts_ms);
  op.replay ??= replayAttributes(op);
  if ((op.text as string | null | undefined) === null) {
    const ref = textPayload(op);
    const text = ref && "sha256" in ref ? payloadText(ref.sha256) : null;
    // An unreadable payload (a pack cut short) loses the text, as it loses any output.
    if (text === null) delete op.text;
    else op.text = text;
  }
  return op;
}

/** A stored operation as a view shows it: see {@link readViewDoc}. */
export interface ViewOp {
  op: Operation;
  /**
   * Set when `op.text` is only the opening of the operation's text: the UTF-8 bytes of the
   * whole.
   */
  text_bytes?: number;
}

/**
 * A stored operation as a view shows it: its own text (a prompt's, reply's, thinking's) only
 * as far as `maxChars` when given, and then `text_bytes`. A pasted log of megabytes as a prompt
 * is read, sent and laid out as its opening, the rest fetched when asked for.
 */
export function readViewDoc(row: StoredOp, payloadText: PayloadText, maxChars?: number): ViewOp {
  if (maxChars === undefined) return { op: readStoredDoc(row, payloadText) };
  let fromPayload = false;
  const op = readStoredDoc(row, (sha) => {
    fromPayload = true;
    return payloadText(sha, maxChars + 1);
  });
  const text = op.text;
  if (typeof text !== "string" || text.length <= maxChars) return { op };
  const ref = textPayload(op);
  const whole = fromPayload && ref && "sha256" in ref ? ref.size : utf8Bytes(text);
  // (never half of a character beyond the first 65,536)
  const high = text.charCodeAt(maxChars - 1);
  op.text = text.slice(0, high >= 0xd800 && high <= 0xdbff ? maxChars - 1 : maxChars);
  return { op, text_bytes: whole };
}

/** The bytes of `text` in UTF-8, counted (a pasted log is not encoded again to be measured). */
export function utf8Bytes(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a pair: 4 bytes for its two units
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
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
  if (op.text) parts.push(indexedText(op.text));
  if (op.tool) parts.push(op.tool);
  if (op.summary) parts.push(op.summary);
  if (op.target && op.target !== op.summary) parts.push(op.target);
  return parts.join("\n");
}

/**
 * What the index is given of a stored operation (for rebuilding the index), or with `forIndex`
 * false the text search sees of it, which a phrase is checked on (see `searchBody`).
 */
export function indexText(
  op: Operation,
  payloads: Pick<Map<string, Uint8Array>, "get">,
  forIndex = true,
  /** Its text was read from its request payload (`readIndexedDoc`): the words are read once. */
  textIsInput = false,
): string {
  const result = hasResult(op) ? payloadOf(op.response, payloads) : null;
  const input = textIsInput ? null : payloadOf(op.request, payloads);
  return searchBody(opWords(op), input, result, forIndex);
}

/**
 * A stored operation read for its search text ({@link indexText}), and whether its text was
 * read from its request payload (a prompt kept once, `storedDoc`): its body then reads that
 * text once, as the import that wrote it did (`PreparedOp.input`). A pasted 26 MiB log was
 * scanned twice, 4 Mi characters each time.
 */
export function readIndexedDoc(
  row: StoredOp,
  payloadText: PayloadText,
): { op: Operation; textIsInput: boolean } {
  let read: string | null = null;
  const op = readStoredDoc(row, (sha) => {
    read = sha;
    return payloadText(sha);
  });
  return { op, textIsInput: read !== null && isHashRef(op.request) && op.request.sha256 === read };
}
