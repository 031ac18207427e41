/** The JSON API on real-client fixtures: lists, filters, paging, search, analytics, payloads. */
import assert from "node:assert/strict";
import { isErrorResult } from "../../../core/analytics/mod.ts";
import type { ImportProgress } from "../../../core/live/mod.ts";
import { prepareUnit } from "../../../core/store/mod.ts";
import { SOURCE_IDS } from "../../../core/sources/registry.ts";
import type { TimelineRow } from "../../../server/routes/sessions.ts";
import { assertApiError, call, callJson, fixtureStore, realClients, testApp } from "./_helpers.ts";
import { fakeSecurity } from "./_fake_security.ts";

const AGENT_SOURCE: Record<string, string> = {
  claude: "claude-code",
  codex: "codex",
  gemini: "gemini",
  opencode: "opencode",
};
/** Scenarios of every agent; those whose importer is not in this tree yet are left out. */
const WANTED = [
  "claude/s1-basic",
  "claude/s2-errors",
  "claude/s6-subagent",
  "codex/s2-errors",
  "gemini/s1-basic",
  "gemini/s2-errors",
  "opencode/s2-errors",
].filter((s) => SOURCE_IDS.includes(AGENT_SOURCE[s.split("/")[0]] as never));
const store = await fixtureStore(WANTED);
/** The scenarios that produced a session (an importer still in progress may yield none). */
const SCENARIOS = WANTED.filter((s) => {
  const [agent, name] = s.split("/");
  return store.listSessions({ source: AGENT_SOURCE[agent], project: `/home/dev/projects/${name}` })
    .total === 1;
});
assert.ok(SCENARIOS.filter((s) => s.startsWith("claude/")).length === 3, "Claude fixtures import");
const app = testApp(store, { security: fakeSecurity() });

// deno-lint-ignore no-explicit-any
type Json = any;
const enc = encodeURIComponent;

async function allRows(id: string, connection?: string): Promise<TimelineRow[]> {
  const rows: TimelineRow[] = [];
  for (let offset = 0;; offset += 3) {
    const conn = connection ? `&connection=${enc(connection)}` : "";
    const page = await callJson<Json>(
      app,
      "GET",
      `/api/sessions/${enc(id)}/timeline?offset=${offset}&limit=3${conn}`,
    );
    rows.push(...page.items);
    if (offset + 3 >= page.total) return rows;
  }
}

Deno.test("GET /api/sessions lists every agent's sessions, newest first by default", async () => {
  const body = await callJson<Json>(app, "GET", "/api/sessions");
  assert.equal(body.total, SCENARIOS.length);
  const sources = new Set(body.items.map((s: Json) => s.source));
  assert.ok(sources.has("claude-code"), [...sources].join());
});

Deno.test("GET /api/sessions filters by agent, project, text and date, sorts and pages", async (t) => {
  await t.step("by agent", async () => {
    const body = await callJson<Json>(app, "GET", "/api/sessions?source=claude-code");
    assert.equal(body.total, SCENARIOS.filter((s) => s.startsWith("claude/")).length);
    assert.ok(body.items.every((s: Json) => s.source === "claude-code"));
  });
  await t.step("by project", async () => {
    const project = "/home/dev/projects/s6-subagent";
    const body = await callJson<Json>(app, "GET", `/api/sessions?project=${enc(project)}`);
    assert.equal(body.total, 1);
    assert.equal(body.items[0].project_path, project);
  });
  await t.step("by text", async () => {
    const body = await callJson<Json>(app, "GET", "/api/sessions?text=SUMMARY");
    assert.ok(body.total >= 1);
    assert.ok(body.items.some((s: Json) => s.project_path.endsWith("s6-subagent")));
  });
  await t.step("by date range", async () => {
    const none = await callJson<Json>(app, "GET", "/api/sessions?to=2000-01-01");
    assert.equal(none.total, 0);
    const all = await callJson<Json>(app, "GET", "/api/sessions?from=2000-01-01");
    assert.equal(all.total, SCENARIOS.length);
  });
  await t.step("sorted by operation count, ascending", async () => {
    const body = await callJson<Json>(app, "GET", "/api/sessions?sort=op_count&order=asc");
    const counts = body.items.map((s: Json) => s.op_count);
    assert.deepEqual(counts, [...counts].sort((a, b) => a - b));
  });
  await t.step("paged", async () => {
    const a = await callJson<Json>(app, "GET", "/api/sessions?limit=2&offset=0");
    const b = await callJson<Json>(app, "GET", "/api/sessions?limit=2&offset=2");
    assert.equal(a.items.length, 2);
    assert.equal(a.total, SCENARIOS.length);
    const ids = new Set([...a.items, ...b.items].map((s: Json) => s.id));
    assert.equal(ids.size, Math.min(4, SCENARIOS.length));
  });
});

