/**
 * `GET /share/<token>` and the share / export API, in process: the page needs no install
 * token, is escaped HTML under a strict CSP with `noindex`; unknown, expired and revoked tokens
 * get one identical 404 in the same time; 1,000 random tokens get 1,000 identical 404s; views
 * count; a revoked link is gone at once.
 */
import { documentOf, EXPORT_CSP } from "../../../core/export/mod.ts";
import { createShare, revokeShare, type ShareDeps } from "../../../core/shares/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { assertApiError, call, callJson, fixtureStore, testApp } from "./_helpers.ts";

const store = await fixtureStore(["claude/s6-subagent", "claude/s2-errors"]);
const sessionId = store.listSessions().items[0].id;
const app = testApp(store);

/** Everything a client can see of a response but its timing. */
async function visible(res: Response) {
  return {
    status: res.status,
    headers: [...res.headers].filter(([k]) => k !== "date").sort(),
    body: await res.text(),
  };
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

function refusedTokens(n: number) {
  const records = store.shareTable;
  const doc = documentOf(store, sessionId)!;
  const past = Date.now() - 30 * 86_400_000;
  const expired = Array.from(
    { length: n },
    () => createShare({ records, now: () => new Date(past) }, doc, { days: 1 }).token,
  );
  const deps: ShareDeps = { records };
  const revoked = Array.from({ length: n }, () => {
    const made = createShare(deps, doc);
    revokeShare(deps, made.share.id);
    return made.token;
  });
  const unknown = Array.from({ length: n }, randomToken);
  return { unknown, expired, revoked };
}

Deno.test("a share page opens without the install token, escaped, under a strict CSP, noindex", async () => {
  const made = await callJson<{ path: string; share: { id: string } }>(
    app,
    "POST",
    `/api/sessions/${encodeURIComponent(sessionId)}/shares`,
    201,
    { body: { days: 3 } },
  );
  const res = await call(app, "GET", made.path, { token: null });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-security-policy"), `${EXPORT_CSP}; frame-ancestors 'none'`);
  assertEquals(res.headers.get("x-robots-tag"), "noindex, nofollow, noarchive");
  assertEquals(res.headers.get("cache-control"), "no-store");
  assertEquals(res.headers.get("referrer-policy"), "no-referrer");
  assertEquals(res.headers.get("content-type"), "text/html; charset=utf-8");
  const html = await res.text();
  assertStringIncludes(html, '<meta name="robots" content="noindex, nofollow">');
  assert(!/<script/i.test(html), "no script");
  assertStringIncludes(html, "Shared from Chronicle");
  // The install token is never in a share page.
  assert(!html.includes("a".repeat(64)));
  // A foreign Host is still refused: the exemption is only from the install token.
  await assertApiError(
    await call(app, "GET", made.path, { host: "evil.example:4173" }),
    403,
    "forbidden_host",
  );
  // GET only, with or without the install token.
  await assertApiError(
    await call(app, "POST", made.path, { token: null }),
    405,
    "method_not_allowed",
  );
  await assertApiError(await call(app, "POST", made.path), 405, "method_not_allowed");
  // Every other page and the API still need the install token.
  await assertApiError(
    await call(app, "GET", "/api/shares", { token: null }),
    401,
    "missing_token",
  );
});

Deno.test("1,000 random tokens get 1,000 identical 404s", async () => {
  const first = await visible(await call(app, "GET", `/share/${randomToken()}`));
  assertEquals(first.status, 404);
  assertStringIncludes(first.body, "does not exist, has expired or was revoked");
  for (let i = 0; i < 999; i++) {
    assertEquals(await visible(await call(app, "GET", `/share/${randomToken()}`)), first);
  }
  // Malformed tokens get the same page.
  for (const t of ["", "x", "%00", "a".repeat(5000), "..%2F..%2Fetc"]) {
    assertEquals(await visible(await call(app, "GET", `/share/${t}`)), first, t);
  }
});

Deno.test("unknown, expired and revoked tokens look the same: status, headers, body and time", async () => {
  const n = 300;
  const tokens = refusedTokens(n);
  const answers = await Promise.all(
    Object.values(tokens).map(async (list) =>
      await visible(await call(app, "GET", `/share/${list[0]}`))
    ),
  );
  assertEquals(answers[1], answers[0]);
  assertEquals(answers[2], answers[0]);
  // Interleaved rounds, so the machine's noise falls on every kind alike.
  const times: Record<string, number[]> = { unknown: [], expired: [], revoked: [] };
  for (let i = 0; i < n; i++) {
    for (const kind of ["unknown", "expired", "revoked"] as const) {
      const t0 = performance.now();
      const res = await call(app, "GET", `/share/${tokens[kind][i]}`);
      await res.arrayBuffer();
      times[kind].push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medians = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  const spread = Math.max(...Object.values(medians)) / Math.min(...Object.values(medians));
  console.log(
    `share 404 medians (µs): ${
      Object.entries(medians).map(([k, v]) => `${k} ${(v * 1000).toFixed(0)}`).join(", ")
    }; spread ${spread.toFixed(2)}x`,
  );
  assert(
    spread < 10,
    `median times differ by ${spread.toFixed(1)}x (same order of magnitude expected)`,
  );
});

Deno.test("views count, and a revoked share is gone at once", async () => {
  const made = await callJson<{ path: string; share: { id: string } }>(
    app,
    "POST",
    `/api/sessions/${encodeURIComponent(sessionId)}/shares`,
    201,
    { body: {} },
  );
  for (let i = 0; i < 3; i++) assertEquals((await call(app, "GET", made.path)).status, 200);
  const list = await callJson<{ items: { id: string; views: number; state: string }[] }>(
    app,
    "GET",
    `/api/shares?session=${encodeURIComponent(sessionId)}`,
  );
  const row = list.items.find((s) => s.id === made.share.id)!;
  assertEquals(row.views, 3);
  assertEquals(row.state, "live");
  const revoked = await callJson<{ share: { state: string } }>(
    app,
    "DELETE",
    `/api/shares/${made.share.id}`,
  );
  assertEquals(revoked.share.state, "revoked");
  const after = await visible(await call(app, "GET", made.path));
  assertEquals(after, await visible(await call(app, "GET", `/share/${randomToken()}`)));
  await assertApiError(await call(app, "DELETE", `/api/shares/shr_unknown`), 404, "not_found");
});

Deno.test("making or revoking a share needs the install token", async () => {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/shares`;
  await assertApiError(
    await call(app, "POST", path, { token: null, body: {} }),
    401,
    "missing_token",
  );
  await assertApiError(
    await call(app, "DELETE", "/api/shares/x", { token: null }),
    401,
    "missing_token",
  );
  await assertApiError(await call(app, "POST", path, { body: { days: 0 } }), 400, "bad_request");
  await assertApiError(await call(app, "POST", path, { body: { days: "7" } }), 400, "bad_request");
  await assertApiError(
    await call(app, "POST", "/api/sessions/nope/shares", { body: {} }),
    404,
    "not_found",
  );
});

Deno.test("the redaction preview and the downloads", async () => {
  const base = `/api/sessions/${encodeURIComponent(sessionId)}`;
  const preview = await callJson<{ redaction: { enabled: boolean; total: number } }>(
    app,
    "GET",
    `${base}/redaction`,
  );
  assertEquals(preview.redaction.enabled, true);
  assertEquals(typeof preview.redaction.total, "number");
  for (const [format, type] of [["md", "text/markdown"], ["html", "text/html"]]) {
    const res = await call(app, "GET", `${base}/export?format=${format}`);
    assertEquals(res.status, 200);
    assert(res.headers.get("content-type")!.startsWith(type));
    assert(
      /^attachment; filename="[a-z0-9-]+\.(md|html)"$/.test(
        res.headers.get("content-disposition")!,
      ),
    );
    assertStringIncludes(res.headers.get("content-security-policy")!, "sandbox");
    assert((await res.text()).length > 500);
  }
  await assertApiError(await call(app, "GET", `${base}/export?format=pdf`), 400, "bad_request");
  await assertApiError(await call(app, "GET", `/api/sessions/nope/export`), 404, "not_found");
});

Deno.test("share route teardown", () => store.close());
