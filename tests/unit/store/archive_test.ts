/**
 * The archive keeps what it saw: a log its agent rewrote shorter, replaced or deleted never
 * erases what the store already holds. What the log no longer holds stays, marked kept; the
 * same bytes read again change nothing; a step that moved (line-numbered ids) is not doubled.
 * Driven with logs the real CLIs wrote (Claude Code, Codex, Gemini CLI).
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import {
  ChronicleStore,
  importAll,
  type ImportOptions,
  type StoredOp,
  storedOpColumns,
} from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";

const AGENTS = [
  { agent: "claude", source: "claude-code", dir: ".claude/projects" },
  { agent: "codex", source: "codex", dir: ".codex/sessions" },
  { agent: "gemini", source: "gemini", dir: ".gemini/tmp" },
] as const;

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
    else if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

/** The one session log of a fixture tree (the biggest .jsonl under the agent's folder). */
async function mainLog(root: string): Promise<string> {
  let best = { path: "", size: -1 };
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.name.endsWith(".jsonl")) {
        const size = (await Deno.stat(p)).size;
        if (size > best.size) best = { path: p, size };
      }
    }
  };
  await walk(root);
  return best.path;
}

async function scratch(agent: string, dir: string) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-archive-test-" });
  await copyTree(`${FIXTURES}/realclients/${agent}/s4-long/native`, home);
  const store = ChronicleStore.open(":memory:");
  const options: ImportOptions = {
    env: { home, env: {}, platform: "linux" },
    fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
  };
  const log = await mainLog(`${home}/${dir}`);
  return {
    home,
    store,
    log,
    run: () => importAll(store, options),
    rows: () =>
      dbOf(store).prepare(
        "SELECT op_id, kind, kept, doc FROM operations ORDER BY op_id",
      ).all() as { op_id: string; kind: string; kept: number | null; doc: string }[],
    only: () => {
      const items = store.listSessions().items;
      assertEquals(items.length, 1);
      return items[0];
    },
    [Symbol.asyncDispose]: async () => {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

const usage = (s: { store: ChronicleStore }) =>
  dbOf(s.store).prepare("SELECT count(*) AS n, sum(input + output) AS t FROM usage").get();

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

for (const { agent, source, dir } of AGENTS) {
  Deno.test(`${source}: a log rewritten shorter keeps what it lost, marked kept`, async () => {
    await using s = await scratch(agent, dir);
    await s.run();
    const before = s.only();
    const spent = usage(s);
    assert(before.op_count > 10, `${agent}: ${before.op_count} operations`);
    assertEquals(before.kept_count, 0);
    const all = lines(await Deno.readTextFile(s.log));
    await Deno.writeTextFile(s.log, all.slice(0, Math.ceil(all.length / 3)).join("\n") + "\n");
    const summary = await s.run();
    assertEquals(summary.sources[source]?.rewritten, 1);
    const after = s.only();
    assertEquals(after.op_count, before.op_count, "no operation is lost");
    assert(after.kept_count > 0, "what the log lost is marked kept");
    assert(after.kept_count < after.op_count, "what it still holds is current");
    assertEquals(usage(s), spent, "the tokens spent stay");
    const timeline = s.store.timeline(after.id, { limit: 5000 }).items;
    assertEquals(timeline.filter((t) => t.kept).length, after.kept_count);
    // the full log back: everything current again, nothing doubled
    await Deno.writeTextFile(s.log, all.join("\n") + "\n");
    await s.run();
    const back = s.only();
    assertEquals([back.op_count, back.kept_count], [before.op_count, 0]);
  });

  Deno.test(`${source}: the same bytes read again change nothing`, async () => {
    await using s = await scratch(agent, dir);
    await s.run();
    const first = s.rows();
    // the same content, a new file (another inode, another mtime): read from zero again
    const text = await Deno.readTextFile(s.log);
    await Deno.remove(s.log);
    await Deno.writeTextFile(s.log, text);
    await s.run();
    const second = s.rows();
    assertEquals(second.map((r) => [r.op_id, r.kept]), first.map((r) => [r.op_id, r.kept]));
    assertEquals(s.only().kept_count, 0);
  });

  Deno.test(`${source}: a deleted log keeps its session, every operation marked kept`, async () => {
    await using s = await scratch(agent, dir);
    await s.run();
    const before = s.only();
    await Deno.remove(s.log);
    const gone = await s.run();
    assertEquals(gone.sources[source]?.removed, 1);
    const after = s.only();
    assertEquals(after.op_count, before.op_count);
    assertEquals(after.kept_count, after.op_count);
    // counted once: the next pass has nothing more to say about it
    const again = await s.run();
    assertEquals(again.sources[source]?.removed ?? 0, 0);
    assertEquals(s.only().kept_count, after.op_count);
  });
}

for (const earlier of [false, true]) {
  Deno.test(
    `codex: lines removed before a step move its id; the step is not doubled${
      earlier ? " (docs an earlier Chronicle stored whole)" : ""
    }`,
    async () => {
      await using s = await scratch("codex", ".codex/sessions");
      await s.run();
      const before = s.only();
      if (earlier) wholeDocs(dbOf(s.store));
      const tokens = () =>
        dbOf(s.store).prepare("SELECT count(*) AS n, sum(input + output) AS t FROM usage").get();
      const spent = tokens();
      const all = lines(await Deno.readTextFile(s.log));
      // drop one record from the middle: every later line-numbered id moves up by one
      const mid = all.findIndex((l, i) => i > all.length / 2 && l.includes('"response_item"'));
      assert(mid > 0);
      await Deno.writeTextFile(
        s.log,
        [...all.slice(0, mid), ...all.slice(mid + 1)].join("\n") + "\n",
      );
      await s.run();
      const after = s.only();
      const steps = s.rows().map((r) => {
        const doc = JSON.parse(r.doc);
        delete doc.provenance;
        return JSON.stringify(doc);
      });
      assertEquals(new Set(steps).size, steps.length, "no step twice");
      assert(after.op_count <= before.op_count, `${after.op_count} > ${before.op_count}`);
      assert(after.kept_count <= 1, `${after.kept_count} kept: only the removed record's step`);
      assertEquals(tokens(), spent, "every response's tokens once");
    },
  );
}

/** Puts back in every stored doc the fields its row's columns hold, as earlier versions kept them. */
function wholeDocs(db: ReturnType<typeof dbOf>): void {
  const rows = db.prepare(`SELECT rowid, ${storedOpColumns()} FROM operations`)
    .all() as unknown as (StoredOp & { rowid: number })[];
  const update = db.prepare("UPDATE operations SET doc = ? WHERE rowid = ?");
  for (const r of rows) {
    const { kind, effect, completeness, tool, target, model } = r;
    const columns = Object.entries({ kind, effect, completeness, tool, target, model })
      .filter(([, v]) => v !== null);
    update.run(JSON.stringify({ ...Object.fromEntries(columns), ...JSON.parse(r.doc) }), r.rowid);
  }
}

Deno.test("a log rewritten without a tool's result keeps the whole call", async () => {
  await using s = await scratch("claude", ".claude/projects");
  await s.run();
  const complete = new Map(
    s.rows().filter((r) => r.kind !== "prompt" && JSON.parse(r.doc).response).map((r) => [
      r.op_id,
      JSON.parse(r.doc).response.sha256,
    ]),
  );
  assert(complete.size > 0);
  const all = lines(await Deno.readTextFile(s.log));
  // cut right after the first tool call, before its result
  const call = all.findIndex((l) => l.includes('"tool_use"'));
  assert(call > 0);
  await Deno.writeTextFile(s.log, all.slice(0, call + 1).join("\n") + "\n");
  await s.run();
  const after = new Map(s.rows().map((r) => [r.op_id, JSON.parse(r.doc)]));
  for (const [id, sha] of complete) assertEquals(after.get(id)?.response?.sha256, sha, id);
});