Deno.test("GET /api/projects lists each project with its session count", async () => {
  const body = await callJson<Json>(app, "GET", "/api/projects");
  const s1 = body.items.find((p: Json) => p.path === "/home/dev/projects/s1-basic");
  assert.equal(s1.sessions, SCENARIOS.filter((s) => s.endsWith("/s1-basic")).length);
});

const subagentId = store.listSessions({ project: "/home/dev/projects/s6-subagent" }).items[0].id;

Deno.test("GET /api/sessions/:id gives the session, its connections and the main thread", async () => {
  const body = await callJson<Json>(app, "GET", `/api/sessions/${enc(subagentId)}`);
  assert.equal(body.session.id, subagentId);
  assert.equal(body.main_connection, "main");
  const sub = body.connections.find((c: Json) => c.kind === "subagent");
  assert.ok(sub, "a sub-agent connection");
  assert.ok(sub.parent_op, "the sub-agent is attached to the task call that spawned it");
  const rows = await allRows(subagentId);
  const parent = rows.find((r) => r.op_id === sub.parent_op)!;
  assert.equal(parent.op.kind, "task");
});

Deno.test("the timeline pages in a stable order with payload text", async () => {
  const rows = await allRows(subagentId);
  const once = await callJson<Json>(
    app,
    "GET",
    `/api/sessions/${enc(subagentId)}/timeline?limit=500`,
  );
  assert.deepEqual(rows.map((r) => r.op_id), once.items.map((r: Json) => r.op_id));
  assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i));
  const write = rows.find((r) => r.op.kind === "write")!;
  assert.match(write.input!.text, /SUMMARY\.md/);
  assert.equal(write.input!.truncated, false);
});

Deno.test("the timeline filters by connection, so a sub-agent reads on its own", async () => {
  const detail = await callJson<Json>(app, "GET", `/api/sessions/${enc(subagentId)}`);
  const sub = detail.connections.find((c: Json) => c.kind === "subagent");
  const main = await allRows(subagentId, "main");
  const inner = await allRows(subagentId, sub.id);
  assert.ok(main.every((r) => r.connection === "main"));
  assert.ok(inner.length >= 2 && inner.every((r) => r.connection === sub.id));
  assert.equal(main.length + inner.length, (await allRows(subagentId)).length);
});

Deno.test("GET /api/sessions/:id/locate finds a sub-agent's step through its parent call", async () => {
  const detail = await callJson<Json>(app, "GET", `/api/sessions/${enc(subagentId)}`);
  const sub = detail.connections.find((c: Json) => c.kind === "subagent");
  const inner = await allRows(subagentId, sub.id);
  const target = inner[inner.length - 1];
  const body = await callJson<Json>(
    app,
    "GET",
    `/api/sessions/${enc(subagentId)}/locate?op=${enc(target.op_id)}`,
  );
  assert.equal(body.chain.length, 2);
  assert.equal(body.chain[0].op_id, sub.parent_op);
  assert.equal(body.chain[0].connection, "main");
  assert.deepEqual(body.chain[1], {
    op_id: target.op_id,
    connection: sub.id,
    index: inner.length - 1,
  });
  await assertApiError(
    await call(app, "GET", `/api/sessions/${enc(subagentId)}/locate?op=nope`),
    404,
    "not_found",
  );
  await assertApiError(
    await call(app, "GET", `/api/sessions/${enc(subagentId)}/locate`),
    400,
    "bad_request",
  );
});

Deno.test("session stats count errors exactly as the UI's heuristic marks timeline rows", async (t) => {
  for (const s of store.listSessions({ limit: 100 }).items) {
    await t.step(s.id, async () => {
      const rows = await allRows(s.id);
      const marked = rows.filter((r) => isErrorResult(r.op, r.result?.text)).length;
      const stats = await callJson<Json>(app, "GET", `/api/sessions/${enc(s.id)}/stats`);
      assert.equal(stats.errors, marked);
      assert.equal(stats.operations, rows.length);
    });
  }
});

