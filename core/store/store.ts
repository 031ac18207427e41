/**
 * The local store on node:sqlite: sessions, operations, content-addressed payloads and an FTS5
 * index, merged idempotently from import deltas.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  assembleSession,
  type CanonicalSession,
  type Checkpoint,
  ChronicleError,
  type Connection,
  type Epoch,
  type LossWindow,
  mergeInfo,
  type Operation,
  type OperationRecord,
  type PayloadRef,
  type SessionInfo,
  type SessionIssue,
  sha256Hex,
  type UsageEntry,
} from "../model/mod.ts";
import type { SourceUnit } from "../sources/types.ts";
import type { PreparedDelta, PreparedOp, PreparedUnit } from "./prepare.ts";
import {
  finishOp,
  indexText,
  type PackedPayloads,
  payloadAt,
  resultExcerpts,
  withSourceFile,
} from "./prepare.ts";
import { MIGRATIONS } from "./schema.ts";
import { PACK_LIMIT, PACK_MIN_BYTES, PACK_WRITE_SLICE, type PackFiles } from "./packs.ts";
import { VERSION } from "../version.ts";

/** The import pipeline that wrote a recording: Chronicle's own version. */
export const PIPELINE_VERSION = VERSION;

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
  sort?: "started_at" | "ended_at" | "op_count" | "title";
  order?: "asc" | "desc";
  /** Default 50, at most 1000. */
  limit?: number;
  offset?: number;
}

export interface SessionSummary {
  id: string;
  source: string;
  native_id: string;
  project_path: string | null;
  title: string | null;
  first_prompt: string | null;
  started_at: string | null;
  ended_at: string | null;
  op_count: number;
  error_count: number;
}

export interface TimelineItem {
  seq: number;
  op_id: string;
  connection: string;
  offset_ns: number;
  ts_ms: number | null;
  op: Operation;
}

export interface SearchHit {
  session_id: string;
  op_id: string;
  seq: number;
  kind: string;
  tool: string | null;
  rank: number;
  snippet: { text: string; match: boolean }[];
  session: {
    title: string | null;
    first_prompt: string | null;
    source: string;
    project_path: string | null;
  };
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
  state: unknown;
  sessions: string[];
  /** Problems with the unit itself from its last pass (vanished, locked, corrupt). */
  issues: SessionIssue[];
}

export interface StoreOptions {
  /** Milliseconds to wait for a lock held by another process. Default 5000. */
  busyTimeoutMs?: number;
  /** Where payload bytes go. Without it they stay in the database (in-memory stores, tests). */
  packs?: PackFiles;
  /** When to start the next pack, in bytes. Default {@link PACK_LIMIT}. */
  packLimit?: number;
}

const decoder = new TextDecoder();

/** When a write group commits: whichever limit is reached first. */
export interface WriteGroupLimits {
  units: number;
  /** Bytes read from the sources for the units in the group. */
  bytes: number;
  /** How long the group may hold the write lock, so other writers wait at most this. */
  ms: number;
}

const DEFAULT_GROUP_LIMITS: WriteGroupLimits = { units: 8, bytes: 32 << 20, ms: 250 };

/** See `ChronicleStore.writeGroup`. `close` commits what is open; call it in a `finally`. */
export class WriteGroup {
  private open = false;
  private units = 0;
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The units applied since the group began, to apply again after a rollback. */
  private applied: (() => unknown)[] = [];
  private failed: unknown;

  constructor(
    private readonly tx: {
      begin(): void;
      commit(): void;
      rollback(): void;
      /** While on, a nested `transaction` joins the open one instead of making a savepoint. */
      join(on: boolean): void;
    },
    private readonly limits: WriteGroupLimits,
  ) {}

  /**
   * Runs one unit's writes inside the group; commits when a limit is reached. When the unit
   * throws, the group is rolled back, the units before it in the group are applied again, and
   * the error goes to the caller: the failed unit leaves nothing behind. (Savepoints would do
   * the same at a cost on every unit; failures are rare.)
   */
  run<T>(bytes: number, fn: () => T): T {
    this.rethrow();
    if (!this.open) this.begin();
    this.tx.join(true);
    try {
      const out = fn();
      this.applied.push(fn);
      return out;
    } catch (e) {
      this.recover();
      throw e;
    } finally {
      this.tx.join(false);
      this.units++;
      this.bytes += bytes;
      if (this.units >= this.limits.units || this.bytes >= this.limits.bytes) this.close();
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.applied = [];
    this.rethrow();
    if (!this.open) return;
    this.open = false;
    this.tx.commit();
  }

  private rethrow(): void {
    if (this.failed === undefined) return;
    const e = this.failed;
    this.failed = undefined;
    throw e;
  }

  private begin(): void {
    this.tx.begin();
    this.open = true;
    this.units = this.bytes = 0;
    // While the importer waits for its next unit, the lock is released on time. A commit that
    // fails here (a full disk) is reported by the group's next call.
    this.timer = setTimeout(() => {
      try {
        this.close();
      } catch (e) {
        this.failed = e;
      }
    }, this.limits.ms);
  }

  private recover(): void {
    const again = this.applied;
    clearTimeout(this.timer);
    this.tx.rollback();
    this.open = false;
    this.applied = [];
    this.begin();
    try {
      for (const fn of again) fn(); // they succeeded a moment ago, on the same data
      this.applied = again;
    } catch (e) {
      // Not expected: give the group up. Those units' checkpoints went with it, so the next
      // pass imports them again.
      clearTimeout(this.timer);
      this.tx.rollback();
      this.open = false;
      throw e;
    }
  }
}

export class ChronicleStore {
  readonly db: DatabaseSync;
  private readonly stmts = new Map<string, StatementSync>();
  private savepoints = 0;
  /** Set by a write group: nested transactions join the group's (see `WriteGroup.run`). */
  private joinNested = false;
  private readonly packs: PackFiles | null;
  private readonly packLimit: number;
  /** The pack new payloads go to; found on the first write. */
  private pack = 0;
  /** Packs written to since their last flush to disk. */
  private readonly unsynced = new Set<number>();
  /** A bulk import: no flush to disk per transaction (see `relaxDurability`). */
  private relaxed = false;

