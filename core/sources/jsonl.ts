/**
 * Streaming JSON Lines: byte-accurate line ranges, a checkpoint to resume from, and a
 * half-written last line left for the next pass. Never reads a whole file into memory.
 */
import { collectGarbage } from "../gc.ts";
import { sha256Hex } from "../model/payload.ts";
import type { JsonlCheckpoint } from "../model/types.ts";
import { cutOutcome, cutterAfter, type JsonCutter, KEEP_TEXT_BYTES } from "./json_cut.ts";
import type { FileStat, SourceFs } from "./types.ts";

export interface JsonlLine {
  /** 1-based line number. */
  line: number;
  /** Byte range of the line, end exclusive and without the newline. */
  start: number;
  end: number;
  /** The parsed value; absent with no `error` for a blank line. */
  value?: unknown;
  error?: string;
  /**
   * Set when the line was longer than the longest read whole and its value was read with its
   * long texts cut (json_cut.ts): why, and how much was left out. A loss of part of the line.
   */
  cut?: string;
}

export interface ReadJsonlOptions {
  offset?: number;
  /** Line number of the line at `offset` (1-based). */
  line?: number;
  /** Accept an unterminated last line when it parses (the file is finished). Default false. */
  closed?: boolean;
  /**
   * Lines longer than this are read with their long texts cut, or skipped as a loss when they
   * come to more than this or `MAX_CUT_BYTES` even cut. Default {@link MAX_LINE_BYTES}.
   */
  maxLineBytes?: number;
  /** How much of each text a line longer than `maxLineBytes` keeps. Default {@link KEEP_TEXT_BYTES}. */
  keepTextBytes?: number;
  /** Lines longer than this are decoded as they come. Default {@link LONG_LINE_BYTES}. */
  longLineBytes?: number;
}

/**
 * The longest line read whole: one line is decoded, parsed and its payloads hashed, compressed
 * and indexed at once, so a longer one (a 200 MB tool result) would take several times its size
 * in memory. It is read through a {@link JsonCutter} instead, as it comes, each of its texts cut
 * after {@link KEEP_TEXT_BYTES}: the record is kept, the cut is a loss window, and import stays
 * under 300 MB. A line that comes to more than `MAX_CUT_BYTES` even cut is skipped as a loss.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/**
 * A line longer than this, and no longer than {@link MAX_LINE_BYTES}, is decoded as it comes,
 * a chunk at a time, and never held as bytes: a pasted 26 MiB log in a prompt was held four
 * times in the worker at once (its pieces, their join, its string and the parsed text), and
 * the allocator kept what the pieces and the join took. Its string is collected before its
 * text is used (`collectGarbage`), as are its parts before it is parsed.
 */
export const LONG_LINE_BYTES = 8 * 1024 * 1024;

const NL = 10;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Hands every complete line from `offset` to `visit`, in order, until `visit` returns `false`:
 * the read stops after that line, and the result is `true` (stopped). `state.offset` and
 * `state.line` then say where the next read resumes: after the last line visited, or, after a
 * whole read, before an unfinished last line.
 *
 * A callback, not an async generator: a generator costs a promise per line, 2-3% of the import
 * worker's time on a 300 MB Codex corpus (300k lines). Chunks are awaited, lines are not.
 */
