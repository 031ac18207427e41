import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  classifyTool,
  type SqliteCheckpoint,
  validationProblems,
} from "../../../core/model/mod.ts";
import { cutMark } from "../../../core/model/cut_mark.ts";
import { KEEP_TEXT_BYTES } from "../../../core/sources/json_cut.ts";
import { MAX_LINE_BYTES } from "../../../core/sources/jsonl.ts";
import { opencode, opencodeDataDirs } from "../../../core/sources/opencode/mod.ts";
import type { SourceUnit, UnitResult } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import {
  assemble,
  importThroughStore,
  ops,
  payloadText,
  readScenario,
  resume,
  SHARED,
} from "./_run_importer.ts";
import { assertSnapshot, normalize } from "./_snapshot.ts";
import { moduleTempDir } from "../../_helpers/temp_dir.ts";

const TMP = await moduleTempDir("chronicle-opencode-test-");
const fs = createDenoFs({ tempRoot: `${TMP}/scratch` });
const PEERS = `${SHARED}/peers/opencode`;

function dbUnit(path: string): SourceUnit {
  return { source: "opencode", path, kind: "sqlite", rank: 0 };
}
function treeUnit(path: string): SourceUnit {
  return { source: "opencode", path, kind: "tree", rank: 0 };
}

let dirCount = 0;
async function freshDir(): Promise<string> {
  const dir = `${TMP}/case-${++dirCount}`;
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
    else await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

/** Scratch copies must not leak: every test checks the scratch folder is empty again. */
async function assertNoScratchLeft(): Promise<void> {
  const left: string[] = [];
  try {
    for await (const e of Deno.readDir(`${TMP}/scratch`)) left.push(e.name);
  } catch {
    return;
  }
  assertEquals(left, [], "scratch copies are deleted after reading");
}

const roots = { [SHARED]: "<FIXTURES>", [TMP]: "<TMP>" };

// ---------------------------------------------------------------------------------------------
// A small OpenCode database built at test time

type Row = Record<string, string | number | null>;

interface DbSpec {
  sessions: Row[];
  messages?: Row[];
  parts?: Row[];
  omitTables?: string[];
  journal?: "wal" | "delete";
}

function buildDb(path: string, spec: DbSpec): void {
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA journal_mode = ${spec.journal === "delete" ? "DELETE" : "WAL"}`);
  const omit = new Set(spec.omitTables ?? []);
  db.exec(`CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT, time_created INTEGER)`);
  if (!omit.has("session")) {
    db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
      directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER)`);
  }
  if (!omit.has("message")) {
    db.exec(`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
      time_updated INTEGER, data TEXT)`);
  }
  if (!omit.has("part")) {
    db.exec(`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
      time_created INTEGER, time_updated INTEGER, data TEXT)`);
  }
  const insert = (table: string, rows: Row[] = []) => {
    if (omit.has(table)) return;
    for (const r of rows) {
      const keys = Object.keys(r);
      db.prepare(
        `INSERT INTO ${table} (${keys.join(",")}) VALUES (${keys.map(() => "?").join(",")})`,
      )
        .run(...keys.map((k) => r[k]));
    }
  };
  insert("session", spec.sessions);
  insert("message", spec.messages);
  insert("part", spec.parts);
  db.close();
}

/** Adds an empty session to a database, as OpenCode does when one is started. */
function addSession(path: string, id: string, created: number): void {
  const db = new DatabaseSync(path);
  db.prepare(
    "INSERT INTO session (id, directory, title, version, time_created, time_updated) VALUES (?,?,?,?,?,?)",
  ).run(id, "/x", id, "1", created, created + 1);
  db.close();
}

const T0 = 1_800_000_000_000;
const session = (id: string, extra: Row = {}): Row => ({
  id,
  project_id: "p1",
  directory: "/home/u/proj",
  title: `title of ${id}`,
  version: "1.2.3",
  time_created: T0,
  time_updated: T0 + 60_000,
  ...extra,
});
const userMsg = (id: string, sid: string, t: number): Row => ({
  id,
  session_id: sid,
  time_created: t,
  time_updated: t,
  data: JSON.stringify({
    role: "user",
    time: { created: t },
    model: { providerID: "prov", modelID: "m1" },
  }),
});
const asstMsg = (id: string, sid: string, t: number, extra: Record<string, unknown> = {}): Row => ({
  id,
  session_id: sid,
  time_created: t,
  time_updated: t,
  data: JSON.stringify({
    role: "assistant",
    time: { created: t, completed: t + 500 },
    modelID: "m1",
    providerID: "prov",
    ...extra,
  }),
});
const part = (id: string, mid: string, sid: string, t: number, data: unknown): Row => ({
  id,
  message_id: mid,
  session_id: sid,
  time_created: t,
  time_updated: t,
  data: data === null ? null : typeof data === "string" ? data : JSON.stringify(data),
});

async function importDb(
  path: string,
): Promise<
  { result: UnitResult; sessions: CanonicalSession[]; payloads: Map<string, Uint8Array> }
