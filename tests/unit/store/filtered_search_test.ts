/**
 * Search with a session filter (agent, project, dates) finds the same hits and counts whichever
 * way it tells which matches the filter holds (filter_runs.ts): the filter's runs of rowids,
 * each match joined at once, or matches joined newest first; and the runs it keeps follow the
 * store as it changes.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import {
  type ChronicleStore,
  FILTER_STRATEGIES,
  type FilterStrategy,
  inRuns,
  ownersOf,
  RANGED_FIRST,
  runsOf,
  type SearchResult,
  type SessionQuery,
  TEXT_FILTER_WINDOW,
} from "../../../core/store/mod.ts";
import { appendClaudePrompt, claudeSessionPath, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { FilterRuns } from "../../../core/store/filter_runs.ts";
import { Sql } from "../../../core/store/_sql.ts";
import { scratch } from "./_sessions.ts";

Deno.test("runsOf() joins consecutive rowids into runs, whatever their order", () => {
  assertEquals(runsOf([]), { lo: [], hi: [] });
  assertEquals(runsOf([5]), { lo: [5], hi: [5] });
  // a session's stamps each ascend; a later stamp may hold lower rowids
  assertEquals(runsOf([10, 11, 12, 3, 4, 13, 20]), { lo: [3, 10, 20], hi: [4, 13, 20] });
  assertEquals(runsOf([7, 8, 1, 2, 3, 4, 5, 6]), { lo: [1], hi: [8] }, "touching runs join");
});

Deno.test("inRuns() keeps the rowids inside the runs, newest first", () => {
  const runs = runsOf([3, 4, 10, 11, 12, 13, 20]);
  assertEquals(inRuns([25, 21, 20, 19, 13, 11, 10, 9, 5, 4, 3, 2, 1], runs), [
    20,
    13,
    11,
    10,
    4,
    3,
  ]);
  assertEquals(inRuns([2, 1], runs), []);
  assertEquals(inRuns([30, 29], runs), []);
  assertEquals(inRuns([12], { lo: [], hi: [] }), []);
});

Deno.test("ownersOf() names the session of each rowid inside a run", () => {
  const owned = { lo: [1, 5, 9], hi: [4, 8, 9], num: [7, 3, 7] };
  assertEquals(ownersOf([10, 9, 8, 5, 4, 2, 0], owned), [
    { rowid: 9, num: 7 },
    { rowid: 8, num: 3 },
    { rowid: 5, num: 3 },
    { rowid: 4, num: 7 },
    { rowid: 2, num: 7 },
  ]);
});

/**
 * Three sessions: A in /work/demo, its last prompt appended after B was imported (so A's
 * operations are two runs), B in /work/other, C in /work/demo/sub (a project's sub-folder
 * belongs to it).
 */
async function threeSessions(strategy: FilterStrategy) {
  const s = await scratch({ filteredSearch: strategy });
  const bash = (results: string[]) =>
    results.map((result, i) => ({
      tool: { name: "Bash", input: { command: `make ${i}` }, result },
    }));
  await writeClaudeSession(s.home, {
    sessionId: "aaaaaaaa-1",
    cwd: "/work/demo",
    turns: [{ user: "start A" }, ...bash(["alpha beta one", "foo_bar_baz here", "alphabet soup"])],
  });
  await writeClaudeSession(s.home, {
    sessionId: "bbbbbbbb-2",
    cwd: "/work/other",
    turns: [{ user: "start B" }, ...bash(["alpha beta two", "foo_bar_baz there", "alpha"])],
  });
  const store = s.open();
  await s.run(store);
  const a = claudeSessionPath(s.home, "/work/demo", "aaaaaaaa-1");
  await appendClaudePrompt(a, "aaaaaaaa-1", "alpha beta three foo_bar_baz");
  await writeClaudeSession(s.home, {
    sessionId: "cccccccc-3",
    cwd: "/work/demo/sub",
    turns: [{ user: "start C" }, ...bash(["alpha beta four"])],
  });
  await s.run(store);
  return { s, store, a };
}

