import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { validationProblems } from "../../../core/model/mod.ts";
import { cursor, cursorUserDirs, uriToPath } from "../../../core/sources/cursor/mod.ts";
import type { SourceUnit, UnitResult } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { assemble, importThroughStore, ops, payloadText, resume, SHARED } from "./_run_importer.ts";
import { assertSnapshot, normalize } from "./_snapshot.ts";
import { moduleTempDir } from "../../_helpers/temp_dir.ts";

const TMP = await moduleTempDir("chronicle-cursor-test-");
const fs = createDenoFs({ tempRoot: `${TMP}/scratch` });
const PEERS = `${SHARED}/peers/cursor`;
const roots = { [SHARED]: "<FIXTURES>", [TMP]: "<TMP>" };

let dirCount = 0;
async function freshDir(): Promise<string> {
  const dir = `${TMP}/case-${++dirCount}`;
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

async function copy(from: string, to: string): Promise<void> {
  await Deno.mkdir(to.slice(0, to.lastIndexOf("/")), { recursive: true });
  await Deno.copyFile(from, to);
  await Deno.chmod(to, 0o644);
}

function dbUnit(path: string, rank = 0): SourceUnit {
  return { source: "cursor", path, kind: "sqlite", rank };
}
function jsonlUnit(path: string, rank = 0): SourceUnit {
  return { source: "cursor", path, kind: "jsonl", rank };
}

async function assertNoScratchLeft(): Promise<void> {
  const left: string[] = [];
  try {
    for await (const e of Deno.readDir(`${TMP}/scratch`)) left.push(e.name);
  } catch {
    return;
  }
  assertEquals(left, [], "scratch copies are deleted after reading");
}

/** A Cursor-style key/value database: cursorDiskKV and ItemTable rows (values as JSON text). */
function kvDb(
  path: string,
  kv: [string, unknown][],
  options: { items?: [string, unknown][]; tables?: string[] } = {},
): void {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  const tables = options.tables ?? ["ItemTable", "cursorDiskKV"];
  for (const t of tables) {
    db.exec(`CREATE TABLE ${t} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`);
  }
  const put = (table: string, rows: [string, unknown][]) => {
    const stmt = db.prepare(`INSERT INTO ${table} (key, value) VALUES (?, ?)`);
    for (const [k, v] of rows) {
      stmt.run(k, v === null ? null : typeof v === "string" ? v : JSON.stringify(v));
    }
  };
  if (tables.includes("cursorDiskKV")) put("cursorDiskKV", kv);
  if (tables.includes("ItemTable")) put("ItemTable", options.items ?? []);
  db.close();
}

/** Adds chat `comp-new` to a database, as Cursor does when a chat is started. */
function addNewChat(path: string): void {
  const db = new DatabaseSync(path);
  db.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)").run(
    "composerData:comp-new",
    JSON.stringify({ composerId: "comp-new", conversation: [{ type: 1, text: "new chat" }] }),
  );
  db.close();
}

async function importDb(path: string) {
  const { results, sessions, payloads } = await importThroughStore(cursor, fs, [dbUnit(path)]);
  return { result: results[0], sessions, payloads };
}

// ---------------------------------------------------------------------------------------------
// The IDE's state.vscdb

/** A Cursor `User` folder holding the constructed global and workspace databases. */
async function userFolder(): Promise<string> {
  const user = `${await freshDir()}/Cursor/User`;
  await copy(`${PEERS}/constructed/globalStorage_state.vscdb`, `${user}/globalStorage/state.vscdb`);
  await copy(
    `${PEERS}/constructed/workspaceStorage_abc123_state.vscdb`,
    `${user}/workspaceStorage/abc123/state.vscdb`,
  );
  await copy(
    `${PEERS}/constructed/workspace.json`,
    `${user}/workspaceStorage/abc123/workspace.json`,
  );
  return user;
}

