/** The security routes over the real engine (core/security) and the store's rule table. */
import type { Interception } from "../../../core/security/mod.ts";
import assert from "node:assert/strict";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { createSecurityService } from "../../../server/security_service.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";
import { assertApiError, call, callJson, testApp } from "./_helpers.ts";
import { moduleTempDir } from "../../_helpers/temp_dir.ts";

// Fake secrets in the shapes the scanners know (random values, never real credentials).
const KEY = "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";
const DB = "postgres://app:Xq8vLm2pZr@db.internal:5432/orders";
const SESSION = "22222222-3333-4444-8555-666666666666";

const home = await moduleTempDir("chronicle-sec-");
await writeClaudeSession(home, {
  sessionId: SESSION,
  cwd: "/tmp/leaky",
  turns: [
    { user: `Use OPENAI_API_KEY=${KEY} for the client`, assistant: "Noted." },
    { tool: { name: "Bash", input: { command: "cat .env" }, result: `DATABASE_URL=${DB}\n` } },
    { user: "Mail me at dev@example.org", assistant: "Will do." },
  ],
});
const store = ChronicleStore.open(":memory:");
const fs = createDenoFs({ tempRoot: `${home}/tmp` });
await importAll(store, { env: { home, env: { HOME: home }, platform: "linux" }, fs });
const secretFile = `${home}/.env`;
await Deno.writeTextFile(secretFile, `OPENAI_API_KEY=${KEY}\n`);

const hookCalls: string[] = [];
const journal: Interception[] = [];
const rulesWritten: string[][] = [];
const app = testApp(store, {
  security: createSecurityService({
    store,
    guardFiles: {
      takeJournal: () => journal.splice(0),
      writeRules: (rules) => void rulesWritten.push(rules.map((r) => r.pattern)),
    },
    guard: {
      status: () =>
        Promise.resolve({ installed: false, settings_path: "/home/x/.claude/settings.json" }),
      change: (o) => {
        hookCalls.push(`${o.install ? "install" : "uninstall"}${o.dryRun ? " dry" : ""}`);
        return Promise.resolve({ changed: true, dry_run: o.dryRun, summary: "Add the guard hook" });
      },
    },
  }),
});
const id = `claude-code:${SESSION}`;
// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("a security check of a session reports each rule with previews that hide the secret", async () => {
  const r = await callJson<Json>(app, "POST", "/api/security/check", 200, {
    body: { session_id: id },
  });
  assert.equal(r.sessions_scanned, 1);
  assert.ok(r.by_rule.api_key >= 1, JSON.stringify(r.by_rule));
  assert.ok(r.by_rule.db_conn >= 1, JSON.stringify(r.by_rule));
  const text = JSON.stringify(r);
  assert.ok(!text.includes(KEY), "the key never leaves the server");
  assert.ok(!text.includes("Xq8vLm2pZr"), "the password never leaves the server");
  const f = r.sessions[0].findings.find((x: Json) => x.rule === "api_key");
  assert.match(f.preview, /OPENAI_API_KEY=sk-/);
  assert.ok(f.op_id);
});

Deno.test("a security check takes what `chronicle show` takes: a native id or a unique prefix", async () => {
  for (const named of [SESSION, SESSION.slice(0, 8), id.slice(0, 20)]) {
    const r = await callJson<Json>(app, "POST", "/api/security/check", 200, {
      body: { session_id: named },
    });
    assert.equal(r.sessions_scanned, 1, named);
    assert.equal(r.sessions[0].session_id, id);
  }
  await assertApiError(
    await call(app, "POST", "/api/security/check", { body: { session_id: "zzzz-none" } }),
    404,
    "not_found",
  );
});

Deno.test("a security check of all sessions counts every session scanned", async () => {
  const r = await callJson<Json>(app, "POST", "/api/security/check", 200, { body: {} });
  assert.equal(r.sessions_scanned, store.listSessions({}).total);
  assert.ok(r.total >= 3);
});

Deno.test("rules persist in the store: add, toggle, allow beats redact, delete", async () => {
  const added = await callJson<Json>(app, "POST", "/api/security/rules", 201, {
    body: { name: "orders db", pattern: "postgres://app:*", action: "allow" },
  });
  assert.equal(added.rule.action, "allow");
  const r = await callJson<Json>(app, "POST", "/api/security/check", 200, {
    body: { session_id: id },
  });
  assert.equal(r.by_rule.db_conn, undefined, "the allow rule protects the URL");
  const off = await callJson<Json>(app, "PATCH", `/api/security/rules/${added.rule.id}`, 200, {
    body: { enabled: false },
  });
  assert.equal(off.rule.enabled, false);
  const listed = await callJson<Json>(app, "GET", "/api/security/rules");
  assert.equal(listed.items.find((x: Json) => x.id === added.rule.id).enabled, false);
  await callJson(app, "DELETE", `/api/security/rules/${added.rule.id}`);
  await assertApiError(
    await call(app, "DELETE", `/api/security/rules/${added.rule.id}`),
    404,
    "not_found",
  );
  await assertApiError(
    await call(app, "PATCH", "/api/security/rules/nope", { body: { enabled: true } }),
    404,
    "not_found",
  );
});

Deno.test("an invalid glob is a 400 in the error shape", async () => {
  const res = await call(app, "POST", "/api/security/rules", {
    body: { name: "bad", pattern: "x".repeat(600), action: "redact" },
  });
  await assertApiError(res, 400, "bad_request");
});

Deno.test("what the guard journaled shows in the interception log, masked as it came", async () => {
  journal.push(
    {
      at: "2026-01-01T00:00:00.000Z",
      tool: "Read",
      rules: ["sensitive_path"],
      action: "block",
      file: secretFile,
      session_id: "s1",
    },
    {
      at: "2026-01-01T00:00:01.000Z",
      tool: "Bash",
      rules: ["email"],
      action: "flag",
      sample: "mail ***@***.io",
    },
  );
  const log = await callJson<Json>(app, "GET", "/api/security/interceptions?limit=10");
  assert.ok(log.total >= 2);
  assert.deepEqual(log.items.slice(0, 2).map((i: Json) => [i.tool, i.action]), [["Bash", "flag"], [
    "Read",
    "block",
  ]]);
  assert.equal(log.items[1].file, secretFile);
  assert.equal(journal.length, 0, "the journal was consumed");
});

Deno.test("every rule change rewrites the rules file the guard reads", async () => {
  const before = rulesWritten.length;
  const made = await callJson<Json>(app, "POST", "/api/security/rules", 201, {
    body: { pattern: "path:**/secrets/*", action: "redact" },
  });
  assert.equal(rulesWritten.length, before + 1);
  assert.ok(rulesWritten.at(-1)!.includes("path:**/secrets/*"));
  await callJson<Json>(app, "DELETE", `/api/security/rules/${made.rule.id}`);
  assert.equal(rulesWritten.length, before + 2);
  assert.ok(!rulesWritten.at(-1)!.includes("path:**/secrets/*"));
});

Deno.test("the guard hook is installed only when asked, through the injected installer", async () => {
  const status = await callJson<Json>(app, "GET", "/api/security/guard");
  assert.equal(status.installed, false);
  assert.match(status.explanation, /PreToolUse/);
  assert.deepEqual(hookCalls, []);
  await callJson(app, "POST", "/api/security/guard/install", 200, { body: { dry_run: true } });
  await callJson(app, "POST", "/api/security/guard/install", 200, { body: {} });
  await callJson(app, "POST", "/api/security/guard/uninstall", 200, { body: {} });
  assert.deepEqual(hookCalls, ["install dry", "install", "uninstall"]);
});
