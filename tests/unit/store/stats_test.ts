/**
 * The statistics kept at import answer exactly what counting the operations answers, after a
 * first import, an append, a re-read that drops operations, and a migration from a store
 * without them.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { ChronicleStore, importAll, inProcessRunner } from "../../../core/store/mod.ts";
import { copyTree, FIXTURES } from "../../_helpers/fixtures.ts";
import { REAL } from "../../_helpers/store_leaves.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { SOURCE_IDS } from "../../../core/sources/registry.ts";
import { fixtureStore } from "../server/_helpers.ts";
import { scratch } from "./_sessions.ts";
import {
  appendClaudePrompt,
  claudeSessionPath,
  type SyntheticTurn,
  writeClaudeSession,
} from "../../e2e/_synthetic.ts";

function sameAsOperations(store: ChronicleStore, label: string) {
  const filters = [{}, { source: "claude-code" }, { source: "codex" }, {
    project: "/work/demo",
  }, { project: "/nowhere" }];
  for (const f of filters) {
    const kept = store.stats(f);
    const counted = store.stats(f, { fromOperations: true });
    assertEquals(kept, counted, `${label} ${JSON.stringify(f)}`);
  }
  sessionsSameAsOperations(store, label);
}

/** Each session's statistics, read from its kept rows, match its operations counted. */
function sessionsSameAsOperations(store: ChronicleStore, label: string) {
  const ids = store.listSessions({ limit: 1000 }).items.map((s) => s.id);
  for (const session_id of [...ids, "no-such-session"]) {
    const f = { session_id };
    assertEquals(
      store.stats(f),
      store.stats(f, { fromOperations: true }),
      `${label} ${session_id}`,
    );
  }
}

Deno.test("kept statistics match counted ones after an import, a re-read that drops operations and a new session", async () => {
  await using s = await scratch();
  await s.write("aaaaaaaa-1", ["ok", "Exit code 2\nboom", "fine"]);
  await s.write("bbbbbbbb-2", ["one", "two"], "Read");
  const store = s.open();
  await s.run(store);
  const first = store.stats();
  assertEquals([first.sessions, first.errors], [2, 1]);
  assert(first.tools.some((t) => t.tool === "Read" && t.count === 2));
  sameAsOperations(store, "first import");
  // Rewritten shorter (a re-read from zero drops operations), and a new session.
  await s.write("aaaaaaaa-1", ["ok"]);
  await s.write("cccccccc-3", ["Exit code 1\nfailed"]);
  await s.run(store);
  sameAsOperations(store, "after a re-read");
  assertEquals(store.stats().sessions, 3);
  store.close();
});

Deno.test("migration 7 fills the kept statistics of an existing store", async () => {
  await using s = await scratch();
  await s.write("aaaaaaaa-1", ["ok", "Exit code 2\nboom"]);
  const store = s.open();
  await s.run(store);
  const before = store.stats();
  dbOf(store).exec(`DELETE FROM session_stats; DELETE FROM stats_rollup;
    DELETE FROM migrations WHERE version = 7; DROP TABLE session_stats; DROP TABLE stats_rollup;`);
  store.close();
  const after = s.open();
  assertEquals(after.stats(), before);
  sameAsOperations(after, "migrated");
  after.close();
});

Deno.test("migration 10 sums everything's statistics from the agents' and projects' rows", async () => {
  await using s = await scratch();
  await s.write("aaaaaaaa-1", ["ok", "Exit code 2\nboom"]);
  await s.write("bbbbbbbb-2", ["one", "two"], "Read");
  const store = s.open();
  await s.run(store);
  const before = store.stats();
  // The store as version 9 left it: no rows for everything, no index on them.
  dbOf(store).exec(`DELETE FROM stats_rollup WHERE source = ''; DROP INDEX stats_rollup_top;
    DELETE FROM migrations WHERE version = 10;`);
  store.close();
  const after = s.open();
  assertEquals(after.stats(), before);
  sameAsOperations(after, "migrated");
  after.close();
});

Deno.test("migration 11 adds tokens per day and model to an existing store", async () => {
  await using s = await scratch();
  await s.write("aaaaaaaa-1", ["ok"]);
  const store = s.open();
  await s.run(store);
  const before = store.stats();
  assert(before.tokens_by_day.length > 0 && before.tokens_by_project.length > 0);
  dbOf(store).exec(`DELETE FROM session_stats WHERE dim = 'daymodel';
    DELETE FROM stats_rollup WHERE dim = 'daymodel'; DELETE FROM migrations WHERE version = 11;`);
  store.close();
  const after = s.open();
  assertEquals(after.stats(), before);
  after.close();
});