  private constructor(db: DatabaseSync, options: StoreOptions) {
    this.db = db;
    this.packs = options.packs ?? null;
    this.packLimit = options.packLimit ?? PACK_LIMIT;
  }

  /** Opens (creating and migrating) the store at `path`, or `":memory:"`. */
  static open(path: string, options: StoreOptions = {}): ChronicleStore {
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(path);
      db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      // Payload blobs dominate the file: bigger pages mean fewer overflow pages. Only takes
      // effect when the database is created.
      db.exec("PRAGMA page_size = 16384");
      if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec("PRAGMA temp_store = MEMORY");
      db.exec("PRAGMA cache_size = -16384");
    } catch (e) {
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
    this.packs?.close();
  }

  /** Fills the (empty) search index from every stored operation, as an import would. */
  private reindexSearch(): void {
    const insert = this.db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
    const payloads = { get: (sha: string) => this.payload(sha) ?? undefined };
    for (const row of this.db.prepare("SELECT rowid, doc FROM operations").iterate()) {
      const { rowid, doc } = row as { rowid: number; doc: string };
      const body = indexText(JSON.parse(doc) as Operation, payloads);
      if (body) insert.run(rowid, body);
    }
  }

  /** Commits the open transaction; outside a bulk import, the packs it wrote reach the disk first. */
  private commit(): void {
    if (!this.relaxed) this.syncPacks();
    this.db.exec("COMMIT");
  }

  private syncPacks(): void {
    for (const n of this.unsynced) this.packs?.sync(n);
    this.unsynced.clear();
  }

  private stmt(sql: string): StatementSync {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private migrate(): void {
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const done = new Set(
      (this.db.prepare("SELECT version FROM migrations").all() as { version: number }[]).map((r) =>
        r.version
      ),
    );
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      this.transaction(() => {
        this.db.exec(m.sql);
        if (m.reindex) this.reindexSearch();
        this.db.prepare("INSERT INTO migrations VALUES (?, ?, ?)").run(
          m.version,
          m.name,
          new Date().toISOString(),
        );
      });
    }
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
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const out = fn();
      this.commit();
      return out;
    } catch (e) {
      this.db.exec("ROLLBACK");
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
      this.syncPacks();
      this.db.exec("PRAGMA synchronous = NORMAL");
      try {
        this.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      } catch {
        // a reader holds the WAL; SQLite checkpoints later
      }
    };
  }

  /**
   * Groups the transactions of a bulk import: up to `limits` units share one commit, and each
   * unit stays atomic (see `WriteGroup.run`). The pages every unit rewrites (indexes, search
   * segments) then reach the WAL once a group instead of once a unit.
   */
  writeGroup(limits: WriteGroupLimits = DEFAULT_GROUP_LIMITS): WriteGroup {
    return new WriteGroup({
      begin: () => this.db.exec("BEGIN IMMEDIATE"),
      commit: () => {
        try {
          this.commit();
        } catch (e) {
          if (this.db.isTransaction) this.db.exec("ROLLBACK");
          throw e;
        }
      },
      rollback: () => this.db.exec("ROLLBACK"),
      join: (on) => this.joinNested = on,
    }, limits);
  }

  /** Every source unit's epoch and checkpoint, by path: what an import pass plans from. */
  sourceCheckpoints(): Map<string, { epoch: number; checkpoint: Checkpoint | null }> {
    const rows = this.stmt("SELECT path, epoch, checkpoint FROM sources").all() as {
      path: string;
      epoch: number;
      checkpoint: string | null;
    }[];
    return new Map(rows.map((r) => [r.path, {
      epoch: Number(r.epoch),
      checkpoint: r.checkpoint ? JSON.parse(r.checkpoint) : null,
    }]));
  }

  /** The importer's state saved with a unit's checkpoint. */
  sourceState(path: string): unknown {
    const row = this.stmt("SELECT state FROM sources WHERE path = ?").get(path) as
      | { state: string | null }
      | undefined;
    return row?.state ? JSON.parse(row.state) : null;
  }

  getSource(path: string): SourceRow | null {
    const row = this.stmt("SELECT * FROM sources WHERE path = ?").get(path) as
      | Record<string, string | number | null>
      | undefined;
    if (!row) return null;
    return {
      path: String(row.path),
      source: String(row.source),
      epoch: Number(row.epoch),
      checkpoint: row.checkpoint ? JSON.parse(String(row.checkpoint)) : null,
      state: row.state ? JSON.parse(String(row.state)) : null,
      sessions: JSON.parse(String(row.sessions)),
      issues: JSON.parse(String(row.issues)),
    };
  }

  /** Source units whose files are gone: their sessions stay, their checkpoints are dropped. */
  forgetSource(path: string): void {
    this.stmt("DELETE FROM sources WHERE path = ?").run(path);
  }