Deno.test("the error count of each s2-errors session matches the scenario's truth", async (t) => {
  for (const scenario of SCENARIOS.filter((s) => s.endsWith("/s2-errors"))) {
    await t.step(scenario, async () => {
      const truth = JSON.parse(
        await Deno.readTextFile(`${realClients()}/${scenario}/scenario.json`),
      );
      const expected = truth.tool_calls.filter((c: Json) => c.expected_error).length;
      const s = store.listSessions({
        source: AGENT_SOURCE[scenario.split("/")[0]],
        project: "/home/dev/projects/s2-errors",
      }).items[0];
      const stats = await callJson<Json>(app, "GET", `/api/sessions/${enc(s.id)}/stats`);
      assert.equal(stats.errors, expected);
    });
  }
});

Deno.test("GET /api/analytics counts per project and overall", async () => {
  const all = await callJson<Json>(app, "GET", "/api/analytics");
  assert.equal(all.sessions, SCENARIOS.length);
  const sum = store.listSessions({ limit: 100 }).items.reduce((n, s) => n + s.op_count, 0);
  assert.equal(all.operations, sum);
  assert.ok(all.tools.length > 3 && all.activity.length >= 1 && all.tokens.length >= 1);
  const one = await callJson<Json>(
    app,
    "GET",
    `/api/analytics?project=${enc("/home/dev/projects/s2-errors")}`,
  );
  assert.ok(one.sessions >= 1 && one.sessions < all.sessions);
  assert.ok(one.errors >= 3, `s2-errors has failing calls: ${one.errors}`);
  assert.ok(one.errors <= all.errors);
});

Deno.test("GET /api/search returns hits with highlighted snippets and honours filters", async () => {
  const body = await callJson<Json>(app, "GET", "/api/search?q=summary");
  assert.ok(body.total >= 1);
  const hit = body.hits[0];
  assert.ok(hit.snippet.some((s: Json) => s.match && /summary/i.test(s.text)));
  assert.ok(hit.session.source);
  const filtered = await callJson<Json>(app, "GET", "/api/search?q=summary&source=gemini");
  assert.ok(filtered.hits.every((h: Json) => h.session.source === "gemini"));
  const empty = await callJson<Json>(app, "GET", "/api/search?q=");
  assert.equal(empty.total, 0);
  const syntax = await callJson<Json>(app, "GET", `/api/search?q=${enc('"AND OR (*')}`);
  assert.equal(typeof syntax.total, "number");
  // a page past the last hit: empty, the count as it is
  const past = await callJson<Json>(app, "GET", `/api/search?q=summary&offset=${body.total + 5}`);
  assert.deepEqual([past.total, past.hits.length], [body.total, 0]);
  // a limit out of range says the one range, whichever side it is on
  for (const limit of ["0", "201", "-5"]) {
    const res = await call(app, "GET", `/api/search?q=summary&limit=${limit}`);
    assert.equal(res.status, 400, limit);
    assert.equal((await res.json()).error, 'Query parameter "limit" must be 1..200', limit);
  }
  assert.equal((await callJson<Json>(app, "GET", "/api/search?q=summary&limit=200")).limit, 200);
});

Deno.test("GET /api/search says while a first import is still building the index, and how far", async (t) => {
  const progress = (over: Partial<ImportProgress>): ImportProgress => ({
    state: "importing",
    first: true,
    files_total: 40,
    files_done: 10,
    bytes_total: 4000,
    bytes_done: 1000,
    sessions: 9,
    index_total: 0,
    index_done: 0,
    percent: 25,
    eta_s: 3,
    started_at: 1,
    finished_at: null,
    ...over,
  });
  const cases: { name: string; progress?: ImportProgress; expected: Json }[] = [
    {
      name: "the first pass is importing",
      progress: progress({}),
      expected: { phase: "importing", percent: 25, files_done: 10, files_total: 40, unindexed: 0 },
    },
    {
      name: "the first pass is still discovering",
      progress: progress({ state: "discovering", files_total: 0, files_done: 0, percent: 0 }),
      expected: { phase: "discovering", percent: 0, files_done: 0, files_total: 0, unindexed: 0 },
    },
    {
      name: "the first pass is indexing what it stored",
      progress: progress({ state: "indexing", index_total: 800, index_done: 200, percent: 25 }),
      expected: { phase: "indexing", percent: 25, files_done: 10, files_total: 40, unindexed: 0 },
    },
    { name: "the first pass has finished", progress: progress({ state: "idle" }), expected: null },
    { name: "a later pass runs", progress: progress({ first: false }), expected: null },
    { name: "the server imports nothing", expected: null },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const withProgress = testApp(store, {
        importProgress: c.progress ? () => c.progress! : undefined,
      });
      const body = await callJson<Json>(withProgress, "GET", "/api/search?q=summary");
      assert.deepEqual(body.indexing, c.expected);
      assert.ok(body.total >= 1, "hits are still answered");
    });
  }
});

