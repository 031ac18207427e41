/**
 * A big session loaded, analysed and redacted a page at a time (`loadSessionInTurns`,
 * `gatherSession`, `buildDocumentInTurns`, core/paged.ts's `pagedTurns`): the same answers
 * as in one go, and the server answers other requests between the pages.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { ChronicleStore, importAll, inProcessRunner } from "../../../core/store/mod.ts";
import { collectOnGrowth, PAGE_STEPS } from "../../../core/paged.ts";
import { RELEASE_ABOVE } from "../../../core/gc.ts";
import { countingCollections } from "../../_helpers/gc_trace.ts";
import { sessionFacts } from "../../../core/causality/mod.ts";
import { gatherSession } from "../../../core/timetravel/mod.ts";
import { buildDocument, buildDocumentInTurns } from "../../../core/export/document.ts";
import { createRedactor } from "../../../core/export/redactor.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { appendClaudePrompt, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { call, callJson, fixtureStore, testApp } from "./_helpers.ts";
import { oneAtATime, type SessionWork } from "../../../server/session_work.ts";
import {
  DOCUMENT_FORMATS,
  documentInTurns,
  documentOf,
  type ExportDocument,
  renderDocument,
  type SteppedDocument,
} from "../../../core/export/mod.ts";
import { copyTree, FIXTURES } from "../../_helpers/fixtures.ts";
import { RuleStore } from "../../../core/security/mod.ts";
import { openShare, SHARE_PATH, sharePage } from "../../../core/shares/mod.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { FakeSecrets } from "../security/_fake_secrets.ts";
import type { GitEngine } from "../../../core/git/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";

const KEY = new FakeSecrets(3).github();

const GONE = {
  repo: () => Promise.reject(new ChronicleError("not_found", "gone")),
} as unknown as GitEngine;

/** A session of 2 × `calls` + 1 steps: reads and edits of 20 files, one with a key in it. */
async function bigSession(calls: number) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-paged-" });
  const sid = "0b16b16b-1111-4222-8333-444455556666";
  const path = await writeClaudeSession(home, {
    sessionId: sid,
    cwd: "/work/demo",
    turns: [
      { user: "make every file better" },
      ...Array.from({ length: calls }, (_, i) => [
        {
          tool: {
            name: "Read",
            input: { file_path: `/work/demo/f${i % 20}.ts` },
            result: `export const v${i} = ${i}; // token ${KEY}`,
          },
        },
        {
          tool: {
            name: "Edit",
            input: {
              file_path: `/work/demo/f${i % 20}.ts`,
              old_string: `v${i} = ${i}`,
              new_string: `v${i} = ${i + 1}`,
            },
            result: "The file has been updated.",
          },
        },
      ]).flat(),
    ],
  });
  const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
  const store = ChronicleStore.open(":memory:");
  const options = { env: { home, env: {}, platform: "linux" as const }, fs };
  await importAll(store, { ...options, runner: inProcessRunner(fs) });
  const id = store.listSessions({ limit: 1 }).items[0].id;
  return {
    store,
    id,
    /** Appends a prompt to the log and imports it: a step written while a load is under way. */
    grow: async (text: string) => {
      await appendClaudePrompt(path, sid, text);
      await importAll(store, options);
    },
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

const strip = (v: unknown) => JSON.parse(JSON.stringify(v));

Deno.test("a session loaded a page at a time is the session loaded at once", async () => {
  await using big = await bigSession(1300);
  const ops = big.store.getSession(big.id)!.op_count;
  assert(ops > 2 * PAGE_STEPS, `${ops} steps`);
  for (const textChars of [undefined, 1000]) {
    let turns = 0;
    const paged = await big.store.loadSessionInTurns(big.id, {
      textChars,
      turn: () => Promise.resolve(turns++),
    });
    assertEquals(turns, Math.ceil(ops / PAGE_STEPS) - 1, "a turn between pages");
    assertEquals(strip(paged), strip(big.store.loadSession(big.id, { textChars })));
  }
  // every real agent CLI's recordings too (a page or less each)
  const fixtures = await fixtureStore(["claude/s4-long", "codex/s4-long", "gemini/s4-long"]);
  try {
    for (const s of fixtures.listSessions().items) {
      const paged = await fixtures.loadSessionInTurns(s.id, { turn: () => Promise.resolve() });
      assertEquals(strip(paged), strip(fixtures.loadSession(s.id)), s.id);
    }
    assertEquals(
      await fixtures.loadSessionInTurns("nope", { turn: () => Promise.resolve() }),
      null,
    );
  } finally {
    fixtures.close();
  }
});

Deno.test("a step written between two pages of a load is never given twice", async () => {
  await using big = await bigSession(600);
  let grown = false;
  const paged = await big.store.loadSessionInTurns(big.id, {
    turn: async () => {
      if (grown) return;
      grown = true;
      await big.grow("one more prompt, written mid-load");
    },
  });
  assert(grown);
  const ids = paged!.timeline.map((t) => t.op);
  assertEquals(new Set(ids).size, ids.length, "no step twice");
  const now = big.store.loadSession(big.id)!;
  assert(ids.every((id) => id in now.operations), "every step is one the store holds");
});

/** A document with its steps read into an array. */
const whole = (doc: SteppedDocument): ExportDocument => ({ ...doc, steps: [...doc.steps] });

Deno.test("facts and the export document a page at a time are the ones made at once", async () => {
  await using big = await bigSession(1300);
  const session = big.store.loadSession(big.id)!;
  const read = (ref: Parameters<ChronicleStore["payloadText"]>[0], max?: number) =>
    big.store.payloadText(ref, max);
  let turns = 0;
  const turn = () => Promise.resolve(turns++);
  // as the server's causality reads them: its parts, a turn after each
  const gathered = await gatherSession(big.store.sessionParts(big.id), read, turn);
  assertEquals(strip(gathered!.facts), strip(sessionFacts(session, read)));
  assert(turns >= 2, `${turns} turns while reading facts`);
  const text = (sha: string) => big.store.payloadText({ sha256: sha, size: 0 });
  const now = () => new Date(0);
  const once = buildDocument(session, text, { redactor: createRedactor(), now });
  turns = 0;
  const paged = await buildDocumentInTurns(session, text, {
    redactor: createRedactor(),
    now,
    turn,
  });
  assert(turns >= 2, `${turns} turns while building the document`);
  // its steps packed as built, read back one at a time, as often as asked
  assert(!Array.isArray(paged.steps));
  assertEquals(whole(paged), once);
  assertEquals(whole(paged), once);
  assert(paged.redaction.total >= 1300, "every key found");
});

Deno.test("an export document built from the store's outline and pages is the one built from the session loaded whole", async () => {
  const root = `${FIXTURES}/realclients`;
  const scenarios = [...Deno.readDirSync(root)].filter((a) => a.isDirectory).flatMap((a) =>
    [...Deno.readDirSync(`${root}/${a.name}`)].filter((s) => s.isDirectory)
      .map((s) => `${a.name}/${s.name}`)
  ).sort();
  const peers = `${FIXTURES}/peers/claude-code/constructed/teammate_layout`;
  const home = await Deno.makeTempDir({ prefix: "chronicle-paged-peers-" });
  await copyTree(peers, `${home}/.claude/projects/-work-team`);
  const fixtures = await fixtureStore(scenarios, [home]);
  await using big = await bigSession(1300);
  const now = () => new Date(0);
  const rules = [{
    id: "r",
    name: "word",
    pattern: "better",
    action: "redact" as const,
    enabled: true,
  }];
  let threads = 0;
  let guessed = 0;
  let alone = 0;
  // the threads' parents as their logs named them; then only as the spawning calls name them
  // (the rows' parent left out); then guessed by time (the calls' names left out too)
  const rounds = [
    () => {},
    () => dbOf(fixtures).exec("UPDATE connections SET doc = json_remove(doc, '$.parent_op')"),
    () => dbOf(fixtures).exec("UPDATE operations SET doc = json_remove(doc, '$.spawns')"),
    // and no call to guess from: each thread stands alone where it began
    () => dbOf(fixtures).exec("UPDATE operations SET kind = 'exec' WHERE kind = 'task'"),
  ];
  try {
    for (
      const [store, round] of [[big.store, 0], [fixtures, 0], [fixtures, 1], [fixtures, 2], [
        fixtures,
        3,
      ]] as const
    ) {
      rounds[round]();
      for (const { id } of store.listSessions({ limit: 1000 }).items) {
        for (
          const options of [{}, { thinking: true, rules }, { summaryOnly: true }, {
            title: "Named here",
          }]
        ) {
          let turns = 0;
          const paged = await documentInTurns(store, id, {
            ...options,
            now,
            turn: () => Promise.resolve(turns++),
          });
          assertEquals(whole(paged!), documentOf(store, id, { ...options, now }), id);
          if (store === big.store) assert(turns >= 2, `${turns} turns`);
        }
        const doc = documentOf(store, id, { now })!;
        const placed = doc.steps.flatMap((s) => s.threads ?? []);
        threads += placed.length;
        if (round === 2) guessed += placed.filter((t) => t.guessed).length;
        if (round === 3) alone += doc.steps.filter((s) => s.type === "thread").length;
      }
    }
    assert(
      threads >= 6 && guessed >= 1 && alone >= 2,
      `sub-agent threads placed: ${threads}, ${guessed} guessed, ${alone} alone`,
    );
  } finally {
    fixtures.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the server answers other requests while a big session is analysed or redacted", async () => {
  await using big = await bigSession(1300);
  const app = testApp(big.store, { git: GONE });
  const base = `/api/sessions/${encodeURIComponent(big.id)}`;
  for (const slow of ["/causality", "/redaction", "/code", "/export?format=md"]) {
    const order: string[] = [];
    const first = call(app, "GET", `${base}${slow}`).then((r) => (order.push(slow), r));
    const second = call(app, "GET", `${base}/timeline?limit=50`).then((r) => (
      order.push("timeline"), r
    ));
    const [a, b] = await Promise.all([first, second]);
    assertEquals([a.status, b.status], [200, 200], slow);
    await a.body?.cancel();
    await b.body?.cancel();
    // the timeline's page is answered before the analysis ends (it went between its pages)
    assertEquals(order, ["timeline", slow]);
  }
});

Deno.test("a big session's download streams the document renderDocument makes, and its preview counts what it redacts", async () => {
  await using big = await bigSession(1300);
  const app = testApp(big.store, { git: GONE, now: () => 0 });
  const base = `/api/sessions/${encodeURIComponent(big.id)}`;
  const rules = new RuleStore(big.store.ruleTable).active();
  const doc = documentOf(big.store, big.id, { rules, now: () => new Date(0) })!;
  for (const format of DOCUMENT_FORMATS) {
    const res = await call(app, "GET", `${base}/export?format=${format}`);
    const body = await res.text();
    assert(body.length > 4 << 16, `${body.length} characters: several pieces`);
    assertEquals(body, renderDocument(doc, format), format);
  }
  const preview = await callJson<{ title: string; redaction: unknown }>(
    app,
    "GET",
    `${base}/redaction`,
  );
  assertEquals(preview.redaction, doc.redaction);
  assertEquals(preview.title, doc.session.title);
  // the preview keeps no step, and counts what the whole document redacts
  const summary = documentOf(big.store, big.id, { rules, summaryOnly: true })!;
  assertEquals([summary.steps, summary.redaction], [[], doc.redaction]);
});

Deno.test("a download holds the session work until its reader has it all, or cancels it", async () => {
  await using big = await bigSession(300);
  const inner = oneAtATime({ idleMs: 60_000 });
  const log: string[] = [];
  const sessionWork: SessionWork = {
    ...inner,
    run: (w) => inner.run(() => (log.push("piece"), w())),
    hold: (w) => inner.hold(() => (log.push("download"), w())),
  };
  const app = testApp(big.store, { git: GONE, now: () => 0, sessionWork });
  const base = `/api/sessions/${encodeURIComponent(big.id)}`;
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
  };
  for (const end of ["read", "cancelled"]) {
    log.length = 0;
    const res = await call(app, "GET", `${base}/export?format=md`);
    assertEquals(res.status, 200);
    const preview = call(app, "GET", `${base}/redaction`);
    await turns(5);
    assertEquals(log, ["download"], "the preview waits for the download");
    if (end === "read") assert((await res.text()).length > 2 << 16, "several pieces");
    else await res.body!.cancel();
    await turns(5);
    assertEquals(log, ["download", "piece"], `the preview starts once the download is ${end}`);
    assertEquals((await preview).status, 200);
  }
});

Deno.test("a big session's share is kept as lines and served a step at a time, the page sharePage makes", async () => {
  await using big = await bigSession(3000); // a document of more than a megabyte of JSON
  const app = testApp(big.store, { git: GONE, now: () => 0 });
  const made = await callJson<{ path: string; share: { id: string } }>(
    app,
    "POST",
    `/api/sessions/${encodeURIComponent(big.id)}/shares`,
    201,
    { body: { days: 1 } },
  );
  const blob = (dbOf(big.store).prepare("SELECT document FROM shares WHERE id = ?").get(
    made.share.id,
  ) as { document: Uint8Array }).document;
  let members = 0; // gzip members: a batch of lines each
  for (let i = 0; i + 2 < blob.length; i++) {
    if (blob[i] === 0x1f && blob[i + 1] === 0x8b && blob[i + 2] === 8) members++;
  }
  assert(members >= 2, `${members} gzip members`);
  const res = await call(app, "GET", made.path, { token: null });
  assertEquals(res.status, 200);
  const page = await res.text();
  const deps = { records: big.store.shareTable, now: () => new Date(0) };
  const token = made.path.slice(SHARE_PATH.length);
  assertEquals(page, sharePage(openShare(deps, token)!));
  assert(page.length > 4 << 16, `${page.length} characters: several pieces`);
});

Deno.test("collectOnGrowth() gives the emptied pages back in a process past its resident bound", async () => {
  await countingCollections((_, asked) => {
    let resident = 150 << 20;
    const collect = collectOnGrowth({ every: 1, resident: () => resident });
    collect();
    resident = RELEASE_ABOVE + 1;
    collect();
    // past the bound but no higher: the pages it gave back are being used again
    resident += 16 << 20;
    collect();
    // risen 32 MiB more since
    resident += 20 << 20;
    collect();
    assertEquals(asked(), ["plain", "last-resort", "plain", "last-resort"]);
  });
});

Deno.test("collectOnGrowth() collects once memory grew by its step, or at its every-nth call", async () => {
  await countingCollections((collections) => {
    let used = 100 << 20;
    const byGrowth = collectOnGrowth({ growthMiB: 8, memory: () => used });
    byGrowth();
    used += 4 << 20;
    byGrowth();
    assertEquals(collections(), 0, "4 MiB grew");
    used += 16 << 20;
    byGrowth();
    assertEquals(collections(), 1, "20 MiB more than at the start");
    used += 4 << 20;
    byGrowth();
    assertEquals(collections(), 1, "measured again from the collection");
    const byCount = collectOnGrowth({ growthMiB: 1024, every: 3, memory: () => used });
    byCount();
    byCount();
    assertEquals(collections(), 1);
    byCount();
    assertEquals(collections(), 2, "the third call");
  });
});
