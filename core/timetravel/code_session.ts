/**
 * What the code at a step reads of a session, and nothing more: a server that keeps a
 * session's causality for its later requests keeps this, not the session it loaded. Of the
 * bench's 35,342-step session (86 MiB of heap kept with its facts and report) it keeps 44.
 */
import { type OpFacts, type PayloadReader, sessionFacts } from "../causality/mod.ts";
import type { CanonicalSession, Operation, SessionInfo, TimelineEntry } from "../model/mod.ts";

/** The fields of an operation the code at a step reads. */
export type CodeOperation = Pick<
  Operation,
  "kind" | "tool" | "request" | "response" | "extensions" | "ts_ms"
>;

/** A session as the code at a step reads it; a whole `CanonicalSession` is one. */
export interface CodeSession {
  session: Pick<SessionInfo, "id" | "project" | "started_at" | "ended_at">;
  timeline: readonly TimelineEntry[];
  operations: Readonly<Record<string, CodeOperation>>;
}

/** A session's code inputs: the session as the code reads it, with its causality facts. */
export interface CodeInputs {
  session: CodeSession;
  /** The facts of the steps that change or read files: the code reads no other. */
  facts: readonly OpFacts[];
}

/**
 * The code inputs of a loaded session and its facts. Every operation keeps its kind and time
 * (the commits are placed by them); a change, a read and a command keep their payloads and
 * extensions too (the edits, the files a step showed whole, the commits a command made).
 * Nothing is copied: the kept fields are the session's own values.
 */
export function codeInputs(session: CanonicalSession, facts: readonly OpFacts[]): CodeInputs {
  const read = new Set<string>();
  for (const f of facts) if (f.change || f.source?.kind === "read") read.add(f.op);
  const operations: Record<string, CodeOperation> = {};
  for (const [id, op] of Object.entries(session.operations)) {
    operations[id] = read.has(id) || op.kind === "exec"
      ? {
        kind: op.kind,
        tool: op.tool,
        request: op.request,
        response: op.response,
        extensions: op.extensions,
        ts_ms: op.ts_ms,
      }
      : { kind: op.kind, ts_ms: op.ts_ms };
  }
  const s = session.session;
  return {
    session: {
      session: { id: s.id, project: s.project, started_at: s.started_at, ended_at: s.ended_at },
      timeline: session.timeline,
      operations,
    },
    facts: facts.filter((f) => f.change || f.source),
  };
}

/** A session read a part at a time: what its causality and its code need of it. */
export interface GatheredSession {
  /** The session's own fields (its first part without operations or timeline). */
  head: CanonicalSession;
  /** Every step's facts, in timeline order. */
  facts: OpFacts[];
  inputs: CodeInputs;
}

/**
 * A session's facts and code inputs from its parts (the store's `sessionParts`, in timeline
 * order), `turn` awaited after each: an operation's facts are its own, so they are the whole
 * session's, and no more than a part of it is held at once. Null when there was no part.
 */
export async function gatherSession(
  parts: Iterable<CanonicalSession>,
  read: PayloadReader,
  turn?: () => Promise<unknown>,
): Promise<GatheredSession | null> {
  let head: CanonicalSession | undefined;
  let session: CodeSession["session"] | undefined;
  const facts: OpFacts[] = [];
  const timeline: TimelineEntry[] = [];
  const operations: Record<string, CodeOperation> = {};
  const kept: OpFacts[] = [];
  for (const part of parts) {
    head ??= { ...part, operations: {}, timeline: [] };
    const partFacts = sessionFacts(part, read);
    const one = codeInputs(part, partFacts);
    session ??= one.session.session;
    for (const f of partFacts) facts.push(f);
    for (const t of one.session.timeline) timeline.push(t);
    Object.assign(operations, one.session.operations);
    for (const f of one.facts) kept.push(f);
    await turn?.();
  }
  if (!head || !session) return null;
  return { head, facts, inputs: { session: { session, timeline, operations }, facts: kept } };
}