export async function readJsonl(
  fs: SourceFs,
  path: string,
  state: { offset: number; line: number; bytesRead: number },
  options: ReadJsonlOptions,
  visit: (line: JsonlLine) => boolean,
): Promise<boolean> {
  const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
  const keep = options.keepTextBytes ?? KEEP_TEXT_BYTES;
  const long = options.longLineBytes ?? LONG_LINE_BYTES;
  let chunkPos = state.offset; // file offset of the current chunk's first byte
  let lineStart = state.offset; // file offset of the current line's first byte
  let lineNo = state.line;
  let pending: Uint8Array[] = [];
  let pendingLen = 0;
  /** The current line's cutter, once it is longer than `maxLine`: it holds the line, not `pending`. */
  let cutter: JsonCutter | null = null;
  /** The current line decoded so far, once it is longer than {@link LONG_LINE_BYTES}: it holds the line, not `pending`. */
  let texts: string[] | null = null;
  /** Decodes a long line's chunks as they come (`stream`: a character may fall across two). */
  const longDecoder = new TextDecoder();
  /** The last bytes a long line's decoder was given: a character it waits to end is among them. */
  const tail = new Uint8Array(3);
  let tailLen = 0;
  const cut = () => {
    let read: Uint8Array[] = pending;
    if (texts) {
      read = encodedAgain(texts, pendingLen, tail.subarray(0, tailLen));
      longDecoder.decode(); // what it waited for is in `read`: the next line starts afresh
    }
    const c = cutterAfter(read, maxLine, keep);
    pending = [];
    pendingLen = 0;
    texts = null;
    return c;
  };
  const decodeAs = (piece: Uint8Array, stream: boolean) => {
    texts!.push(longDecoder.decode(piece, { stream }));
    tailLen = keepTail(tail, tailLen, piece);
  };
  for await (const chunk of fs.readFrom(path, state.offset)) {
    state.bytesRead += chunk.byteLength;
    let from = 0;
    while (from < chunk.byteLength) {
      const nl = chunk.indexOf(NL, from);
      if (nl === -1) {
        if (cutter) cutter.push(chunk.subarray(from));
        else {
          if (texts) decodeAs(chunk.subarray(from), true);
          else pending.push(chunk.slice(from)); // the next chunk reuses this one's buffer
          pendingLen += chunk.byteLength - from;
          if (pendingLen > maxLine) cutter = cut();
          else if (!texts && pendingLen > long) {
            texts = [];
            tailLen = 0;
            for (const p of pending) decodeAs(p, true);
            pending = [];
          }
        }
        break;
      }
      const end = chunkPos + nl;
      const piece = chunk.subarray(from, nl);
      let line: JsonlLine;
      if (cutter || end - lineStart > maxLine) {
        cutter ??= cut();
        cutter.push(piece);
        line = cutLine(lineNo, lineStart, end, cutter, maxLine);
      } else if (texts) {
        decodeAs(piece, false);
        line = parseLong(lineNo, lineStart, end, texts);
        texts = null;
        collectGarbage(); // the line's string, before its text is used
      } else if (pending.length) {
        const bytes = concat(pending, piece, pendingLen + piece.byteLength);
        // (the pieces go before the line is parsed: a 28 MiB line's are 28 MiB more meanwhile)
        pending = [];
        line = parseLine(lineNo, lineStart, end, bytes);
      } else line = parseLine(lineNo, lineStart, end, piece);
      lineStart = end + 1;
      lineNo++;
      state.offset = lineStart;
      state.line = lineNo;
      if (!visit(line)) return true;
      pending = [];
      pendingLen = 0;
      cutter = null;
      texts = null;
      from = nl + 1;
    }
    chunkPos += chunk.byteLength;
  }
  // an over-long unfinished last line waits for its end, like any other one
  if (pendingLen > 0 && !cutter && options.closed) {
    const at = lineStart + pendingLen;
    const parsed = texts
      ? (decodeAs(EMPTY, false), parseLong(lineNo, lineStart, at, texts))
      : parseLine(lineNo, lineStart, at, concat(pending, EMPTY, pendingLen));
    if (!parsed.error) {
      state.offset = lineStart + pendingLen;
      state.line = lineNo + 1;
      return !visit(parsed);
    }
  }
  return false;
}

const EMPTY = new Uint8Array(0);

/** `tail` (its first `used` bytes) followed by `piece`, as far as its last 3 bytes; their count. */
function keepTail(tail: Uint8Array, used: number, piece: Uint8Array): number {
  const n = piece.byteLength;
  if (n >= 3) {
    tail.set(piece.subarray(n - 3));
    return 3;
  }
  const keep = Math.min(used, 3 - n);
  tail.copyWithin(0, used - keep, used);
  tail.set(piece, keep);
  return keep + n;
}

/**
 * The bytes of a line decoded as it came (`texts`, from `read` bytes), for a cutter once the
 * line is found too long: its texts encoded again, and the bytes of a character its decoder was
 * still waiting to end (the last of `tail`). The same bytes, for valid UTF-8; an invalid byte
 * comes back as U+FFFD.
 */
