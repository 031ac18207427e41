/** Host, Origin and token checks, route by route, and the one error shape. */
import assert from "node:assert/strict";
import { assertApiError, call, fixtureStore, PORT, testApp, TOKEN } from "./_helpers.ts";
import { fakeSecurity } from "./_fake_security.ts";
import { checkRequest, PUBLIC_PATHS } from "../../../server/auth.ts";

const store = await fixtureStore(["claude/s1-basic"]);
const SID = encodeURIComponent(store.listSessions({}).items[0].id);

/** Every API route with a request that succeeds when it is allowed. */
const ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: "GET", path: "/api/health" },
  { method: "GET", path: "/api/projects" },
  { method: "GET", path: "/api/sessions" },
  { method: "GET", path: `/api/sessions/${SID}` },
  { method: "GET", path: `/api/sessions/${SID}/timeline` },
  { method: "GET", path: `/api/sessions/${SID}/stats` },
  { method: "PATCH", path: `/api/sessions/${SID}`, body: { starred: true } },
  { method: "GET", path: "/api/search?q=notes" },
  { method: "GET", path: "/api/analytics" },
  { method: "GET", path: "/api/security/rules" },
  { method: "GET", path: "/api/security/interceptions" },
  { method: "GET", path: "/api/security/guard" },
  { method: "POST", path: "/api/security/rules", body: { pattern: "corp-*", action: "redact" } },
  { method: "PATCH", path: "/api/security/rules/r1", body: { enabled: false } },
  { method: "DELETE", path: "/api/security/rules/r1" },
  { method: "POST", path: "/api/security/check", body: {} },
  { method: "POST", path: "/api/security/guard/install", body: { dry_run: true } },
  { method: "POST", path: "/api/security/guard/uninstall", body: { dry_run: true } },
  { method: "GET", path: "/" },
];
const CHANGING = ROUTES.filter((r) => r.method !== "GET");

function appWithUi() {
  return testApp(store, {
    security: fakeSecurity(),
    static: () => Promise.resolve(new Response("<!doctype html>")),
  });
}

Deno.test("every route refuses a Host that is not this loopback server", async (t) => {
  const app = appWithUi();
  for (
    const host of ["evil.example:4173", "127.0.0.1:9999", "localhost.evil.example", "0.0.0.0:4173"]
  ) {
    for (const r of ROUTES) {
      await t.step(`${host} ${r.method} ${r.path}`, async () => {
        await assertApiError(
          await call(app, r.method, r.path, { host, body: r.body }),
          403,
          "forbidden_host",
        );
      });
    }
  }
});

Deno.test("loopback names with the server's port are accepted", async (t) => {
  const app = appWithUi();
  for (
    const host of [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`, `LOCALHOST:${PORT}`]
  ) {
    await t.step(host, async () => {
      const res = await call(app, "GET", "/api/health", { host });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });
  }
});

Deno.test("every route, reads and the page included, refuses a request without the token", async (t) => {
  const app = appWithUi();
  for (const r of ROUTES) {
    await t.step(`${r.method} ${r.path}`, async () => {
      const res = await call(app, r.method, r.path, { body: r.body, token: null });
      if (r.path.startsWith("/api/")) await assertApiError(res, 401, "missing_token");
      else {
        assert.equal(res.status, 401);
        assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
        assert.match(await res.text(), /chronicle open/);
      }
    });
  }
});

Deno.test("every route refuses a wrong token", async (t) => {
  const app = appWithUi();
  for (const r of ROUTES.filter((r) => r.path.startsWith("/api/"))) {
    await t.step(`${r.method} ${r.path}`, async () => {
      const res = await call(app, r.method, r.path, { body: r.body, token: "b".repeat(64) });
      await assertApiError(res, 403, "bad_token");
    });
  }
});

Deno.test("a state-changing request from a foreign Origin is refused even with the token", async (t) => {
  const app = appWithUi();
  for (
    const origin of [
      "http://evil.example",
      `http://127.0.0.1:${PORT + 1}`,
      "null",
      `https://localhost:${PORT}`,
    ]
  ) {
    for (const r of CHANGING) {
      await t.step(`${origin} ${r.method} ${r.path}`, async () => {
        const res = await call(app, r.method, r.path, { body: r.body, origin });
        await assertApiError(res, 403, "forbidden_origin");
      });
    }
  }
});

