/**
 * @module
 * Canonical session files on disk: `sessions/<id>/{manifest.json, session.json,
 * payloads/<sha256>}`. Export writes into a temporary folder and renames it into place, manifest
 * last; verify checks the version, the manifest's checksum and every payload's SHA-256. Replay
 * and outside tools depend only on this contract.
 */
import {
  CANONICAL_SCHEMA_VERSION,
  type CanonicalSession,
  checkSchemaVersion,
  ChronicleError,
  completenessTally,
  isHashRef,
  isJsonObject,
  type Operation,
  type OperationPage,
  type PagedSession,
  sessionChecker,
  sha256Hex,
  type StreamedSession,
  throwProblems,
} from "../model/mod.ts";
import { SessionFileReader } from "./session_file.ts";
import { createHash } from "node:crypto";
import { textStream } from "../text_stream.ts";
import { collectEvery, collectGarbage } from "../gc.ts";

/** File operations export needs; modes are applied on creation. */
export interface ArtifactWriter {
  mkdir(path: string, mode: number): Promise<void>;
  /** Writes a new file (never over one): bytes, or a stream of them written as they come. */
  writeFile(
    path: string,
    data: Uint8Array | ReadableStream<Uint8Array>,
    mode: number,
  ): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
}

/**
 * Reads an exported tree without ever following a symlink or opening a FIFO or a device: a
 * path that is not a regular file (or, for `listDir`, a real folder) reads as missing.
 */
export interface ArtifactReader {
  /** A regular file's bytes; null when it is missing, not a regular file, or over `maxBytes`. */
  readFile(path: string, maxBytes?: number): Promise<Uint8Array | null>;
  /**
   * A regular file's bytes as they are read, each chunk a buffer of its own; null when it is
   * missing, not a regular file, or over `maxBytes` (reading throws when it grows past that).
   */
  stream(path: string, maxBytes?: number): Promise<AsyncIterable<Uint8Array> | null>;
  /** The regular files and folders in a real folder (symlinks and special files left out). */
  listDir(path: string): Promise<string[]>;
}

/** Largest manifest.json and session.json `verify` reads. */
export const MAX_MANIFEST_BYTES = 1 << 20;
export const MAX_SESSION_BYTES = 1 << 30;

export interface Manifest {
  schema_version: number;
  session_id: string;
  native_id: string;
  source: string;
  session_sha256: string;
  payload_count: number;
  payload_bytes: number;
  checkpoints: unknown[];
  issue_count: number;
  issues: CanonicalSession["issues"];
  completeness: Record<string, number>;
  replay_blockers: Record<string, number>;
}

const MAX_MANIFEST_ISSUES = 50;
const encoder = new TextEncoder();

/** The text of `session.json`: what the manifest's checksum covers. */
export function sessionJson(session: CanonicalSession): string {
  return JSON.stringify(session, null, 2) + "\n";
}

/**
 * A session as export writes it: whole (its operations in their own order, its completeness as
 * kept), or in pages (its outline's session and timeline, then its pages' operations, its
 * completeness counted as they are written, as `assembleSession` counts it).
 */
function pagesOf(session: CanonicalSession | PagedSession): {
  head: CanonicalSession;
  pages: PagedSession["pages"];
  whole: boolean;
} {
  if ("outline" in session) {
    const { outline } = session;
    return {
      head: { ...outline.session, timeline: outline.timeline },
      pages: session.pages,
      whole: false,
    };
  }
  const connection = new Map(session.timeline.map((t) => [t.op, t.connection]));
  const ops = Object.entries(session.operations).filter(([, op]) => op !== undefined)
    .map(([id, op]) => ({ id, connection: connection.get(id) ?? "", op }));
  return { head: session, pages: [ops], whole: true };
}

/**
 * {@link sessionJson}'s text in pieces, an operation at a time: the same characters, never one
 * string of the whole session (a session of 35,000 steps is 69 MB of it). `seen` hears each
 * operation as it is written.
 */