Deno.test("cursor importer reads the global and workspace databases under CURSOR_USER_DIR", async (t) => {
  const user = await userFolder();
  const env = { home: `${TMP}/nohome`, env: { CURSOR_USER_DIR: user }, platform: "linux" as const };
  const units = await cursor.discover(env, fs);
  assertEquals(units.map((u) => [u.path.slice(user.length), u.kind, u.rank]), [
    ["/globalStorage/state.vscdb", "sqlite", 0],
    ["/workspaceStorage/abc123/state.vscdb", "sqlite", 1],
  ]);
  const { results, sessions, payloads } = await importThroughStore(cursor, fs, units);
  for (const s of sessions) assertEquals(validationProblems(s), []);
  await assertSnapshot(
    "cursor__constructed__state.vscdb",
    normalize({ unit_issues: results.map((r) => r.issues), sessions }, {
      [user]: "<USER>",
      ...roots,
    }),
  );
  const byId = (id: string) => sessions.find((s) => s.session.native_id === id)!;
  const s = byId("comp-0001-synthetic");
  const list = ops(s);
  await t.step("the chat's bubbles become operations in header order", () => {
    assertEquals(list.map((o) => o.kind), ["prompt", "thinking", "reply", "read", "exec", "reply"]);
    assertEquals(s.session.title, "Synthetic fixture chat");
    assertEquals(s.session.project.path, "/home/dev/webapp");
    assertEquals(s.session.started_at, new Date(1766691308486).toISOString());
  });
  await t.step("toolFormerData: rawArgs is the request, result the response", () => {
    const read = list.find((o) => o.kind === "read")!;
    assertEquals([read.tool, read.native_id, read.target, read.is_error], [
      "read_file",
      "toolu_01",
      "src/app.ts",
      false,
    ]);
    assertEquals(JSON.parse(payloadText(payloads, read.request)!), { target_file: "src/app.ts" });
    assertEquals(JSON.parse(payloadText(payloads, read.response)!).totalLinesInFile, 1);
    const exec = list.find((o) => o.kind === "exec")!;
    assertEquals([exec.tool, exec.summary, exec.completeness], [
      "run_terminal_cmd",
      "npm test",
      "complete",
    ]);
    assertEquals(exec.replay, { replayable: true, blockers: ["needs_confirmation"] });
  });
  await t.step("model and usage come from the records", () => {
    assertEquals(s.connections[0].server.model, "claude-4.5-sonnet");
    assertEquals(s.connections[0].server.provider, undefined, "no record names the provider");
    assertEquals(s.connections[0].client.version, undefined, "no record names the version");
    assertEquals(s.usage.by_model["claude-4.5-sonnet"], {
      input: 1200,
      output: 40,
      cache_read: 0,
      cache_write: 0,
    });
  });
  await t.step("an old chat with an inline conversation array", () => {
    const legacy = byId("comp-legacy-0002");
    assertEquals(ops(legacy).map((o) => [o.kind, o.text]), [
      ["prompt", "hello (legacy inline)"],
      ["reply", "hi from legacy inline conversation"],
    ]);
    // Its folder comes from the workspace index, the only place that names it.
    assertEquals(legacy.session.project.path, "/home/dev/webapp");
  });
  await t.step("an empty chat is skipped, its NULL bubble row reported", () => {
    assertEquals(byId("comp-empty-0003"), undefined);
    const codes = results[0].issues.map((i) => i.code).sort();
    assertEquals(codes, ["empty_composer", "null_value"]);
  });
  await assertNoScratchLeft();
});

Deno.test("cursor importer looks in each platform's config folder", async (t) => {
  const cases = [
    { platform: "linux" as const, env: {}, expected: ["/h/.config/Cursor/User"] },
    { platform: "linux" as const, env: { XDG_CONFIG_HOME: "/x" }, expected: ["/x/Cursor/User"] },
    {
      platform: "darwin" as const,
      env: {},
      expected: ["/h/Library/Application Support/Cursor/User"],
    },
    {
      platform: "windows" as const,
      env: { APPDATA: "C:\\Users\\u\\AppData\\Roaming" },
      expected: ["C:/Users/u/AppData/Roaming/Cursor/User"],
    },
    {
      platform: "linux" as const,
      env: { CURSOR_USER_DIR: "/portable/User/" },
      expected: ["/portable/User", "/h/.config/Cursor/User"],
    },
  ];
  for (const c of cases) {
    await t.step(`${c.platform} ${JSON.stringify(c.env)}`, () => {
      assertEquals(cursorUserDirs({ home: "/h", env: c.env, platform: c.platform }), c.expected);
    });
  }
  await t.step("folder URIs: file, remote, Windows drive", () => {
    assertEquals(uriToPath("file:///home/tester/cursor%20project"), "/home/tester/cursor project");
    assertEquals(uriToPath("vscode-remote://ssh-remote%2Bprod/home/ubuntu/x"), "/home/ubuntu/x");
    assertEquals(uriToPath("file:///c%3A/Users/u/proj"), "c:/Users/u/proj");
    assertEquals(uriToPath("not a uri"), undefined);
  });
});