Deno.test("GET /api/payloads/:sha256 serves payload bytes as plain text only", async () => {
  const rows = await allRows(subagentId);
  const ref = rows.find((r) => r.input?.sha256)!.input!;
  const res = await call(app, "GET", `/api/payloads/${ref.sha256}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(await res.text(), ref.text);
});

Deno.test("security routes validate input and pass the engine's answers through", async (t) => {
  await t.step("add, toggle, list, delete a rule", async () => {
    const added = await callJson<Json>(app, "POST", "/api/security/rules", 201, {
      body: { name: "corp", pattern: "corp-*", action: "redact" },
    });
    const id = added.rule.id;
    const toggled = await callJson<Json>(app, "PATCH", `/api/security/rules/${id}`, 200, {
      body: { enabled: false },
    });
    assert.equal(toggled.rule.enabled, false);
    const list = await callJson<Json>(app, "GET", "/api/security/rules");
    assert.ok(list.items.some((r: Json) => r.id === id));
    await callJson(app, "DELETE", `/api/security/rules/${id}`);
    await assertApiError(await call(app, "DELETE", `/api/security/rules/${id}`), 404, "not_found");
  });
  await t.step("invalid bodies are 400s", async () => {
    const cases: [string, string, unknown][] = [
      ["POST", "/api/security/rules", { pattern: "" }],
      ["POST", "/api/security/rules", { pattern: "x", action: "block" }],
      ["POST", "/api/security/rules", "{not json"],
      ["POST", "/api/security/rules", [1, 2]],
      ["PATCH", "/api/security/rules/r1", { enabled: "yes" }],
      ["POST", "/api/security/check", { session_id: 7 }],
    ];
    for (const [method, path, body] of cases) {
      await assertApiError(await call(app, method, path, { body }), 400, "bad_request");
    }
  });
  await t.step("a check of an unknown session is a 404", async () => {
    const res = await call(app, "POST", "/api/security/check", { body: { session_id: "nope" } });
    await assertApiError(res, 404, "not_found");
  });
  await t.step("a body over 1 MiB is refused", async () => {
    const res = await call(app, "POST", "/api/security/rules", {
      body: { pattern: "x", action: "redact", name: "y".repeat(1_100_000) },
    });
    await assertApiError(res, 413, "payload_too_large");
  });
});

Deno.test("analytics are recomputed after the store changes", async () => {
  const before = await callJson<Json>(app, "GET", "/api/analytics");
  const again = await callJson<Json>(app, "GET", "/api/analytics");
  assert.deepEqual(again, before);
  // A pass over one more file of a session, with one model response, then that file gone.
  const unit = {
    source: "claude-code" as const,
    path: "/extra.jsonl",
    kind: "jsonl" as const,
    rank: 1,
  };
  const pass = (usage: boolean) =>
    prepareUnit({
      mode: "full",
      deltas: usage
        ? [{
          session_id: subagentId,
          file: unit.path,
          primary: false,
          info: { id: subagentId, native_id: subagentId.split(":")[1], source: "claude-code" },
          connections: [],
          operations: [],
          usage: [{
            key: "bench-extra",
            model: "test-model",
            usage: { input: 5, output: 7, cache_read: 0, cache_write: 0 },
          }],
          loss_windows: [],
          issues: [],
        }]
        : [],
      checkpoint: null,
      state: null,
      issues: [],
      payloads: new Map(),
      bytesRead: 0,
    });
  store.applyUnit(unit, pass(true), 0);
  const after = await callJson<Json>(app, "GET", "/api/analytics");
  assert.ok(after.tokens.some((t: Json) => t.model === "test-model" && t.output === 7));
  // The file rewritten without that response: the tokens were spent, the archive keeps them.
  store.applyUnit(unit, pass(false), 1);
  assert.deepEqual(await callJson<Json>(app, "GET", "/api/analytics"), after);
});
