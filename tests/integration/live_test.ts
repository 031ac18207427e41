/**
 * Live views through a real server (cli/serve.ts and cli/serve_import.ts in this process, the
 * import worker, Deno.watchFs): a session's log grows on disk and its viewers are sent every
 * new operation, once, in order; a half-written line, truncation, rotation, a burst, a SQLite
 * database in WAL mode; viewers that leave leave nothing behind (Deno's sanitizers are on);
 * reconnecting with Last-Event-ID, also to a restarted server, loses nothing and repeats
 * nothing.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ClaudeLines, claudeSessionPath, type SyntheticTurn } from "../e2e/_synthetic.ts";
import { SseClient } from "../_helpers/sse_client.ts";
import { liveServer } from "./_live_server.ts";
import { ChronicleStore, importAll } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";

const SID = "1ee70000-0000-4000-8000-00000000beef";
const ID = `claude-code:${SID}`;

const bash = (i: number): SyntheticTurn => ({
  tool: { name: "Bash", input: { command: `echo ${i}` }, result: `line ${i}` },
});

async function scratch() {
  const root = await Deno.makeTempDir({ prefix: "chronicle-live-test-" });
  const home = `${root}/home`;
  const path = claudeSessionPath(home, "/work/live", SID);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  let lines = new ClaudeLines({ sessionId: SID, cwd: "/work/live" });
  return {
    root,
    home,
    data: `${root}/data`,
    path,
    text: (...turns: SyntheticTurn[]) => turns.map((t) => lines.turn(t)).join(""),
    append: (text: string) => Deno.writeTextFile(path, text, { append: true }),
    restart: () => (lines = new ClaudeLines({ sessionId: SID, cwd: "/work/live" })),
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** Opens a viewer of the session, from the stamp its timeline was read at (as the UI does). */
async function view(url: string, headers: Record<string, string>, id = ID) {
  const page = await (await fetch(`${url}api/sessions/${id}/timeline`, { headers })).json();
  const client = await SseClient.connect(`${url}api/sessions/${id}/live?since=${page.stamp}`, {
    headers,
  });
  await client.next((e) => e.event === "session");
  return { client, page: page as { total: number; items: { op_id: string }[] } };
}

async function timelineIds(url: string, headers: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0;; offset += 500) {
    const page = await (await fetch(
      `${url}api/sessions/${ID}/timeline?offset=${offset}&limit=500`,
      { headers },
    )).json();
    out.push(...page.items.map((i: { op_id: string }) => i.op_id));
    if (out.length >= page.total) return out;
  }
}

Deno.test("a line appended to a watched session reaches its viewer in place, once", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "watch me" }));
  const srv = await liveServer({ home: s.home, data: s.data });
  try {
    const { client, page } = await view(srv.url, srv.headers);
    assert.equal(page.total, 1);
    await s.append(s.text(bash(1)));
    const ev = await client.next((e) => e.event === "ops");
    const ops = (ev.data as { ops: { op_id: string; seq: number; op: { kind: string } }[] }).ops;
    assert.deepEqual(ops.map((o) => [o.seq, o.op.kind]), [[1, "exec"]]);
    assert.deepEqual(await timelineIds(srv.url, srv.headers), [page.items[0].op_id, ops[0].op_id]);
    await client.close();
  } finally {
    await srv.stop();
  }
});

Deno.test("a half-written last line waits, and arrives once it is complete", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "go" }));
  const srv = await liveServer({ home: s.home, data: s.data });
  try {
    const { client } = await view(srv.url, srv.headers);
    const [call, result] = s.text(bash(2)).trimEnd().split("\n");
    await s.append(call + "\n" + result.slice(0, 40));
    const first = await client.next((e) => e.event === "ops");
    const op = (first.data as { ops: { op_id: string; op: { completeness: string } }[] }).ops[0];
    assert.equal(op.op.completeness, "incomplete", "the call, without its half-written result");
    await s.append(result.slice(40) + "\n");
    const done = await client.next((e) =>
      e.event === "ops" &&
      (e.data as { ops: { op_id: string; op: { completeness: string } }[] }).ops.some((o) =>
        o.op_id === op.op_id && o.op.completeness === "complete"
      )
    );
    assert.ok(done);
    await client.close();
  } finally {
    await srv.stop();
  }
});

/**
 * `chronicle import` in a store of its own, for "as in import": imports the files as they are
 * now on each `run`, and reads the session's timeline (ids, kinds, completeness, summaries) and
 * the checkpoint of its log.
 */
