/**
 * Share links over the store: a 32-byte URL-safe token kept only as its SHA-256, the redacted
 * document frozen at creation (a later rule does not change it; what was redacted is not in
 * the row), view counts, expiry, and revocation that ends the link at once.
 */
import { documentOf } from "../../../core/export/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import {
  createShare,
  listShares,
  openShare,
  openSharedDocument,
  revokeShare,
  SHARE_TOKEN_LENGTH,
  type ShareDeps,
  sharePage,
  sharePageChunks,
  shareState,
  tokenHash,
  validDays,
} from "../../../core/shares/mod.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";
import { gunzipSync, gzipSync } from "node:zlib";

const store = await fixtureStore(["claude/s6-subagent"]);
const id = store.listSessions().items[0].id;

function clock(start = Date.parse("2026-03-01T12:00:00Z")) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
}

Deno.test("a share token is 32 random bytes, URL-safe, and only its SHA-256 is stored", () => {
  const deps: ShareDeps = { records: store.shareTable };
  const doc = documentOf(store, id)!;
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const made = createShare(deps, doc);
    assertEquals(made.token.length, SHARE_TOKEN_LENGTH);
    assert(/^[A-Za-z0-9_-]{43}$/.test(made.token), made.token);
    assertEquals(made.path, `/share/${made.token}`);
    seen.add(made.token);
    const row = dbOf(store).prepare("SELECT * FROM shares WHERE id = ?").get(
      made.share.id,
    ) as Record<
      string,
      unknown
    >;
    assertEquals(row.token_sha256, sha256Hex(made.token));
    for (const [k, v] of Object.entries(row)) {
      const text = v instanceof Uint8Array ? new TextDecoder().decode(gunzipSync(v)) : String(v);
      assert(!text.includes(made.token), `column ${k} holds the token`);
    }
  }
  assertEquals(seen.size, 50);
  dbOf(store).exec("DELETE FROM shares");
});

Deno.test("a share freezes the redacted copy: a later rule changes nothing and the secret is gone", () => {
  const deps: ShareDeps = { records: store.shareTable };
  const rules = [{
    id: "r",
    name: "project",
    pattern: "inventory-*",
    action: "redact" as const,
    enabled: true,
  }];
  const made = createShare(deps, documentOf(store, id, { rules })!);
  const blob = dbOf(store).prepare("SELECT document FROM shares WHERE id = ?").get(
    made.share.id,
  ) as {
    document: Uint8Array;
  };
  const frozen = new TextDecoder().decode(gunzipSync(blob.document));
  assert(!frozen.includes("inventory-api"), "the redacted text is not in the row");
  // kept as lines: the document's head first, then a step a line
  const head = JSON.parse(frozen.slice(0, frozen.indexOf("\n")));
  assertEquals(head.redaction.samples, []);
  // Rules change afterwards: the share still shows what it showed.
  const first = JSON.stringify(openShare(deps, made.token));
  assertEquals(JSON.stringify(openShare(deps, made.token)), first);
  assert(first.includes("****"), "the rule's replacement is in the frozen copy");
  assertEquals(made.share.findings, head.redaction.total);
  dbOf(store).exec("DELETE FROM shares");
});

Deno.test("an unredacted document cannot be shared", () => {
  const deps: ShareDeps = { records: store.shareTable };
  assertThrows(() => createShare(deps, documentOf(store, id, { redact: false })!));
});

Deno.test("opening counts views; revoking ends the link at once and drops its copy", () => {
  const c = clock();
  const deps: ShareDeps = { records: store.shareTable, now: c.now };
  const made = createShare(deps, documentOf(store, id)!, { days: 7 });
  for (let i = 1; i <= 3; i++) {
    assert(openShare(deps, made.token));
    assertEquals(deps.records.get(made.share.id)!.views, i);
  }
  assertEquals(deps.records.get(made.share.id)!.last_viewed_at, c.now().toISOString());
  const revoked = revokeShare(deps, made.share.id);
  assertEquals(shareState(revoked, c.now()), "revoked");
  assertEquals(openShare(deps, made.token), null);
  assertEquals(deps.records.get(made.share.id)!.views, 3, "a refused open counts nothing");
  const blob = dbOf(store).prepare("SELECT length(document) AS n FROM shares WHERE id = ?").get(
    made.share.id,
  ) as { n: number };
  assertEquals(blob.n, 0);
  assertThrows(() => revokeShare(deps, "shr_nope"));
  dbOf(store).exec("DELETE FROM shares");
});

Deno.test("a share expires after its days", () => {
  const c = clock();
  const deps: ShareDeps = { records: store.shareTable, now: c.now };
  const made = createShare(deps, documentOf(store, id)!, { days: 2 });
  assertEquals(made.share.expires_at, new Date(c.now().getTime() + 2 * 86_400_000).toISOString());
  c.advance(2 * 86_400_000 - 1);
  assert(openShare(deps, made.token));
  c.advance(1);
  assertEquals(openShare(deps, made.token), null);
  assertEquals(shareState(deps.records.get(made.share.id)!, c.now()), "expired");
  // Listing drops the expired copy; the row and its counts stay.
  const before = dbOf(store).prepare("SELECT length(document) AS n FROM shares WHERE id = ?");
  assert((before.get(made.share.id) as { n: number }).n > 0);
  assertEquals(listShares(deps).map((r) => r.id), [made.share.id]);
  assertEquals((before.get(made.share.id) as { n: number }).n, 0);
  dbOf(store).exec("DELETE FROM shares");
});

Deno.test("share days are whole numbers from 1 to 365", async (t) => {
  for (const ok of [1, 7, 365]) {
    await t.step(`${ok} is fine`, () => assertEquals(validDays(ok), ok));
  }
  for (const bad of [0, -1, 1.5, 366, NaN]) {
    await t.step(`${bad} is refused`, () => void assertThrows(() => validDays(bad)));
  }
});

Deno.test("tokenHash() is the SHA-256 of the token's text", () => {
  assertEquals(
    tokenHash("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

Deno.test("a share made before its document was kept as lines opens and renders as it did", () => {
  const deps: ShareDeps = { records: store.shareTable };
  const made = createShare(deps, documentOf(store, id)!);
  const doc = openShare(deps, made.token)!;
  assert(doc.steps.length > 3);
  const page = sharePage(doc);
  assertEquals([...sharePageChunks(openSharedDocument(deps, made.token)!)].join(""), page);
  // the old layout: the whole document as one JSON text
  dbOf(store).prepare("UPDATE shares SET document = ? WHERE id = ?").run(
    gzipSync(JSON.stringify(doc)),
    made.share.id,
  );
  assertEquals(openShare(deps, made.token), doc);
  assertEquals([...sharePageChunks(openSharedDocument(deps, made.token)!)].join(""), page);
});

Deno.test("shares teardown", () => store.close());