Deno.test("cursor importer reads the headers-only chats of the cass fixtures", async (t) => {
  for (const name of ["file_uri", "project_dir", "vscode_remote_uri"]) {
    await t.step(name, async () => {
      const fixture = JSON.parse(
        await Deno.readTextFile(`${PEERS}/cass_headers_only_workspace_${name}.json`),
      );
      const path = `${await freshDir()}/state.vscdb`;
      kvDb(path, [
        [fixture.composer_key, fixture.composer_data],
        ...fixture.bubble_rows.map((r: { key: string; value: unknown }) => [r.key, r.value]),
      ]);
      const { result, sessions } = await importDb(path);
      assertEquals(sessions.length, 1);
      const s = sessions[0];
      assertEquals(validationProblems(s), []);
      assertEquals(s.session.project.path, fixture.expected_workspace);
      assertEquals(s.session.title, fixture.expected_title);
      const expected = fixture.expected_messages as {
        role: string;
        content: string;
        author: string | null;
      }[];
      assertEquals(ops(s).map((o) => o.text), expected.map((m) => m.content));
      ops(s).forEach((o, i) => {
        if (expected[i].role === "user") assertEquals(o.kind, "prompt");
        else assert(o.kind === "reply" || o.kind === "event", `${o.kind} is not a user prompt`);
        if (expected[i].author) assertEquals(o.model, expected[i].author);
      });
      await assertSnapshot(
        `cursor__cass_${name}`,
        normalize({ unit_issues: result.issues, sessions }, { [path]: "<DB>", ...roots }),
      );
      if (name === "project_dir") {
        // Bubble type 99 is not one Cursor documents: kept as an event and counted.
        assertEquals(s.issues.find((i) => i.code === "unknown_bubble_type")?.count, 1);
      }
    });
  }
  await assertNoScratchLeft();
});

