/**
 * The local store on node:sqlite: sessions, operations, content-addressed payloads and an FTS5
 * index, merged idempotently from import deltas. This class owns the connection and the
 * transactions; its parts hold the rest: `apply.ts` (applying units), `payloads.ts`,
 * `search.ts`, `queries.ts`, `stats.ts`, `rule_table.ts`, `write_group.ts`. No module outside
 * core/store runs SQL.
 */
import { DatabaseSync } from "node:sqlite";
import type { Stats, StatsFilter } from "../analytics/stats.ts";
import {
  type CanonicalSession,
  ChronicleError,
  type OperationRecord,
  type PayloadRef,
  type SessionOutline,
  type SessionParts,
  type StreamedSession,
} from "../model/mod.ts";
import type { SourceUnit } from "../sources/types.ts";
import {
  applyUnit,
  getSource,
  markUnitGone,
  settleSlices,
  settleStats,
  slicedOperations,
  sourceCheckpoints,
  sourceSeen,
  sourceState,
  type UnitCheckpoint,
  type Writer,
} from "./apply.ts";
import { type AdmitOptions, excludedMarks, heldUnits } from "./admit.ts";
import {
  applyTexts,
  BACKLOG_SLICE,
  backlogSize,
  type BacklogSlice,
  indexBacklog,
  readBacklog,
} from "./backlog.ts";
import { ChangeStamps } from "./change_stamps.ts";
import {
  COMPACT_DEAD_SHARE,
  compactPacks,
  databaseBytes,
  freeBytes,
  packBytes,
  reclaimPages,
  scrubDead,
  VACUUM_SLICE_PAGES,
  vacuumFreePages,
} from "./compact.ts";
import { type DeadRange, forgetRows, forgottenSessions, projectSessionIds } from "./forget.ts";
import {
  changeClock,
  type SessionChanges,
  sessionChanges,
  type SessionChangesOptions,
  sessionSourcePaths,
} from "./live_query.ts";
import type { PackFiles } from "./packs.ts";
import { storeHealth } from "./health.ts";
import { importIssues } from "./issues.ts";
import {
  COMPRESS_SLICE_FRAMES,
  type CompressedSlice,
  PayloadStore,
  type PlainCursor,
  type PlainSlice,
} from "./payloads.ts";
import {
  indexText,
  type PreparedUnit,
  readIndexedDoc,
  type StoredOp,
  storedOpColumns,
} from "./prepare.ts";
import { Queries } from "./queries.ts";
import { RuleTable } from "./rule_table.ts";
import { ShareTable } from "./shares.ts";
import { markSession } from "./user_marks.ts";
import {
  beginCanonical,
  type CanonicalImportOutcome,
  canonicalSkip,
  putCanonical,
} from "./canonical.ts";
import { sessionJsonChunks } from "../artifacts/mod.ts";
import { collectEvery } from "../gc.ts";
import { createHash } from "node:crypto";
import { MIGRATIONS } from "./schema.ts";
import { Search } from "./search.ts";
import type { FilterStrategy } from "./filter_runs.ts";
import { computeStats } from "./stats.ts";
import {
  keptStatsFor,
  refreshSessionStats,
  rollupStats,
  sessionStatsKept,
} from "./stats_rollup.ts";
import type {
  ForgetOutcome,
  ForgottenSession,
  ImportIssues,
  LocatedOp,
  ProjectSummary,
  ReclaimResult,
  SearchResult,
  SessionDetail,
  SessionMarks,
  SessionQuery,
  SessionSummary,
  SourceRow,
  StoreHealth,
  TimelineItem,
} from "./types.ts";
import { DEFAULT_GROUP_LIMITS, WriteGroup, type WriteGroupLimits } from "./write_group.ts";
import { isBusy, retryWhileBusy, Sql } from "./_sql.ts";

export { PIPELINE_VERSION, type UnitCheckpoint } from "./apply.ts";

export interface StoreOptions {
  /** Milliseconds to wait for a lock held by another process. Default 5000. */
  busyTimeoutMs?: number;
  /** Where payload bytes go. Without it they stay in the database (in-memory stores, tests). */
  packs?: PackFiles;
  /** When to start the next pack, in bytes. Default {@link PACK_LIMIT}. */
  packLimit?: number;
  /** Rows a bulk import gathers before it merges them into the payloads table (tests). */
  payloadMergeRows?: number;
  /** Create the database with `auto_vacuum = INCREMENTAL`. Default true. */
  autoVacuum?: boolean;
  /** How search narrows to a session filter (filter_runs.ts). Default `auto`; tests pin one. */
  filteredSearch?: FilterStrategy;
}

/** How many candidates an ambiguous id prefix names. */
const CANDIDATES_SHOWN = 5;