> {
  const { results, sessions, payloads } = await importThroughStore(opencode, fs, [dbUnit(path)]);
  return { result: results[0], sessions, payloads };
}

// ---------------------------------------------------------------------------------------------
// Fixtures

Deno.test("opencode importer reads every peers fixture, and snapshots its canonical output", async (t) => {
  // The constructed storage tree sits beside a database that supersedes it: import it alone.
  const tree = `${TMP}/constructed-tree/opencode/storage`;
  await copyTree(`${PEERS}/constructed/storage`, tree);
  const cases: { name: string; unit: SourceUnit; sessions: number }[] = [
    {
      name: "constructed__opencode.db",
      unit: dbUnit(`${PEERS}/constructed/opencode.db`),
      sessions: 1,
    },
    { name: "constructed__storage", unit: treeUnit(tree), sessions: 1 },
    {
      name: "agentsessions__storage_v2",
      unit: treeUnit(`${PEERS}/agentsessions/storage_v2`),
      sessions: 2,
    },
    {
      name: "agentsessions__storage_legacy",
      unit: treeUnit(`${PEERS}/agentsessions/storage_legacy`),
      sessions: 1,
    },
    { name: "cass_storage", unit: treeUnit(`${PEERS}/cass_storage`), sessions: 1 },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const { results, sessions } = await importThroughStore(opencode, fs, [c.unit]);
      assertEquals(results[0].mode, "full");
      assertEquals(sessions.length, c.sessions);
      for (const s of sessions) assertEquals(validationProblems(s), []);
      await assertSnapshot(
        `opencode__${c.name}`,
        normalize({ unit_issues: results[0].issues, sessions }, { ...roots, [tree]: "<TREE>" }),
      );
    });
  }
  await assertNoScratchLeft();
});

Deno.test("opencode importer gives the same session from the database and from the storage tree", async () => {
  const tree = `${TMP}/same/opencode/storage`;
  await copyTree(`${PEERS}/constructed/storage`, tree);
  const a = (await importThroughStore(opencode, fs, [dbUnit(`${PEERS}/constructed/opencode.db`)]))
    .sessions[0];
  const b = (await importThroughStore(opencode, fs, [treeUnit(tree)])).sessions[0];
  const shape = (s: CanonicalSession) =>
    ops(s).map((o) => [o.id, o.kind, o.tool, o.is_error, o.completeness, o.request, o.response]);
  assertEquals(shape(a), shape(b));
  assertEquals(a.session.title, b.session.title);
  assertEquals(a.connections[0].server.model, "claude-sonnet-4");
  assertEquals(a.connections[0].server.provider, "github-copilot");
  assertEquals(a.connections[0].client.version, "1.1.13");
});

Deno.test("opencode importer counts drifted and unknown shapes in the legacy trees as issues", async () => {
  const legacy = await importThroughStore(opencode, fs, [
    treeUnit(`${PEERS}/agentsessions/storage_legacy`),
  ]);
  const s = legacy.sessions[0];
  // Part files directly under part/ (older layout) still reach their message.
  const bash = ops(s).find((o) => o.tool === "bash")!;
  assertEquals(bash.completeness, "complete");
  assertEquals(s.issues.find((i) => i.code === "unknown_tool_state")?.count, 1);
  const v2 = await importThroughStore(opencode, fs, [
    treeUnit(`${PEERS}/agentsessions/storage_v2`),
  ]);
  const large = v2.sessions.find((x) => x.session.native_id === "s_stage0_large")!;
  const kinds = ops(large).map((o) => o.event ?? o.kind);
  for (const k of ["prompt", "exec", "reply", "file", "thinking", "compaction", "patch", "error"]) {
    assert(kinds.includes(k), `${k} is mapped`);
  }
  // The exit code in the tool metadata is the evidence of a failed command.
  assertEquals(ops(large).find((o) => o.tool === "bash")?.is_error, true);
  // Usage comes from the step-finish part, not twice from the message too.
  assertEquals(large.usage.by_model["gpt-4o-mini"], {
    input: 120,
    output: 16,
    cache_read: 0,
    cache_write: 0,
  });
});