  /**
   * Applies one unit's import result in one transaction. A full re-read first removes what
   * the file contributed before, so importing the same bytes twice gives identical rows.
   */
  applyUnit(unit: SourceUnit, result: PreparedUnit, epoch: number): void {
    if (result.mode === "unchanged" && !result.issues.length) return;
    this.transaction(() => {
      const prev = this.getSource(unit.path);
      const touched = new Set<string>();
      const fresh = !prev;
      if (prev && result.mode === "full") {
        for (const sid of prev.sessions) {
          this.removeFileRows(sid, unit.path);
          touched.add(sid);
        }
      }
      this.storePayloads(result.payloads);
      const now = new Date().toISOString();
      for (const d of result.deltas) {
        this.applyDelta(d, result, epoch, now, fresh && result.mode === "full");
        touched.add(d.session_id);
      }
      for (const sid of touched) this.refreshAggregates(sid);
      const sessions = new Set([
        ...(prev?.sessions ?? []),
        ...result.deltas.map((d) => d.session_id),
      ]);
      if (result.mode === "full" && prev) {
        // sessions the file no longer mentions lose nothing else; keep the list current
        for (const sid of prev.sessions) {
          if (!result.deltas.some((d) => d.session_id === sid)) sessions.delete(sid);
        }
      }
      this.stmt(
        `INSERT INTO sources (path, source, epoch, checkpoint, state, sessions, issues, imported_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET epoch = excluded.epoch, checkpoint = excluded.checkpoint,
           state = excluded.state, sessions = excluded.sessions, issues = excluded.issues,
           imported_at = excluded.imported_at`,
      ).run(
        unit.path,
        unit.source,
        epoch,
        result.checkpoint ? JSON.stringify(result.checkpoint) : null,
        result.state === undefined ? null : JSON.stringify(result.state),
        JSON.stringify([...sessions]),
        JSON.stringify(result.issues),
        now,
      );
    });
  }

  /**
   * Stores the payloads not stored yet: a big one in a pack when the store has them (one write
   * for the new ones, at the end of the current pack), the others in the database. Runs inside
   * the unit's transaction, so no other writer appends meanwhile.
   */
  private storePayloads(packed: PackedPayloads): void {
    if (!packed.sha256.length) return;
    const inline = this.stmt(
      "INSERT OR IGNORE INTO payloads (sha256, size, bytes) VALUES (?, ?, ?)",
    );
    const big: [string, Uint8Array][] = [];
    for (let i = 0; i < packed.sha256.length; i++) {
      const bytes = payloadAt(packed, i);
      if (this.packs && bytes.byteLength >= PACK_MIN_BYTES) big.push([packed.sha256[i], bytes]);
      else inline.run(packed.sha256[i], bytes.byteLength, bytes);
    }
    if (!big.length) return;
    const packs = this.packs!;
    let n = Math.max(this.pack, 1);
    let end = packs.size(n);
    while (end >= this.packLimit) end = packs.size(++n);
    this.pack = n;
    const insert = this.stmt(
      `INSERT OR IGNORE INTO payloads (sha256, size, bytes, pack, pack_offset)
       VALUES (?, ?, X'', ?, ?)`,
    );
    const fresh: Uint8Array[] = [];
    let length = 0;
    for (const [sha, bytes] of big) {
      if (Number(insert.run(sha, bytes.byteLength, n, end + length).changes) === 1) {
        fresh.push(bytes);
        length += bytes.byteLength;
      }
    }
    if (!length) return;
    this.unsynced.add(n);
    // Consecutive payloads go out together, up to a slice at a time.
    let at = end;
    let batch: Uint8Array[] = [];
    let size = 0;
    const flush = () => {
      if (!batch.length) return;
      let out = batch[0];
      if (batch.length > 1) {
        out = new Uint8Array(size);
        for (let k = 0, o = 0; k < batch.length; o += batch[k++].byteLength) out.set(batch[k], o);
      }
      packs.write(n, at, out);
      at += size;
      batch = [];
      size = 0;
    };
    for (const bytes of fresh) {
      if (size + bytes.byteLength > PACK_WRITE_SLICE) flush();
      batch.push(bytes);
      size += bytes.byteLength;
    }
    flush();
  }

  private removeFileRows(sessionId: string, file: string): void {
    const rowids = this.stmt("SELECT rowid FROM operations WHERE session_id = ? AND file = ?").all(
      sessionId,
      file,
    ) as { rowid: number }[];
    const delFts = this.stmt("DELETE FROM operations_fts WHERE rowid = ?");
    for (const r of rowids) delFts.run(r.rowid);
    for (
      const table of [
        "operations",
        "connections",
        "usage",
        "session_issues",
        "loss_windows",
        "epochs",
      ]
    ) {
      this.stmt(`DELETE FROM ${table} WHERE session_id = ? AND file = ?`).run(sessionId, file);
    }
  }

