/** Stored operation docs leave out the row's own source file and get it back on reading. */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { type Operation, replayAttributes } from "../../../core/model/mod.ts";
import {
  ChronicleStore,
  type DocRow,
  prepareUnit,
  readStoredDoc,
  storedDoc,
  type StoredOp,
  storedOpColumns,
} from "../../../core/store/mod.ts";
import { recordKey } from "../../../core/sources/claude_code/seen.ts";
import { columnsOf, dbOf, operationsBefore26 } from "../../_helpers/store_db.ts";
import { scratch } from "./_sessions.ts";
import { appendClaudePrompt } from "../../e2e/_synthetic.ts";

const none = () => null;

/** The row of an operation read from `file`: its order time and line are its own. */
const rowOf = (file: string, op: Operation): DocRow => ({
  file,
  ts_ms: op.ts_ms ?? null,
  line: op.provenance.source_range.lines[0],
});

/**
 * An operation's row as the store writes it: its stored doc and the columns beside it (`at`: its
 * file, or its whole row).
 */
function stored(
  op: Operation,
  at: string | DocRow,
  payloads?: Map<string, Uint8Array>,
): StoredOp {
  const row = typeof at === "string" ? rowOf(at, op) : at;
  return {
    doc: storedDoc(op, row, payloads),
    file: row.file,
    ts_ms: row.ts_ms,
    line: row.line,
    kind: op.kind,
    effect: op.effect,
    completeness: op.completeness,
    tool: op.tool ?? null,
    target: op.target ?? null,
    model: op.model ?? null,
  };
}

const op = (callFile: string, resultFile?: string): Operation => ({
  kind: "exec",
  effect: "process",
  completeness: "complete",
  provenance: {
    epoch: 0,
    source_range: { file: callFile, lines: [3, 3], bytes: [10, 90] },
    ...(resultFile
      ? {
        completion: {
          epoch: 1,
          source_range: { file: resultFile, lines: [4, 4], bytes: [90, 200] },
        },
      }
      : {}),
  },
  replay: { replayable: true, blockers: [] },
});

Deno.test("a doc leaves out the row's own file, whichever range names it, and reads back whole", () => {
  const row = "/home/dev/.claude/projects/-p/8f2c.jsonl";
  for (
    const original of [op(row), op(row, row), op("/elsewhere.jsonl", row), op(row, "/other.jsonl")]
  ) {
    const doc = storedDoc(original, rowOf(row, original));
    assertEquals(readStoredDoc(stored(original, row), none), original);
    assertEquals(JSON.parse(doc).provenance.source_range.file === row, false);
    assert(
      !doc.includes(row) ||
        doc.split(row).length - 1 < JSON.stringify(original).split(row).length - 1,
    );
  }
  // no range in the row's file: the doc names both files
  const foreign = op("/a.jsonl", "/b.jsonl");
  const foreignDoc = JSON.parse(storedDoc(foreign, { file: row, ts_ms: null, line: 1 }));
  assertEquals(foreignDoc.provenance.source_range.file, "/a.jsonl");
  assertEquals(foreignDoc.provenance.completion.source_range.file, "/b.jsonl");
  assertEquals(readStoredDoc(stored(foreign, row), none), foreign);
});

Deno.test("a doc leaves out what its row's columns say, and reads back whole; an older doc too", () => {
  const row = "/home/dev/.codex/sessions/2026/12/04/rollout-x.jsonl";
  const full: Operation = {
    ...op(row),
    kind: "edit",
    effect: "fs_write",
    tool: "apply_patch",
    target: "src/m0.py",
    model: "gpt-5.5",
    summary: "update src/m0.py",
    ts_ms: 1767254400592,
  };
  const bare = op(row);
  for (const original of [full, bare]) {
    const s = stored(original, row);
    const doc = JSON.parse(s.doc);
    for (const f of ["kind", "effect", "completeness", "tool", "target", "model"]) {
      assert(!(f in doc), `${f} is left to its column`);
    }
    assertEquals(readStoredDoc(s, none), original);
    assertEquals(Object.keys(readStoredDoc(s, none)).sort(), Object.keys(original).sort());
    // the operation itself is left as it was
    assertEquals(original.kind, s.kind);
    // a doc an earlier Chronicle stored (every field in it) reads the same
    assertEquals(readStoredDoc({ ...s, doc: JSON.stringify(original) }, none), original);
  }
  assertEquals(full.summary, "update src/m0.py", "fields that are no column stay in the doc");
  assert(stored(full, row).doc.includes("update src/m0.py"));
});