export function* sessionJsonChunks(
  session: CanonicalSession | PagedSession,
  seen?: (op: Operation) => void,
): Generator<string> {
  const { head, pages, whole } = pagesOf(session);
  const tally = whole ? null : completenessTally(head.connections);
  // (pages: a step written since the outline was read waits for the next export)
  const onTimeline = whole ? null : new Set(head.timeline.map((t) => t.op));
  // as JSON.stringify(value, null, 2) writes it, nested `depth` levels down
  const nested = (value: unknown, depth: number) =>
    JSON.stringify(value, null, 2).replaceAll("\n", "\n" + "  ".repeat(depth));
  const top = Object.entries(head).filter(([, v]) => v !== undefined);
  yield "{";
  for (const [i, [key, value]] of top.entries()) {
    yield `${i ? "," : ""}\n  ${JSON.stringify(key)}: `;
    if (key !== "operations") {
      // (after the operations, in a canonical session's order of keys)
      yield nested(key === "completeness" && tally ? tally.value : value, 1);
      continue;
    }
    let n = 0;
    for (const page of pages) {
      for (const rec of page) {
        if (onTimeline && !onTimeline.has(rec.id)) continue;
        yield `${n++ ? "," : "{"}\n    ${JSON.stringify(rec.id)}: ${nested(rec.op, 2)}`;
        tally?.add(rec);
        seen?.(rec.op);
      }
    }
    yield n ? "\n  }" : "{}";
  }
  yield top.length ? "\n}\n" : "}\n";
}

/**
 * Folder (and file) name for a session id: the id with anything not portable replaced by `_`,
 * the `:` after the agent included (Windows and many archive tools refuse it):
 * `claude-code_<uuid>`. `session.json` holds the id itself.
 */
export function sessionDirName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
}

/** Every payload hash a session refers to, including those in extensions. */
export function payloadHashes(session: CanonicalSession): Set<string> {
  const out = new Set<string>();
  for (const op of Object.values(session.operations)) addPayloadHashes(op, out);
  return out;
}

/** Adds the payload hashes an operation refers to, including those in its extensions. */
function addPayloadHashes(op: Operation, out: Set<string>): void {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (
        typeof o.sha256 === "string" && typeof o.size === "number" && Object.keys(o).length === 2
      ) {
        out.add(o.sha256);
      } else Object.values(o).forEach(visit);
    }
  };
  if (isHashRef(op.request)) out.add(op.request.sha256);
  if (isHashRef(op.response)) out.add(op.response.sha256);
  if (op.extensions) visit(op.extensions);
}

/** What a manifest counts of a session's operations. */
interface OpCounts {
  completeness: Record<string, number>;
  blockers: Record<string, number>;
}

function countOp(op: Operation, counts: OpCounts): void {
  counts.completeness[op.completeness] = (counts.completeness[op.completeness] ?? 0) + 1;
  for (const b of op.replay.blockers) counts.blockers[b] = (counts.blockers[b] ?? 0) + 1;
}

/**
 * The manifest of an exported session (`counts`: of its operations). It holds no time of
 * export: the same session always exports to the same bytes, so an export moved to another
 * machine and exported again is identical.
 */
function buildManifest(
  head: CanonicalSession,
  counts: OpCounts,
  files: { sessionSha256: string; payloadBytes: number; payloadCount: number },
): Manifest {
  return {
    schema_version: CANONICAL_SCHEMA_VERSION,
    session_id: head.session.id,
    native_id: head.session.native_id,
    source: head.session.source,
    session_sha256: files.sessionSha256,
    payload_count: files.payloadCount,
    payload_bytes: files.payloadBytes,
    checkpoints: head.provenance.epochs.flatMap((e) => e.checkpoints),
    issue_count: head.issues.length,
    issues: head.issues.slice(0, MAX_MANIFEST_ISSUES),
    completeness: counts.completeness,
    replay_blockers: counts.blockers,
  };
}

