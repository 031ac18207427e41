/**
 * A prepared unit as it crosses from the import worker to the thread that stores it.
 *
 * Structured clone writes every object's property names apart, and makes every object again,
 * one property at a time: a 300 MB Codex corpus's 109k operations of 15 fields took 0.37 s of
 * the two threads' CPU to clone, a sixth of what the worker spends reading. Packed, each delta's
 * operations are one array of their string fields and one typed array of their numbers; the
 * other thread makes the objects again in one go. The strings travel as they are: joined into
 * a few long ones (cheaper still to clone), they raised the import worker's heap from 41 to
 * 63 MB and the import's peak memory from 210 to 295 MB.
 */
import type { PayloadPlace, PreparedDelta, PreparedOp, PreparedUnit } from "./prepare.ts";

/** A delta's operations, packed: see the module's comment. */
export interface PackedOps {
  /** Every string field of every operation, {@link STRINGS} an operation. */
  strings: (string | null)[];
  /** {@link NUMBERS} an operation. */
  numbers: Float64Array;
}

export interface WireDelta extends Omit<PreparedDelta, "operations"> {
  operations: PackedOps;
}

export interface WireUnit extends Omit<PreparedUnit, "deltas"> {
  deltas: WireDelta[];
}

/**
 * The string fields of an operation, in turn: id, connection, kind, effect, tool,
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
  const strings: (string | null)[] = new Array(ops.length * STRINGS);
  const numbers = new Float64Array(ops.length * NUMBERS);
  let s = 0, n = 0;
  const place = (p: PayloadPlace) => {
    if (typeof p === "number") {
      numbers[n++] = p;
      strings[s++] = null;
    } else if (p === null) {
      numbers[n++] = NO_PLACE;
      strings[s++] = null;
    } else if (typeof p === "string") {
      numbers[n++] = INLINE;
      strings[s++] = p;
    } else {
      numbers[n++] = HASH;
      strings[s++] = p.sha256;
    }
  };
  for (const op of ops) {
    strings[s++] = op.id;
    strings[s++] = op.connection;
    strings[s++] = op.kind;
    strings[s++] = op.effect;
    strings[s++] = op.tool;
    strings[s++] = op.target;
    strings[s++] = op.completeness;
    strings[s++] = op.model;
    strings[s++] = op.spawns;
    strings[s++] = op.doc;
    strings[s++] = op.words;
    numbers[n++] = op.order.ts_ms ?? NaN;
    numbers[n++] = op.order.rank;
    numbers[n++] = op.order.line;
    numbers[n++] = op.order.block;
    numbers[n++] = op.is_error ?? NaN;
    place(op.input);
    place(op.result);
  }
  return { strings, numbers };
}

export function unpackOps({ strings, numbers }: PackedOps): PreparedOp[] {
  const out: PreparedOp[] = new Array(numbers.length / NUMBERS);
  const place = (code: number, v: string | null): PayloadPlace =>
    code >= 0 ? code : code === INLINE ? v : code === HASH ? { sha256: v! } : null;
  for (let i = 0, s = 0, n = 0; i < out.length; i++, s += STRINGS, n += NUMBERS) {
    const ts = numbers[n], error = numbers[n + 4];
    // (the fields in prepareOp's order: one shape of object whichever thread prepared it)
    out[i] = {
      id: strings[s]!,
      connection: strings[s + 1]!,
      order: {
        ts_ms: Number.isNaN(ts) ? null : ts,
        rank: numbers[n + 1],
        line: numbers[n + 2],
        block: numbers[n + 3],
      },
      kind: strings[s + 2] as PreparedOp["kind"],
      effect: strings[s + 3] as PreparedOp["effect"],
      tool: strings[s + 4],
      target: strings[s + 5],
      completeness: strings[s + 6] as PreparedOp["completeness"],
      model: strings[s + 7],
      spawns: strings[s + 8],
      doc: strings[s + 9]!,
      is_error: Number.isNaN(error) ? null : error as 0 | 1,
      words: strings[s + 10]!,
      input: place(numbers[n + 5], strings[s + 11]),
      result: place(numbers[n + 6], strings[s + 12]),
    };
  }
  return out;
}
