/**
 * `session.json` read as it streams in (a session of 35,000 steps is 69 MB of it, and parsed
 * whole it held 300 MiB): its head, every top-level field but the operations, and its
 * operations one at a time, never the session whole; each operation is dropped once handed on.
 *
 * Two readers, one result. A file in Chronicle's own layout (`sessionJson`'s: two spaces an
 * indent, each top-level field and each operation starting on a line of its own) is cut at
 * those lines and each piece given to `JSON.parse`: 0.34–0.56 s for the 69 MB of a 35,342-step
 * session, where the streaming parser took 1.13–1.37 s.
 * At the first line that is not that layout (another writer's file, a hand edit, a piece
 * `JSON.parse` refuses) the rest of the file, from the start of that piece, goes to
 * `@streamparser/json`, started as if it had read what came before: it reads any JSON and
 * words every error. Both make a key `__proto__` an own key, as `JSON.parse` does.
 */
import { JSONParser, TokenType } from "@streamparser/json";
import { isJsonObject } from "../model/mod.ts";

/** The top-level fields of a canonical session kept as its head (unknown ones are skipped). */
const HEAD_KEYS: ReadonlySet<string> = new Set([
  "schema_version",
  "recording",
  "session",
  "connections",
  "timeline",
  "completeness",
  "provenance",
  "usage",
  "issues",
  "extensions",
]);

/**
 * Reads one `session.json` chunk by chunk: {@link write} returns the operations each chunk
 * completes, as `[id, value]` in the file's order (values unchecked: see validate.ts); after
 * {@link end}, {@link head} holds the top-level fields and {@link operationsFound} says whether
 * `operations` was an object. A file that is not JSON, or not an object, throws a SyntaxError.
 */
