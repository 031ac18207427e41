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

/** The key of a record uuid (32 hex digits, with or without dashes, any case). */
export function recordKey(uuid: string): string {
  const hex = uuid.replace(/-/g, "").toLowerCase();
  let key = "";
  // three hex digits (12 bits) are two base64 digits; the last two (8 bits) two more
  for (let i = 0; i < 30; i += 3) {
    const v = parseInt(hex.slice(i, i + 3), 16);
    key += B64[v >> 6] + B64[v & 63];
  }
  const v = parseInt(hex.slice(30, 32), 16) << 4;
  return key + B64[v >> 6] + B64[v & 63];
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
