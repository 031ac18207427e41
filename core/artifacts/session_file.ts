/**
 * `session.json` read as it streams in (a session of 35,000 steps is 69 MB of it, and parsed
 * whole it held 300 MiB): its head, every top-level field but the operations, and its
 * operations one at a time, never the session whole. `@streamparser/json` parses it (a key
 * `__proto__` an own key, as `JSON.parse` makes it); each operation is dropped once handed on.
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
        if (!Array.isArray(parent)) this.#out.push([String(key), value]);
        delete (parent as Record<string, unknown>)[key as string];
      } else if (key === "operations") {
        this.operationsFound = isJsonObject(value) ? "object" : "other";
      } else this.head[key as string] = value;
    };
    parser.onEnd = () => this.#done = true;
    parser.onError = (e) => {
      // (the library's own errors; a SyntaxError is this reader's, passed through once more)
      throw e instanceof SyntaxError
        ? e
        : new SyntaxError(`session.json is not valid JSON: ${e.message}`);
    };
  }

  /** Reads the next chunk; returns the operations it completes. */
  write(chunk: Uint8Array): [string, unknown][] {
    this.#read += chunk.length;
    this.#parser.write(chunk);
    const out = this.#out;
    this.#out = [];
    return out;
  }

  /** Ends the file: throws a SyntaxError when it stopped before the session's last `}`. */
  end(): void {
    if (!this.#done) {
      throw new SyntaxError(
        `session.json is not valid JSON: it ends at byte ${this.#read} before the session does`,
      );
    }
  }
}
