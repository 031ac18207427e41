/**
 * @module
 * The records a Claude Code log has already given, remembered between passes so that records a
 * resume writes again are imported once.
 *
 * A record's key is its uuid's 128 bits, {@link SEEN_KEY_BYTES} bytes: every uuid keeps its own
 * key, so no record is ever taken for another. While a pass runs the keys are one typed hash
 * table ({@link KeyTable}); the store keeps them apart from the log's state, as a set that only
 * grows (`UnitResult.seen`: each pass gives the keys it added, `ImportContext.resume.seen` the
 * keys before it).
 *
 * A big log is read in 12 MiB slices, and the table its last slice built is kept here for the
 * next one (`{ kept }`), so the keys cross neither between threads nor into the store whole.
 * A 1 GiB session's 262k keys, as one string in its state, went from the import worker to the
 * store and back, and into the store, with every slice: its import peaked at 336 MB, and at
 * 225 MB with them kept here. (As a `Set` of strings rebuilt at each slice they also took
 * 15.7 MB of heap and 68 ms a slice, against 8.6 MB and nothing.)
 *
 * Version 3 states held the keys themselves, in base64 ({@link recordKey}); the first pass
 * over such a log reads them and gives them all to the store.
 */

import { SEEN_KEY_BYTES, SEEN_NOT_KEPT } from "../results.ts";
import type { SeenPrior } from "../types.ts";

/** How many characters a record's key has (in base64, as version-3 states held them). */
export const KEY_CHARS = 22;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** The character codes of the base64 digits. */
const B64_CODES = Array.from(B64, (c) => c.charCodeAt(0));
/** The value of each base64 digit by its character code (-1: not a digit). */
const B64_VALUES = new Int8Array(128).fill(-1);
B64_CODES.forEach((c, v) => B64_VALUES[c] = v);
/** One key's digits, filled in place (a key is made for every record a log gives). */
const digits: number[] = new Array(KEY_CHARS).fill(0);

/**
 * The key of a record uuid (32 hex digits, with or without dashes, any case: the caller checks
 * it, builder.ts's UUID_RE): its 128 bits,
 * then four zero bits, six bits a base64 digit. Read from the character codes in one pass:
 * slicing and parsing the hex took 6% of an import worker's time.
 */