/** The hits and count a filter should give: the unfiltered hits it holds. */
function expected(store: ChronicleStore, q: string, f: SessionQuery) {
  const all = store.search(q, { limit: 200 });
  assert(!all.total_capped && all.hits.length === all.total, q);
  // days: the sessions the list keeps for them (the same filter, no text)
  const dated = f.from || f.to
    ? new Set(store.listSessions({ from: f.from, to: f.to, limit: 1000 }).items.map((x) => x.id))
    : null;
  const held = all.hits.filter((h) =>
    (f.source === undefined || h.session.source === f.source) &&
    (f.project === undefined || h.session.project_path === f.project ||
      (h.session.project_path ?? "").startsWith(`${f.project}/`)) &&
    (dated === null || dated.has(h.session_id))
  );
  return { total: held.length, capped: false, ops: held.map((h) => h.op_id) };
}

const got = (r: SearchResult) => ({
  total: r.total,
  capped: r.total_capped,
  ops: r.hits.map((h) => h.op_id),
});

Deno.test("every way of narrowing to a filter finds the same hits, newest first, with exact counts", async (t) => {
  const queries = ["alpha", "alp", "alph", '"alpha beta"', '"beta alpha"', "foo_bar_baz", "zzzq"];
  const filters: SessionQuery[] = [
    { project: "/work/demo" },
    { project: "/work/other" },
    { source: "claude-code" },
    { source: "codex" },
    { project: "/nowhere" },
    { from: "2000-01-01" },
    { to: "2000-01-01" },
    { project: "/work/demo", from: "2000-01-01" },
  ];
  for (const strategy of FILTER_STRATEGIES) {
    await t.step(strategy, async () => {
      const { s, store } = await threeSessions(strategy);
      await using _ = s;
      // A's operations are two runs: its appended prompt came after B's
      const db = dbOf(store);
      const ids = (db.prepare(
        `SELECT o.rowid AS r FROM operations o JOIN sessions s ON s.num = o.session
         WHERE s.id LIKE '%aaaaaaaa-1' ORDER BY o.rowid`,
      ).all() as { r: number }[]).map((x) => x.r);
      assertEquals(runsOf(ids).lo.length, 2, `${ids}`);
      let found = 0;
      for (const q of queries) {
        for (const f of filters) {
          const want = expected(store, q, f);
          assertEquals(
            got(store.search(q, { ...f, limit: 200 })),
            want,
            `${q} ${JSON.stringify(f)}`,
          );
          // a page of one at each offset reaches every hit once
          const paged = want.ops.map((_, i) => store.search(q, { ...f, limit: 1, offset: i }));
          assertEquals(paged.map((p) => p.hits[0]?.op_id), want.ops, `${q} paged`);
          // a page past the last hit is empty, and the count stays what it is
          const past = store.search(q, { ...f, limit: 1, offset: want.total + 3 });
          assertEquals(got(past), { ...want, ops: [] }, `${q} ${JSON.stringify(f)} past the end`);
          // the session list's text filter names the sessions of those hits
          const listed = store.listSessions({ ...f, text: q }).items.map((x) => x.id).sort();
          const held = store.search(q, { ...f, limit: 200 }).hits.map((h) => h.session_id);
          assertEquals(listed, [...new Set(held)].sort(), `${q} ${JSON.stringify(f)} list`);
          found += want.total;
        }
      }
      assert(found > 20, `${found} hits in all: the cases find something`);
      store.close();
    });
  }
});

Deno.test("the runs a filter keeps follow the store: a step written since is found", async (t) => {
  for (const strategy of ["auto", "runs"] as const) {
    await t.step(strategy, async () => {
      const { s, store, a } = await threeSessions(strategy);
      await using _ = s;
      const demo = { project: "/work/demo" };
      assertEquals(store.search("alpha", demo).total, 4);
      assertEquals(store.search("gammaword", demo).total, 0);
      // written through this connection
      await appendClaudePrompt(a, "aaaaaaaa-1", "gammaword alpha");
      await s.run(store);
      assertEquals(store.search("gammaword", demo).total, 1);
      assertEquals(store.search("alpha", demo).total, 5);
      // written through another connection (another process importing)
      await appendClaudePrompt(a, "aaaaaaaa-1", "gammaword again");
      const other = s.open();
      await s.run(other);
      other.close();
      assertEquals(store.search("gammaword", demo).total, 2);
      assertEquals(store.search("gammaword", { project: "/work/other" }).total, 0);
      store.close();
    });
  }
});