Deno.test("opencode importer: a tree file over the longest line keeps its part, its long output cut", async () => {
  const tree = `${TMP}/huge-part/opencode/storage`;
  await copyTree(`${PEERS}/constructed/storage`, tree);
  const path = `${tree}/part/msg_d29769bc8001GLxFoGBI2P8roV/prt_d2976a1fb001d9XCaZMT41k1Nw.json`;
  const part = JSON.parse(await Deno.readTextFile(path));
  part.state.output = "hugestart " + "w".repeat(MAX_LINE_BYTES);
  await Deno.writeTextFile(path, JSON.stringify(part));
  const size = (await Deno.stat(path)).size;
  const { results, sessions } = await importThroughStore(opencode, fs, [treeUnit(tree)]);
  const calls = ops(sessions[0]).filter((o) => o.tool);
  const glob = calls.find((o) => o.tool === "glob")!;
  // the call whose output was cut is truncated (so never replayed as whole); the others are not
  assertEquals(glob.completeness, "truncated");
  assert(calls.length > 1);
  for (const o of calls) if (o !== glob) assertEquals(o.completeness, "complete", o.tool);
  const output = payloadText(results[0].payloads, glob.response)!;
  assert(output.startsWith("hugestart www"), output.slice(0, 40));
  assert(output.endsWith(cutMark(MAX_LINE_BYTES + 10 - KEEP_TEXT_BYTES)), output.slice(-60));
  // the cut is the session's loss window, naming the part's file, not an issue of the tree
  assertEquals(sessions[0].provenance.loss_windows.map((w) => [w.file, w.lines, w.bytes]), [
    [path, [1, 1], [0, size]],
  ]);
  const reason = sessions[0].provenance.loss_windows[0].reason;
  assert(reason.startsWith(`document longer than ${MAX_LINE_BYTES} bytes: 1 text cut`), reason);
  assertEquals(results[0].issues?.filter((i) => i.code === "texts_cut"), []);
});

Deno.test("opencode importer: a cut tree file that belongs to no session is an issue of the tree", async () => {
  const tree = `${TMP}/huge-project/opencode/storage`;
  await copyTree(`${PEERS}/constructed/storage`, tree);
  const path = `${tree}/project/global.json`;
  const project = JSON.parse(await Deno.readTextFile(path));
  project.notes = "n".repeat(MAX_LINE_BYTES);
  await Deno.writeTextFile(path, JSON.stringify(project));
  const { results, sessions } = await importThroughStore(opencode, fs, [treeUnit(tree)]);
  assertEquals(sessions.flatMap((s) => s.provenance.loss_windows), []);
  assertEquals(sessions.flatMap((s) => ops(s)).filter((o) => o.completeness === "truncated"), []);
  const cut = results[0].issues?.filter((i) => i.code === "texts_cut") ?? [];
  assertEquals(cut.map((i) => i.file), [path]);
  assert(cut[0].message.startsWith(`document longer than ${MAX_LINE_BYTES} bytes: 1 text cut`));
});

// ---------------------------------------------------------------------------------------------
// Real clients

const SCENARIOS = ["s1-basic", "s2-errors", "s4-long", "s7-resume"];

Deno.test("opencode importer matches every real-client tool call, one to one and in order", async (t) => {
  for (const scenario of SCENARIOS) {
    await t.step(scenario, async () => {
      const dir = `${SHARED}/realclients/opencode/${scenario}`;
      const truth = await readScenario(dir);
      const shapes: unknown[] = [];
      for (const variant of ["native", "native-checkpointed"]) {
        const home = `${dir}/${variant}`;
        const units = await opencode.discover({ home, env: {}, platform: "linux" }, fs);
        assertEquals(units.map((u) => u.path), [`${home}/.local/share/opencode/opencode.db`]);
        const { results, sessions, payloads } = await importThroughStore(opencode, fs, units);
        assertEquals(results[0].issues, []);
        assertEquals(sessions.length, 1);
        const s = sessions[0];
        assertEquals(s.session.native_id, truth.session_id);
        assertEquals(s.session.project.path, truth.cwd);
        assertEquals(validationProblems(s), []);
        assertEquals(s.connections[0].client.version, "1.18.33");
        assertEquals([s.connections[0].server.provider, s.connections[0].server.model], [
          "mock",
          "mock-model",
        ]);
        const calls = ops(s).filter((o) => o.tool !== undefined);
        assertEquals(calls.length, truth.tool_calls.length, "one operation per scripted tool call");
        calls.forEach((c, i) => {
          const exp = truth.tool_calls[i];
          assertEquals(c.tool, exp.native_tool, `call ${exp.seq} tool`);
          assertEquals(c.kind, classifyTool(exp.native_tool), `call ${exp.seq} kind`);
          assertEquals(
            JSON.parse(payloadText(payloads, c.request)!),
            exp.input,
            `call ${exp.seq} input`,
          );
          assertEquals(c.is_error, exp.expected_error, `call ${exp.seq} error flag`);
          assertEquals(c.completeness, "complete");
          assert(payloadText(payloads, c.response) !== undefined, "the recorded result is kept");
        });
        const replies = ops(s).filter((o) => o.kind === "reply");
        assertEquals(
          replies[replies.length - 1].text,
          truth.final_texts[truth.final_texts.length - 1],
        );
        shapes.push(
          ops(s).map((o) => ({ ...o, provenance: { ...o.provenance, source_range: undefined } })),
        );
        if (variant === "native") {
          await assertSnapshot(`opencode__realclients__${scenario}`, normalize(s, roots));
        }
      }
      assertEquals(
        shapes[0],
        shapes[1],
        "the WAL and the checkpointed database give the same operations",
      );
    });
  }
  await assertNoScratchLeft();
});