export function recordKey(uuid: string): string {
  let bits = 0; // bits waiting in `acc`, fewer than six after each digit is taken
  let acc = 0;
  let n = 0;
  for (let i = 0; i < uuid.length; i++) {
    const c = uuid.charCodeAt(i);
    if (c === 45) continue; // "-"
    // "0"-"9", then "a"-"f" in either case
    acc = (acc << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
    bits += 4;
    if (bits >= 6) {
      bits -= 6;
      digits[n++] = B64_CODES[(acc >> bits) & 63];
      acc &= (1 << bits) - 1;
    }
  }
  digits[n] = B64_CODES[(acc << (6 - bits)) & 63];
  return String.fromCharCode(...digits);
}

/** A uuid's 128 bits as four 32-bit words, into `out` (the caller checks it, as for recordKey). */
function uuidWords(uuid: string, out: Uint32Array): void {
  let w = 0;
  let n = 0;
  for (let i = 0; i < uuid.length; i++) {
    const c = uuid.charCodeAt(i);
    if (c === 45) continue;
    w = (w << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
    if ((++n & 7) === 0) out[(n >> 3) - 1] = w >>> 0;
  }
}

/**
 * The four words of the key at `at` in a saved string, into `out`; false when those characters
 * are not a key (a damaged state: no uuid's key, so it is left out).
 */
function keyWords(saved: string, at: number, out: Uint32Array): boolean {
  let acc = 0; // fewer than 14 bits: a byte is taken as soon as there are 8
  let bits = 0;
  let n = 0; // bytes taken
  let w = 0;
  for (let i = at; i < at + KEY_CHARS; i++) {
    const c = saved.charCodeAt(i);
    const v = c < 128 ? B64_VALUES[c] : -1;
    if (v < 0) return false;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8 && n < 16) {
      bits -= 8;
      w = (w << 8) | (acc >> bits);
      acc &= (1 << bits) - 1;
      if ((++n & 3) === 0) out[(n >> 2) - 1] = w >>> 0;
    }
  }
  return n === 16;
}

/** A set of 128-bit keys: open addressing over one typed array, four words a slot. */
export class KeyTable {
  private words: Uint32Array;
  private used: Uint8Array;
  private mask: number;
  size = 0;

  constructor(expected = 0) {
    let slots = 64;
    while (slots < expected * 2) slots *= 2;
    this.words = new Uint32Array(slots * 4);
    this.used = new Uint8Array(slots);
    this.mask = slots - 1;
  }

  /** Adds a key (its four words); false when it was there already. */
  add(k: Uint32Array): boolean {
    // uuids written by hand or by counters share most of their bits: every word is mixed in
    let h = k[0] ^ Math.imul(k[1], 0x85ebca6b) ^ Math.imul(k[2], 0xc2b2ae35) ^
      Math.imul(k[3], 0x27d4eb2f);
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
    h ^= h >>> 15;
    const words = this.words;
    for (let slot = h & this.mask;; slot = (slot + 1) & this.mask) {
      if (!this.used[slot]) {
        const at = slot * 4;
        words[at] = k[0], words[at + 1] = k[1], words[at + 2] = k[2], words[at + 3] = k[3];
        this.used[slot] = 1;
        if (++this.size * 2 > this.used.length) this.grow();
        return true;
      }
      const at = slot * 4;
      if (
        words[at] === k[0] && words[at + 1] === k[1] && words[at + 2] === k[2] &&
        words[at + 3] === k[3]
      ) return false;
    }
  }

  /** Every key, four words each, in no particular order. */
  keys(): Uint32Array {
    const out = new Uint32Array(this.size * 4);
    let n = 0;
    for (let slot = 0; slot < this.used.length; slot++) {
      if (this.used[slot]) out.set(this.words.subarray(slot * 4, slot * 4 + 4), n++ * 4);
    }
    return out;
  }

  private grow(): void {
    const { words, used } = this;
    this.words = new Uint32Array(words.length * 2);
    this.used = new Uint8Array(used.length * 2);
    this.mask = this.used.length - 1;
    this.size = 0;
    const k = new Uint32Array(4);
    for (let slot = 0; slot < used.length; slot++) {
      if (!used[slot]) continue;
      k.set(words.subarray(slot * 4, slot * 4 + 4));
      this.add(k);
    }
  }
}

/** The tables of logs read in slices, by path, for their next slice: a few logs at once. */
const kept = new Map<string, { count: number; table: KeyTable }>();
const MAX_KEPT = 8;

/** The seen records of a pass: the keys before it, then the ones this pass adds. */
export class SeenRecords {
  private readonly words = new Uint32Array(4);
  /** The keys this pass added, four words each. */
  private added: Uint32Array = new Uint32Array(64);
  private count = 0;

  private constructor(
    private readonly table: KeyTable,
    /** How many of the store's keys this pass builds on (0: its keys replace them). */
    private readonly from: number,
  ) {}

  /**
   * The seen records a pass over `path` starts from: none (`prior` undefined: a pass from the
   * start of the log), the keys the store holds, or the table the last slice kept. A version-3
   * state's keys (`legacy`) are read too, and the pass then gives the store every key.
   * Throws {@link SEEN_NOT_KEPT} when `{ kept }` names a table this thread does not hold.
   */
  static resume(
    path: string,
    prior: SeenPrior | undefined,
    legacy = "",
  ): SeenRecords {
    if (prior && !(prior instanceof Uint8Array)) {
      const mine = kept.get(path);
      kept.delete(path); // taken: never shared by two passes
      if (!mine || mine.count !== prior.kept) throw new Error(SEEN_NOT_KEPT);
      return legacy
        ? SeenRecords.read(legacy, mine.table)
        : new SeenRecords(mine.table, mine.count);
    }
    kept.delete(path);
    const bytes = prior ?? new Uint8Array();
    const table = new KeyTable(bytes.length / SEEN_KEY_BYTES + legacy.length / KEY_CHARS);
    const words = new Uint32Array(4);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at + SEEN_KEY_BYTES <= bytes.length; at += SEEN_KEY_BYTES) {
      for (let k = 0; k < 4; k++) words[k] = view.getUint32(at + 4 * k);
      table.add(words);
    }
    return legacy ? SeenRecords.read(legacy, table) : new SeenRecords(table, table.size);
  }

  /** A table with a version-3 state's keys added: all of them go to the store again. */
  private static read(legacy: string, table: KeyTable): SeenRecords {
    const seen = new SeenRecords(table, 0);
    for (let i = 0; i + KEY_CHARS <= legacy.length; i += KEY_CHARS) {
      if (keyWords(legacy, i, seen.words)) table.add(seen.words);
    }
    // every key the table holds is given: the store's are replaced
    seen.added = table.keys();
    seen.count = table.size;
    return seen;
  }

  /** Notes a record by its uuid (a real one: 32 hex digits, dashes aside); false when seen before. */
  add(uuid: string): boolean {
    uuidWords(uuid, this.words);
    if (!this.table.add(this.words)) return false;
    if (this.count * 4 === this.added.length) {
      const more = new Uint32Array(this.added.length * 2);
      more.set(this.added);
      this.added = more;
    }
    this.added.set(this.words, this.count++ * 4);
    return true;
  }

  /**
   * What the pass gives the store: the keys it added, and how many of the store's it built on
   * (0: they replace them). With `keep` (a slice with more to come) the table stays here for
   * the next slice, which asks for it with `{ kept: from + added }` as its prior.
   */
  result(path: string, keep: boolean): { from: number; added: Uint8Array } {
    const added = new Uint8Array(this.count * SEEN_KEY_BYTES);
    const view = new DataView(added.buffer);
    for (let i = 0; i < this.count * 4; i++) view.setUint32(i * 4, this.added[i]);
    if (keep) {
      kept.set(path, { count: this.table.size, table: this.table });
      if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
    }
    return { from: this.from, added };
  }
}

/** The keys of a version-2 state, which listed the uuids themselves (dashless, lower case). */
export function keysOfUuids(uuids: readonly unknown[]): string {
  return uuids.filter((u): u is string => typeof u === "string" && /^[0-9a-f]{32}$/.test(u))
    .map(recordKey).join("");
}