Deno.test("cursor importer maps tool statuses, errors and missing names", async () => {
  const path = `${await freshDir()}/state.vscdb`;
  const cid = "comp-tools";
  const tool = (id: string, tf: Record<string, unknown>) =>
    [`bubbleId:${cid}:${id}`, {
      _v: 3,
      type: 2,
      bubbleId: id,
      text: "",
      capabilityType: 15,
      toolFormerData: tf,
    }] as [
      string,
      unknown,
    ];
  const ids = [
    "loading",
    "error",
    "cancelled",
    "exit1",
    "exit0",
    "escaped",
    "refused",
    "read",
    "rejected",
    "noname",
    "odd",
  ];
  kvDb(path, [
    [`composerData:${cid}`, {
      composerId: cid,
      createdAt: 1_800_000_000_000,
      fullConversationHeadersOnly: ids.map((bubbleId) => ({ bubbleId, type: 2 })),
    }],
    tool("loading", { name: "edit_file", status: "loading", rawArgs: '{"target_file":"a.ts"}' }),
    tool("error", {
      name: "read_file",
      status: "error",
      rawArgs: '{"target_file":"b.ts"}',
      result: '{"error":"nope"}',
    }),
    tool("cancelled", {
      name: "run_terminal_cmd",
      status: "cancelled",
      rawArgs: '{"command":"rm -rf x"}',
    }),
    tool("exit1", {
      name: "run_terminal_cmd",
      status: "completed",
      rawArgs: '{"command":"npm test"}',
      result: '{"output":"1 failing","exitCodeV2":1}',
    }),
    tool("exit0", {
      name: "run_terminal_cmd",
      status: "completed",
      rawArgs: '{"command":"npm test"}',
      result: '{"output":"ok","exitCode":0}',
    }),
    // the key written with escapes: still read (a result is parsed only when it may hold one)
    tool("escaped", {
      name: "run_terminal_cmd",
      status: "completed",
      rawArgs: '{"command":"make"}',
      result: '{"output":"","\\u0065xitCode":2}',
    }),
    tool("refused", {
      name: "run_terminal_cmd",
      status: "completed",
      rawArgs: '{"command":"rm x"}',
      result: '{"rejected":true}',
    }),
    // a file's content that names no outcome key: not parsed, and not an error
    tool("read", {
      name: "read_file",
      status: "completed",
      rawArgs: '{"target_file":"c.ts"}',
      result: JSON.stringify({ contents: "exit status one, refused\n".repeat(50) }),
    }),
    tool("rejected", {
      name: "edit_file",
      status: "completed",
      userDecision: "rejected",
      rawArgs: "{}",
    }),
    tool("noname", { tool: 41, status: "completed", params: '{"pattern":"foo"}', result: "{}" }),
    tool("odd", { name: "mcp_thing", status: "weird", rawArgs: "not json", result: "ok" }),
  ]);
  const { sessions, payloads } = await importDb(path);
  const byId = new Map(
    ops(sessions[0]).map((o) => [o.provenance.record_ids![0].split(":").pop(), o]),
  );
  const row = (id: string) => {
    const o = byId.get(id)!;
    return [o.kind, o.completeness, o.is_error];
  };
  assertEquals(row("loading"), ["edit", "incomplete", undefined]);
  assertEquals(byId.get("loading")!.replay.blockers, ["incomplete"]);
  assertEquals(row("error"), ["read", "complete", true]);
  assertEquals(row("cancelled"), ["exec", "complete", true]);
  assertEquals(row("exit1"), ["exec", "complete", true]);
  assertEquals(row("exit0"), ["exec", "complete", false]);
  assertEquals(row("escaped"), ["exec", "complete", true]);
  assertEquals((byId.get("escaped")!.extensions?.cursor as { exit_code?: number }).exit_code, 2);
  assertEquals(row("refused"), ["exec", "complete", true]);
  assertEquals(row("read"), ["read", "complete", false]);
  assertEquals(row("rejected"), ["edit", "complete", true]);
  assertEquals(row("noname"), ["search", "complete", false]);
  assertEquals(byId.get("noname")!.tool, "grep");
  assertEquals(payloadText(payloads, byId.get("noname")!.request), '{"pattern":"foo"}');
  assertEquals(row("odd"), ["mcp", "complete", false]);
  assertEquals(payloadText(payloads, byId.get("odd")!.request), "not json", "kept as recorded");
  assertEquals(sessions[0].issues.find((i) => i.code === "unknown_tool_state")?.count, 1);
  assertEquals(sessions[0].completeness.connections.main, "incomplete");
});

Deno.test("cursor importer: an unchanged database costs two stats", async () => {
  const user = await userFolder();
  const path = `${user}/globalStorage/state.vscdb`;
  const first = await cursor.import(dbUnit(path), { fs, epoch: 0 });
  assertEquals(first.mode, "full");
  let stats = 0;
  const countingFs = { ...fs, stat: (p: string) => (stats++, fs.stat(p)) };
  const second = await resume(cursor, countingFs, dbUnit(path), first, 1);
  assertEquals([second.mode, stats, second.deltas.length], ["unchanged", 2, 0]);
  addNewChat(path);
  const third = await resume(cursor, fs, dbUnit(path), second, 2);
  assertEquals(third.mode, "full");
  assert(third.deltas.some((d) => d.session_id === "cursor:comp-new"));
});

