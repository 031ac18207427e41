/**
 * A Bloom filter of SHA-256 hashes: "certainly not added" or "maybe added". A bulk import keeps
 * one of the payloads stored (payloads.ts), so it asks the table only about the hashes that may
 * be there: the others are fresh. The payloads table is keyed by hash, so each question reads a
 * page somewhere in it, and the bigger the history the less of it the page cache holds (3 GB
 * Claude Code history: 3.3 s of 28 to become browsable, 0.65 s of 7.5 at 1 GB).
 *
 * A hash is already uniform: its first {@link PROBES} 32-bit words are the bit positions. The
 * filter grows as a chain of filters, each twice the one before, so a positive is at most a few
 * percent likely whatever the count (each filter holds {@link BITS_PER_HASH} bits a hash: under
 * 1% apiece).
 */

/** Bits a hash in each filter of the chain; with {@link PROBES} probes, under 1% positives. */
const BITS_PER_HASH = 12;
const PROBES = 6;
/** The first filter's bits (16 KiB). */
const FIRST_BITS = 1 << 17;

interface Filter {
  bits: Uint32Array;
  mask: number;
  count: number;
  capacity: number;
}

export class HashFilter {
  /** The bytes of a hash the filter reads (its first {@link PROBES} words). */
  static readonly KEY_BYTES = 4 * PROBES;
  private readonly chain: Filter[] = [];
  /** Hashes added (repeats included). */
  count = 0;

  /** Adds a hash, as hex: 64 characters, or its first {@link HashFilter.KEY_BYTES} bytes'. */
  addHex(hex: string): void {
    this.add(hexWords(hex));
  }

  /** Adds a hash, as its 32 bytes. */
  addBytes(bytes: Uint8Array): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const words = new Array<number>(PROBES);
    for (let j = 0; j < PROBES; j++) words[j] = view.getUint32(4 * j);
    this.add(words);
  }

  /** False when the hash (64 hex characters) was certainly never added. */
  mayHoldHex(hex: string): boolean {
    const words = hexWords(hex);
    for (const f of this.chain) if (holds(f, words)) return true;
    return false;
  }

  /** Bytes the filter takes. */
  get bytes(): number {
    return this.chain.reduce((n, f) => n + f.bits.byteLength, 0);
  }

  private add(words: number[]): void {
    let f = this.chain.at(-1);
    if (!f || f.count >= f.capacity) {
      const size = f ? 2 * (f.mask + 1) : FIRST_BITS;
      f = {
        bits: new Uint32Array(size >>> 5),
        mask: size - 1,
        count: 0,
        capacity: Math.floor(size / BITS_PER_HASH),
      };
      this.chain.push(f);
    }
    for (const w of words) f.bits[(w & f.mask) >>> 5] |= 1 << (w & 31);
    f.count++;
    this.count++;
  }
}

function holds(f: Filter, words: number[]): boolean {
  for (const w of words) if (!(f.bits[(w & f.mask) >>> 5] & (1 << (w & 31)))) return false;
  return true;
}

/** The first {@link PROBES} 32-bit words of a hash given in hex (as `addBytes` reads them). */
function hexWords(hex: string): number[] {
  // (digit by digit: six slices and parseInts a hash were 1.3% of a bulk import's writer)
  const words = new Array<number>(PROBES);
  for (let j = 0, i = 0; j < PROBES; j++) {
    let w = 0;
    for (const end = i + 8; i < end; i++) {
      const c = hex.charCodeAt(i);
      w = (w << 4) | (c <= 57 ? c - 48 : (c | 32) - 87); // 0-9, a-f or A-F
    }
    words[j] = w >>> 0;
  }
  return words;
}