  private applyDelta(
    d: PreparedDelta,
    result: PreparedUnit,
    epoch: number,
    now: string,
    fresh: boolean,
  ): void {
    const existing = this.stmt("SELECT info, recording, extensions FROM sessions WHERE id = ?").get(
      d.session_id,
    ) as { info: string; recording: string; extensions: string } | undefined;
    let info: SessionInfo;
    let recording: CanonicalSession["recording"];
    let extensions: Record<string, unknown>;
    if (existing) {
      info = mergeInfo(JSON.parse(existing.info), d.info, d.primary);
      recording = JSON.parse(existing.recording);
      if (!recording.source_paths.includes(d.file)) {
        recording.source_paths = [...recording.source_paths, d.file].sort();
      }
      extensions = JSON.parse(existing.extensions);
    } else {
      info = { ...d.info, project: d.info.project ?? {} };
      recording = {
        id: `rec_${crypto.randomUUID()}`,
        source: d.info.source,
        source_paths: [d.file],
        pipeline_version: PIPELINE_VERSION,
      };
      extensions = {};
    }
    for (const [k, v] of Object.entries(d.extensions ?? {})) {
      extensions[k] = typeof v === "object" && v && !Array.isArray(v)
        ? { ...(extensions[k] as object), ...v }
        : v;
    }
    this.stmt(
      `INSERT INTO sessions (id, source, native_id, project_path, title, started_at, ended_at,
         info, recording, extensions, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET project_path = excluded.project_path, title = excluded.title,
         started_at = excluded.started_at, ended_at = excluded.ended_at, info = excluded.info,
         recording = excluded.recording, extensions = excluded.extensions,
         updated_at = excluded.updated_at`,
    ).run(
      d.session_id,
      info.source,
      info.native_id,
      info.project.path ?? null,
      info.title ?? null,
      info.started_at ?? null,
      info.ended_at ?? null,
      JSON.stringify(info),
      JSON.stringify(recording),
      JSON.stringify(extensions),
      now,
    );
    const upConn = this.stmt(
      `INSERT INTO connections (session_id, id, file, doc) VALUES (?, ?, ?, ?)
       ON CONFLICT(session_id, id) DO UPDATE SET doc = excluded.doc, file = excluded.file`,
    );
    for (const c of d.connections) {
      upConn.run(d.session_id, c.id, d.file, JSON.stringify(this.mergeConnection(d.session_id, c)));
    }
    // Plain inserts only when nothing can conflict: a new file of a new session.
    const noConflict = fresh && !existing;
    for (const rec of d.operations) {
      this.upsertOperation(d, rec, { payloads: result.payloads, fresh: noConflict });
      // The call names the sub-agent it spawned; the sub-agent's file may come before or after.
      if (rec.spawns) {
        this.stmt(
          `UPDATE connections SET doc = json_set(doc, '$.parent_op', ?)
           WHERE session_id = ? AND id = ? AND json_extract(doc, '$.parent_op') IS NULL`,
        ).run(rec.id, d.session_id, rec.spawns);
      }
    }
    const upUsage = this.stmt(
      `INSERT INTO usage (session_id, key, file, model, input, output, cache_read, cache_write, ts_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(session_id, key) DO UPDATE SET model = excluded.model, input = excluded.input,
         output = excluded.output, cache_read = excluded.cache_read,
         cache_write = excluded.cache_write`,
    );
    for (const u of d.usage) {
      upUsage.run(
        d.session_id,
        u.key,
        d.file,
        u.model,
        u.usage.input,
        u.usage.output,
        u.usage.cache_read,
        u.usage.cache_write,
        null,
      );
    }
    const insIssue = this.stmt(
      "INSERT INTO session_issues (session_id, file, epoch, doc) VALUES (?, ?, ?, ?)",
    );
    for (const i of d.issues) insIssue.run(d.session_id, d.file, epoch, JSON.stringify(i));
    const insLoss = this.stmt("INSERT INTO loss_windows (session_id, file, doc) VALUES (?, ?, ?)");
    for (const l of d.loss_windows) insLoss.run(d.session_id, d.file, JSON.stringify(l));
    this.stmt(
      `INSERT OR REPLACE INTO epochs (session_id, file, ordinal, imported_at, checkpoint)
       VALUES (?, ?, ?, ?, ?)`,
    ).run(
      d.session_id,
      d.file,
      epoch,
      now,
      result.checkpoint ? JSON.stringify(result.checkpoint) : null,
    );
  }

  /** Keeps what another file said about a connection (its parent) when this one did not. */
  private mergeConnection(sessionId: string, c: Connection): Connection {
    if (c.parent_op && c.agent_type) return c;
    const row = this.stmt("SELECT doc FROM connections WHERE session_id = ? AND id = ?").get(
      sessionId,
      c.id,
    ) as { doc: string } | undefined;
    const old = row ? JSON.parse(row.doc) as Connection : undefined;
    let parent = c.parent_op ?? old?.parent_op;
    if (!parent && c.kind === "subagent") {
      // The spawning call may have been imported first, from the main file.
      const spawner = this.stmt(
        `SELECT op_id FROM operations WHERE session_id = ? AND kind = 'task'
           AND json_extract(doc, '$.spawns') = ? LIMIT 1`,
      ).get(sessionId, c.id) as { op_id: string } | undefined;
      parent = spawner?.op_id;
    }
    const merged: Connection = { ...c };
    if (parent) merged.parent_op = parent;
    const agentType = c.agent_type ?? old?.agent_type;
    if (agentType) merged.agent_type = agentType;
    return merged;
  }

  private upsertOperation(
    d: PreparedDelta,
    rec: PreparedOp,
    { payloads, fresh }: { payloads: PackedPayloads; fresh: boolean },
  ): void {
    const { is_error, body } = finishOp(rec, payloads);
    const values = [
      d.session_id,
      rec.id,
      rec.connection,
      d.file,
      rec.order.ts_ms,
      rec.order.rank,
      rec.order.line,
      rec.order.block,
      rec.kind,
      rec.effect,
      rec.tool,
      rec.target,
      is_error,
      rec.completeness,
      rec.model,
      rec.doc,
    ] as const;
    // A file read for the first time cannot conflict: a plain insert is much cheaper.
    const rowid = fresh
      ? Number(this.stmt(INSERT_OP).run(...values).lastInsertRowid)
      : (this.stmt(UPSERT_OP).get(...values) as { rowid: number }).rowid;
    if (!fresh) this.stmt("DELETE FROM operations_fts WHERE rowid = ?").run(rowid);
    if (body) this.stmt(INSERT_FTS).run(rowid, body);
  }