Deno.test("cursor importer: chats whose bubbles are bytes, NULL or non-ASCII text are unchanged on the next read", async () => {
  // A chat's mark counts its bubble rows and their length()s: one that moved between two reads
  // of the same rows would read every chat of a database again.
  const path = `${await freshDir()}/state.vscdb`;
  const headers = (...ids: string[]) => ids.map((bubbleId) => ({ bubbleId, type: 1 }));
  kvDb(path, [
    ["composerData:mixed", {
      composerId: "mixed",
      fullConversationHeadersOnly: headers("a", "b", "n"),
    }],
    ["bubbleId:mixed:a", { type: 1, text: "naïve café, 𝄞 and 🙂" }],
    ["bubbleId:mixed:n", null],
    ["composerData:plain", { composerId: "plain", conversation: [{ type: 1, text: "fine" }] }],
  ]);
  const db = new DatabaseSync(path);
  // a bubble stored as bytes (as Cursor writes them), not as text
  db.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)").run(
    "bubbleId:mixed:b",
    new TextEncoder().encode(JSON.stringify({ type: 2, text: "réponse 🙂🙂" })),
  );
  db.close();
  const first = await cursor.import(dbUnit(path), { fs, epoch: 0 });
  assertEquals(first.deltas.length, 2);
  addNewChat(path);
  const second = await resume(cursor, fs, dbUnit(path), first, 1);
  assertEquals(second.deltas.map((d) => d.session_id), ["cursor:comp-new"]);
  assertEquals(second.unchangedSessions?.toSorted(), ["cursor:mixed", "cursor:plain"]);
});

Deno.test("cursor importer records bad databases as issues and keeps the other chats", async (t) => {
  await t.step("a file that is not a database", async () => {
    const path = `${await freshDir()}/state.vscdb`;
    await Deno.writeTextFile(path, "garbage ".repeat(1000));
    const { result } = await importDb(path);
    assertEquals([result.deltas.length, result.issues.map((i) => i.code)], [0, ["db_corrupt"]]);
  });
  await t.step("a database with neither cursorDiskKV nor ItemTable", async () => {
    const path = `${await freshDir()}/state.vscdb`;
    kvDb(path, [], { tables: ["Other"] });
    const { result } = await importDb(path);
    assertEquals([result.deltas.length, result.issues.map((i) => i.code)], [0, [
      "db_missing_table",
    ]]);
  });
  await t.step("NULL values and strings where objects were expected", async () => {
    const path = `${await freshDir()}/state.vscdb`;
    kvDb(path, [
      ["composerData:null-chat", null],
      ["composerData:string-chat", '"just a string"'],
      ["composerData:bad", {
        composerId: "bad",
        fullConversationHeadersOnly: [
          { bubbleId: "u" },
          { bubbleId: "s" },
          { bubbleId: "n" },
          { bubbleId: "t" },
          { bubbleId: "gone" },
          "not a header",
        ],
      }],
      ["bubbleId:bad:u", { type: 1, text: "kept" }],
      ["bubbleId:bad:s", '"a string bubble"'],
      ["bubbleId:bad:n", null],
      ["bubbleId:bad:t", { type: 2, text: "", toolFormerData: "a string" }],
      ["composerData:good", { composerId: "good", conversation: [{ type: 1, text: "fine" }] }],
    ]);
    const { result, sessions } = await importDb(path);
    assertEquals(result.issues.map((i) => i.code).sort(), ["malformed_value", "null_value"]);
    assertEquals(sessions.map((s) => s.session.native_id).sort(), ["bad", "good"]);
    const bad = sessions.find((s) => s.session.native_id === "bad")!;
    assertEquals(ops(bad).map((o) => o.text), ["kept"]);
    const counts: Record<string, number> = {};
    for (const i of bad.issues) {
      if (i.severity === "warning") counts[i.code] = (counts[i.code] ?? 0) + (i.count ?? 1);
    }
    // a string bubble, a string toolFormerData, a header that is not an object; a NULL bubble;
    // a header naming no row.
    assertEquals(counts, { malformed_value: 3, null_value: 1, missing_bubble: 1 });
    for (const s of sessions) assertEquals(validationProblems(s), []);
  });
  await t.step("a database another connection is writing (WAL)", async () => {
    const path = `${await freshDir()}/state.vscdb`;
    kvDb(path, [["composerData:c1", {
      composerId: "c1",
      conversation: [{ type: 1, text: "committed" }],
    }]]);
    const writer = new DatabaseSync(path);
    writer.exec("BEGIN IMMEDIATE");
    writer.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)").run(
      "composerData:c2",
      JSON.stringify({ composerId: "c2", conversation: [{ type: 1, text: "uncommitted" }] }),
    );
    try {
      const { result, sessions } = await importDb(path);
      assertEquals(result.mode, "full");
      assertEquals(sessions.map((s) => ops(s)[0].text), ["committed"]);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });
  await assertNoScratchLeft();
});

