/** What a Gemini CLI import pass keeps for the next one (plain JSON, versioned). */
import type { Evidence, SourceRange } from "../../model/types.ts";
import type { Json } from "../_import_kit.ts";

/** Version of `GeminiState`: a saved state of another version is dropped, the file read again. */
export const STATE_VERSION = 1;

/** A message as last recorded, with where it was first and last seen. */
export interface Msg {
  id: string;
  rec: Json;
  /** Line of the first record with this id: the message keeps its place when re-appended. */
  first: number;
  range: SourceRange;
}

export interface GeminiState {
  v: number;
  sid: string | null;
  /**
   * The file is being read from its start in slices: the notes on what the whole file lacks are
   * said with its last slice, as one pass over it says them; `records` is whether any slice so
   * far held a record.
   */
  notesDue?: { records: boolean };
  meta: {
    started?: string;
    updated?: string;
    project?: string;
    summary?: string;
    kind?: string;
    projectHash?: string;
  };
  /** Known messages in order: id -> first line and the op ids emitted for it. */
  messages: Record<string, { first: number; ops: string[] }>;
  order: string[];
  models: string[];
  modelEvidence: Evidence[];
  /**
   * The message each evidence of `modelEvidence` came from: a message written again later (as
   * Gemini CLI re-appends a message it updates) moves its evidence to the later line. Absent in
   * older state.
   */
  modelMessages?: string[];
  lastTs: number | null;
  /** Recent tool-call ids, to tell a result whose call was read from one whose call was not. */
  callIds: string[];
  /** `$set` keys read without a use (`$set:<key>`), counted. Absent in older state. */
  skipped?: Record<string, number>;
}

export function freshState(): GeminiState {
  return {
    v: STATE_VERSION,
    sid: null,
    meta: {},
    messages: {},
    order: [],
    models: [],
    modelEvidence: [],
    lastTs: null,
    callIds: [],
  };
}

/** Raised inside an append pass when a record removes what an earlier pass emitted. */
export class NeedsFullPass extends Error {}