  private refreshAggregates(sessionId: string): void {
    this.stmt(
      `UPDATE sessions SET
         op_count = (SELECT count(*) FROM operations WHERE session_id = ?1),
         error_count = (SELECT count(*) FROM operations WHERE session_id = ?1 AND is_error = 1),
         first_prompt = (SELECT substr(json_extract(doc, '$.text'), 1, 300) FROM operations
           WHERE session_id = ?1 AND kind = 'prompt' AND connection = 'main'
             AND json_extract(doc, '$.injected') IS NULL
           ORDER BY ts_ms, rank, line, block LIMIT 1)
       WHERE id = ?1`,
    ).run(sessionId);
    const gone = this.stmt(
      "SELECT count(*) AS n FROM operations WHERE session_id = ?",
    ).get(sessionId) as { n: number };
    const sources = this.stmt(
      "SELECT count(*) AS n FROM epochs WHERE session_id = ?",
    ).get(sessionId) as { n: number };
    if (gone.n === 0 && sources.n === 0) this.deleteSession(sessionId);
  }

  private deleteSession(id: string): void {
    for (
      const t of ["operations", "connections", "usage", "session_issues", "loss_windows", "epochs"]
    ) this.stmt(`DELETE FROM ${t} WHERE session_id = ?`).run(id);
    this.stmt("DELETE FROM sessions WHERE id = ?").run(id);
  }

  // ---------------------------------------------------------------- read side

  /**
   * A payload's bytes; null when unknown, or when its pack lost them (cut short, deleted,
   * overwritten): never bytes other than the ones its hash names.
   */
  payload(sha256: string): Uint8Array | null {
    return this.payloadHead(sha256, Infinity);
  }

  /** The first `maxBytes` bytes of a payload (all of it when shorter). */
  payloadHead(sha256: string, maxBytes: number): Uint8Array | null {
    const row = this.stmt(
      "SELECT size, pack, pack_offset, bytes FROM payloads WHERE sha256 = ?",
    ).get(sha256) as
      | { size: number; pack: number | null; pack_offset: number | null; bytes: Uint8Array }
      | undefined;
    if (!row) return null;
    if (row.pack === null) {
      return row.bytes.byteLength > maxBytes ? row.bytes.subarray(0, maxBytes) : row.bytes;
    }
    if (!this.packs) return null;
    const want = Math.min(row.size, maxBytes);
    const bytes = this.packs.read(row.pack, row.pack_offset ?? 0, want);
    if (bytes.byteLength !== want) return null;
    // A whole payload is checked against its hash (a file the store does not control can
    // change under it); a head is only ever read for heuristics and excerpts.
    return want === row.size && sha256Hex(bytes) !== sha256 ? null : bytes;
  }

  /** The text of a payload ref (UTF-8), cut at `max` characters when given. */
  payloadText(ref: PayloadRef | undefined, max?: number): string | null {
    if (!ref) return null;
    if ("inline" in ref) return max ? ref.inline.slice(0, max) : ref.inline;
    if (!("sha256" in ref)) return null;
    // UTF-8 takes at most 4 bytes a character.
    const bytes = this.payloadHead(ref.sha256, max ? max * 4 : Infinity);
    if (!bytes) return null;
    const text = decoder.decode(bytes);
    return max ? text.slice(0, max) : text;
  }

  /**
   * Finds a session from what a user typed: its full id, its native id, or a prefix of
   * either that matches exactly one session. Null when none or several match.
   */
  resolveSessionId(wanted: string): string | null {
    if (!wanted) return null;
    const exact = this.stmt("SELECT id FROM sessions WHERE id = ? OR native_id = ? LIMIT 2").all(
      wanted,
      wanted,
    ) as { id: string }[];
    if (exact.length === 1) return exact[0].id;
    const like = likePrefix(wanted);
    const rows = this.stmt(
      `SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' OR native_id LIKE ?1 ESCAPE '\\' LIMIT 2`,
    ).all(like) as { id: string }[];
    return rows.length === 1 ? rows[0].id : null;
  }

  getSession(id: string): SessionSummary | null {
    return (this.stmt(`SELECT ${SUMMARY_COLS} FROM sessions WHERE id = ?`).get(id) as
      | SessionSummary
      | undefined) ?? null;
  }

