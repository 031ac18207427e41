import { dbOf } from "../../_helpers/store_db.ts";
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { DatabaseSync } from "node:sqlite";
import { validationProblems } from "../../../core/model/mod.ts";
import {
  ChronicleStore,
  importAll,
  type ImportOptions,
  inProcessRunner,
} from "../../../core/store/mod.ts";
import type { SourceFs } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";

const SHARED = FIXTURES;

/** A scratch HOME with a Claude Code projects folder, and a store in memory. */
async function scratch() {
  const home = await Deno.makeTempDir({ prefix: "chronicle-store-test-" });
  const projects = `${home}/.claude/projects/-work-demo`;
  await Deno.mkdir(projects, { recursive: true });
  const store = ChronicleStore.open(":memory:");
  const counting = countingFs(createDenoFs({ tempRoot: `${home}/.tmp` }));
  const options: ImportOptions = {
    env: { home, env: {}, platform: "linux" },
    fs: counting.fs,
  };
  return {
    home,
    projects,
    store,
    counting,
    run: () => importAll(store, options),
    runWith: (extra: Partial<ImportOptions>) => importAll(store, { ...options, ...extra }),
    [Symbol.asyncDispose]: async () => {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

function countingFs(inner: SourceFs) {
  const counts = { stat: 0, readFrom: 0, bytes: 0 };
  const fs: SourceFs = {
    ...inner,
    stat: (p) => {
      counts.stat++;
      return inner.stat(p);
    },
    async *readFrom(p, offset) {
      counts.readFrom++;
      for await (const c of inner.readFrom(p, offset)) {
        counts.bytes += c.byteLength;
        yield c;
      }
    },
  };
  return { fs, counts };
}

/** Every row of the tables an import writes, for comparing two stores or two passes. */
function dump(store: ChronicleStore) {
  const q = (sql: string) => dbOf(store).prepare(sql).all();
  return {
    sessions: q(
      "SELECT id, source, native_id, project_path, title, first_prompt, started_at, ended_at, op_count, error_count, info, extensions FROM sessions ORDER BY id",
    ),
    operations: q(
      "SELECT (SELECT id FROM sessions WHERE num = session) AS session_id, op_id, connection, (SELECT path FROM op_files WHERE id = file_id) AS file, ts_ms, rank, line, block, kind, effect, tool, target, is_error, completeness, doc FROM operations ORDER BY 1, op_id",
    ),
    connections: q("SELECT * FROM connections ORDER BY session_id, id"),
    usage: q("SELECT * FROM usage ORDER BY session_id, key"),
    issues: q("SELECT session_id, file, doc FROM session_issues ORDER BY rowid"),
    loss: q("SELECT session_id, file, doc FROM loss_windows ORDER BY rowid"),
    payloads: q("SELECT sha256, size FROM payloads ORDER BY sha256"),
    fts: q(
      "SELECT rowid FROM operations_fts WHERE operations_fts MATCH 'the OR a OR file' ORDER BY rowid",
    ),
  };
}

/** The one session file of the real Claude Code s1-basic scenario. */
const realS1 = (() => {
  const root = `${SHARED}/realclients/claude/s1-basic/native/.claude/projects`;
  for (const d of Deno.readDirSync(root)) {
    for (const f of Deno.readDirSync(`${root}/${d.name}`)) {
      if (f.isFile && f.name.endsWith(".jsonl")) return `${root}/${d.name}/${f.name}`;
    }
  }
  throw new Error("no s1-basic fixture");
})();
const S1_NAME = realS1.slice(realS1.lastIndexOf("/") + 1);
const S1_ID = `claude-code:${S1_NAME.slice(0, -6)}`;

Deno.test("importAll() is idempotent: a second import changes no row and reads no byte", async () => {
  await using s = await scratch();
  await Deno.copyFile(realS1, `${s.projects}/${S1_NAME}`);
  const first = await s.run();
  assertEquals([first.sessions, first.operations], [1, 8]);
  const before = dump(s.store);
  s.counting.counts.stat = 0;
  s.counting.counts.readFrom = 0;
  const second = await s.run();
  assertEquals(second.sources["claude-code"].unchanged, 1);
  assertEquals(s.counting.counts.readFrom, 0, "an unchanged file is not read");
  assertEquals(s.counting.counts.stat, 1, "an unchanged file costs one stat");
  assertEquals(dump(s.store), before);
});

Deno.test("importAll() reads an appended file from its checkpoint and completes pending calls", async () => {
  await using s = await scratch();
  const lines = (await Deno.readTextFile(realS1)).split("\n").filter(Boolean);
  const cut = lines.findIndex((l) => l.includes('"tool_result"'));
  const path = `${s.projects}/${S1_NAME}`;
  await Deno.writeTextFile(path, lines.slice(0, cut).join("\n") + "\n");
  await s.run();
  const sid = S1_ID;
  const pending = s.store.loadSession(sid)!;
  const write = Object.values(pending.operations).find((o) => o.tool === "Write")!;
  assertEquals(write.completeness, "incomplete");
  const sizeBefore = (await Deno.stat(path)).size;
  await Deno.writeTextFile(path, lines.slice(cut).join("\n") + "\n", { append: true });
  s.counting.counts.bytes = 0;
  const r = await s.run();
  assertEquals(r.sources["claude-code"].appended, 1);
  assertEquals(
    s.counting.counts.bytes,
    (await Deno.stat(path)).size - sizeBefore,
    "only new bytes are read",
  );
  const done = s.store.loadSession(sid)!;
  const write2 = Object.values(done.operations).find((o) => o.tool === "Write")!;
  assertEquals(
    [write2.completeness, write2.provenance.epoch, write2.provenance.completion?.epoch],
    ["complete", 0, 1],
  );
  assertEquals(validationProblems(done), []);
  // The same bytes imported in one go give the same operations.
  await using fresh = await scratch();
  await Deno.copyFile(path, `${fresh.projects}/${S1_NAME}`);
  await fresh.run();
  const strip = (x: ReturnType<typeof dump>) =>
    x.operations.map((o) => ({ ...o, file: "", doc: JSON.parse(String(o.doc)).kind }));
  assertEquals(strip(dump(fresh.store)), strip(dump(s.store)));
});

Deno.test("importAll() re-reads a truncated or replaced file from zero: what it lost is kept, nothing is doubled", async (t) => {
  await using s = await scratch();
  const path = `${s.projects}/${S1_NAME}`;
  await Deno.copyFile(realS1, path);
  await s.run();
  await t.step("truncated", async () => {
    const lines = (await Deno.readTextFile(realS1)).split("\n").filter(Boolean);
    await Deno.writeTextFile(path, lines.slice(0, 3).join("\n") + "\n");
    const r = await s.run();
    assertEquals(r.sources["claude-code"].full, 1);
    assertEquals(s.store.totals().operations, 8, "the archive keeps what the file lost");
    assertEquals(s.store.getSession(S1_ID)?.kept_count, 7);
  });
  await t.step("replaced by another file", async () => {
    await Deno.remove(path);
    await Deno.copyFile(realS1, path);
    await s.run();
    assertEquals(s.store.totals().operations, 8);
    assertEquals(s.store.getSession(S1_ID)?.kept_count, 0, "all of it is on disk again");
    const { count } = dbOf(s.store).prepare("SELECT count(*) AS count FROM operations_fts")
      .get() as {
        count: number;
      };
    assertEquals(count, 8, "the search index holds no stale rows");
  });
});

Deno.test("importAll() survives hostile input and records every loss", async (t) => {
  await using s = await scratch();
  const good = (await Deno.readTextFile(realS1)).split("\n").filter(Boolean);
  await t.step("garbage lines and invalid UTF-8 become loss windows", async () => {
    const bytes = new TextEncoder().encode(`${good[2]}\nnot json at all\n`);
    const bad = new Uint8Array([0xc3, 0x28, 0xff, 0x0a]);
    const all = new Uint8Array(bytes.length + bad.length);
    all.set(bytes);
    all.set(bad, bytes.length);
    await Deno.writeFile(`${s.projects}/garbage.jsonl`, all);
    const r = await s.run();
    assertEquals(r.errors, []);
    const session = s.store.loadSession(S1_ID)!;
    // The two adjacent bad lines are one loss window.
    assertEquals(
      session.provenance.loss_windows.map((l) => [l.reason, l.lines]),
      [["invalid JSON", [2, 3]]],
    );
  });
  await t.step("a 20 MB single line imports", async () => {
    const big = JSON.parse(good[2]);
    big.uuid = crypto.randomUUID();
    big.sessionId = "big-session";
    big.message.content = "x".repeat(20 * 1024 * 1024);
    await Deno.writeTextFile(`${s.projects}/big.jsonl`, JSON.stringify(big) + "\n");
    const r = await s.run();
    assertEquals(r.errors, []);
    const ops = s.store.timeline("claude-code:big-session").items;
    assertEquals(ops.length, 1);
    assertEquals(ops[0].op.text?.length, 20 * 1024 * 1024);
  });
  await t.step(
    "an empty file and a directory named x.jsonl are no sessions and no errors",
    async () => {
      await Deno.writeTextFile(`${s.projects}/empty.jsonl`, "");
      await Deno.mkdir(`${s.projects}/x.jsonl`);
      const before = s.store.totals().sessions;
      const r = await s.run();
      assertEquals(r.errors, []);
      assertEquals(s.store.totals().sessions, before);
    },
  );
  await t.step(
    "a file deleted between discovery and import is reported, the rest imports",
    async () => {
      const doomed = `${s.projects}/doomed.jsonl`;
      await Deno.copyFile(realS1, doomed);
      await Deno.copyFile(realS1, `${s.projects}/other.jsonl`);
      const inner = inProcessRunner(createDenoFs());
      const r = await s.runWith({
        runner: async (unit, epoch, resume) => {
          if (unit.path === doomed) await Deno.remove(doomed);
          return inner(unit, epoch, resume);
        },
      });
      assertEquals(r.errors, []);
      const src = s.store.getSource(doomed)!;
      assertEquals(src.sessions, []);
      assertMatch(src.issues[0].message, /doomed.jsonl": it is gone/);
      assert(s.store.getSource(`${s.projects}/other.jsonl`));
    },
  );
  await t.step("an importer that throws stops only its own file", async () => {
    await Deno.writeTextFile(`${s.projects}/new.jsonl`, good[2] + "\n");
    const inner = inProcessRunner(createDenoFs());
    const r = await s.runWith({
      runner: (unit, epoch, resume) =>
        unit.path.endsWith("/new.jsonl")
          ? Promise.reject(new Error("boom"))
          : inner(unit, epoch, resume),
    });
    assertEquals(r.errors.length, 1);
    assertMatch(r.errors[0].message, /Cannot import ".*new.jsonl": boom/);
  });
});

Deno.test("store queries: list, timeline pages, search with snippets, projects", async () => {
  await using s = await scratch();
  for (const sc of ["s1-basic", "s2-errors"]) {
    const dir = `${SHARED}/realclients/claude/${sc}/native/.claude/projects`;
    for await (const d of Deno.readDir(dir)) {
      for await (const f of Deno.readDir(`${dir}/${d.name}`)) {
        if (f.isFile) await Deno.copyFile(`${dir}/${d.name}/${f.name}`, `${s.projects}/${f.name}`);
      }
    }
  }
  await s.run();
  const list = s.store.listSessions({ sort: "started_at", order: "asc" });
  assertEquals(list.total, 2);
  assertEquals(list.items.map((i) => i.project_path), [
    "/home/dev/projects/s1-basic",
    "/home/dev/projects/s2-errors",
  ]);
  assertEquals(s.store.listSessions({ project: "/home/dev/projects/s2-errors" }).total, 1);
  assertEquals(s.store.listSessions({ source: "codex" }).total, 0);
  const errs = s.store.getSession(list.items[1].id)!;
  assertEquals(errs.error_count, 3);
  const page = s.store.timeline(list.items[0].id, { offset: 2, limit: 3 });
  assertEquals([page.total, page.items.map((i) => i.seq)], [8, [2, 3, 4]]);
  const full = s.store.loadSession(list.items[0].id)!;
  assertEquals(page.items.map((i) => i.op_id), full.timeline.slice(2, 5).map((t) => t.op));
  const found = s.store.search("wirte");
  assert(found.total >= 1);
  assertEquals(found.hits[0].session_id, list.items[0].id);
  assert(found.hits[0].snippet.some((p) => p.match && p.text.toLowerCase() === "wirte"));
  assertEquals(
    s.store.search('"unbalanced (quote OR').total >= 0,
    true,
    "no query is a syntax error",
  );
  assertEquals(s.store.listSessions({ text: "CHANGELOG" }).total, 1);
  assertEquals(s.store.projects().length, 2);
});

Deno.test("a sub-agent connection row names the call that spawned it, whichever file came first", async (t) => {
  const home = `${SHARED}/realclients/claude/s6-subagent/native`;
  for (const order of ["main first", "sub-agent first"]) {
    await t.step(order, async () => {
      const store = ChronicleStore.open(":memory:");
      try {
        const inner = inProcessRunner(createDenoFs());
        const env = { home, env: {}, platform: "linux" as const };
        if (order === "sub-agent first") {
          // import only the sub-agent file, then everything
          await importAll(store, {
            env,
            fs: createDenoFs(),
            runner: (unit, epoch, resume) =>
              unit.rank === 0 ? Promise.reject(new Error("later")) : inner(unit, epoch, resume),
          });
          store.markUnitGone(
            [...Deno.readDirSync(`${home}/.claude/projects/-home-dev-projects-s6-subagent`)]
              .filter((e) => e.isFile).map((e) =>
                `${home}/.claude/projects/-home-dev-projects-s6-subagent/${e.name}`
              )[0],
          );
        }
        await importAll(store, { env, fs: createDenoFs() });
        const rows = dbOf(store).prepare(
          "SELECT id, json_extract(doc, '$.parent_op') AS parent FROM connections WHERE id <> 'main'",
        ).all() as { id: string; parent: string | null }[];
        assertEquals(rows.length, 1);
        const task = dbOf(store).prepare(
          "SELECT op_id FROM operations WHERE kind = 'task'",
        ).get() as { op_id: string };
        assertEquals(rows[0].parent, task.op_id);
      } finally {
        store.close();
      }
    });
  }
});

Deno.test("importAll() reports a store locked by another process and imports it next time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-locked-test-" });
  const path = `${dir}/chronicle.db`;
  const home = `${SHARED}/realclients/claude/s1-basic/native`;
  const env = { home, env: {}, platform: "linux" as const };
  const store = ChronicleStore.open(path, { busyTimeoutMs: 50 });
  const other = new DatabaseSync(path);
  try {
    other.exec("PRAGMA busy_timeout = 50");
    other.exec("BEGIN IMMEDIATE"); // another writer holds the lock
    const locked = await importAll(store, { env, fs: createDenoFs() });
    assertEquals(locked.errors.length, 1);
    assertMatch(locked.errors[0].message, /Cannot store .*: database is locked/);
    other.exec("ROLLBACK");
    const next = await importAll(store, { env, fs: createDenoFs() });
    assertEquals(next.errors, []);
    assertEquals([next.sessions, next.operations], [1, 8]);
  } finally {
    other.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("search finds the head and the tail of a long tool result", async () => {
  await using s = await scratch();
  const sid = "11111111-2222-4333-8444-555555555555";
  const base = { sessionId: sid, cwd: "/w", version: "2.1.0", parentUuid: null };
  const output = "build started\n" + "compiling module\n".repeat(2000) +
    "FATAL: linker exploded in zorbfile";
  const lines = [
    {
      ...base,
      type: "assistant",
      uuid: crypto.randomUUID(),
      timestamp: "2026-01-01T00:00:00.000Z",
      message: {
        id: "m1",
        model: "claude-x",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "make" } }],
      },
    },
    {
      ...base,
      type: "user",
      uuid: crypto.randomUUID(),
      timestamp: "2026-01-01T00:00:01.000Z",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: output }],
      },
    },
  ];
  await Deno.writeTextFile(
    `${s.projects}/${sid}.jsonl`,
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
  await s.run();
  for (const q of ["build started", "zorbfile"]) {
    const found = s.store.search(q);
    assertEquals(found.total, 1, q);
    assert(found.hits[0].snippet.some((p) => p.match), `${q}: the snippet marks the match`);
  }
  assertEquals(s.store.search("compiling module").total, 1);
  assertEquals(s.store.getSession(`claude-code:${sid}`)!.error_count, 0);
});