Deno.test("opencode importer reports an unchanged database after two stats, and re-reads a changed one", async () => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  buildDb(path, { sessions: [session("ses_a")] });
  const first = await opencode.import(dbUnit(path), { fs, epoch: 0 });
  assertEquals(first.mode, "full");
  const cp = first.checkpoint as SqliteCheckpoint;
  assertEquals([cp.kind, cp.row_counts?.session], ["sqlite", 1]);
  let stats = 0;
  const countingFs = { ...fs, stat: (p: string) => (stats++, fs.stat(p)) };
  const second = await resume(opencode, countingFs, dbUnit(path), first, 1);
  assertEquals(second.mode, "unchanged");
  assertEquals(stats, 2);
  assertEquals(second.deltas, []);
  addSession(path, "ses_b", T0 + 1);
  const third = await resume(opencode, fs, dbUnit(path), second, 2);
  assertEquals(third.mode, "full");
  // the session that did not change is not read again: the store keeps it as it is
  assertEquals(third.deltas.map((d) => d.session_id), ["opencode:ses_b"]);
  assertEquals(third.unchangedSessions, ["opencode:ses_a"]);
});

Deno.test("opencode importer: a first read's marks, made from the rows it read, match a later read's count", async () => {
  // The first read of a group marks it from its rows' counts and length()s as read; a later
  // read asks SQLite for them. Any difference would read every session of a database again.
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  buildDb(path, {
    sessions: [
      session("ses_text"),
      session("ses_sub", { parent_id: "ses_text" }),
      session("ses_parts_only"),
      session("ses_empty"),
    ],
    messages: [
      userMsg("msg_1", "ses_text", T0),
      asstMsg("msg_2", "ses_text", T0 + 1, { note: "naïve café, 𝄞 and 🙂: astral and accented" }),
      { ...userMsg("msg_null", "ses_text", T0 + 2), data: null },
      userMsg("msg_s1", "ses_sub", T0 + 3),
    ],
    parts: [
      part("prt_1", "msg_2", "ses_text", T0 + 1, { type: "text", text: "résumé 🙂🙂 done" }),
      part("prt_null", "msg_2", "ses_text", T0 + 1, null),
      part("prt_orphan", "msg_gone", "ses_text", T0 + 1, { type: "text", text: "no message" }),
      part("prt_s1", "msg_s1", "ses_sub", T0 + 3, { type: "text", text: "sub 🙂" }),
      part("prt_lone", "msg_none", "ses_parts_only", T0 + 4, { type: "text", text: "alone" }),
    ],
  });
  const first = await opencode.import(dbUnit(path), { fs, epoch: 0 });
  addSession(path, "ses_new", T0 + 9);
  const again = await resume(opencode, fs, dbUnit(path), first, 1);
  assertEquals(again.deltas.map((d) => d.session_id), ["opencode:ses_new"]);
  assertEquals(
    again.unchangedSessions?.toSorted(),
    ["opencode:ses_empty", "opencode:ses_parts_only", "opencode:ses_text"],
  );
  await assertNoScratchLeft();
});

// ---------------------------------------------------------------------------------------------
// Mapping