/** Sessions whose statistics `settleStats` counts in one transaction. */
const STATS_SLICE = 64;

export interface ForgetOptions {
  /** Change nothing: say what would go. */
  dryRun?: boolean;
  now?: () => Date;
  /** Compact a pack once this share of it is dead. Default {@link COMPACT_DEAD_SHARE}. */
  deadShare?: number;
  /** Give the database's freed pages back to the disk (see compact.ts). Default true. */
  vacuum?: boolean;
}

/** Thrown inside a dry run's transaction so that it rolls back. */
const DRY_RUN = Symbol("dry run");

/**
 * Throws (and closes `db`) when the file holds tables but no record of Chronicle's migrations:
 * another program's database, such as the original Chronicle's, which keeps its own at the same
 * `~/.chronicle/chronicle.db`. Migrating it would fail halfway ("table sessions already exists")
 * and its journal mode would already have been changed.
 */
function refuseForeignDatabase(db: DatabaseSync, path: string): void {
  const names = (db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).all() as { name: string }[]).map((r) => r.name);
  if (names.length === 0 || names.includes("migrations")) return;
  db.close();
  const shown = names.length > 6 ? [...names.slice(0, 6), "…"] : names;
  throw new ChronicleError(
    "unsupported_schema",
    `"${path}" is not a Chronicle store: it holds other tables (${shown.join(", ")}) and no ` +
      "record of Chronicle's migrations, so another program made it (the original Chronicle " +
      "keeps its database at the same path). Chronicle left it untouched: move it aside, or " +
      "keep Chronicle's data in another folder.",
  );
}

/**
 * Opens the database at `path` with the store's settings (closed again when one fails; the
 * caller tries again while SQLite answers busy, `retryWhileBusy`).
 */