Deno.test("a doc leaves out its time, its call's line, epoch 0 and the replay its kind gives where its row says them, and reads back whole", () => {
  const file = "/home/dev/.codex/sessions/2026/12/04/rollout-x.jsonl";
  const base: Operation = { ...op(file, file), ts_ms: 1767254400592 };
  base.provenance.completion!.epoch = 0;
  base.replay = replayAttributes(base);
  const at = (o: Operation, row: Partial<DocRow> = {}): DocRow => ({ ...rowOf(file, o), ...row });
  const shared = (): Operation => {
    const range = { file, lines: [3, 3] as [number, number], bytes: [10, 90] as [number, number] };
    return {
      ...base,
      provenance: { epoch: 0, source_range: range, completion: { epoch: 0, source_range: range } },
    };
  };
  const cases: [string, Operation, DocRow, (doc: Record<string, unknown>) => void][] = [
    ["its own time and line", base, at(base), (d) => {
      assert(!("ts_ms" in d) && !("replay" in d), JSON.stringify(d));
      const p = d.provenance as Record<string, Record<string, unknown>>;
      assert(!("epoch" in p) && !("lines" in p.source_range) && !("epoch" in p.completion));
      const completion = p.completion as { source_range: { lines: unknown } };
      assertEquals(completion.source_range.lines, [4, 4], "a completion keeps its lines");
    }],
    ["a row ordered at another time keeps the op's", base, at(base, { ts_ms: 5 }), (d) => {
      assertEquals(d.ts_ms, base.ts_ms);
    }],
    ["no time of its own in a row with one", op(file), at(op(file), { ts_ms: 5 }), (d) => {
      assertEquals(d.ts_ms, null);
    }],
    ["no time in a row without one", op(file), at(op(file)), (d) => assert(!("ts_ms" in d))],
    ["a row at another line", base, at(base, { line: 7 }), (d) => {
      assertEquals((d.provenance as { source_range: unknown }).source_range, {
        lines: [3, 3],
        bytes: [10, 90],
      });
    }],
    [
      "a call over several lines",
      {
        ...base,
        provenance: { epoch: 2, source_range: { file, lines: [3, 5], bytes: [10, 90] } },
      },
      at(base),
      (d) => {
        assertEquals(d.provenance, { epoch: 2, source_range: { lines: [3, 5], bytes: [10, 90] } });
      },
    ],
    ["a completion whose range is the call's own, one object", shared(), at(base), (d) => {
      assertEquals(d.provenance, {
        source_range: { bytes: [10, 90] },
        completion: { source_range: { bytes: [10, 90] } },
      });
    }],
    [
      "replay attributes its kind does not give",
      {
        ...base,
        replay: { replayable: false, blockers: ["out_of_scope"] },
      },
      at(base),
      (d) => assertEquals(d.replay, { replayable: false, blockers: ["out_of_scope"] }),
    ],
  ];
  for (const [name, original, row, check] of cases) {
    const before = structuredClone(original);
    const s = stored(original, row);
    check(JSON.parse(s.doc));
    assertEquals(readStoredDoc(s, none), original, name);
    assertEquals(original, before, `${name}: the operation itself is left as it was`);
    assert(!("ts_ms" in original) || original.ts_ms !== undefined, name);
  }
  // what is left out is a seventh of a doc, or more
  const whole = JSON.stringify(base).length;
  assert(
    stored(base, at(base)).doc.length < whole * 0.7,
    `${stored(base, at(base)).doc} of ${whole}`,
  );
});

