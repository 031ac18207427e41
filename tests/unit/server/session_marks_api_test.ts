/**
 * `PATCH /api/sessions/:id`: the user's name and star for a session, through the same door as
 * every write (token, Host, Origin), told to other tabs, and read back by the list's filter,
 * search and share links.
 */
import assert from "node:assert/strict";
import type { LiveService } from "../../../core/live/mod.ts";
import type { SessionSummary } from "../../../core/store/mod.ts";
import type { EventHub } from "../../../server/sse.ts";
import { assertApiError, call, callJson, fixtureStore, PORT, testApp } from "./_helpers.ts";

const store = await fixtureStore(["claude/s1-basic", "codex/s1-basic"]);
const [first, second] = store.listSessions({}).items;
const path = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

/** An app whose event hub and live service record what they are told. */
function recordingApp() {
  const published: { event: string; data: unknown }[] = [];
  const changed: { ids: readonly string[]; live?: boolean }[] = [];
  const events: EventHub = {
    publish: (event, data) => void published.push({ event, data }),
    response: () => new Response(""),
    size: 0,
    close: () => {},
  };
  const live = {
    changed: (ids: readonly string[], options: { live?: boolean } = {}) =>
      void changed.push({ ids, live: options.live }),
  } as unknown as LiveService;
  return { app: testApp(store, { events, live }), published, changed };
}

Deno.test("PATCH /api/sessions/:id names and stars a session and tells other tabs", async () => {
  const { app, published, changed } = recordingApp();
  const { session } = await callJson<{ session: SessionSummary }>(
    app,
    "PATCH",
    path(first.id),
    200,
    { body: { title: "  My\nname ", starred: true }, origin: `http://127.0.0.1:${PORT}` },
  );
  assert.equal(session.id, first.id);
  assert.equal(session.user_title, "My name");
  assert.equal(session.starred, true);
  assert.match(session.starred_at ?? "", /^\d{4}-\d{2}-\d{2}T/);
  assert.equal(session.title, first.title, "the agent's title is kept beside it");
  assert.deepEqual(published, [{ event: "session", data: { id: first.id } }]);
  assert.deepEqual(changed, [{ ids: [first.id], live: false }]);

  const detail = await callJson<{ session: SessionSummary }>(app, "GET", path(first.id));
  assert.equal(detail.session.user_title, "My name");

  // only the starred, by the list's filter and search's
  const list = await callJson<{ total: number; items: SessionSummary[] }>(
    app,
    "GET",
    "/api/sessions?starred=1",
  );
  assert.deepEqual(list.items.map((s) => s.id), [first.id]);
  assert.equal(
    (await callJson<{ total: number }>(app, "GET", "/api/sessions?starred=0")).total,
    2,
  );
  const hits = await callJson<{ hits: { session_id: string; session: SessionSummary }[] }>(
    app,
    "GET",
    "/api/search?q=notes&starred=true",
  );
  assert(hits.hits.length > 0);
  assert(hits.hits.every((h) => h.session_id === first.id && h.session.user_title === "My name"));

  // a share made now is titled by the name
  const share = await callJson<{ share: { title: string } }>(
    app,
    "POST",
    `${path(first.id)}/shares`,
    201,
    { body: { days: 1 } },
  );
  assert.equal(share.share.title, "My name");

  // clearing: null or an empty string; unstarring
  const cleared = await callJson<{ session: SessionSummary }>(app, "PATCH", path(first.id), 200, {
    body: { title: "", starred: false },
  });
  assert.equal(cleared.session.user_title, null);
  assert.equal(cleared.session.starred, false);
  assert.equal(cleared.session.starred_at, null);
});

Deno.test("PATCH /api/sessions/:id refuses bad bodies and unknown sessions in the one error shape", async (t) => {
  const { app, published } = recordingApp();
  const cases: { name: string; body: unknown; status: number; code: string; id?: string }[] = [
    { name: "no field", body: {}, status: 400, code: "bad_request" },
    {
      name: "an unknown field",
      body: { starred: true, note: "x" },
      status: 400,
      code: "bad_request",
    },
    { name: "a title that is not text", body: { title: 42 }, status: 400, code: "bad_request" },
    { name: "starred not a boolean", body: { starred: "yes" }, status: 400, code: "bad_request" },
    {
      name: "a title too long",
      body: { title: "x".repeat(201) },
      status: 400,
      code: "bad_request",
    },
    { name: "not an object", body: "[1]", status: 400, code: "bad_request" },
    {
      name: "no such session",
      body: { starred: true },
      status: 404,
      code: "not_found",
      id: "claude-code:nope",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await assertApiError(
        await call(app, "PATCH", path(c.id ?? second.id), { body: c.body }),
        c.status,
        c.code,
      );
    });
  }
  assert.equal(store.getSession(second.id)?.user_title, null, "nothing was written");
  assert.equal(store.getSession(second.id)?.starred, false);
  assert.deepEqual(published, []);
  await assertApiError(await call(app, "GET", "/api/sessions?starred=yes"), 400, "bad_request");
});

Deno.test("PATCH /api/sessions/:id is refused without the token, from a foreign Origin or cross-site", async (t) => {
  const { app } = recordingApp();
  const body = { title: "Not yours", starred: true };
  await t.step("no token", async () => {
    await assertApiError(
      await call(app, "PATCH", path(second.id), { body, token: null }),
      401,
      "missing_token",
    );
  });
  await t.step("a wrong token", async () => {
    await assertApiError(
      await call(app, "PATCH", path(second.id), { body, token: "b".repeat(64) }),
      403,
      "bad_token",
    );
  });
  await t.step("a foreign Origin, with the token", async () => {
    await assertApiError(
      await call(app, "PATCH", path(second.id), { body, origin: "http://evil.example" }),
      403,
      "forbidden_origin",
    );
  });
  await t.step("cross-site, with the token", async () => {
    await assertApiError(
      await call(app, "PATCH", path(second.id), {
        body,
        headers: { "sec-fetch-site": "cross-site" },
      }),
      403,
      "forbidden_origin",
    );
  });
  await t.step("another Host", async () => {
    await assertApiError(
      await call(app, "PATCH", path(second.id), { body, host: "evil.example:4173" }),
      403,
      "forbidden_host",
    );
  });
  assert.equal(store.getSession(second.id)?.user_title, null);
  assert.equal(store.getSession(second.id)?.starred, false);
});

Deno.test("session marks API teardown", () => store.close());