/** A session that reads two files and searches its project's folder over and over. */
async function searchingSession(s: Awaited<ReturnType<typeof scratch>>) {
  await writeClaudeSession(s.home, {
    sessionId: "dddddddd-4",
    cwd: "/work/demo",
    turns: [
      { user: "find the handlers" },
      ...Array.from({ length: 6 }, (_, i) => ({
        tool: i % 2
          ? { name: "Grep", input: { pattern: `handler${i}`, path: "/work/demo" }, result: "" }
          : { name: "Glob", input: { pattern: "**/*.ts", path: "/work/demo/src" }, result: "" },
      })),
      { tool: { name: "Read", input: { file_path: "/work/demo/a.ts" }, result: "a" } },
      { tool: { name: "Edit", input: editOf("/work/demo/b.ts"), result: "ok" } },
    ],
  });
}

const editOf = (file_path: string) => ({ file_path, old_string: "x", new_string: "y" });

Deno.test("a search's folder is no file touched: kept or counted, per session and in all", async () => {
  await using s = await scratch();
  await searchingSession(s);
  const store = s.open();
  await s.run(store);
  const id = "claude-code:dddddddd-4";
  const paths = (f: { files: { path: string }[] }) => f.files.map((x) => x.path).sort();
  for (const stats of [store.stats(), store.stats({ session_id: id })]) {
    assertEquals(paths(stats), ["/work/demo/a.ts", "/work/demo/b.ts"]);
    assertEquals(stats.files_touched, 2);
  }
  sameAsOperations(store, "searches");
  store.close();
});

Deno.test("migration 30 drops the searched folders an existing store counted as files", async () => {
  await using s = await scratch();
  await searchingSession(s);
  const store = s.open();
  await s.run(store);
  const before = store.stats();
  // The rows as version 29 kept them: each searched folder a file touched.
  const db = dbOf(store);
  const folders = `SELECT target, count(*) AS n, sum(effect = 'fs_read') AS reads FROM operations
    WHERE kind = 'search' AND target IS NOT NULL GROUP BY target`;
  db.exec(`INSERT INTO session_stats (session_id, source, project, dim, key, n, errors, reads,
      writes, input, output, cache_read, cache_write)
    SELECT 'claude-code:dddddddd-4', 'claude-code', '/work/demo', 'file', target, n, 0, reads, 0,
      0, 0, 0, 0 FROM (${folders})`);
  for (const [source, project] of [["claude-code", "/work/demo"], ["", ""]]) {
    db.exec(`INSERT INTO stats_rollup (source, project, dim, key, n, errors, reads, writes,
        input, output, cache_read, cache_write, sessions)
      SELECT '${source}', '${project}', 'file', target, n, 0, reads, 0, 0, 0, 0, 0, 1
      FROM (${folders})`);
  }
  db.exec("DELETE FROM migrations WHERE version = 30");
  assertEquals(store.stats().files_touched, 4, "the two folders searched, as the old rows say");
  store.close();
  const after = s.open();
  assertEquals(after.stats(), before);
  sameAsOperations(after, "migrated");
  after.close();
});

Deno.test("kept statistics match counted ones on every agent's real-client sessions", async () => {
  const root = `${FIXTURES}/realclients`;
  const scenarios: string[] = [];
  for (const agent of Deno.readDirSync(root)) {
    if (!agent.isDirectory) continue;
    for (const s of Deno.readDirSync(`${root}/${agent.name}`)) {
      if (s.isDirectory) scenarios.push(`${agent.name}/${s.name}`);
    }
  }
  const store = await fixtureStore(scenarios.sort());
  assert(store.stats().sessions >= 10, "the scenarios imported");
  for (const source of [undefined, ...SOURCE_IDS]) {
    const f = source ? { source } : {};
    assertEquals(store.stats(f), store.stats(f, { fromOperations: true }), String(source));
  }
  for (const p of store.projects()) {
    assertEquals(
      store.stats({ project: p.path }),
      store.stats({ project: p.path }, { fromOperations: true }),
      p.path,
    );
  }
  sessionsSameAsOperations(store, "real clients");
  store.close();
});