Deno.test("opencode importer maps part types and tool states", async (t) => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  const sid = "ses_map";
  const tool = (id: string, t0: number, state: unknown, name = "bash") =>
    part(id, "msg_2", sid, t0, { type: "tool", tool: name, callID: `call_${id}`, state });
  buildDb(path, {
    sessions: [session(sid)],
    messages: [userMsg("msg_1", sid, T0 + 1000), asstMsg("msg_2", sid, T0 + 2000)],
    parts: [
      part("prt_01", "msg_1", sid, T0 + 1000, { type: "text", text: "do it" }),
      part("prt_02", "msg_1", sid, T0 + 1001, { type: "text", text: "<ctx>", synthetic: true }),
      part("prt_10", "msg_2", sid, T0 + 2000, { type: "step-start", snapshot: "abc" }),
      part("prt_11", "msg_2", sid, T0 + 2001, {
        type: "reasoning",
        text: "hmm",
        time: { start: T0 + 2001 },
      }),
      tool("prt_12", T0 + 2002, { status: "pending", input: {}, raw: "" }),
      tool("prt_13", T0 + 2003, {
        status: "running",
        input: { command: "sleep 1" },
        time: { start: T0 + 2003 },
      }),
      tool("prt_14", T0 + 2004, {
        status: "completed",
        input: { command: "ls" },
        output: "a\n",
        metadata: { exit: 0 },
        time: { start: T0 + 2004, end: T0 + 2005 },
      }),
      tool("prt_15", T0 + 2006, {
        status: "error",
        input: { filePath: "/home/u/proj/x.txt" },
        error: "File not found",
        time: { start: T0 + 2006, end: T0 + 2007 },
      }, "read"),
      part("prt_16", "msg_2", sid, T0 + 2008, {
        type: "patch",
        hash: "h",
        files: ["/home/u/proj/a"],
      }),
      part("prt_17", "msg_2", sid, T0 + 2009, { type: "compaction", auto: true }),
      part("prt_18", "msg_2", sid, T0 + 2010, {
        type: "subtask",
        prompt: "p",
        description: "d",
        agent: "general",
      }),
      part("prt_19", "msg_2", sid, T0 + 2011, { type: "mystery-part" }),
      part("prt_20", "msg_2", sid, T0 + 2012, { type: "mystery-part" }),
      part("prt_21", "msg_2", sid, T0 + 2013, { type: "text", text: "done" }),
      part("prt_22", "msg_2", sid, T0 + 2014, {
        type: "step-finish",
        reason: "stop",
        tokens: { input: 10, output: 5, reasoning: 2, cache: { read: 3, write: 1 } },
      }),
    ],
  });
  const { sessions, payloads } = await importDb(path);
  const s = sessions[0];
  const list = ops(s);
  const cases: { name: string; check: () => void }[] = [
    {
      name: "a user text part is a prompt; a synthetic one is injected",
      check: () => {
        const prompts = list.filter((o) => o.kind === "prompt");
        assertEquals(prompts.map((o) => [o.text, o.injected ?? false]), [["do it", false], [
          "<ctx>",
          true,
        ]]);
        assertEquals(s.session.last_prompt, "do it");
      },
    },
    {
      name: "reasoning is thinking, assistant text a reply with the model",
      check: () => {
        assertEquals(list.find((o) => o.kind === "thinking")?.text, "hmm");
        const reply = list.find((o) => o.kind === "reply")!;
        assertEquals([reply.text, reply.model], ["done", "m1"]);
      },
    },
    {
      name: "pending and running tools are incomplete and never replayable",
      check: () => {
        const [pending, running] = list.filter((o) =>
          o.native_id === "call_prt_12" || o.native_id === "call_prt_13"
        );
        assertEquals([pending.completeness, running.completeness], ["incomplete", "incomplete"]);
        assertEquals(pending.replay, { replayable: false, blockers: ["incomplete"] });
        assert("missing" in pending.request!, "a pending call has no input yet");
        assertEquals(JSON.parse(payloadText(payloads, running.request)!), { command: "sleep 1" });
        assertEquals(pending.is_error, undefined);
      },
    },
    {
      name: "a completed tool keeps input and output; an error state sets is_error",
      check: () => {
        const ok = list.find((o) => o.native_id === "call_prt_14")!;
        assertEquals([ok.kind, ok.effect, ok.is_error, ok.completeness], [
          "exec",
          "process",
          false,
          "complete",
        ]);
        assertEquals(payloadText(payloads, ok.response), "a\n");
        assertEquals(ok.summary, "ls");
        const bad = list.find((o) => o.native_id === "call_prt_15")!;
        assertEquals([bad.kind, bad.is_error, bad.target], ["read", true, "/home/u/proj/x.txt"]);
        assertEquals(payloadText(payloads, bad.response), "File not found");
      },
    },
    {
      name: "patch, compaction and subtask are events",
      check: () => {
        const events = list.filter((o) => o.kind === "event").map((o) => o.event);
        assertEquals(events, ["patch", "compaction", "subtask"]);
      },
    },
    {
      name: "unknown part types are counted as one issue",
      check: () => {
        const i = s.issues.find((x) => x.code === "unknown_part_type")!;
        assertEquals([i.message, i.count], ['unknown part type "mystery-part"', 2]);
      },
    },
    {
      name: "usage comes per step, reasoning counted as output",
      check: () =>
        assertEquals(s.usage.by_model.m1, { input: 10, output: 7, cache_read: 3, cache_write: 1 }),
    },
    {
      name: "a running call leaves the connection incomplete",
      check: () => assertEquals(s.completeness.connections.main, "incomplete"),
    },
    {
      name: "operations follow the rows in time order",
      check: () => {
        const ts = list.map((o) => o.ts_ms!);
        assertEquals(ts, [...ts].sort((a, b) => a - b));
        assertEquals(s.session.started_at, new Date(T0).toISOString());
      },
    },
  ];
  for (const c of cases) await t.step(c.name, c.check);
});

Deno.test("opencode importer reads each message's parts in the order of their ids, whatever order the rows are in", async () => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  const sid = "ses_order";
  const text = (id: string, mid: string, t: number) =>
    part(id, mid, sid, t, { type: "text", text: `text of ${id}` });
  // written newest first, a later message's before an earlier one's (rowids against ids)
  buildDb(path, {
    sessions: [session(sid)],
    messages: [userMsg("msg_1", sid, T0 + 1000), asstMsg("msg_2", sid, T0 + 2000)],
    parts: [
      text("prt_22", "msg_2", T0 + 2002),
      text("prt_03", "msg_1", T0 + 1002),
      text("prt_21", "msg_2", T0 + 2001),
      text("prt_01", "msg_1", T0 + 1000),
      text("prt_02", "msg_1", T0 + 1001),
    ],
  });
  const { sessions } = await importDb(path);
  assertEquals(
    ops(sessions[0]).filter((o) => o.text?.startsWith("text of")).map((o) => o.text),
    ["prt_01", "prt_02", "prt_03", "prt_21", "prt_22"].map((id) => `text of ${id}`),
  );
});