  listSessions(q: SessionQuery = {}): { total: number; items: SessionSummary[] } {
    const { where, params } = this.sessionWhere(q);
    const sortCol = {
      started_at: "started_at",
      ended_at: "ended_at",
      op_count: "op_count",
      title: "coalesce(title, first_prompt)",
    }[
      q.sort ?? "started_at"
    ] ?? "started_at";
    const order = q.order === "asc" ? "ASC" : "DESC";
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 1000);
    const offset = Math.max(q.offset ?? 0, 0);
    const total = (this.db.prepare(`SELECT count(*) AS n FROM sessions ${where}`).get(
      ...params,
    ) as { n: number }).n;
    const items = this.db.prepare(
      `SELECT ${SUMMARY_COLS} FROM sessions ${where} ORDER BY ${sortCol} ${order} NULLS LAST, id LIMIT ? OFFSET ?`,
    ).all(...params, limit, offset) as unknown as SessionSummary[];
    return { total, items };
  }

  private sessionWhere(
    q: SessionQuery,
    alias = "",
  ): { where: string; params: (string | number)[] } {
    const a = alias ? `${alias}.` : "";
    const clauses: string[] = [];
    const params: (string | number)[] = [];
    if (q.source) {
      clauses.push(`${a}source = ?`);
      params.push(q.source);
    }
    if (q.project) {
      clauses.push(`(${a}project_path = ? OR ${a}project_path LIKE ? ESCAPE '\\')`);
      params.push(q.project, likePrefix(q.project.replace(/\/+$/, "") + "/"));
    }
    if (q.from) {
      clauses.push(`coalesce(${a}ended_at, ${a}started_at) >= ?`);
      params.push(q.from);
    }
    if (q.to) {
      clauses.push(`${a}started_at <= ?`);
      params.push(q.to.length === 10 ? `${q.to}T23:59:59.999Z` : q.to);
    }
    if (q.text) {
      const match = ftsQuery(q.text);
      if (match) {
        // The newest matches only: a word in every session would otherwise cost a join per
        // matching operation (seconds over a million of them).
        const ids = (this.stmt(
          `SELECT DISTINCT o.session_id AS id FROM (SELECT rowid FROM operations_fts
             WHERE operations_fts MATCH ? ORDER BY rowid DESC LIMIT ${TEXT_FILTER_WINDOW}) m
           JOIN operations o ON o.rowid = m.rowid`,
        ).all(match) as { id: string }[]).map((r) => r.id);
        clauses.push(
          `(${a}id IN (SELECT value FROM json_each(?)) OR ${a}title LIKE ? ESCAPE '\\')`,
        );
        params.push(JSON.stringify(ids), `%${likeEscape(q.text)}%`);
      }
    }
    return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
  }

  /** One page of a session's timeline, in the canonical order. */
  timeline(
    id: string,
    options: { offset?: number; limit?: number; connection?: string } = {},
  ): { total: number; items: TimelineItem[] } {
    const offset = Math.max(options.offset ?? 0, 0);
    const limit = Math.min(Math.max(options.limit ?? 200, 1), 5000);
    const start =
      (this.stmt("SELECT min(ts_ms) AS t FROM operations WHERE session_id = ?").get(id) as {
        t: number | null;
      }).t;
    const connFilter = options.connection ? "AND connection = ?" : "";
    const params: (string | number)[] = options.connection ? [id, options.connection] : [id];
    const total = (this.db.prepare(
      `SELECT count(*) AS n FROM operations WHERE session_id = ? ${connFilter}`,
    ).get(...params) as { n: number }).n;
    const rows = this.db.prepare(
      `SELECT op_id, connection, ts_ms, file, doc FROM operations WHERE session_id = ? ${connFilter}
       ORDER BY ts_ms, rank, line, block LIMIT ? OFFSET ?`,
    ).all(...params, limit, offset) as {
      op_id: string;
      connection: string;
      ts_ms: number | null;
      file: string;
      doc: string;
    }[];
    const items = rows.map((r, i) => ({
      seq: offset + i,
      op_id: r.op_id,
      connection: r.connection,
      ts_ms: r.ts_ms,
      offset_ns: r.ts_ms !== null && start !== null ? Math.round((r.ts_ms - start) * 1e6) : 0,
      op: withSourceFile(r.doc, r.file),
    }));
    return { total, items };
  }

  /** Position of an operation in its session's timeline (for deep links). */
  seqOf(sessionId: string, opId: string): number | null {
    const o = this.stmt(
      "SELECT ts_ms, rank, line, block FROM operations WHERE session_id = ? AND op_id = ?",
    ).get(sessionId, opId) as
      | { ts_ms: number | null; rank: number; line: number; block: number }
      | undefined;
    if (!o) return null;
    // Operations without a time sort first; both counts walk the (session, order) index.
    const untimed = o.ts_ms === null
      ? this.stmt(
        `SELECT count(*) AS n FROM operations WHERE session_id = ? AND ts_ms IS NULL
           AND (rank, line, block) < (?, ?, ?)`,
      ).get(sessionId, o.rank, o.line, o.block) as { n: number }
      : this.stmt(
        "SELECT count(*) AS n FROM operations WHERE session_id = ? AND ts_ms IS NULL",
      ).get(sessionId) as { n: number };
    if (o.ts_ms === null) return untimed.n;
    const timed = this.stmt(
      `SELECT count(*) AS n FROM operations WHERE session_id = ?
         AND (ts_ms, rank, line, block) < (?, ?, ?, ?)`,
    ).get(sessionId, o.ts_ms, o.rank, o.line, o.block) as { n: number };
    return untimed.n + timed.n;
  }

  /**
   * Full-text search over every operation. Every word must appear (the last one as a prefix,
   * for search-as-you-type). The newest {@link SEARCH_WINDOW} matches are ranked by BM25, so a
   * common word costs the same as a rare one; `total` counts matches up to that window
   * (`total_capped` says when there are more).
   */
  search(
    q: string,
    f: SessionQuery = {},
  ): { total: number; total_capped: boolean; hits: SearchHit[] } {
    const terms = queryTerms(q);
    if (!terms.length) return { total: 0, total_capped: false, hits: [] };
    const { where, params } = this.sessionWhere({ ...f, text: undefined }, "s");
    const limit = Math.min(Math.max(f.limit ?? 20, 1), 200);
    const offset = Math.max(f.offset ?? 0, 0);
    const filtered = where !== "";
    // Candidates: the newest matches with their BM25 score. A session filter is checked per
    // match, so its window is smaller and doubles as the count.
    const window = filtered ? SEARCH_FILTERED_WINDOW : SEARCH_WINDOW;
    const find = this.stmt(
      filtered
        ? `SELECT f.rowid AS rowid, bm25(operations_fts) AS score FROM operations_fts f
             JOIN operations o ON o.rowid = f.rowid JOIN sessions s ON s.id = o.session_id
             WHERE operations_fts MATCH ? AND ${where.slice(6)}
             ORDER BY f.rowid DESC LIMIT ${window}`
        : `SELECT rowid, bm25(operations_fts) AS score FROM operations_fts
             WHERE operations_fts MATCH ? ORDER BY rowid DESC LIMIT ${window}`,
    );
    const run = (m: string) => find.all(m, ...params) as { rowid: number; score: number }[];
    // A last word of PREFIX_INDEXED characters has its own prefix index, and a shorter one is
    // matched whole; a longer one is tried whole first and expanded only when that finds too
    // little.
    const last = terms[terms.length - 1];
    let candidates: { rowid: number; score: number }[];
    if (last.length <= PREFIX_INDEXED) candidates = run(ftsQuery(q)!);
    else {
      candidates = run(ftsQuery(q, { prefix: false })!);
      if (candidates.length < offset + limit) {
        const seen = new Set(candidates.map((c) => c.rowid));
        // Whole-word hits keep their place ahead of prefix-only hits.
        const worst = Math.max(0, ...candidates.map((c) => c.score));
        for (const c of run(ftsQuery(q)!)) {
          if (!seen.has(c.rowid) && candidates.length < window) {
            candidates.push({ rowid: c.rowid, score: worst + 1 + c.score + 1e3 });
          }
        }
      }
    }
    // The window doubles as the count: past it, "more than" is all a person needs.
    const n = candidates.length;
    const capped = n === window;
    candidates.sort((x, y) => x.score - y.score || y.rowid - x.rowid);
    const detail = this.stmt(
      `SELECT o.session_id, o.op_id, o.kind, o.tool, o.file, o.doc, s.title, s.first_prompt,
         s.source, s.project_path FROM operations o JOIN sessions s ON s.id = o.session_id
       WHERE o.rowid = ?`,
    );
    const rows = candidates.slice(offset, offset + limit).map((c) => ({
      ...(detail.get(c.rowid) as Record<string, string | number | null>),
      score: c.score,
    })) as Record<string, string | number | null>[];
    const hits = rows.map((r) => {
      const op = withSourceFile(String(r.doc), String(r.file));
      const text = [op.text, op.summary, op.target].filter(Boolean).join(" · ") ||
        (this.payloadText(op.response, 4000) ?? "");
      let snippet = makeSnippet(text, terms);
      if (!snippet.some((s) => s.match)) {
        const bytes = "sha256" in (op.response ?? {})
          ? this.payload((op.response as { sha256: string }).sha256)
          : null;
        for (const piece of bytes ? resultExcerpts(bytes) : []) {
          const alt = makeSnippet(piece, terms);
          if (alt.some((s) => s.match)) {
            snippet = alt;
            break;
          }
        }
      }
      return {
        session_id: String(r.session_id),
        op_id: String(r.op_id),
        seq: this.seqOf(String(r.session_id), String(r.op_id)) ?? 0,
        kind: String(r.kind),
        tool: r.tool === null ? null : String(r.tool),
        rank: Number(r.score),
        snippet,
        session: {
          title: r.title === null ? null : String(r.title),
          first_prompt: r.first_prompt === null ? null : String(r.first_prompt),
          source: String(r.source),
          project_path: r.project_path === null ? null : String(r.project_path),
        },
      };
    });
    return { total: n, total_capped: capped, hits };
  }

  projects(): ProjectSummary[] {
    return this.db.prepare(
      `SELECT project_path AS path, count(*) AS sessions, sum(op_count) AS operations,
         max(coalesce(ended_at, started_at)) AS last_active
       FROM sessions WHERE project_path IS NOT NULL GROUP BY project_path ORDER BY last_active DESC`,
    ).all() as unknown as ProjectSummary[];
  }

  /** Rebuilds the canonical session from its stored parts. */
  loadSession(id: string): CanonicalSession | null {
    const s = this.stmt("SELECT info, recording, extensions FROM sessions WHERE id = ?").get(id) as
      | { info: string; recording: string; extensions: string }
      | undefined;
    if (!s) return null;
    const rows = <T>(sql: string) => this.db.prepare(sql).all(id) as T[];
    const operations: OperationRecord[] = rows<Record<string, string | number | null>>(
      "SELECT op_id, connection, ts_ms, rank, line, block, file, doc FROM operations WHERE session_id = ?",
    ).map((r) => ({
      id: String(r.op_id),
      connection: String(r.connection),
      order: {
        ts_ms: r.ts_ms === null ? null : Number(r.ts_ms),
        rank: Number(r.rank),
        line: Number(r.line),
        block: Number(r.block),
      },
      op: withSourceFile(String(r.doc), String(r.file)),
    }));
    const connections = rows<{ doc: string }>(
      "SELECT doc FROM connections WHERE session_id = ? ORDER BY id = 'main' DESC, id",
    ).map((r) => JSON.parse(r.doc) as Connection);
    const usage: UsageEntry[] = rows<Record<string, string | number>>(
      "SELECT key, model, input, output, cache_read, cache_write FROM usage WHERE session_id = ? ORDER BY key",
    ).map((r) => ({
      key: String(r.key),
      model: String(r.model),
      usage: {
        input: Number(r.input),
        output: Number(r.output),
        cache_read: Number(r.cache_read),
        cache_write: Number(r.cache_write),
      },
    }));
    const epochs: Epoch[] = rows<Record<string, string | number | null>>(
      "SELECT file, ordinal, imported_at, checkpoint FROM epochs WHERE session_id = ? ORDER BY file, ordinal",
    ).map((r) => ({
      ordinal: Number(r.ordinal),
      imported_at: String(r.imported_at),
      checkpoints: r.checkpoint ? [JSON.parse(String(r.checkpoint)) as Checkpoint] : [],
    }));
    const loss_windows = rows<{ doc: string }>(
      "SELECT doc FROM loss_windows WHERE session_id = ? ORDER BY rowid",
    ).map((r) => JSON.parse(r.doc) as LossWindow);
    const issues = rows<{ doc: string }>(
      "SELECT doc FROM session_issues WHERE session_id = ? ORDER BY rowid",
    ).map((r) => JSON.parse(r.doc) as SessionIssue);
    return assembleSession({
      info: JSON.parse(s.info),
      recording: JSON.parse(s.recording),
      connections,
      operations,
      usage,
      epochs,
      loss_windows,
      issues,
      extensions: JSON.parse(s.extensions),
    });
  }

  /** Counts for summaries: sessions, operations, issues, loss windows. */
  totals(): { sessions: number; operations: number; issues: number; loss_windows: number } {
    const n = (sql: string) => (this.db.prepare(sql).get() as { n: number }).n;
    return {
      sessions: n("SELECT count(*) AS n FROM sessions"),
      operations: n("SELECT count(*) AS n FROM operations"),
      issues: n("SELECT count(*) AS n FROM session_issues"),
      loss_windows: n("SELECT count(*) AS n FROM loss_windows"),
    };
  }
}

