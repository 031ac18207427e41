/**
 * Replay from canonical artifacts (`chronicle export --format canonical`): the session is read
 * from `session.json` (checked against the manifest's checksum) and every payload is checked
 * against its SHA-256 before use; one that fails is treated as missing, never used.
 */
import {
  type ArtifactReader,
  MAX_MANIFEST_BYTES,
  MAX_SESSION_BYTES,
  readSessionFile,
} from "../artifacts/mod.ts";
import {
  type CanonicalSession,
  ChronicleError,
  type Operation,
  type PayloadRef,
  sha256Hex,
} from "../model/mod.ts";
import { type PayloadText, PLAN_TEXT_CHARS, planRole } from "./plan.ts";

const decoder = new TextDecoder();

export interface ArtifactSession {
  /** The session's head, with the operations a replay plans with (see {@link planned}). */
  session: CanonicalSession;
  /**
   * The session a page of its timeline at a time (for `planInParts`), the payloads a plan reads
   * (each step's request, and a command's recorded result, to tell of a bad one before the run)
   * read and checked as it is given: {@link text} reads the payloads of the page given last.
   * Read once: each operation moves from {@link session} to its page.
   */
  parts(): AsyncIterable<CanonicalSession>;
  /** Payload text by ref; null for a missing payload or one that fails its hash. */
  text: PayloadText;
  /**
   * A payload's text, read from its file and checked again as a step runs or is previewed
   * (`ReplayDeps.payload`; its page read it once, to tell of a problem before the run).
   */
  payload(ref: PayloadRef): Promise<string | null>;
  /** Payloads read so far that were missing or did not match their hash, as sentences. */
  problems: string[];
}

/** Steps of the timeline a part holds, with their payloads (default of `partSteps`). */
const PART_STEPS = 500;

/**
 * An operation as a replay's plan reads it ({@link planRole}): a file change or a command whole,
 * the opening of a thinking or a reply; null for one it does not read.
 */
function planned(op: Operation): Operation | null {
  const role = planRole(op);
  if (role === "reasoning") {
    return op.text ? { ...op, text: op.text.slice(0, PLAN_TEXT_CHARS) } : null;
  }
  return role ? op : null;
}

/**
 * Loads one exported session: `dir` is a session folder (with manifest.json) or an export
 * folder holding exactly one session under `sessions/`. Its `session.json` is read as it
 * streams in, hashed and checked an operation at a time (a session of 35,000 steps parsed
 * whole held 316 MiB), and only the operations a replay plans with are kept, with the
 * payloads they name, each checked against its SHA-256.
 */
export async function loadArtifactSession(
  reader: ArtifactReader,
  dir: string,
  { partSteps = PART_STEPS, accept }: {
    partSteps?: number;
    /**
     * Told the session's id and native id, and throws to refuse it: first as the manifest
     * names them, before `session.json` is read, then as `session.json` says.
     */
    accept?: (ids: { id: string; native_id: string }) => void;
  } = {},
): Promise<ArtifactSession> {
  let folder = dir;
  if (!(await reader.readFile(`${dir}/manifest.json`))) {
    const names = (await reader.listDir(`${dir}/sessions`)).filter((n) => !n.startsWith("."));
    if (names.length !== 1) {
      throw new ChronicleError(
        "usage",
        names.length
          ? `${dir} holds ${names.length} sessions: pass one session folder (${dir}/sessions/<id>)`
          : `${dir} holds no exported session (no manifest.json, no sessions/)`,
      );
    }
    folder = `${dir}/sessions/${names[0]}`;
  }
  const lacks = () =>
    new ChronicleError("invalid_session", `${folder} lacks manifest.json or session.json`);
  const manifestBytes = await reader.readFile(`${folder}/manifest.json`, MAX_MANIFEST_BYTES);
  if (!manifestBytes) throw lacks();
  let manifest: { session_sha256?: string; session_id?: unknown; native_id?: unknown };
  try {
    manifest = JSON.parse(decoder.decode(manifestBytes));
  } catch {
    throw new ChronicleError("invalid_session", `${folder}/manifest.json is not valid JSON`);
  }
  if (typeof manifest.session_id === "string" && typeof manifest.native_id === "string") {
    accept?.({ id: manifest.session_id, native_id: manifest.native_id });
  }
  const sessionBytes = await reader.stream(`${folder}/session.json`, MAX_SESSION_BYTES);
  if (!sessionBytes) throw lacks();
  const operations: Record<string, Operation> = {};
  const read = await readSessionFile(sessionBytes, (id, value) => {
    const op = planned(value);
    if (op) operations[id] = op;
  });
  if (read.sha256 !== manifest.session_sha256) {
    throw new ChronicleError(
      "checksum_mismatch",
      `${folder}/session.json does not match the checksum in manifest.json`,
    );
  }
  if (read.error instanceof SyntaxError) {
    // (the reader's messages name session.json: here with its folder)
    throw new ChronicleError("invalid_session", `${folder}/${read.error.message}`, {
      cause: read.error,
    });
  }
  if (!read.head) throw read.error;
  const session: CanonicalSession = { ...read.head, operations };
  accept?.({ id: session.session.id, native_id: session.session.native_id });
  const problems: string[] = [];
  let page = new Map<string, string | null>();
  // a payload named on several pages is read again for each, and told of once
  const told = new Set<string>();
  const payload = async (sha: string): Promise<string | null> => {
    const tell = (problem: string) => {
      if (!told.has(sha)) problems.push(problem);
      told.add(sha);
      return null;
    };
    if (!/^[0-9a-f]{64}$/.test(sha)) return tell(`payload ${sha.slice(0, 80)} is not a SHA-256`);
    const bytes = await reader.readFile(`${folder}/payloads/${sha}`);
    if (!bytes) return tell(`payload ${sha} is missing`);
    if (sha256Hex(bytes) !== sha) {
      return tell(`payload ${sha} does not match its SHA-256: not used`);
    }
    return decoder.decode(bytes);
  };
  async function* parts(): AsyncGenerator<CanonicalSession> {
    const timeline = session.timeline;
    for (let at = 0; at < timeline.length || at === 0; at += partSteps) {
      const steps = timeline.slice(at, at + partSteps);
      const ops: Record<string, Operation> = {};
      const next = new Map<string, string | null>();
      for (const t of steps) {
        const op = operations[t.op];
        if (!op) continue;
        ops[t.op] = op;
        delete operations[t.op];
        // what a plan reads (a step's request), and a command's recorded result, told of before
        // the run when it is bad; a file step's result is never read
        const role = planRole(op);
        const refs = role === "exec"
          ? [op.request, op.response]
          : role === "file"
          ? [op.request]
          : [];
        for (const ref of refs) {
          if (!ref || !("sha256" in ref) || next.has(ref.sha256)) continue;
          const known = page.get(ref.sha256);
          next.set(ref.sha256, known !== undefined ? known : await payload(ref.sha256));
        }
      }
      page = next;
      yield { ...session, operations: ops, timeline: steps };
    }
  }
  const text = (ref: PayloadRef | undefined): string | null => {
    if (!ref) return null;
    if ("inline" in ref) return ref.inline;
    if ("sha256" in ref) return page.get(ref.sha256) ?? null;
    return null;
  };
  const byRef = async (ref: PayloadRef): Promise<string | null> =>
    "inline" in ref ? ref.inline : "sha256" in ref ? await payload(ref.sha256) : null;
  return { session, parts, text, payload: byRef, problems };
}
