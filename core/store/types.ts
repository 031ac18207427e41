/**
 * What the store's queries answer, as plain types: the API serves them and the UI bundle
 * imports them from here (no SQLite in this file).
 */
import type {
  Checkpoint,
  Connection,
  LossWindow,
  Operation,
  SessionInfo,
  SessionIssue,
} from "../model/mod.ts";

export interface SessionQuery {
  source?: string;
  project?: string;
  /**
   * Full-text filter: sessions with an operation matching this query among the newest
   * {@link TEXT_FILTER_WINDOW} matching operations, or whose title contains it.
   */
  text?: string;
  /** ISO date or datetime: sessions active at or after it. */
  from?: string;
  /** ISO date or datetime: sessions started at or before it. */
  to?: string;
  /** Only the sessions the user starred (found through the `sessions_starred` index). */
  starred?: boolean;
  sort?: "started_at" | "ended_at" | "op_count" | "title";
  order?: "asc" | "desc";
  /** Default 50, at most 1000. */
  limit?: number;
  offset?: number;
}

/**
 * One session in a list. Its title is decided by `sessionTitle` (core/model/titles.ts): the
 * user's name for it, else the agent's title, else the first prompt.
 */
export interface SessionSummary {
  id: string;
  source: string;
  native_id: string;
  project_path: string | null;
  /** The title its agent recorded. */
  title: string | null;
  /** The user's name for it (`chronicle rename`, the UI); an import never writes it. */
  user_title: string | null;
  /** Its first prompt as a title reads it. */
  first_prompt: string | null;
  /** The user starred it. */
  starred: boolean;
  /** When the user starred it (ISO 8601), or null. */
  starred_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  op_count: number;
  error_count: number;
  /**
   * Operations no longer in the agent's logs (the log was deleted, or rewritten without them):
   * Chronicle keeps them; `chronicle forget` removes them.
   */
  kept_count: number;
}

/** A change to what the user marks on a session (`markSession`): a field left out is kept. */
export interface SessionMarks {
  /** The session's name; null or an empty (or blank) string clears it (`userTitle`). */
  title?: string | null;
  /** Star (true) or unstar (false). */
  starred?: boolean;
}

export interface TimelineItem {
  seq: number;
  op_id: string;
  connection: string;
  offset_ns: number;
  ts_ms: number | null;
  op: Operation;
  /**
   * Set when `op.text` is only its opening (a page asked for at most so many characters of
   * each text): the UTF-8 bytes of the whole, which `ChronicleStore.operationText` reads.
   */
  text_bytes?: number;
  /** No longer in the agent's log: kept by Chronicle (see `SessionSummary.kept_count`). */
  kept?: true;
}

/** Text around a match, in segments; `match` marks what the query matched. */
export type Snippet = { text: string; match: boolean }[];

export interface SearchHit {
  session_id: string;
  op_id: string;
  seq: number;
  kind: string;
  tool: string | null;
  /** Where the snippet comes from: the operation's own text, its tool input or its output. */
  field: "text" | "input" | "output";
  snippet: Snippet;
  session: {
    title: string | null;
    user_title: string | null;
    first_prompt: string | null;
    starred: boolean;
    source: string;
    project_path: string | null;
  };
}

/** One page of search hits. */
export interface SearchResult {
  /** How many operations match: exact, or a lower bound when `total_capped`. */
  total: number;
  /** True when there are more matches than `total` says ("at least"). */
  total_capped: boolean;
  offset: number;
  limit: number;
  hits: SearchHit[];
  /**
   * Stored operations not in the index yet (a bulk import indexes after it writes): search
   * does not see them until it is 0.
   */
  unindexed: number;
}

export interface ProjectSummary {
  path: string;
  sessions: number;
  operations: number;
  last_active: string | null;
}

export interface SourceRow {
  path: string;
  source: string;
  epoch: number;
  checkpoint: Checkpoint | null;
  sessions: string[];
  /** Problems with the unit itself from its last pass (vanished, locked, corrupt). */
  issues: SessionIssue[];
}

/** A connection as the API shows it: `parent_guessed` when the log did not name the parent. */
export type ConnectionView = Connection & { parent_guessed?: boolean };

/** One session's page header: its summary, what it knows, its threads and what went wrong. */
export interface SessionDetail {
  session: SessionSummary;
  info: SessionInfo;
  connections: ConnectionView[];
  /** The one main thread the session view shows, or null when it shows all of them. */
  main_connection: string | null;
  issues: number;
  loss_windows: number;
}

/** Where an operation is: from the top thread down through the task calls that spawned it. */
export interface LocatedOp {
  op_id: string;
  connection: string;
  /** Its index in that connection's timeline (or the whole session's, when it shows all). */
  index: number;
}

/** What the store's own check found (`ChronicleStore.health`, run by `chronicle doctor`). */
export interface StoreHealth {
  /** `PRAGMA quick_check`'s complaints; empty when it said "ok". */
  quick_check: string[];
  sessions: number;
  operations: number;
  payloads: {
    /** Kept in the database. */
    inline: number;
    /** Kept in pack files. */
    packed: number;
    /** Pack payloads read back and hashed (0 when the check was skipped). */
    checked: number;
    /** Pack payloads missing or not matching their SHA-256. */
    bad: number;
    /** The first few of those. */
    bad_sha256: string[];
  };
}

/** What imports recorded as going wrong (`ChronicleStore.importIssues`, `chronicle issues`). */
export interface ImportIssues {
  /** All the matching issues (the list may stop at its limit). */
  total_issues: number;
  total_loss_windows: number;
  /** Problems of whole files from their last pass (corrupt, locked); without a session filter. */
  units: { file: string; source: string; issues: SessionIssue[] }[];
  issues: (SessionIssue & { session_id: string })[];
  loss_windows: (LossWindow & { session_id: string })[];
}

/** A session the user forgot: deleted from the store and never imported again. */
export interface ForgottenSession {
  id: string;
  source: string;
  project_path: string | null;
  /** Its name when it was forgotten (the user's, else the agent's; never its prompt). */
  title: string | null;
  forgotten_at: string;
}

/** What a forget removed and what giving the space back did (`ChronicleStore.forget`). */
export interface ForgetOutcome {
  /** Nothing was changed: what would go. */
  dry_run: boolean;
  sessions: (ForgottenSession & { operations: number })[];
  operations: number;
  /** Payloads no remaining session refers to, deleted, and their size. */
  payloads: number;
  payload_bytes: number;
  /** Share links of those sessions, deleted. */
  shares: number;
  /** Null for a dry run. */
  reclaim: ReclaimResult | null;
}

/** How the store gave space back after a forget (core/store/compact.ts). */
export interface ReclaimResult {
  /** Packs whose live payloads were copied into a new pack, and removed. */
  packs_compacted: number;
  /** Bytes of the deleted payloads overwritten with zeros in the packs that stay. */
  scrubbed_bytes: number;
  pack_bytes_before: number;
  pack_bytes_after: number;
  /** The database's size in pages before and after. */
  db_bytes_before: number;
  db_bytes_after: number;
  /**
   * How freed pages went back to the disk: `vacuum`, `incremental` (a store made with
   * auto_vacuum), or `none` (a store made before: they stay free, zeroed, for later imports).
   */
  pages: "vacuum" | "incremental" | "none";
  /** Bytes of free pages the database file still holds. */
  db_free_bytes: number;
  /** False when a reader kept the write-ahead log from being emptied (it is, later). */
  wal_truncated: boolean;
  ms: number;
}
