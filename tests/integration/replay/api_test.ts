/** Replay mode's API in process, on a real-client session whose project folder is gone. */
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { call, callJson, fixtureStore, testApp } from "../../unit/server/_helpers.ts";
import { createReplayService } from "../../../server/replay_service.ts";
import { createAnalysisCache } from "../../../server/routes/causality.ts";
import { oneAtATime } from "../../../server/session_work.ts";

/**
 * A data folder of its own and a store of real-client recordings (their session ids in `ids`),
 * both gone when disposed.
 */
async function replayFixtures(scenarios: string[]) {
  const data = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-replay-api-" }));
  const store = await fixtureStore(scenarios);
  return {
    data,
    store,
    ids: store.listSessions().items.map((s) => s.id),
    async [Symbol.asyncDispose]() {
      store.close();
      await Deno.remove(data, { recursive: true });
    },
  };
}

Deno.test("the replay API refuses request paths, previews, steps, lists files and compares", async () => {
  await using fixtures = await replayFixtures(["claude/s1-basic"]);
  const { data, store } = fixtures;
  const replay = createReplayService(store, { dataDir: data, env: Deno.env.toObject() });
  const app = testApp(store, { replay });
  const id = encodeURIComponent(fixtures.ids[0]);
  try {
    // A request carrying a workspace path is refused and nothing is made there.
    for (const body of [{ sandbox: `${data}/evil` }, { repo: "/etc" }, { path: `${data}/x` }]) {
      const res = await call(app, "POST", `/api/sessions/${id}/replays`, { body });
      assertEquals(res.status, 400);
      const err = await res.json();
      assertEquals([err.ok, err.code], [false, "bad_request"]);
    }
    assertEquals([...Deno.readDirSync(data)].map((e) => e.name), []);
    assertEquals(
      (await call(app, "POST", `/api/sessions/${id}/replays`, { token: null })).status,
      401,
    );

    const view = await callJson<{
      id: string;
      sandbox: string;
      seeded_from: string | null;
      notices: string[];
      steps: { seq: number; kind: string; status: string }[];
    }>(app, "POST", `/api/sessions/${id}/replays`, 201, { body: {} });
    assert(view.sandbox.startsWith(`${data}/replay/`), view.sandbox);
    assertEquals(view.seeded_from, null);
    assertMatch(view.notices.join(" "), /no longer exists: the sandbox starts empty/);
    assertEquals(view.steps.map((s) => [s.seq, s.kind, s.status]), [
      [2, "write", "pending"],
      [4, "edit", "pending"],
      [5, "exec", "pending"],
    ]);
    const rid = encodeURIComponent(view.id);

    const pre = await callJson<{ applies: boolean; diff: string }>(
      app,
      "GET",
      `/api/replays/${rid}/steps/2/preview`,
    );
    assertEquals(pre.applies, true);
    assertMatch(pre.diff, /\+- \[ \] wirte docs/);
    const early = await callJson<{ applies: boolean; reason: string }>(
      app,
      "GET",
      `/api/replays/${rid}/steps/4/preview`,
    );
    assertEquals([early.applies, early.reason], [false, "the file does not exist"]);

    for (const seq of [2, 4]) {
      const r = await callJson<{ status: string }>(
        app,
        "POST",
        `/api/replays/${rid}/steps/${seq}`,
        200,
        { body: {} },
      );
      assertEquals(r.status, "applied");
    }
    const cmd = await callJson<{ status: string; detail: string }>(
      app,
      "POST",
      `/api/replays/${rid}/steps/5`,
      200,
      { body: {} },
    );
    assertEquals(cmd.status, "skipped");
    assertMatch(cmd.detail, /not run without confirmation/);
    assertEquals(
      (await call(app, "POST", `/api/replays/${rid}/steps/5`, { body: { confirm: "yes" } })).status,
      400,
    );

    const files = await callJson<{ files: { path: string }[] }>(
      app,
      "GET",
      `/api/replays/${rid}/files`,
    );
    assertEquals(files.files.map((f) => f.path), ["notes.md"]);
    const f = await callJson<{ text: string }>(
      app,
      "GET",
      `/api/replays/${rid}/file?path=notes.md`,
    );
    assertEquals(f.text, "# TODO\n\n- [ ] add tests\n- [ ] write docs\n");
    for (const bad of ["../../etc/passwd", "/etc/passwd", ".git/config"]) {
      const res = await call(
        app,
        "GET",
        `/api/replays/${rid}/file?path=${encodeURIComponent(bad)}`,
      );
      assertEquals(res.status, 400, bad);
      assertMatch((await res.json()).error, /^Refused: /);
    }
    const cmp = await callJson<{ final: unknown }>(
      app,
      "POST",
      `/api/replays/${rid}/compare`,
      200,
      { body: {} },
    );
    assertEquals(cmp.final, null); // no repository: the final state is unknown
    assertEquals((await call(app, "GET", `/api/replays/nope`)).status, 404);
  } finally {
    replay.close();
  }
});