// ---------------------------------------------------------------------------------------------
// cursor-agent CLI

const TRANSCRIPTS = [
  "agentsessions_cursor-agent-cli_transcript.jsonl",
  "agentsessions_cursor-agent-cli_subagent.jsonl",
  "agentsessions_cursor_transcript_large.jsonl",
  "agentsessions_cursor_transcript_small.jsonl",
];

Deno.test("cursor importer reads every cursor-agent transcript fixture", async (t) => {
  for (const name of TRANSCRIPTS) {
    await t.step(name, async () => {
      const { results, sessions } = await importThroughStore(cursor, fs, [
        jsonlUnit(`${PEERS}/${name}`),
      ]);
      assertEquals([results[0].mode, sessions.length], ["full", 1]);
      assertEquals(validationProblems(sessions[0]), []);
      assertEquals(sessions[0].provenance.loss_windows, []);
      await assertSnapshot(`cursor__${name}`, normalize(sessions[0], roots));
    });
  }
  await t.step("a <user_query> wrapper is not part of the prompt", async () => {
    const { sessions } = await importThroughStore(cursor, fs, [
      jsonlUnit(`${PEERS}/${TRANSCRIPTS[0]}`),
    ]);
    assertEquals(ops(sessions[0]).filter((o) => o.kind === "prompt").map((o) => o.text), [
      "run ls command",
      "now show me the git status",
    ]);
  });
  await t.step("results pair with calls by id, else by position", async () => {
    const { sessions, payloads } = await importThroughStore(cursor, fs, [
      jsonlUnit(`${PEERS}/${TRANSCRIPTS[2]}`),
    ]);
    const calls = ops(sessions[0]).filter((o) => o.tool);
    assertEquals(calls.map((c) => [c.tool, c.kind, c.completeness]), [
      ["Bash", "exec", "complete"],
      ["Read", "read", "complete"],
    ]);
    assertEquals(payloadText(payloads, calls[1].response), "hello world");
    assertEquals(sessions[0].completeness.connections.main, "complete");
  });
  await t.step("a call without its result leaves the session incomplete", async () => {
    const { sessions } = await importThroughStore(cursor, fs, [
      jsonlUnit(`${PEERS}/${TRANSCRIPTS[3]}`),
    ]);
    const call = ops(sessions[0]).find((o) => o.tool === "Bash")!;
    assertEquals([call.completeness, call.replay.replayable], ["incomplete", false]);
    assertEquals(sessions[0].completeness.connections.main, "incomplete");
  });
});