Deno.test("a reply's or thinking's text that is its response payload, a prompt's that is its request, is kept once, in the payload", async (t) => {
  const row = "/home/dev/.claude/projects/-p/8f2c.jsonl";
  const text = "Done: the tests pass — ünïcode too.";
  const bytes = new TextEncoder().encode(text);
  const sha = "ab".repeat(32);
  const payloads = new Map([[sha, bytes]]);
  const reply = (kind: "reply" | "thinking", t: string): Operation => ({
    kind,
    effect: "none",
    completeness: "complete",
    text: t,
    response: { sha256: sha, size: bytes.byteLength },
    provenance: { epoch: 0, source_range: { file: row, lines: [9, 9], bytes: [0, 10] } },
    replay: { replayable: false, blockers: [] },
  });
  const read = (sha256: string) => sha256 === sha ? text : null;
  for (const kind of ["reply", "thinking"] as const) {
    await t.step(kind, () => {
      const original = reply(kind, text);
      const doc = storedDoc(original, rowOf(row, original), payloads);
      assertEquals(JSON.parse(doc).text, null);
      assert(!doc.includes("ünïcode"), "the text is not in the doc");
      assertEquals(readStoredDoc(stored(original, row, payloads), read), original);
      assertEquals(original.text, text, "the operation itself is left as it was");
    });
  }
  await t.step("a text other than its payload stays in the doc", () => {
    const other = reply("reply", "Done: the tests pass.");
    const doc = storedDoc(other, rowOf(row, other), payloads);
    assertEquals(JSON.parse(doc).text, "Done: the tests pass.");
    assertEquals(readStoredDoc(stored(other, row, payloads), read), other);
  });
  await t.step("without the payload's bytes, the text stays in the doc", () => {
    const own = reply("reply", text);
    assertEquals(JSON.parse(storedDoc(own, rowOf(row, own), new Map())).text, text);
  });
  await t.step("a tool call's text is never left out", () => {
    const call: Operation = { ...reply("reply", text), kind: "exec", effect: "process" };
    assertEquals(JSON.parse(storedDoc(call, rowOf(row, call), payloads)).text, text);
  });
  await t.step("an unreadable payload loses the text, nothing else", () => {
    const back = readStoredDoc(stored(reply("reply", text), row, payloads), none);
    assertEquals(back.text, undefined);
    assertEquals(back.response, { sha256: sha, size: bytes.byteLength });
  });
  const prompt = (request: Operation["request"]): Operation => {
    const { response: _, ...rest } = reply("reply", text);
    return { ...rest, kind: "prompt", request };
  };
  await t.step("a prompt's text that is its request payload", () => {
    const original = prompt({ sha256: sha, size: bytes.byteLength });
    const doc = storedDoc(original, rowOf(row, original), payloads);
    assertEquals(JSON.parse(doc).text, null);
    assert(!doc.includes("ünïcode"), "the text is not in the doc");
    assertEquals(readStoredDoc(stored(original, row, payloads), read), original);
  });
  await t.step("a prompt's text beside a request of other bytes (its content blocks) stays", () => {
    const blocks = new TextEncoder().encode(JSON.stringify([{ type: "text", text }]));
    const other = "cd".repeat(32);
    const original = prompt({ sha256: other, size: blocks.byteLength });
    const doc = storedDoc(original, rowOf(row, original), new Map([[other, blocks]]));
    assertEquals(JSON.parse(doc).text, text);
  });
  await t.step(
    "a reply's text is never taken from a request, nor a prompt's from a response",
    () => {
      const ref = { sha256: sha, size: bytes.byteLength };
      const asked = { ...reply("reply", text), response: undefined, request: ref };
      assertEquals(JSON.parse(storedDoc(asked, rowOf(row, asked), payloads)).text, text);
      const answered = { ...prompt(undefined), response: ref };
      assertEquals(JSON.parse(storedDoc(answered, rowOf(row, answered), payloads)).text, text);
    },
  );
});