function openDb(path: string, busyMs: number, autoVacuum: boolean): DatabaseSync {
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${busyMs}`);
    // Before any pragma that writes to the file (the journal mode does): another program's
    // database is left exactly as it was.
    refuseForeignDatabase(db, path);
    // Payload blobs dominate the file: bigger pages mean fewer overflow pages. Only takes
    // effect when the database is created.
    db.exec("PRAGMA page_size = 16384");
    // Pages a forget frees can go back to the disk without VACUUM, which Deno refuses a
    // process without every permission (compact.ts). Also only at creation (or at a VACUUM).
    if (autoVacuum) db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA temp_store = MEMORY");
    db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
    return db;
  } catch (e) {
    if (db.isOpen) db.close();
    throw e;
  }
}

/**
 * SQLite's own page cache, KiB (the system's file cache holds the rest). It stays full: with
 * 16 MiB, a cold import of a 300 MB Codex history peaked at 304-314 MB RSS, with 4 MiB at 280
 * MB, in the same time.
 */
const CACHE_KIB = 4096;

export class ChronicleStore {
  private readonly db: DatabaseSync;
  private readonly sql: Sql;
  private readonly payloads: PayloadStore;
  private readonly queries: Queries;
  private readonly searcher: Search;
  /** Custom security rules and the guard's interception log (see core/security's RuleStore). */
  readonly ruleTable: RuleTable;
  /** Share links (see core/shares). */
  readonly shareTable: ShareTable;
  private readonly changes: ChangeStamps;
  private savepoints = 0;
  /** Set by a write group: nested transactions join the group's (see `WriteGroup.run`). */
  private joinNested = false;
  /** A bulk import: no flush to disk per transaction (see `relaxDurability`). */
  private relaxed = false;
  /** A bulk import: search texts wait in the backlog (see `deferSearch`). */
  private deferred = false;

  private constructor(db: DatabaseSync, options: StoreOptions) {
    this.db = db;
    this.sql = new Sql(db);
    this.payloads = new PayloadStore(
      this.sql,
      options.packs ?? null,
      options.packLimit,
      options.payloadMergeRows,
    );
    this.queries = new Queries(
      this.sql,
      this.payloads.textOf,
      (text, scope) => this.searcher.matchingSessions(text, scope),
    );
    this.searcher = new Search(this.sql, this.payloads, this.queries, options.filteredSearch);
    this.ruleTable = new RuleTable(this.sql);
    this.shareTable = new ShareTable(this.sql);
    this.changes = new ChangeStamps(this.sql);
  }

  /** Opens (creating and migrating) the store at `path`, or `":memory:"`. */
  static open(path: string, options: StoreOptions = {}): ChronicleStore {
    const busyMs = options.busyTimeoutMs ?? 5000;
    let db: DatabaseSync;
    try {
      db = retryWhileBusy(() => openDb(path, busyMs, options.autoVacuum !== false), busyMs);
    } catch (e) {
      if (e instanceof ChronicleError) throw e;
      throw new ChronicleError("io", `Cannot open the store "${path}": ${(e as Error).message}`, {
        cause: e,
      });
    }
    const store = new ChronicleStore(db, options);
    store.migrate();
    return store;
  }

  close(): void {
    this.db.close();
    this.payloads.close();
  }

  /** Fills the (empty) search index from every stored operation, as an import would. */
  private reindexSearch(): void {
    const insert = this.db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
    const payloads = { get: (sha: string) => this.payload(sha) ?? undefined };
    // (a migration's, before or after 21: the file left out, as search needs none)
    const rows = this.db.prepare(
      `SELECT rowid, ${storedOpColumns("", { file: false })} FROM operations`,
    );
    for (const row of rows.iterate()) {
      const r = row as unknown as StoredOp & { rowid: number };
      const rowid = r.rowid;
      const { op, textIsInput } = readIndexedDoc(r, this.payloads.textOf);
      const body = indexText(op, payloads, true, textIsInput);
      if (body) insert.run(rowid, body);
    }
  }

  /** What the write side's parts (apply.ts, canonical.ts) write with. */
  private writer(): Writer {
    return { sql: this.sql, payloads: this.payloads, changes: this.changes };
  }

  /** Opens a write transaction, the write lock taken at once (another writer waits for it). */
  private begin(): void {
    this.db.exec("BEGIN IMMEDIATE");
  }

  /** Commits the open transaction; outside a bulk import, the packs it wrote reach the disk first. */
  private commit(): void {
    if (!this.relaxed) this.payloads.sync();
    this.db.exec("COMMIT");
  }

  /**
   * Undoes the open transaction, unless SQLite already has (it does on its own for a full disk):
   * the error that got here is the one to tell.
   */
  private rollback(): void {
    if (this.db.isTransaction) this.db.exec("ROLLBACK");
  }

  /**
   * Brings the schema up to date in ONE exclusive transaction: two processes opening a new data
   * folder at once never race on it (the second waits for the lock, then finds nothing to do),
   * and a migration that fails (a full disk) leaves the schema as it was.
   */
  private migrate(): void {
    const applied = (): Set<number> => {
      const exists = this.db.prepare(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'",
      ).get();
      if (!exists) return new Set();
      const rows = this.db.prepare("SELECT version FROM migrations").all() as { version: number }[];
      return new Set(rows.map((r) => r.version));
    };
    // the usual case, without taking the write lock: nothing to do
    if (MIGRATIONS.every((m) => applied().has(m.version))) return;
    this.db.exec("BEGIN EXCLUSIVE");
    try {
      this.db.exec(
        "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
      );
      const done = applied(); // again, under the lock: another process may have run them
      for (const m of MIGRATIONS) {
        if (!done.has(m.version)) this.applyMigration(m);
      }
      this.commit();
    } catch (e) {
      this.rollback();
      throw e;
    }
    // A migration that rebuilds a table (21-23) leaves its old pages free: back to the disk.
    while (vacuumFreePages(this.sql, VACUUM_SLICE_PAGES) > 0) { /* a slice at a time */ }
  }

  private applyMigration(m: (typeof MIGRATIONS)[number]): void {
    this.db.exec(m.sql);
    if (m.reindex) this.reindexSearch();
    if (m.restat) {
      const ids = this.db.prepare("SELECT id FROM sessions").all() as { id: string }[];
      for (const { id } of ids) refreshSessionStats(this.sql, id);
    }
    this.db.prepare("INSERT INTO migrations VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      new Date().toISOString(),
    );
  }

  /**
   * Runs `fn` in one transaction. A nested call is a savepoint: when it throws, only its own
   * writes are undone and the outer transaction goes on.
   */
  transaction<T>(fn: () => T): T {
    if (this.db.isTransaction && this.joinNested) return fn();
    if (this.db.isTransaction) {
      const name = `nested_${++this.savepoints}`;
      this.db.exec(`SAVEPOINT ${name}`);
      try {
        const out = fn();
        this.db.exec(`RELEASE ${name}`);
        return out;
      } catch (e) {
        this.db.exec(`ROLLBACK TO ${name}`);
        this.db.exec(`RELEASE ${name}`);
        throw e;
      } finally {
        this.savepoints--;
      }
    }
    this.begin();
    try {
      const out = fn();
      this.commit();
      return out;
    } catch (e) {
      this.rollback();
      throw e;
    }
  }

  // ---------------------------------------------------------------- import side

  /**
   * For a bulk import: no flush to disk per transaction, of the WAL or of the packs. Returns the
   * function that restores normal durability: it flushes the packs written meanwhile, then
   * checkpoints the WAL.
   */
  relaxDurability(): () => void {
    this.relaxed = true;
    this.db.exec("PRAGMA synchronous = OFF");
    return () => {
      this.relaxed = false;
      this.payloads.sync();
      this.db.exec("PRAGMA synchronous = NORMAL");
      try {
        this.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      } catch {
        // a reader holds the WAL; SQLite checkpoints later
      }
    };
  }

  /**
   * For a bulk import: the units it applies write their rows, and their search texts wait in
   * the backlog (backlog.ts) until `indexBacklog` takes them, so sessions are browsable before
   * the index is complete. Returns the function that ends it (the backlog stays).
   */
  deferSearch(): () => void {
    // (and the sessions' statistics wait too, for `settleStats`)
    this.deferred = true;
    this.payloads.plain = true;
    return () => {
      this.deferred = false;
      try {
        this.transaction(() => this.payloads.merge());
      } catch {
        // (another writer held the lock past the busy timeout, a full disk): the rows gathered
        // are read where they are, and the next bulk import merges them
      } finally {
        this.payloads.plain = false;
      }
    };
  }

  /**
   * Counts the statistics of up to `max` of the sessions a bulk import left waiting
   * (`deferSearch`), in one transaction. Returns how many are still waiting: call again
   * (between turns of the event loop) until 0.
   */
  settleStats(max = STATS_SLICE): number {
    if (!this.sql.stmt("SELECT 1 FROM stats_backlog LIMIT 1").get()) return 0;
    return this.transaction(() => settleStats(this.sql, max));
  }

  /**
   * The next plain frames to compress after `after` (null: none left), read without taking
   * the write lock, to be compressed elsewhere (a worker) and given to `applyCompressedFrames`.
   */
  readPlainFrames(
    after: PlainCursor | null = null,
    max = COMPRESS_SLICE_FRAMES,
  ): PlainSlice | null {
    if (!after && !this.payloads.hasPlain()) return null;
    return this.payloads.readPlain(after, max);
  }

  /**
   * Stores slices of plain frames compressed (each frame by `compressPlainFrames`) in one
   * transaction (a row of `frames` each), and removes the packs that held only plain frames
   * once it commits.
   */
  applyCompressedFrames(slices: readonly CompressedSlice[]): void {
    const emptied = this.transaction(() =>
      new Set(
        slices.flatMap(({ slice, compressed }) => this.payloads.applyCompressed(slice, compressed)),
      )
    );
    for (const n of emptied) this.payloads.packs?.remove(n);
  }

  /**
   * Indexes up to `max` operations of the search backlog in one transaction. Returns how many
   * are still waiting.
   */
  indexBacklog(max = BACKLOG_SLICE): number {
    this.transaction(() => indexBacklog(this.sql, this.payloads, max));
    return backlogSize(this.sql);
  }

  /**
   * Gives up to `maxPages` of the free pages an index build left back to the disk, when they
   * are worth it (compact.ts, `vacuumFreePages`). Returns how many are left to give back: call
   * again (between turns of the event loop) until 0.
   */
  vacuumFreePages(maxPages = VACUUM_SLICE_PAGES): number {
    return vacuumFreePages(this.sql, maxPages);
  }

  /** The next slice of the search backlog after rowid `after`, as stored (backlog.ts). */
  readBacklog(after = 0, max = BACKLOG_SLICE): BacklogSlice | null {
    return readBacklog(this.sql, this.payloads, after, max);
  }

  /** Puts a slice's texts (built elsewhere) in the index; how many operations left the backlog. */
  applyBacklogTexts(slice: BacklogSlice, texts: readonly string[]): number {
    return this.transaction(() => applyTexts(this.sql, slice, texts));
  }

  /** How many stored operations search does not see yet (the backlog). */
  searchBacklog(): number {
    return backlogSize(this.sql);
  }

  /**
   * Groups the transactions of a bulk import: up to `limits` units share one commit, and each
   * unit stays atomic (see `WriteGroup.run`).
   */
  writeGroup(limits: WriteGroupLimits = DEFAULT_GROUP_LIMITS): WriteGroup {
    return new WriteGroup({
      begin: () => this.begin(),
      commit: () => {
        try {
          this.commit();
        } catch (e) {
          this.rollback();
          throw e;
        }
      },
      rollback: () => this.rollback(),
      join: (on) => this.joinNested = on,
    }, limits);
  }

  /** Every source unit's epoch and checkpoint, by path (or only those of `paths`). */
  sourceCheckpoints(paths?: readonly string[]): Map<string, UnitCheckpoint> {
    return sourceCheckpoints(this.sql, paths);
  }

  /** The importer's state saved with a unit's checkpoint. */
  sourceState(path: string): unknown {
    return sourceState(this.sql, path);
  }

  /** The records a unit's log gave before (`UnitResult.seen`), or undefined for none. */
  sourceSeen(path: string): Uint8Array | undefined {
    return sourceSeen(this.sql, path);
  }

  getSource(path: string): SourceRow | null {
    return getSource(this.sql, path);
  }

  /**
   * A source unit whose file is gone: its operations stay, marked kept (no longer on disk),
   * its checkpoint is dropped. Returns the sessions it contributed to.
   */
  markUnitGone(path: string): string[] {
    return this.transaction(() => markUnitGone(this.writer(), path));
  }

  /**
   * Settles the sessions of a log whose sliced read stopped before its last slice (apply.ts's
   * settleSlices): the slices stored leave that to the last.
   */
  settleSlices(path: string): void {
    this.transaction(() => settleSlices(this.writer(), path));
  }

  /** The store's clock: the stamp of the last unit applied (before a big log's first slice). */
  clock(): number {
    return changeClock(this.sql);
  }

  /** The operations the slices of `path` stored since `clock` wrote (apply.ts). */
  slicedOperations(path: string, clock: number): number {
    return slicedOperations(this.sql, path, clock);
  }

  /**
   * Applies one unit's import result in one transaction: importing the same bytes twice gives
   * identical rows, and what a re-read file no longer holds is kept, marked (apply.ts).
   * Returns the ids of the sessions it wrote to.
   */
  applyUnit(
    unit: SourceUnit,
    result: PreparedUnit,
    epoch: number,
    admit: AdmitOptions = {},
  ): string[] {
    if (result.mode === "unchanged" && !result.issues.length) return [];
    return this.transaction(() =>
      applyUnit(
        {
          sql: this.sql,
          payloads: this.payloads,
          changes: this.changes,
          deferSearch: this.deferred,
        },
        unit,
        result,
        epoch,
        admit,
      )
    );
  }

  // ---------------------------------------------------------------- the archive

  /**
   * Forgets sessions (full ids, see `requireSessionId`): each is deleted with everything it
   * owns, payloads no other session refers to included, and recorded so that no import brings
   * it back (forget.ts); then the space goes back to the disk: mostly dead packs compacted, the
   * deleted payloads' bytes zeroed in the others, the database vacuumed (compact.ts). Outside
   * any transaction. `dryRun` says what would go and changes nothing.
   */
  forget(ids: readonly string[], options: ForgetOptions = {}): ForgetOutcome {
    if (this.db.isTransaction) throw new TypeError("forget() runs outside a transaction");
    for (const id of ids) {
      if (!this.queries.getSession(id)) {
        throw new ChronicleError("not_found", `no session "${id}" (see \`chronicle sessions\`)`);
      }
    }
    const now = (options.now?.() ?? new Date()).toISOString();
    let rows: ReturnType<typeof forgetRows> | undefined;
    // What is deleted is overwritten with zeros in its pages, not left in free space.
    const secure = Number(
      (this.db.prepare("PRAGMA secure_delete").get() as { secure_delete: number }).secure_delete,
    );
    this.db.exec("PRAGMA secure_delete = ON");
    try {
      this.transaction(() => {
        rows = forgetRows(this.sql, ids, now);
        if (options.dryRun) throw DRY_RUN;
        // what stays of the frames that lose payloads, written elsewhere: the frames go whole
        const lost = this.payloads.rewrite(rows.rewrite);
        this.payloads.dropFrames(rows.frames, lost);
      });
    } catch (e) {
      if (e !== DRY_RUN) throw e;
    } finally {
      this.db.exec(`PRAGMA secure_delete = ${secure ? "ON" : "OFF"}`);
    }
    const { dead, rewrite: _moved, frames: _frames, ...counts } = rows!;
    return {
      dry_run: options.dryRun === true,
      ...counts,
      reclaim: options.dryRun ? null : this.reclaim(dead, options),
    };
  }

  /** Gives back the space a forget freed (see compact.ts). */
  private reclaim(dead: DeadRange[], options: ForgetOptions): ReclaimResult {
    const started = performance.now();
    const packsBefore = packBytes(this.payloads);
    const dbBefore = databaseBytes(this.sql);
    let victims: number[] = [];
    try {
      victims = this.transaction(() =>
        compactPacks(this.sql, this.payloads, options.deadShare ?? COMPACT_DEAD_SHARE)
      );
    } catch (e) {
      // another writer kept the lock past the busy timeout: the next forget compacts
      if (!isBusy(e)) throw e;
    }
    // after the commit that repointed their payloads (compact.ts)
    for (const n of victims) this.payloads.packs?.remove(n);
    const scrubbed = scrubDead(this.payloads, dead.filter((d) => !victims.includes(d.pack)));
    this.payloads.dropInflated(); // no forgotten bytes kept in memory either
    const wal = options.vacuum === false
      ? { pages: "none" as const, walTruncated: false }
      : reclaimPages(this.sql, () => this.changes.prepareTemp());
    return {
      packs_compacted: victims.length,
      scrubbed_bytes: scrubbed,
      pack_bytes_before: packsBefore,
      pack_bytes_after: packBytes(this.payloads),
      db_bytes_before: dbBefore,
      db_bytes_after: databaseBytes(this.sql),
      pages: wal.pages,
      db_free_bytes: freeBytes(this.sql),
      wal_truncated: wal.walTruncated,
      ms: Math.round(performance.now() - started),
    };
  }

  /** The sessions of a project folder or below it (as `--project` selects them), oldest first. */
  projectSessionIds(project: string): string[] {
    return projectSessionIds(this.sql, project);
  }

  /**
   * The source units that feed only stored sessions of excluded projects (`excludedProject`
   * says which folders): an import leaves them unread.
   */
  heldUnits(excludedProject: (path: string) => boolean): Set<string> {
    return heldUnits(this.sql, excludedProject);
  }

  /**
   * The projects each unit's earlier passes left sessions of out (the exclude list), by path:
   * a unit whose project is no longer excluded is read again from its start.
   */
  excludedMarks(): Map<string, string[]> {
    return excludedMarks(this.sql);
  }

  /** Every forgotten session, the last forgotten first. */
  forgottenSessions(): ForgottenSession[] {
    return forgottenSessions(this.sql);
  }

  /**
   * Closes the pack files this connection holds open (they open again when read): after
   * another connection compacted packs, so that removed ones give their space back now.
   */
  releasePacks(): void {
    this.payloads.packs?.close();
  }

  /**
   * What {@link putCanonicalSession} would come to without writing, when that needs neither the
   * session nor its payloads ("forgotten", "unchanged", "kept_local"; see canonical.ts's
   * `canonicalSkip`); null when it would write. The stored session's checksum is hashed from
   * its outline and pages, never the session whole: an export of a session of 35,000 steps
   * imported again read its 48,702 payloads and held the stored session to say "unchanged".
   */
  canonicalSkip(id: string, sessionSha256: string): CanonicalImportOutcome | null {
    return canonicalSkip(this.sql, id, sessionSha256, () => this.storedSessionSha(id));
  }

  /**
   * The last stored session's checksum hashed: its id, the store's `changeStamp` then and the
   * checksum. An import of a changed export asks for it twice with nothing written between (its
   * `canonicalSkip`, then its write's), and the big session's takes about 2 s.
   */
  private storedShaKept: { id: string; stamp: string; sha: string | null } | null = null;

  /** The checksum of the `session.json` the stored session exports to; null when none is. */
  private storedSessionSha(id: string): string | null {
    const stamp = this.queries.changeStamp();
    const kept = this.storedShaKept;
    if (kept?.id === id && kept.stamp === stamp) return kept.sha;
    const sha = this.hashStoredSession(id);
    this.storedShaKept = { id, stamp, sha };
    return sha;
  }

  private hashStoredSession(id: string): string | null {
    const outline = this.queries.sessionOutline(id);
    if (!outline) return null;
    const hash = createHash("sha256");
    const pages = this.queries.operationPages(id);
    // the pages' garbage, collected as it grows
    const hashed = collectEvery(32 << 20);
    for (const piece of sessionJsonChunks({ outline, pages })) {
      hash.update(piece);
      hashed(piece.length);
    }
    return hash.digest("hex");
  }

  /**
   * Stores an exported canonical session whole, in one transaction: unless the store already
   * holds exactly these bytes, or this machine's own logs hold the session (canonical.ts).
   */
  putCanonicalSession(
    session: CanonicalSession,
    payloads: Map<string, Uint8Array>,
    options: { sessionSha256: string; now?: () => Date },
  ): CanonicalImportOutcome {
    const id = session.session.id;
    return this.transaction(() =>
      putCanonical(this.writer(), session, payloads, {
        ...options,
        storedSha: () => this.storedSessionSha(id),
      })
    );
  }

  /**
   * {@link putCanonicalSession} for a session read as it streams in (an export's files): one
   * transaction from its first page to its last, so a page that fails (a file that changed
   * while it was read) leaves the store as it was. Never nested in another transaction.
   */
  async putCanonicalPages(
    session: StreamedSession,
    options: { now?: () => Date } = {},
  ): Promise<CanonicalImportOutcome> {
    if (this.db.isTransaction) {
      throw new TypeError("putCanonicalPages runs in a transaction of its own");
    }
    const id = session.head.session.id;
    this.begin();
    try {
      const write = beginCanonical(this.writer(), session, {
        ...options,
        sessionSha256: session.sessionSha256,
        storedSha: () => this.storedSessionSha(id),
      });
      if (typeof write !== "string") {
        // the payloads of pages written are garbage once they are
        const written = collectEvery(32 << 20);
        for await (const page of session.pages) {
          write.page(page);
          for (const bytes of page.payloads.values()) written(bytes.byteLength);
        }
      }
      const outcome = typeof write === "string" ? write : write.finish();
      this.commit();
      return outcome;
    } catch (e) {
      this.rollback();
      throw e;
    }
  }

  /**
   * What the user marks on a session, in one transaction: a name (`title`; empty or null
   * clears it, too long is a RangeError) and a star (user_marks.ts). An import never changes
   * either. Returns the session's summary after, or null when there is no such session.
   */
  markSession(
    id: string,
    marks: SessionMarks,
    options: { now?: () => Date } = {},
  ): SessionSummary | null {
    const now = (options.now?.() ?? new Date()).toISOString();
    const found = this.transaction(() =>
      markSession({ sql: this.sql, changes: this.changes }, id, marks, now)
    );
    return found ? this.getSession(id) : null;
  }

  // ---------------------------------------------------------------- read side

  /**
   * A payload's bytes; null when unknown, or when its pack lost them (cut short, deleted,
   * overwritten): never bytes other than the ones its hash names.
   */
  payload(sha256: string): Uint8Array | null {
    return this.payloads.bytes(sha256);
  }

  /** Payload hashes in the order their bytes are stored; see `PayloadStore.storedOrder`. */
  payloadOrder(sha256s: readonly string[]): string[] {
    return this.payloads.storedOrder(sha256s);
  }

  /** The first `maxBytes` bytes of a payload (all of it when shorter). */
  payloadHead(sha256: string, maxBytes: number): Uint8Array | null {
    return this.payloads.head(sha256, maxBytes);
  }

  /** The text of a payload ref (UTF-8), cut at `max` characters when given. */
  payloadText(ref: PayloadRef | undefined, max?: number): string | null {
    return this.payloads.text(ref, max);
  }

  /**
   * Finds a session from what a user typed: its full id, its native id, or a prefix of
   * either that matches exactly one session. Null when none or several match.
   */
  resolveSessionId(wanted: string): string | null {
    return this.queries.resolveSessionId(wanted);
  }

  /**
   * The session a user named (as `resolveSessionId` finds it), or a ChronicleError that says
   * why not in one line: `not_found`, or `usage` naming the candidates of an ambiguous prefix.
   */
  requireSessionId(wanted: string): string {
    const { total, ids } = this.queries.sessionCandidates(wanted, CANDIDATES_SHOWN);
    if (total === 1) return ids[0];
    if (total === 0) {
      throw new ChronicleError("not_found", `no session "${wanted}" (see \`chronicle sessions\`)`);
    }
    const more = total > ids.length ? ` and ${total - ids.length} more` : "";
    throw new ChronicleError(
      "usage",
      `"${wanted}" matches ${total} sessions: ${ids.join(", ")}${more}; give more of the id`,
    );
  }

  /** The session's operations no longer in its agent's logs (kept by the store). */
  keptOps(id: string): Set<string> {
    return this.queries.keptOps(id);
  }

  getSession(id: string): SessionSummary | null {
    return this.queries.getSession(id);
  }

  /** One session's page header (summary, info, connections, counts); null when unknown. */
  sessionDetail(id: string): SessionDetail | null {
    return this.queries.detail(id);
  }

  listSessions(q: SessionQuery = {}): { total: number; items: SessionSummary[] } {
    return this.queries.listSessions(q);
  }

  /** The session's connections, main first, with guessed parents for orphan sub-agents. */
  connections(id: string): ReturnType<Queries["connections"]> {
    return this.queries.connections(id);
  }

  /** The one main thread the session view shows, or null when it shows all of them. */
  mainConnection(id: string): string | null {
    return this.queries.mainConnection(id);
  }

  /**
   * One page of a session's timeline, in the canonical order; with `textChars`, each
   * operation's own text only as far as that (then `text_bytes`: `operationText` reads it whole).
   */
  timeline(
    id: string,
    options: { offset?: number; limit?: number; connection?: string; textChars?: number } = {},
  ): { total: number; items: TimelineItem[] } {
    return this.queries.timeline(id, options);
  }

  /**
   * An operation's own text (prompt, reply, thinking), whole or its first `maxChars`
   * characters; null when none.
   */
  operationText(sessionId: string, opId: string, maxChars?: number): string | null {
    return this.queries.operationText(sessionId, opId, maxChars);
  }

  /** Position of an operation in its session's timeline (or one connection's). */
  seqOf(sessionId: string, opId: string, options: { connection?: string } = {}): number | null {
    return this.queries.seqOf(sessionId, opId, options);
  }

  /** Where an operation is, from the top thread down: empty when there is no such operation. */
  locate(sessionId: string, opId: string): LocatedOp[] {
    return this.queries.locate(sessionId, opId);
  }

  /** Changes whenever the store's content may have changed (any connection): for caches. */
  changeStamp(): string {
    return this.queries.changeStamp();
  }

  /** The stamp of the last unit applied: where a live view that has everything so far starts. */
  changeClock(): number {
    return changeClock(this.sql);
  }

  /**
   * A live view's question: the session's operations written after a cursor, in canonical
   * order with their places (see live_query.ts). Null when there is no such session.
   */
  sessionChanges(id: string, options: SessionChangesOptions): SessionChanges | null {
    return sessionChanges(this.sql, id, options, this.payloads.textOf);
  }

  /** The files a session was imported from: what a live view of it watches. */
  sourcePathsOf(id: string): string[] {
    return sessionSourcePaths(this.sql, id);
  }

  /** Full-text search over every operation; see `Search.search`. */
  search(q: string, f: SessionQuery = {}): SearchResult {
    return this.searcher.search(q, f);
  }

  /**
   * Tools, kinds, activity, errors, tokens and files of the operations `filter` selects: from
   * the statistics kept at import for all sessions, an agent's, a project's or one session's
   * (unless its kept rows are behind), from the operations themselves for a date range.
   * `fromOperations` always reads the operations (a check of the kept statistics, as a doctor
   * would run).
   */
  stats(filter: StatsFilter = {}, options: { fromOperations?: boolean } = {}): Stats {
    const kept = options.fromOperations ? null : keptStatsFor(filter);
    if (kept === "rollup") return rollupStats(this.sql, filter);
    const session = kept === "session" ? sessionStatsKept(this.sql, filter.session_id!) : null;
    return session ?? computeStats(this.sql, filter);
  }

  projects(): ProjectSummary[] {
    return this.queries.projects();
  }

  /**
   * Rebuilds the canonical session from its stored parts; with `textChars`, for a view only,
   * each operation's own text as far as that (`readViewDoc`; `operationText` reads it whole).
   */
  loadSession(id: string, options: { textChars?: number } = {}): CanonicalSession | null {
    return this.queries.loadSession(id, options);
  }

  /**
   * {@link loadSession} a page of operations at a time, awaiting `turn` between pages (a
   * server's turn of the event loop, so requests go between the pages of a big session).
   */
  loadSessionInTurns(
    id: string,
    options: { textChars?: number; turn: () => Promise<unknown> },
  ): Promise<CanonicalSession | null> {
    return this.queries.loadSessionInTurns(id, options);
  }

  /** A session's parts but its operations; see `Queries.sessionHead`. */
  sessionHead(id: string): Omit<SessionParts, "operations"> | null {
    return this.queries.sessionHead(id);
  }

  /** A session without its operations' bodies; see `Queries.sessionOutline`. */
  sessionOutline(id: string): SessionOutline | null {
    return this.queries.sessionOutline(id);
  }

  /** A session in parts of a page of operations each; see `Queries.sessionParts`. */
  sessionParts(
    id: string,
    options: { textChars?: number; steps?: number } = {},
  ): Iterable<CanonicalSession> {
    return this.queries.sessionParts(id, options);
  }

  /** A session's operations a page at a time, in order; see `Queries.operationPages`. */
  operationPages(
    id: string,
    options: { textChars?: number; steps?: number } = {},
  ): Iterable<OperationRecord[]> {
    return this.queries.operationPages(id, options);
  }

  /**
   * The store's own check: `PRAGMA quick_check`, and every pack payload read back against its
   * SHA-256 unless `verifyPacks` is false.
   */
  health(options: { verifyPacks?: boolean } = {}): StoreHealth {
    return storeHealth(this.sql, this.payloads, options);
  }

  /**
   * What imports recorded as going wrong: issues (info notes only with `notes`), loss windows,
   * and the problems of whole files; one session's with `sessionId`.
   */
  importIssues(
    options: { sessionId?: string; limit?: number; notes?: boolean } = {},
  ): ImportIssues {
    return importIssues(this.sql, options);
  }

  /** Counts for summaries: sessions, operations, issues, loss windows. */
  totals(): { sessions: number; operations: number; issues: number; loss_windows: number } {
    return this.queries.totals();
  }
}
