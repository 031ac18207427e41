/**
 * The store's connection and its statement cache, shared by the store's parts (applying units,
 * payloads, search, queries). Private to core/store: no module outside it runs SQL.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { ORDER_FIELDS } from "../model/delta.ts";

/** The canonical order of a session's operations in SQL, from core/model's `ORDER_FIELDS`. */
export const OP_ORDER = ORDER_FIELDS.join(", ");

/**
 * SQL: the number operations name the session `id` by (`sessions.num`, migration 26); `id` is
 * a parameter (`?`, `?1`) or a column. NULL, so matching nothing, for a session not stored.
 */
export const sessionNum = (id = "?") => `(SELECT num FROM sessions WHERE id = ${id})`;

export type SqlRow = Record<string, string | number | null>;

/**
 * Whether SQLite gave up because another connection holds the database (SQLITE_BUSY or
 * SQLITE_LOCKED, past the busy timeout): work that can wait for the next writer, not a failure.
 */
export function isBusy(e: unknown): boolean {
  const code = (e as { errcode?: unknown })?.errcode;
  if (typeof code === "number") return (code & 0xff) === 5 || (code & 0xff) === 6;
  return /\b(busy|locked)\b/i.test((e as Error)?.message ?? "");
}

/**
 * Runs `attempt` again while SQLite answers busy, for up to `timeoutMs`, a short while between
 * tries. For what the busy timeout does not cover: SQLite gives up at once, without waiting,
 * when waiting could deadlock, as when two connections both turn a new database to WAL (two
 * `chronicle import`s on a new data folder). Any other error, or busy past the time, is thrown.
 */
export function retryWhileBusy<T>(
  attempt: () => T,
  timeoutMs: number,
  pause: (ms: number) => void = sleepSync,
): T {
  const until = Date.now() + timeoutMs;
  for (let tries = 1;; tries++) {
    try {
      return attempt();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= until) throw e;
      pause(Math.min(10 * tries, 100)); // (two processes that collided try again apart)
    }
  }
}

/** Blocks the thread for `ms` (Deno lets its main thread wait on an atomic). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class Sql {
  private readonly stmts = new Map<string, StatementSync>();

  constructor(readonly db: DatabaseSync) {}

  /** A prepared statement, built once per SQL text. */
  stmt(sql: string): StatementSync {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /**
   * A bulk read's rows as plain objects. node:sqlite (Deno 2.9) makes each row a null-prototype
   * object in dictionary mode, slow to build and slow to read; a row read as an array and named
   * here gets fast properties (200k rows of 5 columns: 133-168 ms against 229-248, warm).
   */
  rows<T>(sql: string, ...params: SqlValue[]): T[] {
    let read = this.arrayStmts.get(sql);
    if (!read) {
      const stmt = this.db.prepare(sql) as ArrayStatement;
      stmt.setReturnArrays(true);
      read = { stmt, names: stmt.columns().map((c) => c.name) };
      this.arrayStmts.set(sql, read);
    }
    const { stmt, names } = read;
    const out: T[] = [];
    for (const cells of stmt.all(...params) as unknown as SqlValue[][]) {
      const row: Record<string, SqlValue> = {};
      for (let i = 0; i < names.length; i++) row[names[i]] = cells[i];
      out.push(row as T);
    }
    return out;
  }

  /** Statements that return rows as arrays ({@link rows}), with their columns' names. */
  private readonly arrayStmts = new Map<string, { stmt: StatementSync; names: string[] }>();

  /** `count(*) AS n` style queries: the one number they return. */
  count(sql: string, ...params: (string | number | null)[]): number {
    return Number((this.stmt(sql).get(...params) as { n: number }).n);
  }
}

type SqlValue = string | number | null | Uint8Array;

/** node:sqlite's StatementSync as Deno 2.9 has it: its types leave `setReturnArrays` out. */
type ArrayStatement = StatementSync & { setReturnArrays(enabled: boolean): void };

/** Rows a {@link RowBatch} writes in one statement. */
const BATCH_ROWS = 32;

/**
 * Rows for one INSERT, written {@link BATCH_ROWS} at a time, in one statement of as many value
 * tuples: what node:sqlite costs a statement run (binding, stepping, resetting, the call itself)
 * is paid once for them all. 100k payload rows: 3.5 -> 2.4 µs a row. `flush` writes the rest;
 * until then the rows added are not in the table.
 */
export class RowBatch {
  private values: SqlValue[] = [];
  private rows = 0;

  /**
   * `head`: the INSERT up to VALUES; `tuple`: one row's, such as `(unhex(?), ?)`; `tail`: what
   * follows the rows (an upsert's ON CONFLICT clause: SQLite applies it row by row, to a row
   * an earlier one of the same statement wrote too).
   */
  constructor(
    private readonly sql: Sql,
    private readonly head: string,
    private readonly tuple: string,
    private readonly tail = "",
  ) {}

  add(...row: SqlValue[]): void {
    for (const v of row) this.values.push(v);
    if (++this.rows === BATCH_ROWS) this.flush();
  }

  flush(): void {
    if (!this.rows) return;
    this.sql.stmt(batchText(this.head, this.tuple, this.tail, this.rows)).run(...this.values);
    this.values = [];
    this.rows = 0;
  }
}

/** The statements' texts, made once (the statement cache hashes a text it has seen at once). */
const BATCH_TEXTS = new Map<string, string[]>();

function batchText(head: string, tuple: string, tail: string, rows: number): string {
  const key = `${head}\0${tuple}\0${tail}`;
  let texts = BATCH_TEXTS.get(key);
  if (!texts) BATCH_TEXTS.set(key, texts = []);
  return texts[rows] ??= `${head} VALUES ${Array(rows).fill(tuple).join(", ")} ${tail}`;
}

export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => "\\" + c);
}
export function likePrefix(s: string): string {
  return likeEscape(s) + "%";
}
