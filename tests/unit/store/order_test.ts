/** The canonical operation order: SQL's OP_ORDER and core/model's compareOrder agree. */
import { DatabaseSync } from "node:sqlite";
import { assertEquals } from "../../_helpers/assert.ts";
import { compareOrder, type OrderKey } from "../../../core/model/mod.ts";
import { OP_ORDER } from "../../../core/store/_sql.ts";

Deno.test("the store's OP_ORDER sorts operations exactly as compareOrder does", () => {
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const keys: (OrderKey & { id: number })[] = Array.from({ length: 400 }, (_, id) => ({
    id,
    ts_ms: rnd(5) === 0 ? null : 1_700_000_000_000 + rnd(20) * 1000,
    rank: rnd(3),
    line: rnd(30),
    block: rnd(3),
  }));
  const db = new DatabaseSync(":memory:");
  try {
    db.exec("CREATE TABLE o (id INTEGER, ts_ms REAL, rank INTEGER, line INTEGER, block INTEGER)");
    const put = db.prepare("INSERT INTO o VALUES (?, ?, ?, ?, ?)");
    for (const k of keys) put.run(k.id, k.ts_ms, k.rank, k.line, k.block);
    // Ties keep insertion order on both sides (id), so only the order's own fields decide.
    const sql = (db.prepare(`SELECT id FROM o ORDER BY ${OP_ORDER}, id`).all() as { id: number }[])
      .map((r) => r.id);
    const js = [...keys].sort((a, b) => compareOrder(a, b) || a.id - b.id).map((k) => k.id);
    assertEquals(sql, js);
    assertEquals(keys.some((k) => k.ts_ms === null), true, "untimed operations are in the mix");
  } finally {
    db.close();
  }
});