Deno.test("each session's kept statistics match counted ones on the peers' Claude Code logs, several models in a session", async () => {
  const home = await Deno.makeTempDir({ prefix: "chronicle-stats-peers-" });
  try {
    const project = `${home}/.claude/projects/-work-peers`;
    await Deno.mkdir(project, { recursive: true });
    for (const f of Deno.readDirSync(`${FIXTURES}/peers/claude-code`)) {
      if (f.isFile && f.name.endsWith(".jsonl")) {
        await Deno.copyFile(`${FIXTURES}/peers/claude-code/${f.name}`, `${project}/${f.name}`);
      }
    }
    const store = await fixtureStore([], [home]);
    const ids = store.listSessions({ limit: 1000 }).items.map((s) => s.id);
    const models = ids.map((session_id) => store.stats({ session_id }).tokens.length);
    assert(models.some((n) => n >= 2), `a session with several models: ${models}`);
    sessionsSameAsOperations(store, "peers");
    store.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a big log stored in slices: its session's statistics are counted from its operations until the last slice, then read from its rows", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-stats-slices-" });
  try {
    const home = `${tmp}/home`;
    await copyTree(`${REAL}/claude/s4-long/native`, home);
    const fs = createDenoFs({ tempRoot: `${tmp}/scratch` });
    const store = ChronicleStore.open(":memory:");
    const run = inProcessRunner(fs);
    const seen: number[] = [];
    await importAll(store, {
      env: { home, env: { HOME: home }, platform: "linux" },
      fs,
      maxPassBytes: 2000,
      // before each slice after the first: what the slices stored so far
      runner: (...args) => {
        const [listed] = store.listSessions({ limit: 1 }).items;
        if (listed) {
          const f = { session_id: listed.id };
          const stats = store.stats(f);
          assertEquals(stats, store.stats(f, { fromOperations: true }));
          seen.push(stats.operations);
        }
        return run(...args);
      },
    });
    assert(seen.length >= 2 && seen[0] > 0, `checked between slices: ${seen}`);
    const [whole] = store.listSessions({ limit: 1 }).items;
    assert(seen.every((n) => n < whole.op_count), `${seen} of ${whole.op_count}`);
    sessionsSameAsOperations(store, "sliced");
    store.close();
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a bulk import counts its sessions' statistics after the pass: once browsable they wait, then match counted ones", async () => {
  await using s = await scratch();
  for (let i = 0; i < 18; i++) {
    await s.write(
      `dddddddd-${i}`,
      i % 3 ? ["ok", "Exit code 2\nboom"] : ["one"],
      i % 2 ? "Read" : "Bash",
    );
  }
  const store = s.open();
  const stored = await s.run(store, { searchLater: true });
  assertEquals(stored.sessions, 18);
  // browsable: the list counts every session; their statistics wait, once each
  const list = store.listSessions({ limit: 100 });
  assertEquals(list.total, 18);
  assertEquals(
    list.items.map((x) => x.op_count).sort(),
    Array(18).fill(0).map((_, i) => i % 3 ? 3 : 2).sort(),
  );
  const waiting = () =>
    (dbOf(store).prepare("SELECT count(*) AS n FROM stats_backlog").get() as { n: number }).n;
  assertEquals(waiting(), 18);
  assertEquals(store.stats().sessions, 0);
  // a session's own statistics are counted from its operations while its rows wait
  sessionsSameAsOperations(store, "waiting");
  // counted a slice at a time: the rollup matches what the operations say at every step
  assertEquals(store.settleStats(5), 13);
  assertEquals(store.stats().sessions, 5);
  sessionsSameAsOperations(store, "five counted");
  // the next import counts the rest (here with nothing else to do)
  assertEquals((await s.run(store)).errors, []);
  assertEquals(waiting(), 0);
  assertEquals(store.stats().sessions, 18);
  sameAsOperations(store, "after the backlog");
  store.close();
});

Deno.test("a session's statistics counted again write only the rows that changed, and match counted ones as it grows, shrinks and moves project", async () => {
  await using s = await scratch();
  const reads = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      tool: {
        name: "Read",
        input: { file_path: `/work/demo/f${from + i}.ts` },
        result: i % 3 === 2 ? "Exit code 1\nno such file" : `contents ${from + i}`,
      },
    }));
  const write = (sid: string, turns: SyntheticTurn[], cwd = "/work/demo") =>
    writeClaudeSession(s.home, { sessionId: sid, cwd, turns: [{ user: `go ${sid}` }, ...turns] })
      .then((path) => Deno.rename(path, claudeSessionPath(s.home, "/work/demo", sid)));
  // two sessions share files and tools: the rollup sums them
  await write("aaaaaaaa-1", reads(4));
  await write("bbbbbbbb-2", reads(3, 2));
  const store = s.open();
  await s.run(store);
  sameAsOperations(store, "first import");
  const rows = (sid: string) =>
    dbOf(store).prepare(
      "SELECT dim, key, n, errors, reads FROM session_stats WHERE session_id = ? ORDER BY dim, key",
    ).all(`claude-code:${sid}`);
  // every row written to the statistics, counted by triggers of this connection's own
  const db = dbOf(store);
  db.exec("CREATE TEMP TABLE stat_writes (n INTEGER); INSERT INTO stat_writes VALUES (0)");
  for (const table of ["session_stats", "stats_rollup"]) {
    for (const op of ["INSERT", "UPDATE", "DELETE"]) {
      db.exec(`CREATE TEMP TRIGGER count_${table}_${op} AFTER ${op} ON main.${table}
        BEGIN UPDATE stat_writes SET n = n + 1; END`);
    }
  }
  const writes = () => (db.prepare("SELECT n FROM stat_writes").get() as { n: number }).n;
  // grows: three more files, one more failed read
  const b = rows("bbbbbbbb-2");
  await write("aaaaaaaa-1", [...reads(4), ...reads(3, 4)]);
  // and a prompt of today's: a day new to the session (one more session on that day)
  const path = claudeSessionPath(s.home, "/work/demo", "aaaaaaaa-1");
  await appendClaudePrompt(path, "aaaaaaaa-1", "and today");
  const before = writes();
  await s.run(store);
  sameAsOperations(store, "grown");
  assertEquals(rows("bbbbbbbb-2"), b, "the other session's rows unchanged");
  // moving all its rows out of the rollup and back in writes each of them 5 times; the rows
  // that changed (a new day, new files, the counts) are written 3 times
  const n = rows("aaaaaaaa-1").length;
  assert(writes() - before < 3 * n, `${writes() - before} rows written for ${n} rows`);
  // shrinks: operations gone from under it (the archive keeps what a re-read no longer holds,
  // so they are taken out by hand), then a re-read: their files leave its rows and the rollup
  db.exec(`DELETE FROM operations WHERE target IN ('/work/demo/f5.ts', '/work/demo/f6.ts')
    AND session = (SELECT num FROM sessions WHERE id = 'claude-code:aaaaaaaa-1')`);
  const files = (rows("aaaaaaaa-1") as { dim: string }[]).filter((r) => r.dim === "file").length;
  await write("aaaaaaaa-1", reads(1));
  await s.run(store);
  sameAsOperations(store, "shrunk");
  assertEquals(
    (rows("aaaaaaaa-1") as { dim: string }[]).filter((r) => r.dim === "file").length,
    files - 2,
  );
  // moves project: every row leaves the old project's rollup for the new one's
  await write("aaaaaaaa-1", reads(2), "/work/other");
  await s.run(store);
  assertEquals(
    store.listSessions({ limit: 10 }).items.find((x) => x.id === "claude-code:aaaaaaaa-1")
      ?.project_path,
    "/work/other",
  );
  sameAsOperations(store, "moved");
  for (const project of ["/work/demo", "/work/other"]) {
    assertEquals(
      store.stats({ project }),
      store.stats({ project }, { fromOperations: true }),
      project,
    );
  }
  store.close();
});

Deno.test("past 200 files the statistics list the 200 most touched and count every file, kept or counted", async () => {
  await using s = await scratch();
  const reads = (sid: string, from: number, n: number) =>
    writeClaudeSession(s.home, {
      sessionId: sid,
      cwd: "/work/demo",
      turns: [
        { user: `read ${n}` },
        ...Array.from({ length: n }, (_, i) => ({
          tool: {
            name: "Read",
            input: { file_path: `/work/demo/f${from + i}.ts` },
            result: `contents ${from + i}`,
          },
        })),
      ],
    });
  await reads("eeeeeeee-1", 0, 230);
  await reads("ffffffff-2", 220, 15); // ten files the first read too, five of its own
  const store = s.open();
  await s.run(store);
  const one = store.stats({ session_id: "claude-code:eeeeeeee-1" });
  assertEquals([one.files.length, one.files_touched], [200, 230]);
  assertEquals(store.stats().files_touched, 235);
  assertEquals(store.stats({ project: "/work/demo" }).files_touched, 235);
  assertEquals(store.stats({ session_id: "claude-code:ffffffff-2" }).files_touched, 15);
  sameAsOperations(store, "past 200 files");
  store.close();
});