Deno.test("a prompt's text kept in its payload is its session's first prompt, in its view and in search, in one pass or in bulk", async (t) => {
  for (const bulk of [false, true]) {
    const step = bulk ? "a bulk pass (16 logs: rows first, the search index after)" : "one log";
    await t.step(step, async () => {
      await using s = await scratch();
      await s.write("aaaaaaaa-5", ["an output"]);
      for (let i = 0; bulk && i < 15; i++) await s.write(`bbbbbbbb-${i}`, ["another output"]);
      const store = s.open();
      const summary = await s.run(store);
      assertEquals(summary.indexed > 0, bulk, "indexed after the rows, or with them");
      const db = dbOf(store);
      const prompt = "fix it, session aaaaaaaa-5";
      const session = "(SELECT num FROM sessions WHERE id LIKE '%aaaaaaaa-5')";
      const docs = db.prepare(
        `SELECT doc FROM operations WHERE kind = 'prompt' AND session = ${session}`,
      ).all() as { doc: string }[];
      assertEquals(docs.map((d) => JSON.parse(d.doc).text), [null], "the doc leaves it out");
      assert(!docs[0].doc.includes(prompt));
      const row = db.prepare(
        "SELECT id, first_prompt FROM sessions WHERE id LIKE '%aaaaaaaa-5'",
      ).get() as { id: string; first_prompt: string };
      assertEquals(row.first_prompt, prompt);
      const ops = Object.values(store.loadSession(row.id)?.operations ?? {});
      assertEquals(ops.filter((o) => o.kind === "prompt").map((o) => o.text), [prompt]);
      assertEquals(store.search("aaaaaaaa").total, 1, "found in the prompt");
      store.close();
    });
  }
});

Deno.test("an importer's big state is stored compressed and reads back as it was; an older one in text too", () => {
  const store = ChronicleStore.open(":memory:");
  const path = "/logs/big.jsonl";
  const unit = { source: "claude-code" as const, path, kind: "jsonl" as const, rank: 0 };
  const state = { v: 1, notes: Array.from({ length: 400 }, (_, i) => `note ${i}`) };
  const checkpoint = {
    kind: "jsonl" as const,
    file: path,
    offset: 0,
    line: 1,
    inode: null,
    size: 0,
    mtime_ms: null,
    tail_sha256: "",
  };
  const result = { mode: "full" as const, deltas: [], checkpoint, state, issues: [], bytesRead: 0 };
  store.applyUnit(unit, prepareUnit({ ...result, payloads: new Map() }), 0);
  const db = dbOf(store);
  const row = db.prepare("SELECT state FROM source_states WHERE path = ?").get(path) as {
    state: unknown;
  };
  assert(row.state instanceof Uint8Array, "a state of this size is a BLOB");
  assert(row.state.byteLength < JSON.stringify(state).length, "and smaller than its JSON");
  assertEquals(store.sourceState(path), state);
  // A state written by an earlier Chronicle, as JSON text, reads the same.
  db.prepare("UPDATE source_states SET state = ? WHERE path = ?").run(JSON.stringify(state), path);
  assertEquals(store.sourceState(path), state);
  store.close();
});