/**
 * Writes one session under `outDir/sessions/<id>/`, replacing an earlier export atomically.
 * Returns the final folder.
 */
export async function exportSession(
  session: CanonicalSession | PagedSession,
  io: {
    writer: ArtifactWriter;
    readPayload: (sha256: string) => Uint8Array | null;
    /**
     * The order to read payloads in (the store's: each of its frames inflated once); default
     * by hash. The files written are the same either way.
     */
    readOrder?: (sha256s: string[]) => string[];
  },
  outDir: string,
): Promise<string> {
  const { writer } = io;
  const sessionsDir = `${outDir}/sessions`;
  await writer.mkdir(outDir, 0o700);
  await writer.mkdir(sessionsDir, 0o700);
  const { head } = pagesOf(session);
  const name = sessionDirName(head.session.id);
  const tmp = `${sessionsDir}/.tmp-${name}-${crypto.randomUUID().slice(0, 8)}`;
  await writer.mkdir(tmp, 0o700);
  await writer.mkdir(`${tmp}/payloads`, 0o700);
  try {
    // session.json first, written as it is made and hashed as it goes; what it refers to and
    // what the manifest counts are gathered on the way
    const hash = createHash("sha256");
    const refs = new Set<string>();
    const counts: OpCounts = { completeness: {}, blockers: {} };
    const chunks = sessionJsonChunks(session, (op) => {
      addPayloadHashes(op, refs);
      countOp(op, counts);
    });
    const body = textStream(chunks, { bytes: (bytes) => hash.update(bytes) });
    await writer.writeFile(`${tmp}/session.json`, body, 0o600);
    let bytes = 0;
    let count = 0;
    const hashes = [...refs].sort();
    // the frames inflated for them are garbage once written
    const written = collectEvery(64 << 20);
    for (const sha of io.readOrder?.(hashes) ?? hashes) {
      const data = io.readPayload(sha);
      if (!data) continue; // recorded as missing by verify; never fabricated
      await writer.writeFile(`${tmp}/payloads/${sha}`, data, 0o600);
      bytes += data.byteLength;
      count++;
      written(data.byteLength);
    }
    const manifest = buildManifest(head, counts, {
      sessionSha256: hash.digest("hex"),
      payloadBytes: bytes,
      payloadCount: count,
    });
    await writer.writeFile(
      `${tmp}/manifest.json`,
      encoder.encode(JSON.stringify(manifest, null, 2) + "\n"),
      0o600,
    );
    const target = `${sessionsDir}/${name}`;
    if (await writer.exists(target)) {
      const old = `${sessionsDir}/.old-${name}-${crypto.randomUUID().slice(0, 8)}`;
      await writer.rename(target, old);
      await writer.rename(tmp, target);
      await writer.remove(old);
    } else {
      await writer.rename(tmp, target);
    }
    return target;
  } catch (e) {
    await writer.remove(tmp).catch(() => {});
    throw e;
  }
}

export interface VerifyReport {
  ok: boolean;
  sessions: VerifiedEntry[];
}

interface VerifiedEntry {
  id: string;
  dir: string;
  ok: boolean;
  payloads: number;
  problems: string[];
}

/** Checks every exported session under `dir` (a folder holding `sessions/`, or one session). */
export async function verifyArtifacts(reader: ArtifactReader, dir: string): Promise<VerifyReport> {
  const dirs = await sessionDirs(reader, dir);
  const report: VerifyReport = { ok: dirs.length > 0, sessions: [] };
  for (const d of dirs) {
    const entry = verifiedEntry(d);
    report.sessions.push(entry);
    await verifySession(reader, entry, { payloads: true });
    collectGarbage(); // what its session.json and payloads left
  }
  report.ok = report.ok && report.sessions.every((s) => s.ok);
  return report;
}

