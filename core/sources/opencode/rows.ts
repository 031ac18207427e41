/** OpenCode's rows, whatever they were read from (the database or the old JSON tree). */
import type { SessionIssue } from "../../model/types.ts";
import type { Json } from "../_import_kit.ts";

export interface SessionRow {
  id: string;
  parentId?: string;
  title?: string;
  directory?: string;
  version?: string;
  created?: number;
  updated?: number;
  /** Where the session record lives (db path or JSON file). */
  file: string;
  extensions: Json;
}

export interface PartRow {
  id: string;
  /** The part object; anything else (NULL, a string) is reported and skipped. */
  data: unknown;
  created?: number;
  file: string;
}

export interface MessageRow {
  id: string;
  data: unknown;
  created?: number;
  file: string;
  parts: PartRow[];
}

/** Loads the messages (with their parts, in order) of one session. */
export type MessageLoader = (sessionId: string) => MessageRow[] | Promise<MessageRow[]>;

/** Parses JSON text; returns a marker string for text that is not JSON. */
export function parseJson(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return INVALID_JSON;
  }
}

export const INVALID_JSON = Symbol("invalid JSON");

export function rowIssue(file: string, message: string): SessionIssue {
  return { code: "malformed_row", severity: "warning", message, file };
}