function encodedAgain(texts: readonly string[], read: number, tail: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = texts.map((t) => encoder.encode(t));
  const waiting = read - out.reduce((n, b) => n + b.byteLength, 0);
  if (waiting > 0) out.push(tail.subarray(Math.max(0, tail.byteLength - waiting)));
  return out;
}

/** An over-long line, from what its cutter made of it. */
function cutLine(
  line: number,
  start: number,
  end: number,
  cutter: JsonCutter,
  maxLine: number,
): JsonlLine {
  const made = cutOutcome(cutter, "line", maxLine);
  if ("error" in made) return { line, start, end, error: made.error };
  const read = parseLine(line, start, end, made.bytes);
  if (!read.error) read.cut = made.reason;
  return read;
}

function parseLine(line: number, start: number, end: number, bytes: Uint8Array): JsonlLine {
  return parseText(line, start, end, decoder.decode(bytes));
}

/** A long line from its decoded parts, which are let go, and collected, before it is parsed. */
function parseLong(line: number, start: number, end: number, parts: string[]): JsonlLine {
  const text = parts.join("");
  parts.length = 0;
  collectGarbage();
  return parseText(line, start, end, text);
}

function parseText(line: number, start: number, end: number, text: string): JsonlLine {
  if (text.endsWith("\r")) text = text.slice(0, -1);
  // Blank lines carry nothing and lose nothing: the caller skips a line without value or error.
  if (text.trim() === "") return { line, start, end };
  try {
    return { line, start, end, value: JSON.parse(text) };
  } catch {
    return { line, start, end, error: "invalid JSON" };
  }
}

function concat(parts: Uint8Array[], last: Uint8Array, total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  out.set(last, at);
  return out;
}

export interface ResumePlan {
  mode: "unchanged" | "append" | "full";
  offset: number;
  line: number;
  stat: FileStat;
}

/**
 * Decides how to read a JSONL file given its last checkpoint: unchanged costs one stat; an
 * appended file resumes at the offset when the bytes before it are the same; a truncated or
 * replaced file is read from zero.
 */
export async function planJsonlResume(
  fs: SourceFs,
  path: string,
  checkpoint: JsonlCheckpoint | undefined,
): Promise<ResumePlan | null> {
  const stat = await fs.stat(path);
  if (!stat || !stat.isFile) return null;
  if (!checkpoint) return { mode: "full", offset: 0, line: 1, stat };
  if (statMatches(stat, checkpoint)) {
    return { mode: "unchanged", offset: checkpoint.offset, line: checkpoint.line, stat };
  }
  if (
    stat.size >= checkpoint.offset && (checkpoint.inode === null || stat.ino === checkpoint.inode)
  ) {
    const tail = await tailHash(fs, path, checkpoint.offset);
    if (tail === checkpoint.tail_sha256) {
      return {
        mode: stat.size === checkpoint.offset ? "unchanged" : "append",
        offset: checkpoint.offset,
        line: checkpoint.line,
        stat,
      };
    }
  }
  return { mode: "full", offset: 0, line: 1, stat };
}

/** True when a file's stat is exactly the one its checkpoint recorded: nothing to read. */
export function statMatches(stat: FileStat, checkpoint: JsonlCheckpoint): boolean {
  return stat.isFile && stat.size === checkpoint.size && stat.mtimeMs === checkpoint.mtime_ms &&
    stat.ino === checkpoint.inode && !checkpoint.more;
}

/** SHA-256 of the up to 4 KiB before `offset`. */
async function tailHash(fs: SourceFs, path: string, offset: number): Promise<string> {
  const from = Math.max(0, offset - 4096);
  return sha256Hex(await fs.readRange(path, from, offset - from));
}

export async function makeJsonlCheckpoint(
  fs: SourceFs,
  path: string,
  stat: FileStat,
  offset: number,
  line: number,
  more = false,
): Promise<JsonlCheckpoint> {
  return {
    ...(more ? { more: true as const } : {}),
    kind: "jsonl",
    file: path,
    inode: stat.ino,
    size: stat.size,
    mtime_ms: stat.mtimeMs,
    offset,
    tail_sha256: await tailHash(fs, path, offset),
    line,
  };
}