/** The session folders under `dir`: itself when it holds a manifest, else `dir/sessions/*`. */
async function sessionDirs(reader: ArtifactReader, dir: string): Promise<string[]> {
  if (await reader.readFile(`${dir}/manifest.json`, MAX_MANIFEST_BYTES)) return [dir];
  const names = await reader.listDir(`${dir}/sessions`);
  return names.filter((n) => !n.startsWith(".")).map((n) => `${dir}/sessions/${n}`);
}

const verifiedEntry = (d: string): VerifiedEntry => ({
  id: d.slice(d.lastIndexOf("/") + 1),
  dir: d,
  ok: true,
  payloads: 0,
  problems: [],
});

/** What verify learnt of a session that passed, for an import to go on with. */
interface VerifiedSession {
  manifest: Manifest;
  head: CanonicalSession;
  times: Map<string, number>;
  /** The payloads it names. */
  refs: Set<string>;
}

/**
 * Verifies one exported session into `entry`: its `session.json` is read once, as it streams
 * in, hashed, parsed and checked an operation at a time (a session of 35,000 steps parsed whole
 * held 316 MiB); then (with `payloads`) each payload it names. Returns what an import needs
 * when it passes.
 */
async function verifySession(
  reader: ArtifactReader,
  entry: VerifiedEntry,
  options: { payloads: boolean },
): Promise<VerifiedSession | null> {
  const d = entry.dir;
  const fail = (msg: string) => failed(entry, msg);
  const manifestBytes = await reader.readFile(`${d}/manifest.json`, MAX_MANIFEST_BYTES);
  const sessionBytes = await reader.stream(`${d}/session.json`, MAX_SESSION_BYTES);
  if (!manifestBytes) fail("manifest.json is missing (or not a regular file)");
  if (!sessionBytes) fail("session.json is missing (or not a regular file)");
  if (!manifestBytes || !sessionBytes) return null;
  let manifest: Manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  } catch {
    fail("manifest.json is not valid JSON");
    return null;
  }
  if (manifest.schema_version !== CANONICAL_SCHEMA_VERSION) {
    fail(
      `manifest schema_version ${
        JSON.stringify(manifest.schema_version)
      } is not ${CANONICAL_SCHEMA_VERSION}`,
    );
  }
  const refs = new Set<string>();
  const times = new Map<string, number>();
  const read = await readSessionFile(sessionBytes, (id, op) => {
    addPayloadHashes(op, refs);
    if (typeof op.ts_ms === "number") times.set(id, op.ts_ms);
  });
  if (read.sha256 !== manifest.session_sha256) {
    fail("session.json does not match the checksum in manifest.json");
  }
  if (!read.head) {
    fail(read.error.message);
    return null;
  }
  const head = read.head;
  entry.id = head.session.id;
  if (options.payloads) await checkPayloads(reader, entry, { manifest, refs });
  return entry.ok ? { manifest, head, times, refs } : null;
}

/** Reads and checks each payload a session names (`refs`), its problems into `entry`. */
async function checkPayloads(
  reader: ArtifactReader,
  entry: VerifiedEntry,
  session: Pick<VerifiedSession, "manifest" | "refs">,
): Promise<void> {
  const payloads = await payloadsOf(reader, entry.dir, session.manifest);
  for (const sha of session.refs) {
    const read = await payloads.read(sha);
    if (typeof read === "string") failed(entry, read);
    else entry.payloads++;
  }
  const counted = payloads.counted();
  if (counted && entry.ok) failed(entry, counted);
}

/** Marks a verified session failed, for `problem`. */
function failed(entry: VerifiedEntry, problem: string): void {
  entry.ok = false;
  entry.problems.push(problem);
}

/**
 * An exported session's payloads read as the manifest allows: each one's bytes once its SHA-256
 * is checked, or the problem with it, in a sentence (missing, larger than the manifest's
 * payload bytes allow, not matching its hash). `counted` is the problem with how many were
 * read, once every one has been (null when it is the manifest's count).
 */
