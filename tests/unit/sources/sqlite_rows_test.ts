/** A foreign database's rows read as arrays: every cell, in the SELECT's order. */
import { assertEquals } from "../../_helpers/assert.ts";
import { DatabaseSync } from "node:sqlite";
import { rowArrays, sqlOrder } from "../../../core/sources/_sqlite_copy.ts";

Deno.test("rows read as arrays hold every cell in the SELECT's order, NULLs and bytes included", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE part (id TEXT, session_id TEXT, data BLOB, t INTEGER)");
  db.exec(
    "INSERT INTO part VALUES ('p1', 's1', '{\"a\":1}', 5), ('p2', 's1', x'7b7d', NULL), ('p3', 's2', NULL, 7)",
  );
  const rows = rowArrays(
    db,
    "SELECT id, t AS created, data, length(data) AS len FROM part WHERE session_id = ? ORDER BY id",
    "s1",
  );
  assertEquals(rows, [["p1", 5, '{"a":1}', 7], ["p2", null, new Uint8Array([0x7b, 0x7d]), 2]]);
  assertEquals(rows.every(Array.isArray), true);
  assertEquals(rowArrays(db, "SELECT id FROM part WHERE session_id = ?", "none"), []);
  db.close();
});

Deno.test("sqlOrder() orders cells as SQLite's ORDER BY does: NULL, numbers, text by code point, bytes", () => {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (v)");
  const values: (string | number | Uint8Array | null)[] = [
    "b",
    "ab",
    "a",
    "",
    "é",
    "\uE000",
    "\uFFFD",
    "😀",
    "a😀",
    "a\uFFFF",
    "Z",
    "10",
    "9",
    3,
    -1,
    2.5,
    0,
    null,
    new Uint8Array([0, 1]),
    new Uint8Array([0]),
    new Uint8Array([255]),
  ];
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  for (const v of values) insert.run(v);
  const sqlite = db.prepare("SELECT v FROM t ORDER BY v").all().map((r) => r.v);
  // (JavaScript's own order puts a character above U+FFFF before U+E000)
  assertEquals(["😀", "\uE000"].sort(), ["😀", "\uE000"]);
  assertEquals([...values].sort(sqlOrder), sqlite);
  assertEquals([...values].reverse().sort(sqlOrder), sqlite);
  db.close();
});
