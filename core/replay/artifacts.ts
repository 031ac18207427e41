/**
 * Replay from canonical artifacts (`chronicle export --format canonical`): the session is read
 * from `session.json` (checked against the manifest's checksum) and every payload is checked
 * against its SHA-256 before use; one that fails is treated as missing, never used.
 */
import type { ArtifactReader } from "../artifacts/mod.ts";
import {
  type CanonicalSession,
  ChronicleError,
  type PayloadRef,
  readCanonicalSession,
  sha256Hex,
} from "../model/mod.ts";
import type { PayloadText } from "./plan.ts";

const decoder = new TextDecoder();

export interface ArtifactSession {
  session: CanonicalSession;
  /** Payload text by ref; null for a missing payload or one that fails its hash. */
  text: PayloadText;
  /** Payloads that were missing or did not match their hash, as sentences. */
  problems: string[];
}

/**
 * Loads one exported session: `dir` is a session folder (with manifest.json) or an export
 * folder holding exactly one session under `sessions/`.
 */
export async function loadArtifactSession(
  reader: ArtifactReader,
  dir: string,
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
  const manifestBytes = await reader.readFile(`${folder}/manifest.json`);
  const sessionBytes = await reader.readFile(`${folder}/session.json`);
  if (!manifestBytes || !sessionBytes) {
    throw new ChronicleError("invalid_session", `${folder} lacks manifest.json or session.json`);
  }
  let manifest: { session_sha256?: string };
  try {
    manifest = JSON.parse(decoder.decode(manifestBytes));
  } catch {
    throw new ChronicleError("invalid_session", `${folder}/manifest.json is not valid JSON`);
  }
  if (sha256Hex(sessionBytes) !== manifest.session_sha256) {
    throw new ChronicleError(
      "checksum_mismatch",
      `${folder}/session.json does not match the checksum in manifest.json`,
    );
  }
  const session = readCanonicalSession(JSON.parse(decoder.decode(sessionBytes)));
  const problems: string[] = [];
  const cache = new Map<string, string | null>();
  const shas = new Set<string>();
  for (const op of Object.values(session.operations)) {
    for (const ref of [op.request, op.response]) if (ref && "sha256" in ref) shas.add(ref.sha256);
  }
  for (const sha of shas) {
    if (!/^[0-9a-f]{64}$/.test(sha)) {
      problems.push(`payload ${sha.slice(0, 80)} is not a SHA-256`);
      cache.set(sha, null);
      continue;
    }
    const bytes = await reader.readFile(`${folder}/payloads/${sha}`);
    if (!bytes) {
      problems.push(`payload ${sha} is missing`);
      cache.set(sha, null);
    } else if (sha256Hex(bytes) !== sha) {
      problems.push(`payload ${sha} does not match its SHA-256: not used`);
      cache.set(sha, null);
    } else cache.set(sha, decoder.decode(bytes));
  }
  const text = (ref: PayloadRef | undefined): string | null => {
    if (!ref) return null;
    if ("inline" in ref) return ref.inline;
    if ("sha256" in ref) return cache.get(ref.sha256) ?? null;
    return null;
  };
  return { session, text, problems };
}