async function referenceImport(home: string) {
  const store = ChronicleStore.open(":memory:");
  const tmp = await Deno.makeTempDir({ prefix: "chronicle-live-ref-" });
  const fs = createDenoFs({ tempRoot: tmp });
  return {
    run: () => importAll(store, { env: { home, env: { HOME: home }, platform: "linux" }, fs }),
    rows: (id = ID) => rows(store.timeline(id, { limit: 100_000 }).items),
    checkpoint: (path: string) => JSON.stringify(store.getSource(path)?.checkpoint ?? null),
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(tmp, { recursive: true });
    },
  };
}

type Row = { op_id: string; op: { kind: string; completeness: string; summary?: string } };
const rows = (items: unknown[]) =>
  (items as Row[]).map((i) => `${i.op_id} ${i.op.kind} ${i.op.completeness} ${i.op.summary}`);

async function liveRows(
  url: string,
  headers: Record<string, string>,
  id = ID,
): Promise<string[]> {
  const res = await fetch(`${url}api/sessions/${id}/timeline?limit=500`, { headers });
  const page = await res.json();
  return res.status === 404 ? [] : rows(page.items);
}

/**
 * A log changed on disk the ways files change under a reader. Each case changes a watched
 * session's file and says what its viewer is sent; the live store must end where `chronicle
 * import` run before and after the same change ends (import's own cases:
 * tests/unit/sources/jsonl_test.ts, tests/unit/store/store_test.ts).
 */
/** The watched session's first steps, as a viewer is sent them once its log no longer holds them. */
const KEPT_START = ["kept prompt", "kept echo 1", "kept echo 2"];

const FILE_CASES: {
  name: string;
  change: (s: Awaited<ReturnType<typeof scratch>>, start: string) => Promise<void>;
  /**
   * Summaries of the operations sent (other events by name), or "reset": the viewer reloads (a
   * re-read dropped operations, or the session was gone a moment and came back).
   */
  sent: string[] | "reset";
}[] = [
  {
    name: "rotated (moved away; a new file holds the session so far and more)",
    change: async (s, start) => {
      await Deno.rename(s.path, `${s.path}.1`);
      await Deno.writeTextFile(s.path, start + s.text(bash(3)));
    },
    sent: ["echo 3"],
  },
  {
    name: "rotated to a fresh file (moved away; the new one starts empty and grows)",
    change: async (s) => {
      await Deno.rename(s.path, `${s.path}.1`);
      await Deno.writeTextFile(s.path, "");
      await s.append(s.text(bash(3)));
    },
    // what the new file no longer holds is kept, and sent again with its mark
    sent: KEPT_START.concat(["echo 3"]),
  },
  {
    name: "replaced in one rename (an editor's save) by the same lines and one more",
    change: async (s, start) => {
      await Deno.writeTextFile(`${s.path}.tmp`, start + s.text(bash(3)));
      await Deno.rename(`${s.path}.tmp`, s.path);
    },
    sent: ["echo 3"],
  },
  {
    name: "replaced in place by other bytes of the same length",
    change: (s, start) => Deno.writeTextFile(s.path, start.replace("echo 2", "echo 9")),
    sent: ["echo 9"],
  },
  {
    name: "truncated to a new, shorter session",
    change: async (s) => {
      s.restart();
      await Deno.writeTextFile(s.path, s.text({ user: "all over again" }));
    },
    // the new session's prompt sorts by its time, among the kept steps
    sent: ["kept prompt", "prompt", "kept echo 1", "kept echo 2"],
  },
  {
    // The archive keeps a session whose log is now empty: its viewer is sent its steps, kept.
    name: "truncated to nothing",
    change: (s) => Deno.truncate(s.path, 0),
    sent: KEPT_START,
  },
];

for (const c of FILE_CASES) {
  Deno.test(`a watched log ${c.name}: its viewer is told, and the store ends as 'chronicle import' leaves it`, async () => {
    await using s = await scratch();
    const start = s.text({ user: "first" }, bash(1), bash(2));
    await s.append(start);
    const srv = await liveServer({ home: s.home, data: s.data });
    try {
      await using ref = await referenceImport(s.home);
      await ref.run();
      const { client } = await view(srv.url, srv.headers);
      const from = client.events.length;
      await c.change(s, start);
      await ref.run();
      // The live import has read the file as it is now (a rename and a write may be two).
      while (
        JSON.stringify(srv.store.getSource(s.path)?.checkpoint ?? null) !== ref.checkpoint(s.path)
      ) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(await liveRows(srv.url, srv.headers), ref.rows());
      if (c.sent === "reset") {
        const reset = await client.next((e) => e.event === "reset", from);
        assert.match(reset.id!, /^\d+$/);
      } else {
        const summaries = () =>
          client.events.slice(from).filter((e) => e.event !== "session").flatMap((e) =>
            e.event === "ops"
              ? (e.data as { ops: { op: { kind: string; summary?: string }; kept?: true }[] })
                .ops.map((o) => `${o.kept ? "kept " : ""}${o.op.summary ?? o.op.kind}`)
              : [e.event]
          );
        // what was sent may come in more than one event (a rename and a write: two passes)
        while (summaries().length < c.sent.length) {
          await client.next(() => true, client.events.length);
        }
        assert.deepEqual(summaries(), c.sent, "only what changed, and no reset");
      }
      await client.close();
    } finally {
      await srv.stop();
    }
  });
}

