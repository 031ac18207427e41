/**
 * Operations name their session by its number (`sessions.num`, migration 26), not by its id: the
 * id is written once, in `sessions`.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { columnsOf, dbOf, operationsBefore26 } from "../../_helpers/store_db.ts";
import type { ChronicleStore } from "../../../core/store/mod.ts";
import { scratch } from "./_sessions.ts";

const A = "aaaaaaaa-61";
const B = "bbbbbbbb-62";

/** Each session's id, its number and how many operations name that number. */
const numbers = (store: ChronicleStore) =>
  dbOf(store).prepare(
    `SELECT s.id, s.num, (SELECT count(*) FROM operations WHERE session = s.num) AS ops
     FROM sessions s ORDER BY s.id`,
  ).all() as { id: string; num: number; ops: number }[];

Deno.test("migration 26: operations name their session by number; sessions read, re-read, search and forget as before", async () => {
  await using s = await scratch();
  await s.write(A, ["alpha output", "second alpha"]);
  await s.write(B, ["beta output"]);
  const store = s.open();
  await s.run(store);
  const ids = numbers(store).map((r) => r.id);
  const before = ids.map((id) => store.loadSession(id));
  const list = store.listSessions({ limit: 10 }).items.map((x) => [x.id, x.op_count]);
  const ops = store.totals().operations;
  operationsBefore26(dbOf(store));
  assert(columnsOf(dbOf(store), "operations").includes("session_id"));
  store.close();

  const after = s.open();
  const cols = columnsOf(dbOf(after), "operations");
  assert(cols.includes("session") && !cols.includes("session_id"), cols.join(", "));
  assertEquals(numbers(after).map((r) => r.ops), [3, 2], "every operation names its session");
  assertEquals(ids.map((id) => after.loadSession(id)), before);
  assertEquals(after.listSessions({ limit: 10 }).items.map((x) => [x.id, x.op_count]), list);
  const hit = after.search("alpha").hits[0];
  assertEquals(hit?.session_id, ids[0]);
  // a full re-read finds every step where it was
  await s.run(after, { full: true });
  assertEquals(after.totals().operations, ops);
  // (the same steps, read again: a new epoch)
  const steps = (x: ReturnType<ChronicleStore["loadSession"]>) =>
    Object.entries(x?.operations ?? {}).map(([id, op]) => [id, { ...op, provenance: 0 }]);
  assertEquals(ids.map((id) => steps(after.loadSession(id))), before.map(steps));
  // forgetting one leaves the other's operations alone
  after.forget([ids[0]]);
  assertEquals(numbers(after).map((r) => [r.id, r.ops]), [[ids[1], 2]]);
  assertEquals(
    (dbOf(after).prepare("SELECT count(*) AS n FROM operations").get() as { n: number }).n,
    2,
  );
  assertEquals(steps(after.loadSession(ids[1])), steps(before[1]));
  after.close();
});

Deno.test("a session keeps its number as its log grows; one forgotten and read again has a new one", async () => {
  await using s = await scratch();
  const store = await s.imported(A, ["first"]);
  const [first] = numbers(store);
  await s.write(A, ["first", "second", "third"]);
  await s.run(store);
  const [grown] = numbers(store);
  assertEquals([grown.num, grown.ops], [first.num, 4]);
  store.forget([first.id]);
  assertEquals(numbers(store), []);
  // a forgotten session is not read again; a new one takes the next number
  await s.write(B, ["other"]);
  await s.run(store);
  const [other] = numbers(store);
  assertEquals(other.ops, 2);
  const orphans = dbOf(store).prepare(
    "SELECT count(*) AS n FROM operations WHERE session NOT IN (SELECT num FROM sessions)",
  ).get() as { n: number };
  assertEquals(orphans.n, 0, "no operation of the forgotten session is left to another");
  store.close();
});

Deno.test("migration 26 drops an operation of no stored session, and its search text", async () => {
  await using s = await scratch();
  const store = await s.imported(A, ["alpha output"]);
  const ops = store.totals().operations;
  const db = dbOf(store);
  operationsBefore26(db);
  // an operation whose session is gone (never shown: every read starts from a session)
  db.exec(`INSERT INTO operations (session_id, op_id, connection, file_id, ts_ms, rank, line,
      block, kind, effect, completeness, doc)
    SELECT 'claude-code:gone', op_id, connection, file_id, ts_ms, rank, line, block, kind, effect,
      completeness, doc FROM operations LIMIT 1;
    INSERT INTO operations_fts (rowid, body) VALUES (last_insert_rowid(), 'orphanword');`);
  const held = dbOf(store).prepare(
    "SELECT count(*) AS n FROM operations_fts_words WHERE term = 'orphanword'",
  ).get() as { n: number };
  assertEquals(held.n, 1);
  store.close();
  const after = s.open();
  assertEquals(after.totals().operations, ops);
  const words = dbOf(after).prepare(
    "SELECT count(*) AS n FROM operations_fts_words WHERE term = 'orphanword'",
  ).get() as { n: number };
  assertEquals(words.n, 0, "its search text went with it");
  assertEquals(after.search("alpha").total, 1);
  after.close();
});