Deno.test("the replays kept open are bounded by their steps as well as their number", async () => {
  await using fixtures = await replayFixtures(["claude/s4-long", "codex/s4-long"]);
  const { data, store, ids: [a, b] } = fixtures;
  const env = Deno.env.toObject();
  const open = async (replay: ReturnType<typeof createReplayService>, id: string) =>
    (await replay.start(id)).id;
  const isOpen = async (replay: ReturnType<typeof createReplayService>, rid: string) => {
    try {
      await replay.view(rid);
      return true;
    } catch {
      return false;
    }
  };
  const planned = async (id: string) => {
    const r = createReplayService(store, { dataDir: data, env });
    try {
      return (await r.start(id)).steps.length;
    } finally {
      r.close();
    }
  };
  const [stepsA, stepsB] = [await planned(a), await planned(b)];
  assert(stepsA > 3 && stepsB > 3, `${stepsA} and ${stepsB} steps`);
  // which of a's and b's replays, opened in that order, are still open
  const openBoth = async (steps: number, replays = 8) => {
    const r = createReplayService(store, { dataDir: data, env, kept: { replays, steps } });
    try {
      const [ra, rb] = [await open(r, a), await open(r, b)];
      return [await isOpen(r, ra), await isOpen(r, rb)];
    } finally {
      r.close();
    }
  };
  // room for both: before a session is planned, each of its steps is counted
  const opCount = (id: string) => store.getSession(id)!.op_count;
  assert(opCount(b) > stepsB, "a plan holds fewer steps than its session");
  assertEquals(await openBoth(stepsA + opCount(b)), [true, true]);
  // one step short of that: the older is closed before the newer is planned
  assertEquals(await openBoth(stepsA + opCount(b) - 1), [false, true]);
  // room for one: the newest kept even when it alone is over the room
  assertEquals(await openBoth(1), [false, true]);
  // and by number
  assertEquals(await openBoth(1e9, 1), [false, true]);
});

Deno.test("opening a replay lets the causality's analyses go: they are made again when asked", async () => {
  await using fixtures = await replayFixtures(["claude/s4-long", "codex/s4-long"]);
  const { data, store, ids: [a, b] } = fixtures;
  let loads = 0;
  const counting = new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== "sessionParts") return typeof v === "function" ? v.bind(target) : v;
      return (...args: Parameters<typeof store.sessionParts>) => (loads++, v.apply(target, args));
    },
  });
  const sessionWork = oneAtATime();
  const deps = { store: counting, token: "t", port: 1, version: "test", sessionWork };
  const analyses = createAnalysisCache(deps);
  const replay = createReplayService(counting, {
    dataDir: data,
    env: Deno.env.toObject(),
    sessionWork,
  });
  try {
    await analyses.get(a);
    await analyses.get(a);
    assertEquals(loads, 1);
    await replay.start(b);
    assertEquals(loads, 2);
    await analyses.get(a);
    assertEquals(loads, 3);
  } finally {
    replay.close();
  }
});
