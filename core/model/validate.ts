/** Validation of canonical sessions read from outside (artifacts, API input). */
import { ChronicleError } from "./errors.ts";
import type { CanonicalSession } from "./types.ts";
import {
  CANONICAL_SCHEMA_VERSION,
  COMPLETENESS,
  CONNECTION_KINDS,
  EFFECTS,
  OPERATION_KINDS,
  REPLAY_BLOCKERS,
} from "./types.ts";

const OPERATION_KIND_SET: ReadonlySet<string> = new Set(OPERATION_KINDS);
const EFFECT_SET: ReadonlySet<string> = new Set(EFFECTS);
const COMPLETENESS_SET: ReadonlySet<string> = new Set(COMPLETENESS);
const BLOCKER_SET: ReadonlySet<string> = new Set(REPLAY_BLOCKERS);
const CONNECTION_KIND_SET: ReadonlySet<string> = new Set(CONNECTION_KINDS);

/** True for a JSON object (not an array, not null). */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Returns the problems found in a would-be canonical session (empty when valid). */
export function validationProblems(value: unknown): string[] {
  if (!isJsonObject(value)) return ["session is not a JSON object"];
  const check = sessionChecker();
  if (isJsonObject(value.operations)) {
    for (const [id, op] of Object.entries(value.operations)) check.operation(id, op);
  }
  return check.finish(value);
}

/**
 * Checks a would-be canonical session a piece at a time, as a session read from a stream comes
 * (artifacts/session_file.ts): each operation as it is read, then `finish` with the head (every
 * field but the operations' values; `operations` must be an object, `{}` will do) checks the
 * rest, the timeline against the operations seen, and returns the problems: the head's alone
 * when it has any. The operations are never held, only their ids.
 */
export function sessionChecker(): {
  operation(id: string, op: unknown): void;
  finish(head: Record<string, unknown>): string[];
} {
  const opProblems: string[] = [];
  const opIds = new Set<string>();
  return {
    operation(id, value) {
      const need = (cond: boolean, msg: string) => {
        if (!cond) opProblems.push(msg);
      };
      need(!opIds.has(id), `operations.${id}: listed twice`);
      opIds.add(id);
      if (!isJsonObject(value)) {
        opProblems.push(`operations.${id}: not an object`);
        return;
      }
      const op = value;
      need(
        OPERATION_KIND_SET.has(op.kind as string),
        `operations.${id}.kind: invalid "${op.kind}"`,
      );
      need(EFFECT_SET.has(op.effect as string), `operations.${id}.effect: invalid "${op.effect}"`);
      need(
        COMPLETENESS_SET.has(op.completeness as string),
        `operations.${id}.completeness: invalid "${op.completeness}"`,
      );
      const replay = op.replay as Record<string, unknown> | undefined;
      need(
        isJsonObject(replay) && typeof replay.replayable === "boolean" &&
          Array.isArray(replay.blockers) &&
          (replay.blockers as string[]).every((b) => BLOCKER_SET.has(b)),
        `operations.${id}.replay: invalid`,
      );
      if (isJsonObject(replay) && replay.replayable === true) {
        need(
          op.completeness === "complete",
          `operations.${id}: an incomplete operation cannot be replayable`,
        );
      }
      for (const k of ["request", "response"]) {
        if (op[k] !== undefined) need(isPayloadRef(op[k]), `operations.${id}.${k}: invalid ref`);
      }
    },
    finish(s) {
      const problems: string[] = [];
      const need = (cond: boolean, msg: string) => {
        if (!cond) problems.push(msg);
      };
      need(isJsonObject(s.session), "session: missing object");
      if (isJsonObject(s.session)) {
        for (const k of ["id", "native_id", "source"]) {
          need(typeof s.session[k] === "string", `session.${k}: missing string`);
        }
        need(isJsonObject(s.session.project), "session.project: missing object");
      }
      need(Array.isArray(s.connections), "connections: missing array");
      need(Array.isArray(s.timeline), "timeline: missing array");
      need(isJsonObject(s.operations), "operations: missing object");
      need(isJsonObject(s.completeness), "completeness: missing object");
      need(isJsonObject(s.provenance), "provenance: missing object");
      need(Array.isArray(s.issues), "issues: missing array");
      if (problems.length) return problems;
      const connIds = new Set<string>();
      for (const [i, c] of (s.connections as unknown[]).entries()) {
        if (!isJsonObject(c)) {
          problems.push(`connections[${i}]: not an object`);
          continue;
        }
        need(typeof c.id === "string", `connections[${i}].id: missing`);
        need(CONNECTION_KIND_SET.has(c.kind as string), `connections[${i}].kind: invalid`);
        need(
          isJsonObject(c.client) && isJsonObject(c.server),
          `connections[${i}]: client/server missing`,
        );
        connIds.add(String(c.id));
      }
      problems.push(...opProblems);
      const seen = new Set<string>();
      for (const [i, t] of (s.timeline as unknown[]).entries()) {
        if (!isJsonObject(t)) {
          problems.push(`timeline[${i}]: not an object`);
          continue;
        }
        need(t.seq === i, `timeline[${i}].seq: expected ${i}`);
        need(
          typeof t.op === "string" && opIds.has(t.op),
          `timeline[${i}].op: unknown operation`,
        );
        need(connIds.has(String(t.connection)), `timeline[${i}].connection: unknown connection`);
        need(
          typeof t.offset_ns === "number" && (t.offset_ns as number) >= 0,
          `timeline[${i}].offset_ns: invalid`,
        );
        seen.add(String(t.op));
      }
      need(seen.size === opIds.size, "timeline: must list every operation once");
      return problems;
    },
  };
}

function isPayloadRef(v: unknown): boolean {
  if (!isJsonObject(v)) return false;
  if (typeof v.sha256 === "string") {
    return /^[0-9a-f]{64}$/.test(v.sha256) && typeof v.size === "number";
  }
  return typeof v.inline === "string" || v.redacted === true || v.missing === true;
}

/**
 * Parses and validates a canonical session. Rejects any schema version but 1 with a clear
 * error: there are no migration readers before an explicit freeze.
 */
export function readCanonicalSession(value: unknown): CanonicalSession {
  if (!isJsonObject(value)) {
    throw new ChronicleError("invalid_session", "Canonical session is not a JSON object");
  }
  checkSchemaVersion(value);
  throwProblems(validationProblems(value));
  return value as unknown as CanonicalSession;
}

/** Throws `unsupported_schema` unless a session (or its head) is of the version this reads. */
export function checkSchemaVersion(value: Record<string, unknown>): void {
  if (value.schema_version !== CANONICAL_SCHEMA_VERSION) {
    throw new ChronicleError(
      "unsupported_schema",
      `Unsupported canonical schema_version ${
        JSON.stringify(value.schema_version)
      }: this Chronicle reads version ${CANONICAL_SCHEMA_VERSION} only`,
    );
  }
}

/** Throws `invalid_session` naming the first five problems, when there are any. */
export function throwProblems(problems: string[]): void {
  if (problems.length) {
    throw new ChronicleError(
      "invalid_session",
      `Invalid canonical session: ${problems.slice(0, 5).join("; ")}${
        problems.length > 5 ? ` (+${problems.length - 5} more)` : ""
      }`,
    );
  }
}