Deno.test("a log's seen records are kept apart from its state; appends resume from them", async () => {
  await using s = await scratch();
  const results = Array.from({ length: 150 }, (_, i) => `output ${i}`);
  const store = await s.imported("aaaaaaaa-1", results);
  const db = dbOf(store);
  const { path } = db.prepare("SELECT path FROM sources").get() as { path: string };
  const records = (await Deno.readTextFile(path)).trim().split("\n").map((l) => JSON.parse(l));
  // every record's uuid, 16 bytes each; the state itself does not hold them
  assertEquals(store.sourceSeen(path)?.byteLength, 16 * records.length);
  assert(!("seen" in (store.sourceState(path) as object)), "no keys in the state");
  const ops = store.totals().operations;
  assertEquals((await s.run(store)).sources["claude-code"].unchanged, 1);

  // an append that repeats a record (a resume) and adds a prompt: the repeat is dropped
  await Deno.writeTextFile(path, JSON.stringify(records[0]) + "\n", { append: true });
  await appendClaudePrompt(path, records[0].sessionId, "and one more thing");
  const appended = await s.run(store);
  assertEquals(appended.sources["claude-code"].appended, 1);
  assertEquals(store.totals().operations, ops + 1);
  assertEquals(store.sourceSeen(path)?.byteLength, 16 * (records.length + 1));
  // a live session, appended to pass after pass: its keys stay in a few rows, every one kept
  for (let i = 0; i < 40; i++) {
    await appendClaudePrompt(path, records[0].sessionId, `step ${i}`);
    await s.run(store);
  }
  const rows = db.prepare("SELECT count(*) AS n FROM source_seen WHERE path = ?").get(path) as {
    n: number;
  };
  assert(rows.n <= 32, `${rows.n} rows`);
  assertEquals(store.sourceSeen(path)?.byteLength, 16 * (records.length + 41));
  assertEquals(store.totals().operations, ops + 41);

  // A version-3 state (an earlier Chronicle: the keys in the state, base64) is carried over:
  // the next append gives the store every key, and the state drops them.
  const state = store.sourceState(path) as Record<string, unknown>;
  const keys = [...records.map((r) => r.uuid as string)].map(recordKey).join("");
  db.prepare("UPDATE source_states SET state = ? WHERE path = ?").run(
    JSON.stringify({ ...state, v: 3, seen: keys }),
    path,
  );
  db.prepare("DELETE FROM source_seen").run();
  await Deno.writeTextFile(path, JSON.stringify(records[1]) + "\n", { append: true });
  await appendClaudePrompt(path, records[0].sessionId, "the last thing");
  await s.run(store);
  assertEquals(store.totals().operations, ops + 42, "the repeat dropped, the prompt read");
  // the v3 keys and the new prompt's (the prompts appended before are not in those keys: the
  // state predates them, as the test made it)
  assertEquals(store.sourceSeen(path)?.byteLength, 16 * (records.length + 1));
  const after = store.sourceState(path) as { v: number; seen?: unknown };
  assertEquals([after.v, after.seen], [4, undefined]);
  store.close();
});

Deno.test("migration 17 moves the importer states out of sources; a later append resumes from them", async () => {
  await using s = await scratch();
  const results = Array.from({ length: 150 }, (_, i) => `output ${i}`);
  const store = await s.imported("aaaaaaaa-1", results);
  const db = dbOf(store);
  const { path } = db.prepare("SELECT path FROM sources").get() as { path: string };
  const state = store.sourceState(path);
  const checkpoint = JSON.stringify(store.getSource(path)?.checkpoint);
  // The sources table as version 16 left it: the state in each row.
  db.exec(`
    CREATE TABLE sources_v16 (path TEXT PRIMARY KEY, source TEXT NOT NULL,
      epoch INTEGER NOT NULL, checkpoint TEXT, state TEXT,
      sessions TEXT NOT NULL DEFAULT '[]', issues TEXT NOT NULL DEFAULT '[]',
      imported_at TEXT NOT NULL);
    INSERT INTO sources_v16 SELECT s.path, s.source, s.epoch, s.checkpoint, t.state, s.sessions,
      s.issues, s.imported_at FROM sources s LEFT JOIN source_states t USING (path);
    DROP TABLE sources; DROP TABLE source_states;
    ALTER TABLE sources_v16 RENAME TO sources;
    DELETE FROM migrations WHERE version = 17;`);
  store.close();
  const after = s.open();
  const cols = columnsOf(dbOf(after), "sources");
  assert(!cols.includes("state"), cols.join(", "));
  assertEquals(after.sourceState(path), state);
  assertEquals(JSON.stringify(after.getSource(path)?.checkpoint), checkpoint);
  const ops = after.totals().operations;
  const sid = "aaaaaaaa-1";
  await appendClaudePrompt(path, sid, "one more line");
  const again = await s.run(after);
  assertEquals(again.sources["claude-code"].appended, 1, "resumed from its checkpoint and state");
  assertEquals(after.totals().operations, ops + 1, "nothing read twice");
  after.close();
});

