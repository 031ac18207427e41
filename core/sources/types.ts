/** The importer contract: a registry of plain objects, one file per agent. */
import type { Checkpoint, SessionDelta, SessionIssue, SourceId } from "../model/mod.ts";

export interface FileStat {
  isFile: boolean;
  isDirectory: boolean;
  size: number;
  mtimeMs: number | null;
  ino: number | null;
}

export interface DirEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

/**
 * The only way importers touch the disk. Read-only, except `tempDir` (a scratch folder for
 * copies of foreign SQLite databases, which must never be opened in place).
 */
export interface SourceFs {
  stat(path: string): Promise<FileStat | null>;
  readDir(path: string): Promise<DirEntry[]>;
  /**
   * Streams bytes of a file from `offset` to its current end. A chunk is valid until the next
   * one is asked for, or the next read begins (the reader reads into the same buffer again):
   * copy what must last longer.
   */
  readFrom(path: string, offset: number): AsyncIterable<Uint8Array>;
  /** Reads at most `length` bytes at `offset`. */
  readRange(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** Reads a small file whole (JSON metadata, never transcripts). */
  readTextFile(path: string): Promise<string>;
  /** Copies a file into `tempDir` and returns the copy's path. */
  copyToTemp(path: string, dir: string, name: string): Promise<string>;
  makeTempDir(): Promise<string>;
  remove(path: string): Promise<void>;
}

/** Where to look for logs: the user's home and the agents' own variables. */
export interface DiscoverEnv {
  home: string;
  env: Record<string, string | undefined>;
  platform: "linux" | "darwin" | "windows";
}

/** One unit of checkpointing: a file (or a database with its WAL) that is imported as a whole. */
export interface SourceUnit {
  source: SourceId;
  path: string;
  kind: "jsonl" | "sqlite" | "json" | "tree";
  /** Files of one session sort main file first (rank 0), then sub-agent files. */
  rank: number;
}

export interface ImportContext {
  fs: SourceFs;
  /** Ordinal of this pass for this unit (0 on the first import). */
  epoch: number;
  /**
   * Checkpoint and importer-owned state from the previous pass, if any; and the records the
   * log gave before it, when its importer keeps them (`UnitResult.seen`): the store's keys, or
   * `{ kept }`, the table the last slice of this read left in the importer's thread.
   */
  resume?: { checkpoint: Checkpoint; state: unknown; seen?: SeenPrior };
  /** True when the file is finished (not being written): an unterminated last line that parses is accepted. */
  closed?: boolean;
  /**
   * A JSONL pass may stop at the end of the line that takes it past this many bytes, when it
   * reads on from a checkpoint or reads a log the store holds nothing of; its checkpoint then
   * says `more`, and the caller runs the next pass at once. So a 130 MiB session is imported a
   * slice at a time, within the memory a slice takes. A database read in parts stops at the
   * first whole session past it (`_sqlite_copy.ts`'s `SqlitePart`). Default: no limit.
   */
  maxPassBytes?: number;
}

/**
 * The records a log gave before a pass (`ImportContext.resume.seen`): every key the store holds
 * (16 bytes each), or how many keys the importer's thread kept from the last slice (the pass
 * throws `SEEN_NOT_KEPT`, claude_code/seen.ts, when it has not kept them).
 */
export type SeenPrior = Uint8Array | { kept: number };

export interface UnitResult {
  /** unchanged: nothing read; append: read from the checkpoint; full: read from zero. */
  mode: "unchanged" | "append" | "full";
  deltas: SessionDelta[];
  checkpoint: Checkpoint | null;
  state: unknown;
  /** Problems with the unit itself (locked, corrupt), not with one session. */
  issues: SessionIssue[];
  /** Payload bytes by SHA-256 referenced from the deltas. */
  payloads: Map<string, Uint8Array>;
  bytesRead: number;
  /**
   * A full read in parts (a big database, each part holding whole sessions, its checkpoint
   * saying `more` until the last): the sessions the read's earlier parts held. Absent for a
   * read's first part and for a read in one part.
   */
  partsBefore?: string[];
  /**
   * A full read that left sessions unread because they had not changed since its last read
   * (a big database's chats, by their fingerprints): the store keeps them as they are, and the
   * read counts them as held.
   */
  unchangedSessions?: string[];
  /**
   * The records this pass read that the log had not given before (Claude Code's record uuids,
   * 16 bytes each), kept by the store beside the state as a set that only grows: a big log's
   * set is not carried in its state, slice after slice. `from`: how many of the store's keys
   * the pass built on; 0 when its keys replace them (a read from the start).
   */
  seen?: { from: number; added: Uint8Array };
}

/** One agent's importer: a plain object. `S` is its source id. */
export interface Importer<S extends SourceId = SourceId> {
  id: S;
  displayName: string;
  /** Finds the units under the agent's log roots; a missing root is simply no units. */
  discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]>;
  /** Whether this importer reads the file at `path` (by name and layout, no I/O). */
  detect(path: string): boolean;
  import(unit: SourceUnit, ctx: ImportContext): Promise<UnitResult>;
  /**
   * Its passes honour `ImportContext.maxPassBytes`: a log read in slices, a database in parts,
   * is stored as one pass over it stores it (tests/unit/store/slices_test.ts, on every recording
   * of the real CLIs, and on a Cursor database read, stopped and read again in parts).
   */
  slices?: true;
}
