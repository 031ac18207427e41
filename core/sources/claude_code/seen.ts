/**
 * @module
 * The records a Claude Code log has already given, remembered between passes so that records a
 * resume writes again are imported once.
 *
 * A log's state keeps them as ONE string of fixed-width keys, not as an array of uuids. A big
 * log's state goes from the import worker to the store and back with every 12 MiB slice: as an
 * array, a 500 MiB session's 128k uuids were 128k strings cloned in each heap every slice (about
 * 4.6 MB of JSON, most of the state); as one string it is a single copy of about 2.8 MB.
 *
 * A key is the uuid's 128 bits in {@link KEY_CHARS} base64 digits (its 32 hex digits would be
 * 32): every uuid keeps its own key, so no record is ever taken for another.
 */

/** How many characters a record's key has. */
export const KEY_CHARS = 22;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** The character codes of the base64 digits. */
const B64_CODES = Array.from(B64, (c) => c.charCodeAt(0));
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

/** The seen records of a pass: the saved keys, then the ones this pass adds. */
export class SeenRecords {
  private readonly keys = new Set<string>();
  private readonly added: string[] = [];

  /** `prior`: the keys a state holds, as {@link SeenRecords.saved} made them. */
  constructor(private readonly prior: string) {
    for (let i = 0; i + KEY_CHARS <= prior.length; i += KEY_CHARS) {
      this.keys.add(prior.slice(i, i + KEY_CHARS));
    }
  }

  /** Notes a record by its uuid (a real one: 32 hex digits, dashes aside); false when seen before. */
  add(uuid: string): boolean {
    const key = recordKey(uuid);
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.added.push(key);
    return true;
  }

  /** Every key, in the order first seen, as a state keeps them. */
  saved(): string {
    return this.added.length ? this.prior + this.added.join("") : this.prior;
  }
}

/** The keys of a version-2 state, which listed the uuids themselves (dashless, lower case). */
export function keysOfUuids(uuids: readonly unknown[]): string {
  return uuids.filter((u): u is string => typeof u === "string" && /^[0-9a-f]{32}$/.test(u))
    .map(recordKey).join("");
}