export class SessionFileReader {
  readonly head: Record<string, unknown> = {};
  /** `object` when the operations were an object; `other` for any other value. */
  operationsFound: "object" | "other" | "missing" = "missing";
  /** Reads the file while it keeps Chronicle's layout; null once the parser has taken over. */
  #layout: LayoutReader | null = new LayoutReader({
    took: (where, key, value) => {
      if (where === "operations") this.#out.push([key, value]);
      else if (key === "operations") {
        this.operationsFound = isJsonObject(value) ? "object" : "other";
      } else if (HEAD_KEYS.has(key)) this.head[key] = value;
    },
    ended: () => {
      this.#layout = null;
      this.#done = true;
    },
    handOver: (prefix, madeUp, at, bytes) => {
      this.#layout = null;
      this.#parsedFrom = at;
      this.#madeUp = madeUp;
      this.#started = prefix !== "";
      this.#offset = at - prefix.length;
      if (prefix) this.#parser.write(prefix);
      if (bytes.length) this.#parser.write(bytes);
    },
  });
  /** Operations the parser reads that a restart's prefix made up (see {@link LayoutReader}). */
  #madeUp = 0;
  /** Where the parser's stream began in the file, less the prefix a restart gave it. */
  #offset = 0;
  #parsedFrom: number | null = null;
  #parser = new JSONParser({
    paths: [...[...HEAD_KEYS, "operations"].map((k) => `$.${k}`), "$.operations.*"],
    // a value read and handed on is dropped (but under `operations`: see below)
    keepStack: false,
  });
  #started = false;
  #done = false;
  #read = 0;
  #out: [string, unknown][] = [];

  constructor() {
    const parser = this.#parser;
    parser.onToken = ({ token }) => {
      if (this.#started) return;
      this.#started = true;
      if (token !== TokenType.LEFT_BRACE) {
        throw new SyntaxError("session.json is not a JSON object");
      }
    };
    parser.onValue = ({ value, key, parent, stack }) => {
      if (stack.length === 2) {
        // an operation: handed on, and dropped from the operations, which are kept until their
        // end only to say what they were
        if (this.#madeUp) this.#madeUp--;
        else if (!Array.isArray(parent)) this.#out.push([String(key), value]);
        delete (parent as Record<string, unknown>)[key as string];
      } else if (key === "operations") {
        this.operationsFound = isJsonObject(value) ? "object" : "other";
      } else this.head[key as string] = value;
    };
    parser.onEnd = () => this.#done = true;
    parser.onError = (e) => {
      // (the library's own errors; a SyntaxError is this reader's, passed through once more)
      if (e instanceof SyntaxError) throw e;
      // its positions count from where it began: said as the file's bytes
      const message = e.message.replace(
        /at chunk position "\d+" \(absolute position "(\d+)"\)/,
        (_, at) => `at byte ${Number(at) + this.#offset}`,
      );
      throw new SyntaxError(`session.json is not valid JSON: ${message}`);
    };
  }

  /** The file's byte from which the streaming parser read it; null while the layout held. */
  get parsedFrom(): number | null {
    return this.#parsedFrom;
  }

  /** Reads the next chunk; returns the operations it completes. */
  write(chunk: Uint8Array): [string, unknown][] {
    this.#read += chunk.length;
    if (this.#layout) this.#layout.write(chunk);
    else {
      this.#parsedFrom ??= this.#read - chunk.length;
      this.#parser.write(chunk);
    }
    return this.#handed();
  }

  /**
   * Ends the file; returns the operations its end completes (none in a whole file). Throws a
   * SyntaxError when it stopped before the session's last `}`.
   */
  end(): [string, unknown][] {
    this.#layout?.end();
    if (!this.#done) {
      throw new SyntaxError(
        `session.json is not valid JSON: it ends at byte ${this.#read} before the session does`,
      );
    }
    return this.#handed();
  }

  /** The operations read since the last call, handed on (and no longer held here). */
  #handed(): [string, unknown][] {
    const out = this.#out;
    this.#out = [];
    return out;
  }
}

const NL = 0x0a;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The longest piece the layout reader holds whole before it hands the file to the parser (a
 * timeline of 35,000 steps is 5 MB of it).
 */
const MAX_PIECE = 16 << 20;

/** The line `  "operations": {`, where the operations of Chronicle's layout begin. */
const OPERATIONS_LINE = new TextEncoder().encode(`  "operations": {`);

/**
 * Where the layout reader stands between two pieces: before the file's `{`, in the session's
 * object or in its operations, or past the session's `}`; `first` before a piece's first
 * member, then whether the last member ended with a comma (another must follow) or not (the
 * object must close).
 */
type Place = "start" | "top" | "operations" | "end";
type After = "first" | "comma" | "last";

/** What the layout reader tells its {@link SessionFileReader}. */
interface LayoutSink {
  /** An operation, or a top-level field, read whole. */
  took(where: "top" | "operations", key: string, value: unknown): void;
  /** The file was read to its end. */
  ended(): void;
  /**
   * The layout stops: the parser reads on from `bytes`, which begin at byte `at` of the file,
   * after `prefix`, text that leaves it where the file's bytes before `at` would have; `madeUp`
   * of the operations it reads first are the prefix's.
   */
  handOver(prefix: string, madeUp: number, at: number, bytes: Uint8Array): void;
}

/**
 * Reads `session.json` line by line while it keeps Chronicle's layout: the object's `{` alone on
 * the first line; each member (a top-level field, or an operation) starting with its quoted key
 * on a line of its own, indented two spaces (four in the operations), and either ending on that
 * line or opening a `{` or `[` there that closes alone on a line at the same indent; `"operations":
 * {` opening the operations; `}` closing each object alone on its line. A piece (one member's
 * lines) goes to `JSON.parse` as the one member of an object. Anything else hands the file, from
 * the start of the piece or line where it stopped, to the reader's streaming parser.
 */
class LayoutReader {
  #buf = new Uint8Array(1 << 16);
  #len = 0;
  /** The file's byte at `#buf[0]`. */
  #base = 0;
  /** Where the next line not yet looked at starts. */
  #line = 0;
  /** The open piece: where it starts, and its closing line's indent and character. */
  #piece = -1;
  #indent = 0;
  #closer = 0;
  #place: Place = "start";
  #after: After = "first";
  #decoder = new TextDecoder("utf-8", { fatal: true });

  constructor(private readonly reader: LayoutSink) {}

  write(chunk: Uint8Array): void {
    this.#append(chunk);
    for (;;) {
      if (this.#piece !== -1) {
        const read = this.#close();
        if (read === "stopped") return;
        if (read === "more") break;
        continue;
      }
      const nl = this.#buf.indexOf(NL, this.#line);
      if (nl === -1 || nl >= this.#len) break;
      if (!this.#take(this.#line, nl)) return;
      this.#line = nl + 1;
    }
    // a piece, or a line, too long to hold; a first line that is not `{` alone
    const held = this.#piece === -1 ? this.#line : this.#piece;
    if (this.#len - held > MAX_PIECE || (this.#place === "start" && this.#len - held > 1)) {
      this.#stop(held);
    }
  }

  /** The file ended: its last line, if it has no newline, is read as one. */
  end(): void {
    if (this.#piece !== -1) return void this.#stop(this.#piece);
    if (this.#line < this.#len && !this.#take(this.#line, this.#len)) return;
    this.#line = this.#len;
    if (this.#place === "end") this.reader.ended();
    else this.#stop(this.#piece === -1 ? this.#line : this.#piece);
  }

  #append(chunk: Uint8Array): void {
    // what is read already and not in an open piece is dropped first
    const keep = this.#piece === -1 ? this.#line : this.#piece;
    if (keep > 0) {
      this.#buf.copyWithin(0, keep, this.#len);
      this.#len -= keep;
      this.#base += keep;
      this.#line -= keep;
      if (this.#piece !== -1) this.#piece -= keep;
    }
    if (this.#len + chunk.length > this.#buf.length) {
      let size = this.#buf.length * 2;
      while (size < this.#len + chunk.length) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.#buf.subarray(0, this.#len));
      this.#buf = grown;
    }
    this.#buf.set(chunk, this.#len);
    this.#len += chunk.length;
  }

  /** Reads the line `[from, to)`; false when it handed the file over. */
  #take(from: number, to: number): boolean {
    const b = this.#buf;
    if (this.#place === "start") {
      if (to !== from + 1 || b[from] !== OPEN_BRACE) return this.#stop(from);
      this.#place = "top";
      return true;
    }
    if (this.#place === "end") {
      return this.#spaces(from, to) || this.#stop(from);
    }
    const indent = this.#place === "top" ? 2 : 4;
    const at = from + indent;
    if (
      this.#after !== "comma" && b[at - 2] === CLOSE_BRACE && this.#spaces(from, at - 2) &&
      (to === at - 1 || (to === at && b[at - 1] === COMMA && this.#place === "operations"))
    ) {
      // the object closes: the session (and the file), or its operations
      if (this.#place === "top") this.#place = "end";
      else {
        this.reader.took("top", "operations", {});
        this.#place = "top";
        this.#after = to === at ? "comma" : "last";
      }
      return true;
    }
    if (this.#after === "last" || at >= to || b[at] !== QUOTE || !this.#spaces(from, at)) {
      return this.#stop(from);
    }
    if (this.#place === "top" && this.#is(from, to, OPERATIONS_LINE)) {
      this.#place = "operations";
      this.#after = "first";
      return true;
    }
    const last = b[to - 1];
    if (last === OPEN_BRACE || last === OPEN_BRACKET) {
      this.#piece = from;
      this.#indent = indent;
      this.#closer = last === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
      return true;
    }
    return this.#member(from, last === COMMA ? to - 1 : to, to);
  }

  /**
   * Reads the open piece if its closing line has come: its closing character alone at its
   * indent, then a comma or not, then the line's end. Only such lines are looked for (the
   * piece's own JSON is `JSON.parse`'s to check), from the closing characters in the bytes.
   */
  #close(): "read" | "more" | "stopped" {
    const b = this.#buf;
    const indent = this.#indent;
    let at = b.indexOf(this.#closer, this.#line + indent);
    for (; at !== -1 && at < this.#len; at = b.indexOf(this.#closer, at + 1)) {
      const from = at - indent;
      if (b[from - 1] !== NL || !this.#spaces(from, at)) continue;
      const to = b[at + 1] === COMMA ? at + 2 : at + 1;
      if (to >= this.#len) {
        // its end is still to come
        this.#line = from;
        return "more";
      }
      if (b[to] !== NL) continue;
      this.#line = to + 1;
      return this.#member(this.#piece, at + 1, to) ? "read" : "stopped";
    }
    // the next closing line starts on the last line, complete or not, or after
    this.#line = Math.max(this.#line, b.lastIndexOf(NL, this.#len - 1) + 1);
    return "more";
  }

  /** The member in bytes `[from, end)`, its line ending at `to`; false when it handed over. */
  #member(from: number, end: number, to: number): boolean {
    let member: Record<string, unknown>;
    try {
      member = JSON.parse(`{${this.#decoder.decode(this.#buf.subarray(from, end))}}`);
    } catch {
      return this.#stop(from);
    }
    let key: string | undefined;
    let n = 0;
    for (const k in member) if (n++ === 0) key = k;
    if (n !== 1) return this.#stop(from);
    this.reader.took(this.#place === "top" ? "top" : "operations", key!, member[key!]);
    this.#piece = -1;
    this.#after = end < to ? "comma" : "last";
    return true;
  }

  /** Hands the file over to the parser from byte `from` of the buffer; returns false. */
  #stop(from: number): false {
    const made = this.#after === "first" ? "" : `"":0${this.#after === "comma" ? "," : ""}`;
    const prefix = this.#place === "start"
      ? ""
      : this.#place === "top"
      ? `{${made}`
      : this.#place === "operations"
      ? `{"operations":{${made}`
      : "{}";
    const madeUp = this.#place === "operations" && made ? 1 : 0;
    // (a view, not a copy: the reader is dropped with its buffer once it has handed over)
    this.reader.handOver(prefix, madeUp, this.#base + from, this.#buf.subarray(from, this.#len));
    return false;
  }

  /** Whether bytes `[from, to)` are all spaces. */
  #spaces(from: number, to: number): boolean {
    for (let i = from; i < to; i++) if (this.#buf[i] !== SPACE) return false;
    return true;
  }

  /** Whether bytes `[from, to)` are `line`. */
  #is(from: number, to: number, line: Uint8Array): boolean {
    if (to - from !== line.length) return false;
    for (let i = 0; i < line.length; i++) if (this.#buf[from + i] !== line[i]) return false;
    return true;
  }
}