Deno.test("cursor importer discovers agent transcripts, sub-agents and chat stores", async () => {
  const home = await freshDir();
  const id = "0a1b2c3d-0000-4000-8000-000000000001";
  const dir = `${home}/.cursor/projects/home-u-proj/agent-transcripts/${id}`;
  await copy(`${PEERS}/${TRANSCRIPTS[0]}`, `${dir}/${id}.jsonl`);
  await copy(`${PEERS}/${TRANSCRIPTS[1]}`, `${dir}/subagents/sub-1.jsonl`);
  await copy(
    `${PEERS}/agentsessions_cursor-agent-cli_store.db`,
    `${home}/.cursor/chats/abcdef/${id}/store.db`,
  );
  const units = await cursor.discover({ home, env: {}, platform: "linux" }, fs);
  assertEquals(units.map((u) => [u.path.slice(home.length), u.kind, u.rank]), [
    [`/.cursor/projects/home-u-proj/agent-transcripts/${id}/${id}.jsonl`, "jsonl", 0],
    [`/.cursor/projects/home-u-proj/agent-transcripts/${id}/subagents/sub-1.jsonl`, "jsonl", 1],
    [`/.cursor/chats/abcdef/${id}/store.db`, "sqlite", 1],
  ]);
  for (const u of units) assert(cursor.detect(u.path), `detect(${u.path})`);
  const { sessions } = await importThroughStore(cursor, fs, units);
  // The transcript and its sub-agent are one session; the store's meta names another chat.
  const s = sessions.find((x) => x.session.native_id === id)!;
  assertEquals(s.connections.map((c) => [c.id, c.kind]), [["main", "main"], [
    "agent-sub-1",
    "subagent",
  ]]);
  assertEquals(ops(s).filter((o) => o.conn === "agent-sub-1").map((o) => o.kind), [
    "prompt",
    "exec",
    "reply",
  ]);
  const store = sessions.find((x) =>
    x.session.native_id === "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
  )!;
  assertEquals([store.session.title, store.session.started_at], [
    "Test Session",
    "2026-04-07T00:43:10.321Z",
  ]);
  assertEquals(store.extensions.cursor, {
    entrypoint: "cursor-agent",
    mode: "default",
    last_used_model: "claude-4-sonnet",
  });
});

Deno.test("cursor importer reports a chat store's blobs as unsupported", async () => {
  const path = `${await freshDir()}/store.db`;
  const db = new DatabaseSync(path);
  db.exec(
    "CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
  );
  const meta = JSON.stringify({ agentId: "agent-1", name: "Chat", createdAt: 1_800_000_000_000 });
  db.prepare("INSERT INTO meta VALUES ('0', ?)").run(
    [...new TextEncoder().encode(meta)].map((b) => b.toString(16).padStart(2, "0")).join(""),
  );
  for (const id of ["a", "b"]) {
    db.prepare("INSERT INTO blobs VALUES (?, ?)").run(id, new Uint8Array([1, 2, 3]));
  }
  db.close();
  const { sessions } = await importDb(path);
  assertEquals(sessions[0].session.title, "Chat");
  const issue = sessions[0].issues.find((i) => i.code === "unsupported_format")!;
  assertEquals(issue.count, 2);
});

Deno.test("cursor importer completes a pending call when its result is appended later", async () => {
  const path = `${await freshDir()}/t.jsonl`;
  const line = (v: unknown) => JSON.stringify(v) + "\n";
  await Deno.writeTextFile(
    path,
    line({
      role: "user",
      message: { content: [{ type: "text", text: "<user_query>\nls\n</user_query>" }] },
    }) +
      line({
        role: "assistant",
        message: {
          content: [{ type: "tool_use", id: "t1", name: "Shell", input: { command: "ls" } }],
        },
      }),
  );
  const first = await cursor.import(jsonlUnit(path), { fs, epoch: 0, closed: false });
  assertEquals(assemble([first]).sessions[0].completeness.connections.main, "incomplete");
  await Deno.writeTextFile(
    path,
    line({
      role: "user",
      message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }] },
    }) +
      line({
        role: "user",
        message: { content: [{ type: "tool_result", tool_use_id: "zz", content: "orphan" }] },
      }) +
      '{"role":"assistant","mess',
    { append: true },
  );
  const second: UnitResult = await resume(cursor, fs, jsonlUnit(path), first, 1);
  assertEquals(second.mode, "append");
  const { sessions, payloads } = assemble([first, second]);
  const list = ops(sessions[0]);
  const call = list.find((o) => o.tool === "Shell")!;
  assertEquals([call.completeness, call.is_error, payloadText(payloads, call.response)], [
    "complete",
    false,
    "a.txt",
  ]);
  assertEquals([call.provenance.epoch, call.provenance.completion?.epoch], [0, 1]);
  const orphan = list.find((o) => o.completeness === "unmatched")!;
  assertEquals(orphan.replay.blockers, ["continuation_only"]);
  assertEquals(sessions[0].completeness.connections.main, "unmatched");
  const third = await resume(cursor, fs, jsonlUnit(path), second, 2);
  assertEquals(third.mode, "unchanged", "the half-written last line waits for the next pass");
});