Deno.test("docs an earlier Chronicle stored whole read, re-read and search as before", async () => {
  await using s = await scratch();
  const store = await s.imported("aaaaaaaa-2", ["first output", "second output"]);
  const db = dbOf(store);
  const id = (db.prepare("SELECT id FROM sessions").get() as { id: string }).id;
  const before = store.loadSession(id);
  const ops = store.totals().operations;
  // every doc back to what an earlier Chronicle wrote: the columns' fields in it
  const rows = db.prepare(`SELECT rowid, ${storedOpColumns()} FROM operations`)
    .all() as unknown as (StoredOp & { rowid: number })[];
  const update = db.prepare("UPDATE operations SET doc = ? WHERE rowid = ?");
  // (texts left to their payloads come back whole, as an earlier Chronicle kept them)
  const payloadText = (sha: string) => {
    const bytes = store.payload(sha);
    return bytes && new TextDecoder().decode(bytes);
  };
  for (const r of rows) {
    const whole = readStoredDoc(r, payloadText);
    const doc = JSON.parse(storedDoc(whole, r));
    // (its ranges in the row's own log without the file, as since migration 21)
    const provenance = JSON.parse(
      JSON.stringify(whole.provenance, (k, v) => k === "file" && v === r.file ? undefined : v),
    );
    update.run(JSON.stringify({ ...whole, provenance, text: doc.text }), r.rowid);
  }
  const olds = db.prepare("SELECT doc FROM operations WHERE tool = 'Bash'").all() as {
    doc: string;
  }[];
  assert(olds.every((o) => JSON.parse(o.doc).tool === "Bash"), "the docs hold the tool again");
  assertEquals(store.loadSession(id), before, "read the same");
  // a full re-read finds every step it already has: nothing doubled, nothing left over
  await s.run(store, { full: true });
  assertEquals(store.totals().operations, ops);
  // the same steps, read again (a new epoch)
  const steps = (session: typeof before) =>
    Object.entries(session?.operations ?? {}).map(([id, op]) => [id, { ...op, provenance: 0 }]);
  assertEquals(steps(store.loadSession(id)), steps(before));
  assertEquals(store.search("step1").total, 1, "a tool input is still found");
  store.close();
});

Deno.test("migration 21 numbers the logs operations were read from; they read, re-read and stay when their log goes", async () => {
  await using s = await scratch();
  const store = await s.imported("aaaaaaaa-3", ["first output", "second output"]);
  await s.write("aaaaaaaa-4", ["other output"]);
  await s.run(store);
  const db = dbOf(store);
  const ids = (db.prepare("SELECT id FROM sessions ORDER BY id").all() as { id: string }[])
    .map((r) => r.id);
  const before = ids.map((id) => store.loadSession(id));
  const ops = store.totals().operations;
  // The operations table as version 20 left it: each row's log path in a `file` column.
  operationsBefore26(db, { fileColumn: true });
  store.close();
  const after = s.open();
  const adb = dbOf(after);
  const cols = columnsOf(adb, "operations");
  assert(!cols.includes("file") && cols.includes("file_id"), cols.join(", "));
  assertEquals(
    (adb.prepare("SELECT count(*) AS n FROM op_files").get() as { n: number }).n,
    2,
    "one log each",
  );
  assertEquals(ids.map((id) => after.loadSession(id)), before);
  // a re-read of every log finds every step where it was
  await s.run(after, { full: true });
  assertEquals(after.totals().operations, ops);
  assertEquals(
    (adb.prepare("SELECT count(*) AS n FROM op_files").get() as { n: number }).n,
    2,
    "no log numbered twice",
  );
  // a log that is gone: its operations stay, marked kept
  const paths = (adb.prepare("SELECT path FROM op_files ORDER BY path").all() as {
    path: string;
  }[]).map((r) => r.path);
  await Deno.remove(paths[0]);
  await s.run(after);
  assertEquals(after.totals().operations, ops);
  const kept = adb.prepare("SELECT count(*) AS n FROM operations WHERE kept = 1").get() as {
    n: number;
  };
  assert(kept.n > 0, "the gone log's operations are kept");
  after.close();
});

