/**
 * The archive's API: forgetting a session and the exclude list, wired as `chronicle serve`
 * wires them (cli/serve_archive.ts) over a real data folder. Every one of these routes needs
 * the token; the writing ones a loopback Origin (or none) and no cross-site fetch; a forget
 * must repeat the session's id; an exclude edit must name the list it changes.
 */
import assert from "node:assert/strict";
import { assertApiError, call, callJson, PORT, testApp, TOKEN } from "./_helpers.ts";
import { createEventHub } from "../../../server/sse.ts";
import { serveArchive } from "../../../cli/serve_archive.ts";
import { scratch } from "../store/_sessions.ts";
import type { ExcludeView } from "../../../server/deps.ts";
import type { ForgetOutcome } from "../../../core/store/mod.ts";

const SID = "aaaaaaaa-0000-4000-8000-0000000000a1";
const FULL = `claude-code:${SID}`;

async function setup() {
  const s = await scratch();
  const store = await s.imported(SID, ["one", "two"]);
  await s.write("bbbbbbbb-0000-4000-8000-0000000000b2", ["three"]);
  await s.run(store);
  const events = createEventHub();
  const app = testApp(store, {
    events,
    archive: serveArchive({ dir: s.data, store, importer: null, events }),
  });
  return {
    s,
    store,
    app,
    async [Symbol.asyncDispose]() {
      events.close();
      store.close();
      await s[Symbol.asyncDispose]();
    },
  };
}

const path = `/api/sessions/${encodeURIComponent(FULL)}/forget`;
const WRITES = [
  { method: "POST", path, body: { dry_run: true } },
  { method: "POST", path: "/api/archive/exclude", body: { list: { paths: [], projects: [] } } },
];
const READS = ["/api/archive/exclude", "/api/archive/forgotten"];

Deno.test("the archive routes refuse a request without the token, or with a wrong one", async (t) => {
  await using x = await setup();
  for (const r of [...WRITES, ...READS.map((p) => ({ method: "GET", path: p, body: undefined }))]) {
    await t.step(`${r.method} ${r.path}`, async () => {
      await assertApiError(
        await call(x.app, r.method, r.path, { body: r.body, token: null }),
        401,
        "missing_token",
      );
      await assertApiError(
        await call(x.app, r.method, r.path, { body: r.body, token: "b".repeat(64) }),
        403,
        "bad_token",
      );
      await assertApiError(
        await call(x.app, r.method, r.path, { body: r.body, host: "evil.example:4173" }),
        403,
        "forbidden_host",
      );
    });
  }
  assert(x.store.getSession(FULL) !== null);
});

Deno.test("forgetting and editing the list are refused from a foreign Origin or a cross-site fetch", async (t) => {
  await using x = await setup();
  const real = { method: "POST", path, body: { confirm: FULL } };
  for (const r of [...WRITES, real]) {
    for (const origin of ["http://evil.example", `http://127.0.0.1:${PORT + 1}`, "null"]) {
      await t.step(`${origin} ${r.path}`, async () => {
        await assertApiError(
          await call(x.app, r.method, r.path, { body: r.body, origin }),
          403,
          "forbidden_origin",
        );
      });
    }
    await assertApiError(
      await call(x.app, r.method, r.path, {
        body: r.body,
        headers: { "sec-fetch-site": "cross-site" },
      }),
      403,
      "forbidden_origin",
    );
  }
  assert(x.store.getSession(FULL) !== null, "nothing was forgotten");
});

Deno.test("POST /api/sessions/:id/forget: a dry run, a refusal without confirm, then the forget", async () => {
  await using x = await setup();
  const plan = await callJson<ForgetOutcome>(x.app, "POST", path, 200, {
    body: { dry_run: true },
    origin: `http://127.0.0.1:${PORT}`,
  });
  assert.equal(plan.dry_run, true);
  assert.equal(plan.sessions[0].id, FULL);
  assert(x.store.getSession(FULL) !== null);
  await assertApiError(await call(x.app, "POST", path, { body: {} }), 400, "bad_request");
  await assertApiError(
    await call(x.app, "POST", path, { body: { confirm: "claude-code:other" } }),
    400,
    "bad_request",
  );
  const done = await callJson<ForgetOutcome>(x.app, "POST", path, 200, {
    body: { confirm: FULL },
  });
  assert.equal(done.dry_run, false);
  assert.equal(done.sessions.length, 1);
  assert(done.reclaim !== null);
  assert.equal(x.store.getSession(FULL), null);
  const forgotten = await callJson<{ items: { id: string }[] }>(
    x.app,
    "GET",
    "/api/archive/forgotten",
  );
  assert.deepEqual(forgotten.items.map((f) => f.id), [FULL]);
  await assertApiError(
    await call(x.app, "POST", path, { body: { confirm: FULL } }),
    404,
    "not_found",
  );
  // the same log imported again: still gone
  await x.s.run(x.store);
  assert.equal(x.store.getSession(FULL), null);
});

Deno.test("the exclude list: read, replaced with its tag, refused when stale or not valid", async () => {
  await using x = await setup();
  const first = await callJson<ExcludeView>(x.app, "GET", "/api/archive/exclude");
  assert.deepEqual([first.list, first.error, first.etag], [
    { paths: [], projects: [] },
    null,
    "none",
  ]);
  const list = { paths: ["~/.claude/projects/-tmp-*"], projects: ["/work/demo"] };
  const saved = await callJson<ExcludeView>(x.app, "POST", "/api/archive/exclude", 200, {
    body: { list, etag: first.etag },
    origin: `http://localhost:${PORT}`,
  });
  assert.deepEqual(saved.list, list);
  assert.notEqual(saved.etag, first.etag);
  const onDisk = JSON.parse(await Deno.readTextFile(`${x.s.data}/exclude.json`));
  assert.deepEqual(onDisk, { version: 1, ...list });
  assert.equal((await Deno.stat(`${x.s.data}/exclude.json`)).mode! & 0o777, 0o600);
  // an edit made with the old tag would undo someone else's: refused
  await assertApiError(
    await call(x.app, "POST", "/api/archive/exclude", {
      body: { list: { paths: [], projects: [] }, etag: first.etag },
    }),
    409,
    "conflict",
  );
  for (const bad of [{ paths: ["relative/*"], projects: [] }, { paths: [], projects: ["x"] }]) {
    await assertApiError(
      await call(x.app, "POST", "/api/archive/exclude", { body: { list: bad, etag: saved.etag } }),
      400,
      "bad_request",
    );
  }
  await assertApiError(
    await call(x.app, "POST", "/api/archive/exclude", { body: { list } }),
    400,
    "bad_request",
  );
  // a file broken by hand: shown with its error, and replaced only with its own tag
  await Deno.writeTextFile(`${x.s.data}/exclude.json`, '{"version": 1, "paths": ["oops"]}');
  const broken = await callJson<ExcludeView>(x.app, "GET", "/api/archive/exclude");
  assert.equal(broken.list, null);
  assert.match(broken.error ?? "", /"paths"\[0\] "oops": it must start with/);
  const fixed = await callJson<ExcludeView>(x.app, "POST", "/api/archive/exclude", 200, {
    body: { list: { paths: [], projects: [] }, etag: broken.etag },
  });
  assert.equal(fixed.error, null);
  assert.ok(!JSON.stringify(fixed).includes(TOKEN));
});

Deno.test("without the archive (a build without it) its routes answer 503", async () => {
  await using x = await setup();
  const bare = testApp(x.store);
  await assertApiError(await call(bare, "GET", "/api/archive/exclude"), 503, "unavailable");
});
