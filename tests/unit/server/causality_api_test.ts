/** The causality and time-travel routes, in process, over real-client sessions. */
import type { GitEngine } from "../../../core/git/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { assertApiError, call, callJson, fixtureStore, testApp } from "./_helpers.ts";
import { createAnalysisCache } from "../../../server/routes/causality.ts";

/** The recorded projects live on another machine: their folders are gone here. */
const GONE = {
  repo: () => Promise.reject(new ChronicleError("not_found", "gone")),
} as unknown as GitEngine;

interface Compact {
  op: string;
  kind: string;
  files: string[];
  sources: number;
  best: number | null;
}

Deno.test("the causality routes give each change its sources, chain and the files map", async () => {
  const store = await fixtureStore(["claude/s4-long"]);
  try {
    const app = testApp(store, { git: GONE });
    const [s] = store.listSessions().items;
    const base = `/api/sessions/${encodeURIComponent(s.id)}`;
    const summary = await callJson<
      { changes: Compact[]; files: { path: string }[]; tiers: unknown[] }
    >(
      app,
      "GET",
      `${base}/causality`,
    );
    assertEquals(summary.tiers.length, 5);
    assertEquals(summary.changes.length, 10);
    const edit = summary.changes.find((c) => c.files[0] === "src/config.py")!;
    assertEquals([edit.kind, edit.best], ["edit", 0.95]);
    assertEquals(summary.files.length, 10);
    const one = await callJson<{
      sources: { tier: string; op: string }[];
      chain: { file: string }[];
    }>(app, "GET", `${base}/causality/${edit.op}`);
    assertEquals(one.sources.length, edit.sources);
    assertEquals(one.sources[0].tier, "same_file");
    assertEquals(one.chain.map((e) => e.file), ["src/app.py"]);
    // A source is a step of the session: the timeline knows it.
    const locate = await callJson<{ chain: unknown[] }>(
      app,
      "GET",
      `${base}/locate?op=${one.sources[0].op}`,
    );
    assertEquals(locate.chain.length, 1);
    await assertApiError(
      await call(app, "GET", `${base}/causality/not-a-change`),
      404,
      "not_found",
    );
    await assertApiError(await call(app, "GET", "/api/sessions/nope/causality"), 404, "not_found");
  } finally {
    store.close();
  }
});

Deno.test("the code routes rebuild files from the recording when the project is gone", async () => {
  const store = await fixtureStore(["claude/s4-long"]);
  try {
    const app = testApp(store, { git: GONE });
    const [s] = store.listSessions().items;
    const base = `/api/sessions/${encodeURIComponent(s.id)}`;
    const { changes } = await callJson<{ changes: Compact[] }>(app, "GET", `${base}/causality`);
    const edit = changes.find((c) => c.files[0] === "src/app.py")!;
    const tree = await callJson<
      { repo: { kind: string }; entries: { path: string; origin: string }[] }
    >(
      app,
      "GET",
      `${base}/code?op=${edit.op}`,
    );
    assertEquals(tree.repo.kind, "gone");
    assert(tree.entries.some((e) => e.path === "src/app.py" && e.origin === "recorded"));
    const file = await callJson<{ text: string; status: string; lines: { seq: number | null }[] }>(
      app,
      "GET",
      `${base}/code/file?op=${edit.op}&path=src/app.py`,
    );
    assertEquals(file.status, "exact");
    assert(file.text.includes('raise ValueError("empty title 🚫")'));
    assert(file.lines.some((l) => l.seq !== null), "the edit's lines are marked");
    const diff = await callJson<{ files: { path: string; patch: string }[] }>(
      app,
      "GET",
      `${base}/code/diff?op=${edit.op}`,
    );
    assertEquals(diff.files.map((f) => f.path), ["src/app.py"]);
    assert(diff.files[0].patch.includes("-    # TODO: validate title"));
    const net = await callJson<{ files: { path: string; state: string }[] }>(
      app,
      "GET",
      `${base}/changes`,
    );
    assertEquals(net.files.filter((f) => f.state === "added").map((f) => f.path), [
      "docs/CHANGELOG.md",
      "src/i18n.py",
    ]);
    await assertApiError(await call(app, "GET", `${base}/code?at=99999`), 400, "bad_request");
    await assertApiError(await call(app, "GET", `${base}/code?at=x`), 400, "bad_request");
    await assertApiError(await call(app, "GET", `${base}/code/file`), 400, "bad_request");
    await assertApiError(
      await call(app, "GET", `${base}/code/file?path=a%00b`),
      400,
      "bad_request",
    );
    await assertApiError(await call(app, "GET", `${base}/code?op=nope`), 404, "not_found");
  } finally {
    store.close();
  }
});

Deno.test("without a git engine the code routes say so and show the recorded changes", async () => {
  const store = await fixtureStore(["codex/s1-basic"]);
  try {
    const app = testApp(store);
    const [s] = store.listSessions().items;
    const tree = await callJson<
      { repo: { kind: string; message: string }; entries: { path: string }[] }
    >(
      app,
      "GET",
      `/api/sessions/${encodeURIComponent(s.id)}/code`,
    );
    assertEquals(tree.repo.kind, "no_git");
    assertEquals(tree.entries.map((e) => e.path), ["README.md", "notes.md"]);
  } finally {
    store.close();
  }
});

Deno.test("the analyses kept are bounded by their steps as well as their number, the newest always kept", async () => {
  const store = await fixtureStore(["claude/s4-long", "codex/s4-long", "gemini/s4-long"]);
  try {
    const [a, b] = store.listSessions().items;
    // an analysis reads its session a part at a time, never the whole session at once
    let loads = 0;
    const counting = new Proxy(store, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop === "loadSession" || prop === "loadSessionInTurns") {
          throw new Error(`an analysis called ${prop}`);
        }
        if (prop !== "sessionParts") return typeof v === "function" ? v.bind(target) : v;
        return (
          ...args: Parameters<typeof store.sessionParts>
        ) => (loads++, v.apply(target, args));
      },
    });
    const deps = { store: counting, token: "t", port: 1, version: "test", git: GONE };
    const steps = (id: string) => store.getSession(id)!.op_count;
    // room for both: the second look at each is kept
    const roomy = createAnalysisCache(deps, { sessions: 8, steps: steps(a.id) + steps(b.id) });
    for (const id of [a.id, b.id, a.id, b.id]) await roomy.get(id);
    assertEquals(loads, 2);
    // room for one of them: each look at the other analyses it again
    loads = 0;
    const tight = createAnalysisCache(deps, {
      sessions: 8,
      steps: Math.max(steps(a.id), steps(b.id)),
    });
    for (const id of [a.id, b.id, a.id, b.id]) await tight.get(id);
    assertEquals(loads, 4);
    // a session bigger than the room is still kept while it is the newest
    loads = 0;
    const small = createAnalysisCache(deps, { sessions: 8, steps: 1 });
    for (const id of [a.id, a.id]) await small.get(id);
    assertEquals(loads, 1);
  } finally {
    store.close();
  }
});