async function payloadsOf(reader: ArtifactReader, dir: string, manifest: Manifest) {
  const present = new Set(await reader.listDir(`${dir}/payloads`));
  // the manifest says how many payload bytes there are: never read more than that
  let budget = Number.isSafeInteger(manifest.payload_bytes) && manifest.payload_bytes >= 0
    ? manifest.payload_bytes
    : 0;
  // each payload is counted once, however many pages name it
  const sizes = new Map<string, number>();
  return {
    async read(sha: string): Promise<Uint8Array | string> {
      if (!present.has(sha)) return `payload ${sha} is missing (or not a regular file)`;
      const known = sizes.get(sha);
      const data = await reader.readFile(`${dir}/payloads/${sha}`, known ?? budget);
      if (!data) return `payload ${sha} is larger than the manifest's payload bytes allow`;
      if (known === undefined) budget -= data.length;
      if (sha256Hex(data) !== sha) return `payload ${sha} does not match its SHA-256`;
      sizes.set(sha, data.length);
      return data;
    },
    counted: (): string | null =>
      manifest.payload_count === sizes.size
        ? null
        : `manifest lists ${manifest.payload_count} payloads, found ${sizes.size}`,
  };
}

/** A `session.json` read through ({@link readSessionFile}): its checksum, its head or what is wrong. */
export type CheckedSessionFile =
  & { sha256: string }
  & ({ head: CanonicalSession; error?: undefined } | { head?: undefined; error: Error });

/**
 * Reads a `session.json` stream through, hashed, parsed and checked an operation at a time
 * (validate.ts's `sessionChecker`: the problems `readCanonicalSession` finds), each operation
 * that is an object handed to `each` and dropped; then its head is checked. `error` is the
 * first thing wrong: a file that is not JSON (a SyntaxError), a read that failed, another
 * schema version, or the session's problems. Verify and a replay from exported files read it so.
 */
export async function readSessionFile(
  bytes: AsyncIterable<Uint8Array>,
  each: (id: string, op: Operation) => void,
): Promise<CheckedSessionFile> {
  const file = sessionFile(bytes);
  const check = sessionChecker();
  try {
    for await (const [id, op] of file.operations()) {
      check.operation(id, op);
      if (isJsonObject(op)) each(id, op as unknown as Operation);
    }
    const head = file.head();
    checkSchemaVersion(head);
    throwProblems(check.finish(head));
    return { sha256: file.sha256(), head: head as unknown as CanonicalSession };
  } catch (e) {
    return { sha256: file.sha256(), error: e as Error };
  }
}

/**
 * A `session.json` stream: `operations()` parses it as it is read and hashes its bytes; once it
 * is done (or stopped by a file that is not JSON: the rest is still hashed), `sha256()` is the
 * file's checksum and `head()` its head (`operations` `{}` when they were an object).
 */
function sessionFile(bytes: AsyncIterable<Uint8Array>) {
  const reader = new SessionFileReader();
  const hash = createHash("sha256");
  let sha = "";
  return {
    async *operations(): AsyncGenerator<[string, unknown]> {
      const chunks = bytes[Symbol.asyncIterator]();
      try {
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
          hash.update(next.value);
          yield* reader.write(next.value);
        }
        yield* reader.end();
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
          hash.update(next.value);
        }
        throw e;
      } finally {
        sha = hash.digest("hex");
      }
    },
    sha256: () => sha,
    head: (): Record<string, unknown> =>
      reader.operationsFound === "object" ? { ...reader.head, operations: {} } : reader.head,
  };
}

/** What `importArtifacts` did with one exported session. */
export interface ImportedArtifact {
  id: string;
  dir: string;
  /** What the sink answered (`imported`, `unchanged`, ...), or `failed`. */
  outcome: string;
  problems: string[];
}