Deno.test("opencode importer joins a sub-agent session to its parent through the task call", async () => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  buildDb(path, {
    sessions: [
      session("ses_parent"),
      session("ses_child", { parent_id: "ses_parent", time_created: T0 + 3000 }),
    ],
    messages: [
      userMsg("msg_1", "ses_parent", T0 + 1000),
      asstMsg("msg_2", "ses_parent", T0 + 2000),
      userMsg("msg_3", "ses_child", T0 + 3000),
      asstMsg("msg_4", "ses_child", T0 + 4000, { modelID: "m2" }),
    ],
    parts: [
      part("prt_1", "msg_1", "ses_parent", T0 + 1000, { type: "text", text: "research" }),
      part("prt_2", "msg_2", "ses_parent", T0 + 2000, {
        type: "tool",
        tool: "task",
        callID: "call_task",
        state: {
          status: "completed",
          input: { description: "look", prompt: "look around", subagent_type: "general" },
          output: "found it",
          metadata: { sessionId: "ses_child" },
          time: { start: T0 + 2000, end: T0 + 5000 },
        },
      }),
      part("prt_3", "msg_3", "ses_child", T0 + 3000, { type: "text", text: "look around" }),
      part("prt_4", "msg_4", "ses_child", T0 + 4000, {
        type: "tool",
        tool: "grep",
        callID: "call_grep",
        state: {
          status: "completed",
          input: { pattern: "x" },
          output: "",
          time: { start: T0 + 4000 },
        },
      }),
    ],
  });
  const { sessions } = await importDb(path);
  assertEquals(sessions.length, 1, "the child session is not a session of its own");
  const s = sessions[0];
  const sub = s.connections.find((c) => c.kind === "subagent")!;
  const task = ops(s).find((o) => o.kind === "task")!;
  assertEquals([sub.id, sub.parent_op, sub.agent_type], ["ses_child", task.id, "general"]);
  assertEquals(task.spawns, "ses_child");
  assertEquals(sub.server.model, "m2");
  assertEquals(ops(s).filter((o) => o.conn === "ses_child").map((o) => o.kind), [
    "prompt",
    "search",
  ]);
});

// ---------------------------------------------------------------------------------------------
// Bad input

Deno.test("opencode importer records bad databases as issues and keeps the other sessions", async (t) => {
  await t.step("a file that is not a database", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    await Deno.writeTextFile(path, "this is not an SQLite database, just text ".repeat(200));
    const { result } = await importDb(path);
    assertEquals(result.deltas, []);
    assertEquals(result.issues.map((i) => i.code), ["db_corrupt"]);
    assertEquals(result.mode, "unchanged", "what was imported before stays");
    const again = await resume(opencode, fs, dbUnit(path), result, 1);
    assertEquals(
      [again.mode, again.issues],
      ["unchanged", []],
      "an unchanged bad file costs two stats",
    );
    await Deno.writeTextFile(path, "still not a database");
    const changed = await resume(opencode, fs, dbUnit(path), again, 2);
    assertEquals(changed.issues.map((i) => i.code), ["db_corrupt"], "a changed file is read again");
  });
  await t.step("a half-written database (cut after its first pages)", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    const full = await Deno.readFile(
      `${SHARED}/realclients/opencode/s4-long/native-checkpointed/.local/share/opencode/opencode.db`,
    );
    await Deno.writeFile(path, full.subarray(0, 64 * 1024));
    const { result } = await importDb(path);
    assert(result.issues.some((i) => i.severity === "error"), "the damage is reported");
    assert(result.issues.every((i) => /^(db_|session_)/.test(i.code)));
  });
  await t.step("a database without the part table", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    buildDb(path, {
      sessions: [session("ses_a")],
      messages: [userMsg("msg_1", "ses_a", T0)],
      omitTables: ["part"],
    });
    const { result, sessions } = await importDb(path);
    assertEquals(result.issues.map((i) => i.code), ["db_missing_table"]);
    assertEquals(sessions.map((s) => s.session.title), ["title of ses_a"]);
  });
  await t.step("a database without the session table", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    buildDb(path, { sessions: [], omitTables: ["session"] });
    const { result } = await importDb(path);
    assertEquals([result.deltas.length, result.issues[0].code], [0, "db_missing_table"]);
  });
  await t.step("NULL values and strings where objects were expected", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    buildDb(path, {
      sessions: [session("ses_bad"), session("ses_good", { time_created: T0 + 1 })],
      messages: [
        { ...userMsg("msg_b1", "ses_bad", T0), data: null },
        { ...asstMsg("msg_b2", "ses_bad", T0 + 1), data: '"just a string"' },
        userMsg("msg_g1", "ses_good", T0),
      ],
      parts: [
        part("prt_b1", "msg_b1", "ses_bad", T0, { type: "text", text: "still here" }),
        part("prt_b2", "msg_b2", "ses_bad", T0 + 1, null),
        part("prt_b3", "msg_b2", "ses_bad", T0 + 2, '"a string part"'),
        part("prt_b4", "msg_b2", "ses_bad", T0 + 3, "{not json"),
        part("prt_b5", "msg_b2", "ses_bad", T0 + 4, { type: "tool", tool: "bash", state: "oops" }),
        part("prt_b6", "msg_b2", "ses_bad", T0 + 5, { type: "text", text: null }),
        part("prt_g1", "msg_g1", "ses_good", T0, { type: "text", text: "hello" }),
      ],
    });
    const { result, sessions } = await importDb(path);
    assertEquals(result.issues, []);
    const bad = sessions.find((s) => s.session.native_id === "ses_bad")!;
    const good = sessions.find((s) => s.session.native_id === "ses_good")!;
    assertEquals(ops(good).map((o) => o.text), ["hello"]);
    const counts = Object.fromEntries(
      bad.issues.filter((i) => i.severity === "warning").map((i) => [i.code, 0]),
    );
    for (const i of bad.issues) if (i.code in counts) counts[i.code] += i.count ?? 1;
    // Two messages (NULL, a string); parts: a string, bad JSON, a string state, NULL text; NULL.
    assertEquals(counts, { malformed_message: 2, malformed_part: 4, null_part: 1 });
    for (const s of sessions) assertEquals(validationProblems(s), []);
    // The tool part without a state is kept as an incomplete call, not dropped.
    assertEquals(ops(bad).find((o) => o.tool === "bash")?.completeness, "incomplete");
  });
  await assertNoScratchLeft();
});