Deno.test("a cross-site fetch is refused even without an Origin header", async () => {
  const app = appWithUi();
  const res = await call(app, "POST", "/api/security/check", {
    body: {},
    headers: { "sec-fetch-site": "cross-site" },
  });
  await assertApiError(res, 403, "forbidden_origin");
});

Deno.test("the token is accepted as a bearer Authorization header and from a loopback Origin", async () => {
  const app = appWithUi();
  const res = await call(app, "POST", "/api/security/check", {
    body: {},
    token: null,
    origin: `http://localhost:${PORT}`,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(res.status, 200, await res.text());
});

Deno.test("every route answers its owner: the token in the header", async (t) => {
  const app = appWithUi();
  for (const r of ROUTES.filter((r) => r.method === "GET")) {
    await t.step(r.path, async () => {
      const res = await call(app, r.method, r.path);
      assert.equal(res.status, 200, `${r.path}: ${await res.clone().text()}`);
      await res.body?.cancel();
    });
  }
});

Deno.test("no response ever contains the token", async (t) => {
  const app = appWithUi();
  for (const r of ROUTES) {
    await t.step(`${r.method} ${r.path}`, async () => {
      const res = await call(app, r.method, r.path, { body: r.body });
      const text = await res.text();
      assert.ok(!text.includes(TOKEN), "body");
      for (const [k, v] of res.headers) assert.ok(!v.includes(TOKEN), `header ${k}`);
    });
  }
  const signIn = await call(app, "GET", `/?token=${TOKEN}`, { token: null });
  for (const [k, v] of signIn.headers) assert.ok(!v.includes(TOKEN), `sign-in header ${k}`);
});

Deno.test("the printed URL is traded for an HttpOnly SameSite=Strict cookie and a clean URL", async () => {
  const app = appWithUi();
  const res = await call(app, "GET", `/sessions/x?op=o1&token=${TOKEN}`, { token: null });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/sessions/x?op=o1");
  const cookie = res.headers.get("set-cookie") ?? "";
  assert.match(cookie, /^chronicle_4173=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\/$/);
  const pair = cookie.split(";")[0];
  // the cookie now opens every route, reads and writes (from the page's own origin)
  const page = await call(app, "GET", "/", { token: null, headers: { cookie: pair } });
  assert.equal(page.status, 200);
  await page.body?.cancel();
  const list = await call(app, "GET", "/api/sessions", { token: null, headers: { cookie: pair } });
  assert.equal(list.status, 200);
  await list.body?.cancel();
  const write = await call(app, "POST", "/api/security/check", {
    body: {},
    token: null,
    origin: `http://127.0.0.1:${PORT}`,
    headers: { cookie: pair },
  });
  assert.equal(write.status, 200, await write.text());
  // another port's cookie, or a forged one, opens nothing
  for (const bad of [pair.replace("4173", "4174"), "chronicle_4173=" + "0".repeat(64)]) {
    const res = await call(app, "GET", "/api/sessions", { token: null, headers: { cookie: bad } });
    await assertApiError(res, 401, "missing_token");
  }
});

Deno.test("a wrong or partial token in the URL is refused with the page, not traded", async () => {
  const app = appWithUi();
  for (const t of [TOKEN.slice(0, -1), "x", TOKEN + "a"]) {
    const res = await call(app, "GET", `/?token=${t}`, { token: null });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get("set-cookie"), null);
    await res.body?.cancel();
  }
  // the URL token is for pages: the API takes the header
  const api = await call(app, "GET", `/api/sessions?token=${TOKEN}`, { token: null });
  assert.equal(api.status, 403);
  await api.body?.cancel();
});

Deno.test("a body over 1 MiB is refused while it streams, without being read whole", async () => {
  const app = appWithUi();
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024).fill(32);
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled += chunk.byteLength;
      if (pulled > 64 << 20) c.close();
      else c.enqueue(chunk);
    },
  });
  const res = await app(
    new Request(`http://127.0.0.1:${PORT}/api/security/rules`, {
      method: "POST",
      headers: { host: `127.0.0.1:${PORT}`, "x-chronicle-token": TOKEN },
      body,
    }),
  );
  await assertApiError(res, 413, "payload_too_large");
  assert.ok(pulled <= (1 << 20) + 4 * chunk.byteLength, `pulled ${pulled} bytes`);
});