/** Where `importArtifacts` puts verified sessions: the store. */
export interface CanonicalSink {
  /**
   * What the store would come to without the session (see the store's `canonicalSkip`): its
   * answer stands, and neither the session nor its payloads are read again for it.
   */
  skip?(sessionId: string, sessionSha256: string): string | null;
  /** Stores a session as its pages are read; what it came to (`imported`, `unchanged`, ...). */
  put(session: StreamedSession): Promise<string>;
}

/** The most operations, and payload bytes, a page of an imported session holds. */
const PAGE_OPERATIONS = 512;
const PAGE_PAYLOAD_BYTES = 16 << 20;

/**
 * Puts each exported session under `dir` into a sink (the store), verified as `verifyArtifacts`
 * verifies it: its `session.json` before anything is put (and its checksum again once it is
 * read a second time, for the put), its payloads as the put reads them, each once; a session
 * that fails is not put (the store's transaction undoes the pages put before); one the sink
 * skips (unchanged, forgotten, kept from local logs) has its payloads verified all the same. A
 * session is never held whole: its `session.json` is read as it streams in, its operations and
 * payloads a page at a time.
 */
export async function importArtifacts(
  reader: ArtifactReader,
  dir: string,
  sink: CanonicalSink,
): Promise<{ ok: boolean; sessions: ImportedArtifact[] }> {
  const dirs = await sessionDirs(reader, dir);
  const sessions: ImportedArtifact[] = [];
  for (const d of dirs) {
    const v = verifiedEntry(d);
    // its payloads are checked as the import reads them (each read once)
    const verified = await verifySession(reader, v, { payloads: false });
    collectGarbage(); // what reading its session.json left
    const entry: ImportedArtifact = { id: v.id, dir: d, outcome: "failed", problems: v.problems };
    sessions.push(entry);
    if (!verified) continue;
    const { manifest, head, times } = verified;
    try {
      const early = sink.skip?.(manifest.session_id, manifest.session_sha256);
      if (early) {
        // not stored, but its payloads are verified all the same
        await checkPayloads(reader, v, verified);
        if (v.ok) entry.outcome = early;
        continue;
      }
      entry.outcome = await sink.put({
        head,
        times,
        pages: importPages(reader, d, manifest),
        sessionSha256: manifest.session_sha256,
      });
    } catch (e) {
      entry.problems = [...entry.problems, (e as Error).message];
    }
  }
  return { ok: dirs.length > 0 && sessions.every((s) => s.outcome !== "failed"), sessions };
}

/**
 * The pages of an exported session's operations, each with its payloads: verify's checks of
 * the payloads made as they are read (each read once), and the file's checksum again at its end.
 */
async function* importPages(
  reader: ArtifactReader,
  dir: string,
  manifest: Manifest,
): AsyncGenerator<OperationPage> {
  const bytes = await reader.stream(`${dir}/session.json`, MAX_SESSION_BYTES);
  const changed = () =>
    new ChronicleError("checksum_mismatch", "session.json changed while importing");
  if (!bytes) throw changed();
  const file = sessionFile(bytes);
  const payloads = await payloadsOf(reader, dir, manifest);
  let page: OperationPage = { operations: [], payloads: new Map() };
  let pageBytes = 0;
  for await (const [id, op] of file.operations()) {
    const refs = new Set<string>();
    addPayloadHashes(op as Operation, refs);
    for (const sha of refs) {
      if (page.payloads.has(sha)) continue;
      const data = await payloads.read(sha);
      if (typeof data === "string") throw new ChronicleError("checksum_mismatch", data);
      page.payloads.set(sha, data);
      pageBytes += data.byteLength;
    }
    page.operations.push([id, op as Operation]);
    if (page.operations.length >= PAGE_OPERATIONS || pageBytes >= PAGE_PAYLOAD_BYTES) {
      yield page;
      page = { operations: [], payloads: new Map() };
      pageBytes = 0;
    }
  }
  if (file.sha256() !== manifest.session_sha256) throw changed();
  const counted = payloads.counted();
  if (counted) throw new ChronicleError("checksum_mismatch", counted);
  if (page.operations.length) yield page;
}
