/**
 * Transactions and write groups: a nested transaction is a savepoint, and a bulk pass shares
 * commits between units while each unit stays atomic.
 */
import { dbOf } from "../../_helpers/store_db.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { big, scratch } from "./_sessions.ts";

Deno.test("a nested transaction that throws undoes only its own writes", () => {
  const store = ChronicleStore.open(":memory:");
  dbOf(store).exec("CREATE TABLE t (v TEXT)");
  const insert = (v: string) => dbOf(store).prepare("INSERT INTO t VALUES (?)").run(v);
  store.transaction(() => {
    insert("outer");
    try {
      store.transaction(() => {
        insert("inner");
        throw new Error("inner fails");
      });
    } catch { /* the outer one goes on */ }
    store.transaction(() => insert("second inner"));
  });
  assertEquals(dbOf(store).prepare("SELECT v FROM t ORDER BY v").all().map((r) => r.v), [
    "outer",
    "second inner",
  ]);
  store.close();
});

Deno.test("a bulk pass commits units in groups; a failing unit loses only its own rows", async () => {
  await using s = await scratch();
  const store = s.open();
  const commits: string[] = [];
  const exec = dbOf(store).exec.bind(dbOf(store));
  dbOf(store).exec = (sql: string) => {
    if (sql === "COMMIT") commits.push(sql);
    return exec(sql);
  };
  for (let i = 0; i < 20; i++) {
    const sid = `${String(i).padStart(8, "0")}-x`;
    await s.write(sid, [`result ${i}`, big(`pack ${i}`)]);
  }
  dbOf(store).exec(`CREATE TEMP TRIGGER doomed BEFORE INSERT ON operations
    WHEN (SELECT id FROM sessions WHERE num = NEW.session) LIKE '%00000007-x%'
    BEGIN SELECT RAISE(ABORT, 'simulated'); END`);
  const summary = await s.run(store);
  assertEquals(summary.errors.map((e) => e.file?.split("/").pop()), ["00000007-x.jsonl"]);
  assertEquals(summary.sessions, 19);
  const sessions = dbOf(store).prepare("SELECT count(*) AS n FROM sessions").get() as { n: number };
  assertEquals(sessions.n, 19);
  // 20 units shared a handful of commits, not one each
  assertEquals(commits.length < 20 / 2, true, `${commits.length} commits`);
  // the units before the failed one in its group were applied again, payloads and all
  for (let i = 0; i < 20; i++) {
    const bytes = store.payload(sha256Hex(big(`pack ${i}`)));
    assertEquals(bytes === null, i === 7, `payload ${i}`);
    if (bytes) assertEquals(new TextDecoder().decode(bytes), big(`pack ${i}`));
  }
  // the failed file's checkpoint was not stored either: the next pass imports it
  dbOf(store).exec("DROP TRIGGER doomed");
  const again = await s.run(store);
  assertEquals(again.errors, []);
  assertEquals(again.sessions, 20);
  store.close();
});

Deno.test("a write group holds the write lock only for a bounded time", async () => {
  const store = ChronicleStore.open(":memory:");
  dbOf(store).exec("CREATE TABLE t (v INTEGER)");
  const group = store.writeGroup({ units: 1000, bytes: 1e12, ms: 20 });
  let commits = 0;
  const exec = dbOf(store).exec.bind(dbOf(store));
  dbOf(store).exec = (sql: string) => {
    if (sql === "COMMIT") commits++;
    return exec(sql);
  };
  for (let i = 0; i < 5; i++) {
    group.run(0, () => dbOf(store).prepare("INSERT INTO t VALUES (?)").run(i));
    await new Promise((r) => setTimeout(r, 25));
  }
  group.close();
  assertEquals(commits, 5);
  let failed = false;
  try {
    group.run(0, () => {
      throw new Error("unit fails");
    });
  } catch {
    failed = true;
  }
  assertEquals(failed, true);
  group.close();
  assertEquals((dbOf(store).prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 5);
  store.close();
});

Deno.test("a commit that fails on the group's timer is reported by its next call", async () => {
  const store = ChronicleStore.open(":memory:");
  dbOf(store).exec("CREATE TABLE t (v INTEGER)");
  const group = store.writeGroup({ units: 1000, bytes: 1e12, ms: 10 });
  const exec = dbOf(store).exec.bind(dbOf(store));
  let failNext = true;
  dbOf(store).exec = (sql: string) => {
    if (sql === "COMMIT" && failNext) {
      failNext = false;
      throw new Error("disk full (simulated)");
    }
    return exec(sql);
  };
  group.run(0, () => dbOf(store).prepare("INSERT INTO t VALUES (1)").run());
  await new Promise((r) => setTimeout(r, 30)); // the timer's commit fails
  let reported = "";
  try {
    group.run(0, () => dbOf(store).prepare("INSERT INTO t VALUES (2)").run());
  } catch (e) {
    reported = (e as Error).message;
  }
  assertEquals(reported, "disk full (simulated)");
  // the failed group was rolled back; the next unit starts a fresh one
  group.run(0, () => dbOf(store).prepare("INSERT INTO t VALUES (3)").run());
  group.close();
  assertEquals(dbOf(store).prepare("SELECT v FROM t").all().map((r) => r.v), [3]);
  store.close();
});