Deno.test("the checkpoints of a few units are read alone, and read the same as from the whole table", async () => {
  const { scratch } = await import("./_sessions.ts");
  await using s = await scratch();
  for (const sid of ["a1", "b2", "c3"]) await s.write(sid, [`out ${sid}`]);
  const store = s.open();
  await s.run(store);
  const all = store.sourceCheckpoints();
  assertEquals(all.size, 3);
  const [first, , third] = [...all.keys()];
  const some = store.sourceCheckpoints([third, "/no/such/log.jsonl", first]);
  assertEquals([...some.keys()], [third, first], "the given ones, in their order; none unknown");
  assertEquals(some.get(first), all.get(first));
  assertEquals(some.get(third), all.get(third));
  store.close();
});

Deno.test("a log read in slices that goes away mid-way is read no further, and what it gave stays", async () => {
  const { scratch } = await import("./_sessions.ts");
  const { discoverUnits, importUnits, inProcessRunner } = await import(
    "../../../core/store/mod.ts"
  );
  await using s = await scratch();
  await s.write("big", Array.from({ length: 40 }, (_, i) => `output ${i} `.repeat(40)));
  const store = s.open();
  await s.run(store, { maxPassBytes: 2000 });
  const [path] = store.sourceCheckpoints().keys();
  const all = store.totals().operations;
  assert(all > 40, `${all} operations stored`);
  // a pass that stopped after a slice (its checkpoint says more), then the log is gone
  dbOf(store).prepare(
    `UPDATE sources SET checkpoint = json_set(checkpoint, '$.more', json('true'),
       '$.offset', 1000) WHERE path = ?`,
  ).run(path);
  const fs = createDenoFs({ tempRoot: `${s.data}/tmp` });
  const env = { home: s.home, env: {}, platform: "linux" as const };
  const { units } = await discoverUnits({ env, fs });
  await Deno.remove(path);
  let passes = 0;
  const run = inProcessRunner(fs);
  // as a live view imports the unit it watches
  await importUnits(store, units.filter((u) => u.path === path), {
    fs,
    maxPassBytes: 2000,
    runner: (...args) => {
      if (++passes > 5) throw new Error("read again and again");
      return run(...args);
    },
  });
  assertEquals(passes, 1, "one look, no next slice");
  assertEquals(store.totals().operations, all, "nothing lost");
  store.close();
});