/** How many of the newest matching operations the session list's text filter looks at. */
export const TEXT_FILTER_WINDOW = 50_000;
/** How many of the newest matches search ranks. */
export const SEARCH_WINDOW = 500;
/** The prefix length the search index holds (`prefix='3'` in the schema). */
const PREFIX_INDEXED = 3;
/** With a session filter, how many of the newest matching operations search ranks. */
export const SEARCH_FILTERED_WINDOW = 300;

const OP_COLS =
  "session_id, op_id, connection, file, ts_ms, rank, line, block, kind, effect, tool, target, is_error, completeness, model, doc";
const OP_PARAMS = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";

// Built once: the statement cache is keyed by the SQL text, whose hash a constant keeps.
const INSERT_OP = `INSERT INTO operations (${OP_COLS}) VALUES (${OP_PARAMS})`;
const UPSERT_OP = `INSERT INTO operations (${OP_COLS}) VALUES (${OP_PARAMS})
  ON CONFLICT(session_id, op_id) DO UPDATE SET connection = excluded.connection,
    file = excluded.file, ts_ms = excluded.ts_ms, rank = excluded.rank,
    line = excluded.line, block = excluded.block, kind = excluded.kind,
    effect = excluded.effect, tool = excluded.tool, target = excluded.target,
    is_error = excluded.is_error, completeness = excluded.completeness,
    model = excluded.model, doc = excluded.doc
  RETURNING rowid`;