/**
 * The watch is generic: any agent's JSONL log is followed the same way. Each case is a real
 * CLI's recording (fixtures/realclients) whose log is written in two halves while a viewer
 * watches; the viewer is sent the second half's operations, and the store ends as
 * `chronicle import` of the whole log.
 */
const AGENT_LOGS = [
  {
    agent: "Qwen Code",
    native: "fixtures/realclients/qwen/s4-long/native",
    log:
      ".qwen/projects/-home-dev-projects-s4-long/chats/30d7d508-634e-4c0c-adc5-78c068fbfa84.jsonl",
  },
  {
    agent: "Copilot CLI",
    native: "fixtures/realclients/copilot/s4-long/native",
    log: ".copilot/session-state/6d314a23-e9de-44cc-a38d-421c9ab3d442/events.jsonl",
  },
];

for (const c of AGENT_LOGS) {
  Deno.test(`a ${c.agent} session written while viewed streams its new steps`, async () => {
    await using s = await scratch();
    const root = new URL("../../", import.meta.url).pathname;
    await new Deno.Command("cp", { args: ["-R", `${root}${c.native}/.`, s.home] }).output();
    const path = `${s.home}/${c.log}`;
    const lines = (await Deno.readTextFile(path)).split(/(?<=\n)/);
    const half = Math.floor(lines.length / 2);
    await Deno.writeTextFile(path, lines.slice(0, half).join(""));
    const srv = await liveServer({ home: s.home, data: s.data });
    try {
      const list = await (await fetch(`${srv.url}api/sessions`, { headers: srv.headers })).json();
      assert.equal(list.total, 1);
      const id = list.items[0].id as string;
      const { client, page } = await view(srv.url, srv.headers, id);
      await using ref = await referenceImport(s.home);
      await Deno.writeTextFile(path, lines.slice(half).join(""), { append: true });
      await ref.run();
      while (
        JSON.stringify(srv.store.getSource(path)?.checkpoint ?? null) !== ref.checkpoint(path)
      ) await new Promise((r) => setTimeout(r, 10));
      const final = await liveRows(srv.url, srv.headers, id);
      assert.deepEqual(final, ref.rows(id));
      const before = new Set(page.items.map((i) => i.op_id));
      const added = final.map((r) => r.split(" ")[0]).filter((op) => !before.has(op));
      assert.ok(added.length > 0, "the second half holds new steps");
      await client.waitForOps(added.length);
      const sent = new Set(client.opIds());
      for (const op of added) assert.ok(sent.has(op), `${op} was sent`);
      await client.close();
    } finally {
      await srv.stop();
    }
  });
}

Deno.test("a burst of 10,000 lines arrives whole, each operation once, in timeline order", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "burst" }));
  const srv = await liveServer({ home: s.home, data: s.data });
  try {
    const { client } = await view(srv.url, srv.headers);
    // 5,000 calls with their results: 10,000 lines, written as fast as 100 appends go.
    for (let i = 0; i < 100; i++) {
      await s.append(s.text(...Array.from({ length: 50 }, (_, k) => bash(i * 50 + k))));
    }
    await client.waitForOps(5000);
    const got = client.opIds();
    assert.equal(got.length, 5000, "nothing twice");
    const timeline = await timelineIds(srv.url, srv.headers);
    assert.deepEqual(got, timeline.slice(1));
    await client.close();
  } finally {
    await srv.stop();
  }
});

