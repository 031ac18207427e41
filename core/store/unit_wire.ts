/**
 * A prepared unit as it crosses from the import worker to the thread that stores it.
 *
 * Structured clone writes every object's property names and every string apart: a 300 MB Codex
 * corpus's 109k operations (15 fields, 1.2M strings) took 0.37 s of the two threads' CPU to
 * clone, a sixth of what the worker spends reading. Packed, each delta's operations are one
 * string (every string field of every operation, end to end), the ends of its pieces and the
 * numbers, in typed arrays: 0.13 s. The other thread takes the pieces back as slices of that
 * one string (V8 makes a slice a view, not a copy).
 */
import type { PayloadPlace, PreparedDelta, PreparedOp, PreparedUnit } from "./prepare.ts";

/** A delta's operations, packed: see the module's comment. */
export interface PackedOps {
  /** Every string field of every operation, {@link STRINGS} a operation, end to end. */
  text: string;
  /** Where each piece of `text` ends; -1 for a null. */
  ends: Float64Array;
  /** {@link NUMBERS} a operation. */
  numbers: Float64Array;
}

export interface WireDelta extends Omit<PreparedDelta, "operations"> {
  operations: PackedOps;
}

export interface WireUnit extends Omit<PreparedUnit, "deltas"> {
  deltas: WireDelta[];
}

/**
 * The string fields of an operation in `text`, in turn: id, connection, kind, effect, tool,
 * target, completeness, model, spawns, doc, words, then the input's and the result's text (an
 * inline payload or a stored one's hash).
 */
const STRINGS = 13;
/** Its numbers, in turn: the order's time, rank, line and block, is_error, input, result. */
const NUMBERS = 7;

/** How a payload place is written among the numbers (an index is itself, ≥ 0). */
const NO_PLACE = -1, INLINE = -2, HASH = -3;

export function packUnit(unit: PreparedUnit): WireUnit {
  return { ...unit, deltas: unit.deltas.map((d) => ({ ...d, operations: packOps(d.operations) })) };
}

export function unpackUnit(wire: WireUnit): PreparedUnit {
  return {
    ...wire,
    deltas: wire.deltas.map((d) => ({ ...d, operations: unpackOps(d.operations) })),
  };
}

export function packOps(ops: readonly PreparedOp[]): PackedOps {
  const pieces: string[] = [];
  const ends = new Float64Array(ops.length * STRINGS);
  const numbers = new Float64Array(ops.length * NUMBERS);
  let s = 0, n = 0, length = 0;
  const str = (v: string | null) => {
    if (v === null) ends[s++] = -1;
    else {
      pieces.push(v);
      length += v.length;
      ends[s++] = length;
    }
  };
  const place = (p: PayloadPlace) => {
    if (typeof p === "number") {
      numbers[n++] = p;
      str(null);
    } else if (p === null) {
      numbers[n++] = NO_PLACE;
      str(null);
    } else if (typeof p === "string") {
      numbers[n++] = INLINE;
      str(p);
    } else {
      numbers[n++] = HASH;
      str(p.sha256);
    }
  };
  for (const op of ops) {
    str(op.id);
    str(op.connection);
    str(op.kind);
    str(op.effect);
    str(op.tool);
    str(op.target);
    str(op.completeness);
    str(op.model);
    str(op.spawns);
    str(op.doc);
    str(op.words);
    numbers[n++] = op.order.ts_ms ?? NaN;
    numbers[n++] = op.order.rank;
    numbers[n++] = op.order.line;
    numbers[n++] = op.order.block;
    numbers[n++] = op.is_error ?? NaN;
    place(op.input);
    place(op.result);
  }
  return { text: pieces.join(""), ends, numbers };
}

export function unpackOps({ text, ends, numbers }: PackedOps): PreparedOp[] {
  const out: PreparedOp[] = new Array(numbers.length / NUMBERS);
  let from = 0;
  let s = 0;
  const str = (): string | null => {
    const end = ends[s++];
    if (end < 0) return null;
    const v = text.slice(from, end);
    from = end;
    return v;
  };
  const place = (code: number, v: string | null): PayloadPlace =>
    code >= 0 ? code : code === INLINE ? v : code === HASH ? { sha256: v! } : null;
  for (let i = 0, n = 0; i < out.length; i++, n += NUMBERS) {
    const id = str()!, connection = str()!, kind = str(), effect = str(), tool = str();
    const target = str(), completeness = str(), model = str(), spawns = str(), doc = str()!;
    const words = str()!, input = str(), result = str();
    const ts = numbers[n], error = numbers[n + 4];
    // (the fields in prepareOp's order: one shape of object whichever thread prepared it)
    out[i] = {
      id,
      connection,
      order: {
        ts_ms: Number.isNaN(ts) ? null : ts,
        rank: numbers[n + 1],
        line: numbers[n + 2],
        block: numbers[n + 3],
      },
      kind: kind as PreparedOp["kind"],
      effect: effect as PreparedOp["effect"],
      tool,
      target,
      completeness: completeness as PreparedOp["completeness"],
      model,
      spawns,
      doc,
      is_error: Number.isNaN(error) ? null : error as 0 | 1,
      words,
      input: place(numbers[n + 5], input),
      result: place(numbers[n + 6], result),
    };
  }
  return out;
}