Deno.test("migration 23 numbers the logs usage was read from; tokens read and re-read as before", async () => {
  await using s = await scratch();
  const store = await s.imported("aaaaaaaa-5", ["first output", "second output"]);
  const db = dbOf(store);
  const before = usageRows(db);
  assert(before.length > 0, "the session spent tokens");
  const stats = JSON.stringify(store.stats({}));
  // The usage table as version 22 left it: each row's log path in a `file` column.
  db.exec(`
    CREATE TABLE usage_v22 (session_id TEXT NOT NULL, key TEXT NOT NULL, file TEXT NOT NULL,
      model TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
      cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, ts_ms REAL,
      PRIMARY KEY (session_id, key)) WITHOUT ROWID;
    INSERT INTO usage_v22 SELECT session_id, key, (SELECT path FROM op_files WHERE id = file_id),
      model, input, output, cache_read, cache_write, ts_ms FROM usage;
    DROP TABLE usage;
    ALTER TABLE usage_v22 RENAME TO usage;
    DELETE FROM migrations WHERE version = 23;`);
  store.close();
  const after = s.open();
  const adb = dbOf(after);
  const cols = columnsOf(adb, "usage");
  assert(!cols.includes("file") && cols.includes("file_id"), cols.join(", "));
  const again = () => usageRows(adb);
  assertEquals(again(), before);
  assertEquals(JSON.stringify(after.stats({})), stats);
  // a full re-read counts every token once
  await s.run(after, { full: true });
  assertEquals(again(), before);
  assertEquals(JSON.stringify(after.stats({})), stats);
  after.close();
});

/** Every usage row, its log by path. */
function usageRows(db: ReturnType<typeof dbOf>) {
  return db.prepare(
    `SELECT session_id, key, (SELECT path FROM op_files WHERE id = file_id) AS file, model,
       input, output, cache_read, cache_write FROM usage ORDER BY session_id, key`,
  ).all();
}

Deno.test("migration 25: an older doc of an operation without a time of its own, in a row with one, still reads without one", async () => {
  await using s = await scratch();
  const store = await s.imported("aaaaaaaa-5", ["first output", "second output"]);
  const db = dbOf(store);
  const id = (db.prepare("SELECT id FROM sessions").get() as { id: string }).id;
  const rows = db.prepare(`SELECT rowid, ${storedOpColumns()} FROM operations ORDER BY rowid`)
    .all() as unknown as (StoredOp & { rowid: number })[];
  assert(rows.length >= 3 && rows.every((r) => r.ts_ms !== null));
  // As an earlier Chronicle stored them: the first operation had no time of its own (its doc
  // said nothing of it), the second its own time in its doc.
  const [untimed, timed] = rows.map((r) => readStoredDoc(r, () => null));
  delete untimed.ts_ms;
  const whole = (op: Operation, r: StoredOp) =>
    JSON.stringify({
      ...op,
      provenance: undefined,
      ...JSON.parse(storedDoc(op, r)),
      ts_ms: op.ts_ms,
    });
  const update = db.prepare("UPDATE operations SET doc = ? WHERE rowid = ?");
  update.run(whole(untimed, rows[0]), rows[0].rowid);
  update.run(whole(timed, rows[1]), rows[1].rowid);
  assert(!("ts_ms" in JSON.parse(whole(untimed, rows[0]))));
  db.exec("DELETE FROM migrations WHERE version = 25");
  store.close();
  const after = s.open();
  const ops = Object.values(after.loadSession(id)!.operations);
  assertEquals(ops[0].ts_ms, undefined, "no time it never had");
  assertEquals(ops[1].ts_ms, timed.ts_ms);
  assertEquals(ops[1], timed);
  after.close();
});