Deno.test("unknown routes and wrong methods answer in the error shape", async (t) => {
  const app = appWithUi();
  const cases = [
    { name: "unknown API path", method: "GET", path: "/api/nope", status: 404, code: "not_found" },
    {
      name: "wrong method",
      method: "DELETE",
      path: "/api/sessions",
      status: 405,
      code: "method_not_allowed",
    },
    {
      name: "POST to a page",
      method: "POST",
      path: "/sessions",
      status: 405,
      code: "method_not_allowed",
    },
    {
      name: "unknown session",
      method: "GET",
      path: "/api/sessions/nope",
      status: 404,
      code: "not_found",
    },
    {
      name: "bad limit",
      method: "GET",
      path: "/api/sessions?limit=x",
      status: 400,
      code: "bad_request",
    },
    {
      name: "bad sort",
      method: "GET",
      path: "/api/sessions?sort=evil",
      status: 400,
      code: "bad_request",
    },
    {
      name: "bad date",
      method: "GET",
      path: "/api/sessions?from=yesterday",
      status: 400,
      code: "bad_request",
    },
    {
      name: "bad percent-encoding",
      method: "GET",
      path: "/api/sessions/%E0%A4%A",
      status: 400,
      code: "bad_request",
    },
    {
      name: "bad payload id",
      method: "GET",
      path: "/api/payloads/xyz",
      status: 400,
      code: "bad_request",
    },
    {
      name: "unknown payload",
      method: "GET",
      path: `/api/payloads/${"0".repeat(64)}`,
      status: 404,
      code: "not_found",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await assertApiError(await call(app, c.method, c.path), c.status, c.code);
    });
  }
});

Deno.test("without a security engine the security routes answer 503 in the error shape", async () => {
  const app = testApp(store);
  await assertApiError(await call(app, "GET", "/api/security/rules"), 503, "unavailable");
});

Deno.test("a token that is a prefix or an extension of the install token is refused", async (t) => {
  const app = appWithUi();
  const near = {
    "the token less its last character": TOKEN.slice(0, -1),
    "the first half of the token": TOKEN.slice(0, TOKEN.length / 2),
    "one character": TOKEN[0],
    "the token and one more character": TOKEN + "a",
    "the token with its last character changed": TOKEN.slice(0, -1) + "b",
  };
  for (const [name, token] of Object.entries(near)) {
    await t.step(name, async () => {
      const res = await call(app, "POST", "/api/security/check", { body: {}, token });
      await assertApiError(res, 403, "bad_token");
    });
  }
  await t.step("the token itself is accepted", async () => {
    const res = await call(app, "POST", "/api/security/check", { body: {}, token: TOKEN });
    assert.equal(res.status, 200, await res.text());
  });
});

Deno.test("a public path (the share route's seam) needs no token, but still this Host", () => {
  const opts = { port: PORT, token: TOKEN, publicPaths: [/^\/share\/[^/]+$/] };
  const req = (path: string, host = `127.0.0.1:${PORT}`) =>
    new Request(`http://127.0.0.1:${PORT}${path}`, { headers: { host } });
  assert.deepEqual(checkRequest(req("/share/abc"), opts), { kind: "ok" });
  assert.throws(() => checkRequest(req("/share/abc/x"), opts), /needs the install token/);
  assert.throws(() => checkRequest(req("/api/sessions"), opts), /needs the install token/);
  assert.throws(() => checkRequest(req("/share/abc", "evil.example"), opts), /is not this server/);
  assert.deepEqual(
    PUBLIC_PATHS.map(String),
    [String(/^\/share\/[^/]*$/)],
    "share pages are the one public path",
  );
});
