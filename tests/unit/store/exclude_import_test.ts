/**
 * The exclude list in the import pass: a log a glob names is never read; an excluded project's
 * sessions are not imported, and the ones already stored stay as they were (a full re-read of
 * a shared unit included); once the entry is gone, the next import goes on, and `full` reads
 * back what a log held meanwhile. A forgotten session stays out even then.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { compileExclude, type ExcludeList } from "../../../core/archive/mod.ts";
import type { OperationRecord, SessionDelta } from "../../../core/model/mod.ts";
import { ChronicleStore, importAll, prepareUnit } from "../../../core/store/mod.ts";
import type { SourceFs, SourceUnit } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { ClaudeLines, claudeSessionPath, writeClaudeSession } from "../../e2e/_synthetic.ts";

const ACME = "/work/acme";
const OPEN = "/work/open";
const A = "aaaaaaaa-0000-4000-8000-00000000000a";
const B = "bbbbbbbb-0000-4000-8000-00000000000b";
const C = "cccccccc-0000-4000-8000-00000000000c";
const id = (native: string) => `claude-code:${native}`;

/** A scratch HOME whose file system records every path an importer read. */
async function machine() {
  const home = await Deno.makeTempDir({ prefix: "chronicle-exclude-test-" });
  const real = createDenoFs({ tempRoot: `${home}/.tmp` });
  const read = new Set<string>();
  const fs: SourceFs = {
    ...real,
    readFrom: (p, o) => (read.add(p), real.readFrom(p, o)),
    readRange: (p, o, l) => (read.add(p), real.readRange(p, o, l)),
    readTextFile: (p) => (read.add(p), real.readTextFile(p)),
  };
  const store = ChronicleStore.open(":memory:");
  return {
    home,
    read,
    store,
    write: (sid: string, cwd: string, words: string[]) =>
      writeClaudeSession(home, {
        sessionId: sid,
        cwd,
        turns: words.map((w) => ({ user: `please ${w}` })),
      }),
    append: (sid: string, cwd: string, word: string) =>
      Deno.writeTextFile(
        claudeSessionPath(home, cwd, sid),
        new ClaudeLines({ sessionId: sid, cwd, start: Date.parse("2026-01-07T00:00:00Z") })
          .turn({ user: `please ${word}` }),
        { append: true },
      ),
    run: (list?: ExcludeList, options: { full?: boolean } = {}) =>
      importAll(store, {
        env: { home, env: {}, platform: "linux" },
        fs,
        exclude: list ? compileExclude(list, { home }) : undefined,
        full: options.full,
      }),
    prompts: (sid: string) =>
      store.loadSession(id(sid))?.timeline.map((t) =>
        store.loadSession(id(sid))!.operations[t.op].text
      ) ?? null,
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

Deno.test("a log a glob of the exclude list names is never read, and is counted as excluded", async () => {
  await using m = await machine();
  await m.write(A, ACME, ["one"]);
  await m.write(B, OPEN, ["two"]);
  const list = { paths: ["~/.claude/projects/-work-acme"], projects: [] };
  const first = await m.run(list);
  assertEquals(m.store.getSession(id(A)), null);
  assert(m.store.getSession(id(B)) !== null);
  assert(![...m.read].some((p) => p.includes("-work-acme")), [...m.read].join(", "));
  assertEquals(first.sources["claude-code"].excluded, 1);
  assertEquals(first.sources["claude-code"].units, 1);
  // stored before, excluded since: kept, not read, and not "no longer on disk"
  const again = await (async () => {
    await m.run(); // without the list: A comes in
    assert(m.store.getSession(id(A)) !== null);
    m.read.clear();
    await m.append(A, ACME, "more");
    return await m.run(list);
  })();
  assertEquals([again.sources["claude-code"].excluded, again.sources["claude-code"].removed], [
    1,
    0,
  ]);
  assert(![...m.read].some((p) => p.includes("-work-acme")));
  assertEquals(m.prompts(A), ["please one"]);
});

Deno.test("an excluded project's new sessions are not imported; its stored ones stay as they were", async () => {
  await using m = await machine();
  await m.write(A, ACME, ["one"]);
  await m.run();
  const list = { paths: [], projects: [ACME] };
  await m.write(C, `${ACME}/web`, ["new there"]);
  await m.write(B, OPEN, ["elsewhere"]);
  m.read.clear();
  const pass = await m.run(list);
  assertEquals(m.store.getSession(id(C)), null);
  assert(m.store.getSession(id(B)) !== null);
  // A's log only feeds an excluded project's session: not read again, even when it grows
  await m.append(A, ACME, "two");
  await m.write(A, ACME, ["rewritten"]);
  m.read.clear();
  const later = await m.run(list);
  assert(![...m.read].some((p) => p.includes(A)), "A's log was not read");
  assertEquals(m.prompts(A), ["please one"]);
  assertEquals(later.sources["claude-code"].excluded, 1);
  assertEquals(pass.changed_sessions, [id(B)]);
  assertEquals(m.store.stats().sessions, 2);
});

Deno.test("once the entry is gone the next import brings in what the logs held meanwhile", async () => {
  await using m = await machine();
  await m.write(A, ACME, ["one"]);
  await m.run();
  const list = { paths: [], projects: [ACME] };
  await m.append(A, ACME, "two");
  await m.write(C, ACME, ["while excluded"]);
  const excluded = await m.run(list);
  assertEquals(m.store.getSession(id(C)), null);
  assertEquals(excluded.sources["claude-code"].excluded, 1); // A's log: not read at all
  // C's log was read and its session left out: the unit says so (an info note)
  const note = m.store.getSource(claudeSessionPath(m.home, ACME, C))?.issues;
  assertEquals(note?.map((i) => [i.code, i.severity]), [["excluded_project", "info"]]);
  // still excluded: unchanged logs stay unread, and nothing comes in
  await m.run(list);
  assertEquals(m.store.getSession(id(C)), null);
  // the entry removed: A's log goes on from its checkpoint, C's is read from its start
  const back = await m.run();
  assertEquals(m.prompts(A), ["please one", "please two"]);
  assertEquals(m.prompts(C), ["please while excluded"]);
  assertEquals(back.sources["claude-code"].rewritten, 1);
  assertEquals(m.store.getSource(claudeSessionPath(m.home, ACME, C))?.issues, []);
  // a full pass reads everything again and changes nothing; a forgotten session stays out
  const full = await m.run(undefined, { full: true });
  assertEquals(full.sources["claude-code"].rewritten, 2);
  assertEquals(m.prompts(A), ["please one", "please two"]);
  m.store.forget([id(A)]);
  await m.run(undefined, { full: true });
  assertEquals(m.store.getSession(id(A)), null);
  assertEquals(m.store.stats().sessions, 1);
});

/** A prompt operation read from `file`. */
function prompt(file: string, text: string, line: number): OperationRecord {
  return {
    id: `op-${text}`,
    connection: "main",
    order: { ts_ms: 1_700_000_000_000 + line, rank: 0, line, block: 0 },
    op: {
      kind: "prompt",
      effect: "none",
      text,
      completeness: "complete",
      provenance: { epoch: 0, source_range: { file, lines: [line, line], bytes: [0, 1] } },
      replay: { replayable: false, blockers: [] },
    },
  };
}

function delta(sid: string, project: string, file: string, texts: string[]): SessionDelta {
  return {
    session_id: `opencode:${sid}`,
    file,
    primary: true,
    info: { id: `opencode:${sid}`, native_id: sid, source: "opencode", project: { path: project } },
    connections: [],
    operations: texts.map((t, i) => prompt(file, t, i + 1)),
    usage: [],
    loss_windows: [],
    issues: [],
  };
}

Deno.test("a full re-read of a unit shared by two projects leaves the excluded one's session as it was", () => {
  const store = ChronicleStore.open(":memory:");
  const file = "/data/opencode.db";
  const unit: SourceUnit = { source: "opencode", path: file, kind: "sqlite", rank: 0 };
  const pass = (deltas: SessionDelta[], epoch: number, excluded?: string) =>
    store.applyUnit(
      unit,
      prepareUnit({
        mode: "full",
        deltas,
        checkpoint: null,
        state: null,
        issues: [],
        payloads: new Map(),
        bytesRead: 1,
      }),
      epoch,
      {
        excludedProject: excluded
          ? (p) => compileExclude({ paths: [], projects: [excluded] }, { home: "" }).project(p)
          : undefined,
      },
    );
  const texts = (sid: string) => {
    const s = store.loadSession(`opencode:${sid}`);
    return s ? s.timeline.map((t) => s.operations[t.op].text) : null;
  };
  pass([delta("s1", ACME, file, ["a1"]), delta("s2", OPEN, file, ["b1"])], 0);
  const wrote = pass(
    [delta("s1", ACME, file, ["a1", "a2"]), delta("s2", OPEN, file, ["b1", "b2"])],
    1,
    ACME,
  );
  assertEquals(wrote, ["opencode:s2"]);
  assertEquals(texts("s1"), ["a1"]);
  assertEquals(texts("s2"), ["b1", "b2"]);
  assertEquals(store.getSource(file)?.sessions.sort(), ["opencode:s1", "opencode:s2"]);
  // a new session of the excluded project in that unit is not created
  pass([delta("s3", `${ACME}/x`, file, ["c1"])], 2, ACME);
  assertEquals(texts("s3"), null);
  // no longer excluded: the next full read brings s1 up to date
  pass([delta("s1", ACME, file, ["a1", "a2"]), delta("s2", OPEN, file, ["b1", "b2"])], 3);
  assertEquals(texts("s1"), ["a1", "a2"]);
  store.close();
});