Deno.test("a filter's hit past many newer matches between its runs is found, and counted exactly where all were read", async () => {
  for (const strategy of FILTER_STRATEGIES) {
    const { s, store } = await threeSessions(strategy);
    await using _ = s;
    const db = dbOf(store);
    // A's newest operation (its appended prompt) moved far up with its index entry, and index
    // entries of no operation put between, more than a first read takes: A's runs now span
    // them, and none of them is A's.
    const last = (db.prepare(
      `SELECT max(o.rowid) AS r FROM operations o JOIN sessions s ON s.num = o.session
       WHERE s.id LIKE '%aaaaaaaa-1'`,
    ).get() as { r: number }).r;
    const top = 1_000_000;
    db.exec("BEGIN");
    db.prepare("UPDATE operations SET rowid = ? WHERE rowid = ?").run(top, last);
    db.prepare("DELETE FROM operations_fts WHERE rowid = ?").run(last);
    db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, 'alpha beta three')").run(top);
    const fake = db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
    for (let i = 0; i < RANGED_FIRST + 500; i++) fake.run(500_000 + i, "alphabet alpha beta");
    db.exec("COMMIT");
    // "alphabet": A's "alphabet soup", below every entry put between; the phrase: A's prompt
    // (moved), C's "alpha beta four", A's "alpha beta one"
    for (const [q, want] of [["alphabet", 1], ['"alpha beta"', 3]] as const) {
      const r = store.search(q, { project: "/work/demo" });
      assertEquals(r.hits.length, want, `${strategy} ${q}`);
      if (strategy === "runs" || strategy === "each") {
        assertEquals([r.total, r.total_capped], [want, false], `${strategy} ${q}`);
      }
      if (strategy === "join" && q === "alphabet") assertEquals(r.total_capped, true);
    }
    assertEquals(
      store.search('"alpha beta"', { project: "/work/demo" }).hits[0].op_id,
      store.search("three", { project: "/work/demo" }).hits[0].op_id,
      "the moved step is the newest",
    );
    store.close();
  }
});

Deno.test("the session list's text filter finds a project's session past many newer matches elsewhere", async () => {
  for (const strategy of ["runs", "join"] as const) {
    const { s, store } = await threeSessions(strategy);
    await using _ = s;
    // Newer matches than any operation of the store, more than the list's window.
    const db = dbOf(store);
    const fake = db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
    db.exec("BEGIN");
    for (let i = 0; i < TEXT_FILTER_WINDOW + 10; i++) {
      fake.run(1_000_000 + i, "alphabet alpha beta");
    }
    db.exec("COMMIT");
    const listed = (text: string) =>
      store.listSessions({ project: "/work/demo", text }).items.map((x) => x.id.slice(-10)).sort();
    if (strategy === "runs") {
      assertEquals(listed("alphabet"), ["aaaaaaaa-1"]);
      assertEquals(listed('"alpha beta"'), ["aaaaaaaa-1", "cccccccc-3"]);
      assertEquals(store.listSessions({ project: "/work/other", text: "alpha" }).total, 1);
    } else {
      // joined, the window holds only the newer matches: what the runs are for
      assertEquals(listed("alphabet"), []);
    }
    store.close();
  }
});

Deno.test("runs kept past their limit start over, and every session asked for is read again", async () => {
  const { s, store } = await threeSessions("runs");
  await using _ = s;
  const db = dbOf(store);
  const nums = (db.prepare("SELECT num FROM sessions ORDER BY num").all() as { num: number }[])
    .map((r) => r.num);
  assertEquals(nums.length, 3);
  const [a, b, c] = nums;
  const fresh = (of: number[]) => new FilterRuns(new Sql(db)).owned(of);
  const small = new FilterRuns(new Sql(db), 2);
  assertEquals(small.owned([a, b]), fresh([a, b]));
  // two kept, one more asked for: they start over, and b is read again with c
  assertEquals(small.owned([b, c]), fresh([b, c]));
  assertEquals(small.list([c, a]), new FilterRuns(new Sql(db)).list([c, a]));
  assert(small.cached([c, a]) !== null);
  assertEquals(small.cached([b, c]), null, "b went when a came back");
  store.close();
});