Deno.test("an OpenCode database growing in WAL mode streams its new steps; its main file stays as it was", async () => {
  await using s = await scratch();
  const dir = `${s.home}/.local/share/opencode`;
  await Deno.mkdir(dir, { recursive: true });
  const dbPath = `${dir}/opencode.db`;
  const db = new DatabaseSync(dbPath);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA wal_autocheckpoint = 0");
    db.exec(`CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT, time_created INTEGER);
      CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
        directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
      CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
        time_updated INTEGER, data TEXT);
      CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
        time_created INTEGER, time_updated INTEGER, data TEXT);`);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const t0 = Date.now();
    db.prepare(
      "INSERT INTO session VALUES ('ses_1', 'p1', NULL, 's', '/work/oc', 'WAL test', '1.0', ?, ?)",
    )
      .run(t0, t0);
    let n = 0;
    const say = (role: "user" | "assistant", text: string) => {
      const t = t0 + ++n * 1000;
      const mid = `msg_${String(n).padStart(4, "0")}`;
      const data = role === "user"
        ? { role, time: { created: t }, model: { providerID: "p", modelID: "m" } }
        : { role, time: { created: t, completed: t + 1 }, modelID: "m", providerID: "p" };
      db.prepare("INSERT INTO message VALUES (?, 'ses_1', ?, ?, ?)").run(
        mid,
        t,
        t,
        JSON.stringify(data),
      );
      db.prepare("INSERT INTO part VALUES (?, ?, 'ses_1', ?, ?, ?)")
        .run(`prt_${mid}`, mid, t, t, JSON.stringify({ type: "text", text }));
    };
    say("user", "start");
    const main = await Deno.stat(dbPath);
    const srv = await liveServer({ home: s.home, data: s.data });
    try {
      const { client, page } = await view(srv.url, srv.headers, "opencode:ses_1");
      assert.equal(page.total, 1);
      say("assistant", "one");
      say("user", "two");
      await client.waitForOps(2);
      const after = await Deno.stat(dbPath);
      assert.equal(after.size, main.size, "the writes went to the WAL only");
      assert.equal(after.mtime?.getTime(), main.mtime?.getTime());
      await client.close();
    } finally {
      await srv.stop();
    }
  } finally {
    db.close();
  }
});

Deno.test("two viewers of one session, then both leave: no watch, stream or timer is left", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "two of us" }));
  const srv = await liveServer({ home: s.home, data: s.data });
  try {
    const a = await view(srv.url, srv.headers);
    const b = await view(srv.url, srv.headers);
    const status = async () =>
      (await (await fetch(`${srv.url}api/live`, { headers: srv.headers })).json()).sessions
        .find((x: { session: { id: string } }) => x.session.id === ID);
    const both = await status();
    assert.equal(both.viewers, 2);
    assert.ok(both.watch.mode === "watch" || both.watch.mode === "poll");
    await s.append(s.text(bash(1)));
    await a.client.waitForOps(1);
    await b.client.waitForOps(1);
    assert.deepEqual(a.client.opIds(), b.client.opIds());
    await a.client.close();
    await b.client.close();
    while ((await status())?.viewers) await new Promise((r) => setTimeout(r, 10));
    const left = await status();
    assert.equal(left.watch, null, "the watch stopped with the last viewer");
  } finally {
    await srv.stop();
  }
});

Deno.test("a viewer reconnecting with Last-Event-ID is sent exactly what it missed", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "come back" }));
  const srv = await liveServer({ home: s.home, data: s.data });
  try {
    const { client } = await view(srv.url, srv.headers);
    await s.append(s.text(bash(1)));
    await client.waitForOps(1);
    const last = client.lastId!;
    await client.close();
    await s.append(s.text(bash(2), bash(3)));
    // Meanwhile another viewer (from before the first one's last id) sees them imported.
    const other = await SseClient.connect(`${srv.url}api/sessions/${ID}/live?since=${last}`, {
      headers: srv.headers,
    });
    await other.waitForOps(2);
    await other.close();
    const back = await SseClient.connect(`${srv.url}api/sessions/${ID}/live`, {
      headers: srv.headers,
      lastEventId: last,
    });
    await back.waitForOps(2);
    const all = await timelineIds(srv.url, srv.headers);
    assert.deepEqual([...client.opIds(), ...back.opIds()], all.slice(1));
    await back.close();
  } finally {
    await srv.stop();
  }
});

Deno.test("the server restarts mid-stream: the viewer resumes from its last id, nothing lost or twice", async () => {
  await using s = await scratch();
  await s.append(s.text({ user: "restart" }));
  let srv = await liveServer({ home: s.home, data: s.data });
  const port = srv.server.port;
  const { client } = await view(srv.url, srv.headers);
  await s.append(s.text(bash(1)));
  await client.waitForOps(1);
  await srv.stop();
  await client.close();
  // While it is down, the agent goes on writing.
  await s.append(s.text(bash(2), bash(3)));
  srv = await liveServer({ home: s.home, data: s.data, port });
  try {
    const back = await SseClient.connect(`${srv.url}api/sessions/${ID}/live`, {
      headers: srv.headers,
      lastEventId: client.lastId,
    });
    await back.waitForOps(2);
    await s.append(s.text(bash(4)));
    await back.waitForOps(3);
    const all = await timelineIds(srv.url, srv.headers);
    assert.deepEqual([...client.opIds(), ...back.opIds()], all.slice(1));
    await back.close();
  } finally {
    await srv.stop();
  }
});