Deno.test("opencode importer reads the last committed state of a database another connection is writing", async (t) => {
  await t.step("WAL mode: the writer's open transaction is invisible, nothing breaks", async () => {
    const dir = await freshDir();
    const path = `${dir}/opencode.db`;
    buildDb(path, {
      sessions: [session("ses_a")],
      messages: [userMsg("msg_1", "ses_a", T0)],
      parts: [part("prt_1", "msg_1", "ses_a", T0, { type: "text", text: "committed" })],
    });
    const writer = new DatabaseSync(path);
    writer.exec("BEGIN IMMEDIATE");
    writer.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, data) VALUES (?,?,?,?,?)",
    )
      .run(
        "prt_2",
        "msg_1",
        "ses_a",
        T0 + 1,
        JSON.stringify({ type: "text", text: "uncommitted" }),
      );
    try {
      const { result, sessions } = await importDb(path);
      assertEquals(result.mode, "full");
      assertEquals(ops(sessions[0]).map((o) => o.text), ["committed"]);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });
  await t.step(
    "rollback-journal mode: the hot journal is reported, the committed rows imported",
    async () => {
      const dir = await freshDir();
      const path = `${dir}/opencode.db`;
      buildDb(path, {
        journal: "delete",
        sessions: [session("ses_a")],
        messages: [userMsg("msg_1", "ses_a", T0)],
        parts: [part("prt_1", "msg_1", "ses_a", T0, { type: "text", text: "committed" })],
      });
      const writer = new DatabaseSync(path);
      // A tiny cache makes the writer spill changed pages into the database file mid-transaction.
      writer.exec("PRAGMA cache_size = 1");
      writer.exec("BEGIN EXCLUSIVE");
      const ins = writer.prepare(
        "INSERT INTO part (id, message_id, session_id, time_created, data) VALUES (?,?,?,?,?)",
      );
      for (let i = 0; i < 300; i++) {
        ins.run(
          `prt_x${i}`,
          "msg_1",
          "ses_a",
          T0 + 1,
          JSON.stringify({ type: "text", text: "x".repeat(500) }),
        );
      }
      try {
        const { result, sessions } = await importDb(path);
        assert(
          result.issues.some((i) => i.code === "db_locked"),
          "the in-flight write is reported",
        );
        assertEquals(ops(sessions[0]).map((o) => o.text), ["committed"]);
      } finally {
        writer.exec("ROLLBACK");
        writer.close();
      }
    },
  );
  await assertNoScratchLeft();
});

// ---------------------------------------------------------------------------------------------
// Discovery

