/**
 * A long prompt, reply or thinking (a pasted log) reaches the UI as its opening: a timeline page
 * and a live batch carry its first ROW_TEXT_CHARS characters and the whole's size
 * (`text_bytes`), and `/api/sessions/:id/text?op=` gives the whole, as plain text.
 */
import assert from "node:assert/strict";
import { ChronicleStore, importAll, readViewDoc, utf8Bytes } from "../../../core/store/mod.ts";
import type { StoredOp } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { ROW_TEXT_CHARS, type TimelineRow } from "../../../server/routes/sessions.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { claudeSessionPath, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { assertApiError, call, callJson, testApp } from "./_helpers.ts";

const SID = "12121212-3434-4565-8787-909090909090";
const ID = `claude-code:${SID}`;
// a pasted log with characters of 2, 3 and 4 bytes, ending in a word only the whole holds
const PASTED = "pasted é€😀 " + "2026-12-06 INFO served é€😀\n".repeat(3_000) + "pastedend";
// a prompt given as content blocks: its text is its doc's, not its payload's
const BLOCKS = "blocks " + "a block of text 😀 ".repeat(1_000) + "blocksend";

const store = ChronicleStore.open(":memory:");
await withTempDir("chronicle-long-text-", async (home) => {
  await writeClaudeSession(home, {
    sessionId: SID,
    cwd: "/work/demo",
    turns: [
      { user: "a short question", assistant: "a short answer" },
      { tool: { name: "Bash", input: { command: "ls" }, result: "a b" } },
      { user: PASTED },
    ],
  });
  const blocks = {
    type: "user",
    uuid: crypto.randomUUID(),
    parentUuid: null,
    sessionId: SID,
    timestamp: "2026-01-05T11:00:00Z",
    message: { role: "user", content: [{ type: "text", text: BLOCKS }] },
  };
  const path = claudeSessionPath(home, "/work/demo", SID);
  await Deno.writeTextFile(path, JSON.stringify(blocks) + "\n", { append: true });
  await importAll(store, {
    env: { home, env: {}, platform: "linux" },
    fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
  });
});
const app = testApp(store);
const enc = encodeURIComponent;

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("a timeline page carries a long text's opening and the whole's size; /text gives the whole", async () => {
  const page = await callJson<Json>(app, "GET", `/api/sessions/${enc(ID)}/timeline?limit=50`);
  const rows = page.items as TimelineRow[];
  const prompt = (start: string) => rows.find((r) => r.op.text?.startsWith(start))!;
  const short = prompt("a short question");
  assert.equal(short.text_bytes, undefined, "a short text comes whole");
  for (const [start, whole] of [["pasted", PASTED], ["blocks", BLOCKS]]) {
    const row = prompt(start);
    assert.equal(row.op.text, whole.slice(0, ROW_TEXT_CHARS), `${start}: its opening`);
    assert.equal(row.text_bytes, new TextEncoder().encode(whole).byteLength, `${start}: its size`);
    const res = await call(app, "GET", `/api/sessions/${enc(ID)}/text?op=${enc(row.op_id)}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(await res.text(), whole, `${start}: the whole, as imported`);
  }
  // the page is the size of its openings, not of the pasted log
  const bytes = new TextEncoder().encode(JSON.stringify(page)).byteLength;
  assert.ok(bytes < 4 * ROW_TEXT_CHARS * 4 + 20_000, `${bytes} bytes`);
});

Deno.test("operationText() gives a long text whole, or its opening as a timeline page does", async () => {
  const page = await callJson<Json>(app, "GET", `/api/sessions/${enc(ID)}/timeline?limit=50`);
  const rows = page.items as TimelineRow[];
  for (const [start, whole] of [["pasted", PASTED], ["blocks", BLOCKS]]) {
    const row = rows.find((r) => r.op.text?.startsWith(start))!;
    assert.equal(store.operationText(ID, row.op_id), whole, `${start}: whole`);
    assert.equal(store.operationText(ID, row.op_id, ROW_TEXT_CHARS), row.op.text, start);
    // a pair of UTF-16 units is never cut in two: PASTED's first 😀 is its units 9 and 10
    assert.equal(
      store.operationText(ID, row.op_id, 10),
      whole.slice(0, start === "pasted" ? 9 : 10),
    );
  }
  assert.equal(store.operationText(ID, "nope", 10), null);
});

Deno.test("/text answers a clear error for no operation, an unknown one, one without text and an unknown session", async () => {
  await assertApiError(await call(app, "GET", `/api/sessions/${enc(ID)}/text`), 400, "bad_request");
  await assertApiError(
    await call(app, "GET", `/api/sessions/${enc(ID)}/text?op=nope`),
    404,
    "not_found",
  );
  await assertApiError(
    await call(app, "GET", `/api/sessions/claude-code%3Anope/text?op=nope`),
    404,
    "not_found",
  );
  // a tool call has no text of its own: said so, not "no operation"
  const page = await callJson<Json>(app, "GET", `/api/sessions/${enc(ID)}/timeline?limit=50`);
  const exec = (page.items as TimelineRow[]).find((r) => r.op.kind === "exec")!;
  const res = await call(app, "GET", `/api/sessions/${enc(ID)}/text?op=${enc(exec.op_id)}`);
  assert.equal(res.status, 404);
  assert.match((await res.json()).error, /has no text, or its text cannot be read/);
});

Deno.test("a live batch carries a long text's opening too", () => {
  const changes = store.sessionChanges(ID, {
    after: { stamp: 0, rowid: 0 },
    textChars: ROW_TEXT_CHARS,
  })!;
  const long = changes.ops.filter((o) => o.text_bytes !== undefined);
  assert.equal(long.length, 2);
  for (const o of long) assert.equal(o.op.text?.length, ROW_TEXT_CHARS);
  // and asked without a bound, whole (the store's own readers)
  const whole = store.sessionChanges(ID, { after: { stamp: 0, rowid: 0 } })!;
  assert.ok(whole.ops.some((o) => o.op.text === PASTED));
  assert.ok(whole.ops.every((o) => o.text_bytes === undefined));
});

Deno.test("readViewDoc() never cuts a character beyond the first 65,536 in two; utf8Bytes() counts as UTF-8 does", () => {
  const doc = (text: string): StoredOp => ({
    doc: JSON.stringify({ text }),
    file: "f",
    kind: "prompt",
    effect: "none",
    completeness: "complete",
    tool: null,
    target: null,
    model: null,
    ts_ms: null,
    line: 1,
  });
  const text = "ab" + "😀".repeat(10);
  const none = () => null;
  // 5 units: "ab", a pair, and the high half of the next pair, which goes
  const cut = readViewDoc(doc(text), none, 5);
  assert.equal(cut.op.text, "ab😀");
  assert.equal(cut.text_bytes, 2 + 40);
  assert.deepEqual(readViewDoc(doc("short"), none, 5), {
    op: readViewDoc(doc("short"), none, 9).op,
  });
  const samples = ["", "ascii", "é€😀", "\uD83D lone high", "lone low \uDE00", "x\uD83D"];
  for (const s of samples) assert.equal(utf8Bytes(s), new TextEncoder().encode(s).byteLength, s);
});