Deno.test("cursor importer's detect() knows its paths", () => {
  assert(cursor.detect("/h/.config/Cursor/User/globalStorage/state.vscdb"));
  assert(
    cursor.detect("/h/Library/Application Support/Cursor/User/workspaceStorage/x/state.vscdb"),
  );
  assert(cursor.detect("C:\\Users\\u\\AppData\\Roaming\\Cursor\\User\\globalStorage\\state.vscdb"));
  assert(cursor.detect("/h/.cursor/projects/p/agent-transcripts/i/i.jsonl"));
  assert(!cursor.detect("/h/.config/Code/User/globalStorage/state.vscdb"));
  assert(!cursor.detect("/h/.claude/projects/p/x.jsonl"));
});

Deno.test("cursor importer keeps a transcript's bad lines as loss windows and reads the rest", async () => {
  const path = `${await freshDir()}/t.jsonl`;
  await Deno.writeTextFile(
    path,
    [
      JSON.stringify({ role: "user", message: { content: "first" } }),
      "{not json",
      "[1, 2]",
      JSON.stringify({ role: "assistant", message: { content: [{ type: "image", data: "x" }] } }),
      JSON.stringify({ role: "system", message: { content: "?" } }),
      JSON.stringify({ role: "assistant", message: "a plain string" }),
      JSON.stringify({ role: "assistant", message: { content: [{ type: "text", text: "last" }] } }),
    ].join("\n") + "\n",
  );
  const { sessions } = await importThroughStore(cursor, fs, [jsonlUnit(path)]);
  const s = sessions[0];
  assertEquals(ops(s).map((o) => [o.kind, o.text]), [
    ["prompt", "first"],
    ["reply", "a plain string"],
    ["reply", "last"],
  ]);
  assertEquals(s.provenance.loss_windows.map((l) => [l.lines, l.reason]), [
    [[2, 2], "invalid JSON"],
    [[3, 3], "not a JSON object"],
  ]);
  assertEquals(s.issues.filter((i) => i.severity === "warning").map((i) => i.code).sort(), [
    "unknown_block_type",
    "unknown_record_type",
  ]);
});

Deno.test("cursor-agent: tool_call, tool-result and custom_block blocks are shown; sub-agents link by prompt", async () => {
  const root = `${PEERS}/constructed/agent_layout/eeeeeeee-5555-4555-8555-eeeeeeeeeeee`;
  const fs = createDenoFs();
  const { sessions, payloads } = await importThroughStore(cursor, fs, [
    jsonlUnit(`${root}/eeeeeeee-5555-4555-8555-eeeeeeeeeeee.jsonl`),
    { ...jsonlUnit(`${root}/subagents/readme-agent.jsonl`), rank: 1 },
    { ...jsonlUnit(`${root}/subagents/todo-agent.jsonl`), rank: 1 },
  ]);
  assertEquals(sessions.length, 1);
  const s = sessions[0];
  assertEquals(s.issues.filter((i) => i.code === "unknown_block_type"), []);
  const main = ops(s).filter((o) => o.conn === "main");
  assertEquals(main.map((o) => o.kind), ["prompt", "reply", "task", "task", "event", "reply"]);
  const tasks = main.filter((o) => o.kind === "task");
  for (const t of tasks) assertEquals(t.completeness, "complete");
  // Spawned TODOs first, README second; the transcripts sort the other way.
  assertEquals(tasks.map((t) => [t.summary, t.spawns]), [
    ["TODOs", "agent-todo-agent"],
    ["README", "agent-readme-agent"],
  ]);
  assertEquals(payloadText(payloads, tasks[1].response), "README.md names inventory-api.");
  const card = main.find((o) => o.event === "custom_block")!;
  assertEquals(card.text, "2 sub-agents finished: 1 TODO, README ok.");
  for (const c of s.connections.filter((c) => c.kind === "subagent")) {
    assert(tasks.some((t) => t.id === c.parent_op), `${c.id} nests under its call`);
  }
  await assertSnapshot("cursor__constructed__agent_layout", normalize(s, roots));
});