Deno.test("opencode importer discovers databases and the old storage tree in its data folders", async (t) => {
  const home = await freshDir();
  await t.step("data folders: OPENCODE_DATA_DIR, XDG_DATA_HOME, then ~/.local/share", () => {
    assertEquals(
      opencodeDataDirs({
        home,
        env: { OPENCODE_DATA_DIR: "/d", XDG_DATA_HOME: "/x" },
        platform: "linux",
      }),
      ["/d", "/x/opencode", `${home}/.local/share/opencode`],
    );
  });
  await t.step("channel databases and a tree without a database", async () => {
    const data = `${home}/.local/share/opencode`;
    await Deno.mkdir(`${data}/storage/session`, { recursive: true });
    await Deno.writeTextFile(`${data}/opencode-beta.db`, "");
    await Deno.writeTextFile(`${data}/opencode.db-wal`, "");
    const units = await opencode.discover({ home, env: {}, platform: "linux" }, fs);
    assertEquals(units.map((u) => [u.path.slice(data.length), u.kind]), [
      ["/opencode-beta.db", "sqlite"],
      ["/storage", "tree"],
    ]);
  });
  await t.step("a tree beside a database is migrated: one info issue, no sessions", async () => {
    const data = `${home}/.local/share/opencode`;
    const r = await opencode.import(treeUnit(`${data}/storage`), { fs, epoch: 0 });
    assertEquals([r.mode, r.deltas.length, r.issues[0]?.code], [
      "unchanged",
      0,
      "storage_migrated",
    ]);
  });
  await t.step("a missing data folder is no units", async () => {
    assertEquals(
      await opencode.discover({ home: `${home}/nobody`, env: {}, platform: "darwin" }, fs),
      [],
    );
  });
  await t.step("detect() knows database and tree paths", () => {
    assert(opencode.detect("/h/.local/share/opencode/opencode.db"));
    assert(opencode.detect("/h/.local/share/opencode/opencode-dev.db"));
    assert(opencode.detect("/h/.local/share/opencode/storage"));
    assert(!opencode.detect("/h/.local/share/opencode/opencode.db-wal"));
    assert(!opencode.detect("/h/notes.db"));
  });
});

Deno.test("opencode importer: a storage tree is unchanged until one of its files changes", async () => {
  const tree = `${TMP}/tree-cp/opencode/storage`;
  await copyTree(`${PEERS}/cass_storage`, tree);
  const first = await opencode.import(treeUnit(tree), { fs, epoch: 0 });
  assertEquals(first.mode, "full");
  const second = await resume(opencode, fs, treeUnit(tree), first, 1);
  assertEquals(second.mode, "unchanged");
  await Deno.mkdir(`${tree}/part/msg_test2`, { recursive: true });
  await Deno.writeTextFile(
    `${tree}/part/msg_test2/part2.json`,
    JSON.stringify({ id: "part2", messageID: "msg_test2", type: "text", text: "one more thing" }),
  );
  const third = await resume(opencode, fs, treeUnit(tree), second, 2);
  assertEquals(third.mode, "full");
  const { sessions } = assemble([third]);
  assertEquals(ops(sessions[0]).map((o) => o.text).slice(-1), ["one more thing"]);
});

Deno.test("opencode importer reads a drifted schema and reports tables it cannot read", async () => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  const db = new DatabaseSync(path);
  db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT, directory TEXT);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, data TEXT);
    CREATE TABLE session_message (id TEXT, session_id TEXT, type TEXT, seq INTEGER, data TEXT);`);
  db.prepare("INSERT INTO session VALUES ('ses_d', 'drift', '/d')").run();
  db.prepare("INSERT INTO message VALUES ('msg_1', 'ses_d', ?)").run(
    JSON.stringify({ role: "user", time: { created: T0 } }),
  );
  db.prepare("INSERT INTO part VALUES ('prt_1', 'msg_1', ?)").run(
    JSON.stringify({ type: "text", text: "old layout" }),
  );
  db.prepare("INSERT INTO session_message VALUES ('x', 'ses_d', 'user', 1, '{}')").run();
  db.close();
  const { result, sessions } = await importDb(path);
  assertEquals(result.issues.map((i) => [i.code, i.count]), [["unsupported_format", 1]]);
  assertEquals(ops(sessions[0]).map((o) => [o.kind, o.text, o.ts_ms]), [[
    "prompt",
    "old layout",
    T0,
  ]]);
  assertEquals(sessions[0].session.project.path, "/d");
});

Deno.test("a database copied while it keeps changing is copied again, then read as the last copy holds it", async () => {
  const dir = await freshDir();
  const path = `${dir}/opencode.db`;
  buildDb(path, { sessions: [session("ses_a")] });
  let tick = 0;
  // Every stat sees a newer mtime: a writer that never stops.
  const busyFs = {
    ...fs,
    stat: async (p: string) => {
      const st = await fs.stat(p);
      return st && p === path ? { ...st, mtimeMs: (st.mtimeMs ?? 0) + ++tick } : st;
    },
  };
  let copies = 0;
  const countingFs = {
    ...busyFs,
    copyToTemp: (
      p: string,
      d: string,
      n: string,
    ) => (p === path && copies++, fs.copyToTemp(p, d, n)),
  };
  const r = await opencode.import(dbUnit(path), { fs: countingFs, epoch: 0 });
  assertEquals(copies, 3);
  assertEquals(r.issues.map((i) => i.code), ["db_changing"]);
  assertEquals(
    r.deltas.map((d) => d.session_id),
    ["opencode:ses_a"],
    "the last copy is still read",
  );
  await assertNoScratchLeft();
});
