/** Rows written many to a statement land as one statement a row would have written them. */
import { assertEquals } from "../../_helpers/assert.ts";
import { DatabaseSync } from "node:sqlite";
import { RowBatch, Sql } from "../../../core/store/_sql.ts";

Deno.test("a row batch writes every row, full batches and the rest, OR IGNORE as one at a time", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (k BLOB PRIMARY KEY, n INTEGER, s TEXT) WITHOUT ROWID");
  const sql = new Sql(db);
  const rows = new RowBatch(sql, "INSERT OR IGNORE INTO t (k, n, s)", "(unhex(?), ?, ?)");
  const keys = Array.from({ length: 70 }, (_, i) => (i % 50).toString(16).padStart(4, "0"));
  keys.forEach((k, i) => rows.add(k, i, i % 3 ? `row ${i}` : null));
  // (64 rows written in two statements; the last 6 wait for the flush)
  assertEquals((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 50);
  rows.flush();
  rows.flush();
  const got = db.prepare("SELECT hex(k) AS k, n, s FROM t ORDER BY n").all();
  // the first of each key stays (50 keys, rows 0-49), as 70 single inserts would leave them
  assertEquals(got.length, 50);
  assertEquals(got.map((r) => r.n), Array.from({ length: 50 }, (_, i) => i));
  assertEquals({ ...got[4] }, { k: "0004", n: 4, s: "row 4" });
  assertEquals(got[3].s, null);
  db.close();
});

Deno.test("a row batch with an upsert's clause updates a key given twice, in one statement or two, as one at a time", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, first INTEGER) WITHOUT ROWID");
  const sql = new Sql(db);
  const rows = new RowBatch(
    sql,
    "INSERT INTO t (k, n, first)",
    "(?, ?, ?)",
    "ON CONFLICT (k) DO UPDATE SET n = excluded.n",
  );
  // 70 rows of 30 keys: a key's later rows fall in the same statement of 32 or a later one
  for (let i = 0; i < 70; i++) rows.add(`k${i % 30}`, i, i);
  rows.flush();
  const got = db.prepare("SELECT k, n, first FROM t ORDER BY first").all();
  assertEquals(got.length, 30);
  // each key: its last row's n, its first row's first, as 70 single upserts leave them
  assertEquals(
    got.map((r) => [r.n, r.first]),
    Array.from({ length: 30 }, (_, i) => [i + 60 < 70 ? i + 60 : i + 30, i]),
  );
  db.close();
});

Deno.test("rows read as arrays come back as the statement's own rows, as plain objects, and leave its cached statement alone", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)");
  db.exec(
    "INSERT INTO t VALUES (1, 0.5, 'one', x'00ff'), (2, NULL, 'two', NULL), (NULL, 2.5, NULL, x'')",
  );
  const sql = new Sql(db);
  const query =
    "SELECT i, r, s AS text, b, i * 2 AS twice FROM t WHERE i IS NULL OR i > ? ORDER BY rowid";
  const want = sql.stmt(query).all(0).map((row) => ({ ...row }));
  const got = sql.rows<Record<string, unknown>>(query, 0);
  assertEquals(got, want);
  assertEquals(got[0].b, new Uint8Array([0, 255]));
  assertEquals(Object.keys(got[2]), ["i", "r", "text", "b", "twice"]);
  // node:sqlite's own rows have no prototype (and are slow to build and read); these are plain
  for (const row of got) assertEquals(Object.getPrototypeOf(row), Object.prototype);
  // the statement `stmt` caches for the same text still answers objects, and parameters bind
  assertEquals(sql.stmt(query).all(1).map((row) => row.text), ["two", null]);
  assertEquals(sql.rows<{ twice: number | null }>(query, 1).map((row) => row.twice), [4, null]);
  db.close();
});