const INSERT_FTS = "INSERT INTO operations_fts (rowid, body) VALUES (?, ?)";

const SUMMARY_COLS =
  "id, source, native_id, project_path, title, first_prompt, started_at, ended_at, op_count, error_count";

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => "\\" + c);
}
function likePrefix(s: string): string {
  return likeEscape(s) + "%";
}

/** Words of a user's query, lower-cased, without FTS syntax. */
export function queryTerms(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 16);
}

/**
 * Turns what a user typed into a safe FTS5 query: every word must appear, the last one as a
 * prefix (unless `prefix: false`) when it has at least {@link PREFIX_INDEXED} characters: a
 * shorter prefix would match nearly every word, without an index to do it quickly. Operators
 * typed by the user are treated as words, so no input is a syntax error.
 */
export function ftsQuery(q: string, options: { prefix?: boolean } = {}): string | null {
  const terms = queryTerms(q);
  if (!terms.length) return null;
  const prefix = options.prefix ?? true;
  return terms.map((t, i) =>
    prefix && i === terms.length - 1 && t.length >= PREFIX_INDEXED ? `"${t}"*` : `"${t}"`
  ).join(" AND ");
}

/** A window of text around the first match, split into matched and plain segments. */
export function makeSnippet(
  text: string,
  terms: string[],
  width = 160,
): { text: string; match: boolean }[] {
  const flat = text.replace(/\s+/g, " ");
  if (!terms.length) return [{ text: flat.slice(0, width), match: false }];
  const re = new RegExp(
    terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
    "giu",
  );
  const first = flat.search(re);
  const from = Math.max(0, (first < 0 ? 0 : first) - Math.floor(width / 3));
  const window = flat.slice(from, from + width);
  const out: { text: string; match: boolean }[] = [];
  if (from > 0) out.push({ text: "…", match: false });
  let last = 0;
  for (const m of window.matchAll(re)) {
    if (m.index! > last) out.push({ text: window.slice(last, m.index), match: false });
    out.push({ text: m[0], match: true });
    last = m.index! + m[0].length;
  }
  if (last < window.length) out.push({ text: window.slice(last), match: false });
  if (from + width < flat.length) out.push({ text: "…", match: false });
  return out;
}
