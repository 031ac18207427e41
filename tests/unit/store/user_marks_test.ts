/** A user's name and star for a session: kept through every kind of import, found fast. */
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import {
  recordedTitle,
  sessionTitle,
  sha256Hex,
  USER_TITLE_CHARS,
  userTitle,
} from "../../../core/model/mod.ts";
import { payloadHashes, sessionJson } from "../../../core/artifacts/mod.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { scratch } from "./_sessions.ts";
import { ClaudeLines, claudeSessionPath } from "../../e2e/_synthetic.ts";

const A = "aaaaaaaa-1111-4111-8111-111111111111";
const B = "bbbbbbbb-2222-4222-8222-222222222222";
const idOf = (sid: string) => `claude-code:${sid}`;
const NOW = () => new Date("2026-03-01T12:00:00Z");

/** The columns an import writes or a user marks, of one session. */
function marks(store: ChronicleStore, id: string) {
  const s = store.getSession(id)!;
  return { user_title: s.user_title, starred: s.starred, starred_at: s.starred_at };
}

Deno.test("userTitle() keeps a typed name on one line, trimmed, bounded; empty clears", async (t) => {
  const cases: { name: string; input: string; expected: string | null }[] = [
    { name: "as typed", input: "Fix the login bug", expected: "Fix the login bug" },
    { name: "trimmed", input: "  padded \t", expected: "padded" },
    { name: "line breaks become spaces", input: "two\nlines\r\nhere", expected: "two lines here" },
    { name: "controls dropped", input: "bell\x07 and \x1b[31mred", expected: "bell and [31mred" },
    { name: "empty clears", input: "", expected: null },
    { name: "blank clears", input: " \n\t ", expected: null },
    { name: "the longest kept", input: "é".repeat(USER_TITLE_CHARS), expected: "é".repeat(200) },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(userTitle(c.input), c.expected));
  }
  await t.step("one character too many is a RangeError", () => {
    assertThrows(() => userTitle("x".repeat(USER_TITLE_CHARS + 1)), RangeError, "at most 200");
  });
});

Deno.test("sessionTitle(): the user's name, else the agent's title, else the first prompt", async (t) => {
  const cases: {
    name: string;
    input: Parameters<typeof sessionTitle>[0];
    expected: string | null;
    recorded: string | null;
  }[] = [
    {
      name: "renamed",
      input: { user_title: "Mine", title: "Agent's", first_prompt: "fix it" },
      expected: "Mine",
      recorded: "Agent's",
    },
    {
      name: "the agent's title",
      input: { user_title: null, title: "Agent's", first_prompt: "fix it" },
      expected: "Agent's",
      recorded: "Agent's",
    },
    {
      name: "the first prompt",
      input: { user_title: null, title: null, first_prompt: "fix it" },
      expected: "fix it",
      recorded: "fix it",
    },
    {
      name: "a blank title is none",
      input: { user_title: " ", title: "", first_prompt: "fix it" },
      expected: "fix it",
      recorded: "fix it",
    },
    { name: "nothing", input: {}, expected: null, recorded: null },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assertEquals(sessionTitle(c.input), c.expected);
      assertEquals(recordedTitle(c.input), c.recorded);
    });
  }
});

Deno.test("a name and a star survive a re-import, an appended log, a full re-read and a deleted log", async (t) => {
  await using s = await scratch();
  const path = claudeSessionPath(s.home, "/work/demo", A);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const lines = new ClaudeLines({ sessionId: A, cwd: "/work/demo" });
  await Deno.writeTextFile(path, lines.turn({ user: "fix the login" }));
  const store = s.open();
  const id = idOf(A);
  const kept = { user_title: "Login bug", starred: true, starred_at: "2026-03-01T12:00:00.000Z" };
  try {
    await s.run(store);
    assertEquals(marks(store, id), { user_title: null, starred: false, starred_at: null });
    const after = store.markSession(id, { title: "  Login\nbug ", starred: true }, { now: NOW });
    assertEquals(after?.user_title, "Login bug");
    assertEquals(after?.title, null, "the agent's title is untouched");
    assertEquals(after?.first_prompt, "fix the login");
    assertEquals(marks(store, id), kept);

    await t.step("an unchanged log imported again", async () => {
      assertEquals((await s.run(store)).sources["claude-code"].unchanged, 1);
      assertEquals(marks(store, id), kept);
    });
    await t.step("an appended log", async () => {
      await Deno.writeTextFile(path, lines.turn({ assistant: "Looking." }), { append: true });
      assertEquals((await s.run(store)).sources["claude-code"].appended, 1);
      assertEquals(store.getSession(id)!.op_count, 2);
      assertEquals(marks(store, id), kept);
    });
    await t.step("a log rewritten (read again from the start)", async () => {
      await s.write(A, ["three"]);
      assertEquals((await s.run(store)).sources["claude-code"].full, 1);
      assertEquals(marks(store, id), kept);
    });
    await t.step("its log deleted (the store keeps the session)", async () => {
      await Deno.remove(path);
      await s.run(store);
      assertEquals(marks(store, id), kept);
    });
  } finally {
    store.close();
  }
  const again = s.open();
  try {
    assertEquals(marks(again, id), kept, "kept on disk");
  } finally {
    again.close();
  }
});

Deno.test("a newer canonical export of a session keeps the user's name and star", async () => {
  await using s = await scratch();
  const first = await s.imported(A, ["one"]);
  const id = idOf(A);
  const session = first.loadSession(id)!;
  const payloads = new Map<string, Uint8Array>();
  for (const sha of payloadHashes(session)) payloads.set(sha, first.payload(sha)!);
  first.close();
  const store = ChronicleStore.open(":memory:");
  try {
    const put = (x: typeof session) =>
      store.putCanonicalSession(x, payloads, { sessionSha256: sha256Hex(sessionJson(x)) });
    assertEquals(put(session), "imported");
    store.markSession(id, { title: "Named", starred: true }, { now: NOW });
    const newer = structuredClone(session);
    newer.session.title = "The agent's new title";
    assertEquals(put(newer), "imported");
    const after = store.getSession(id)!;
    assertEquals(
      [after.title, after.user_title, after.starred],
      ["The agent's new title", "Named", true],
    );
    assertEquals(store.loadSession(id)!.session.title, "The agent's new title");
  } finally {
    store.close();
  }
});

Deno.test("markSession(): clear, unstar, keep the first star time, unknown ids, too long", async () => {
  await using s = await scratch();
  const store = await s.imported(A, ["one"]);
  try {
    const id = idOf(A);
    assertEquals(store.markSession("claude-code:nope", { starred: true }), null);
    store.markSession(id, { starred: true }, { now: NOW });
    store.markSession(id, { starred: true }, { now: () => new Date("2027-01-01T00:00:00Z") });
    assertEquals(store.getSession(id)!.starred_at, "2026-03-01T12:00:00.000Z");
    store.markSession(id, { title: "Named" });
    assertThrows(
      () => store.markSession(id, { title: "x".repeat(201), starred: false }),
      RangeError,
    );
    assertEquals(marks(store, id).user_title, "Named", "a refused change writes nothing");
    assertEquals(marks(store, id).starred, true);
    store.markSession(id, { title: "" });
    assertEquals(marks(store, id).user_title, null, "an empty name clears it");
    store.markSession(id, { title: "Again" });
    store.markSession(id, { title: null, starred: false });
    assertEquals(marks(store, id), { user_title: null, starred: false, starred_at: null });
  } finally {
    store.close();
  }
});

Deno.test("the starred filter, the title sort and the text filter read the user's name", async () => {
  await using s = await scratch();
  await s.write(A, ["one"]);
  await s.write(B, ["two"]);
  const store = s.open();
  try {
    await s.run(store);
    store.markSession(idOf(B), { title: "Aardvark work", starred: true });
    const starred = store.listSessions({ starred: true });
    assertEquals(starred.total, 1);
    assertEquals(starred.items.map((i) => i.id), [idOf(B)]);
    assertEquals(store.listSessions({ starred: false }).total, 2, "false is no filter");
    // by title: B's name sorts before A's first prompt, though B's own prompt sorts after it
    const byTitle = store.listSessions({ sort: "title", order: "asc" }).items;
    assertEquals(byTitle.map((i) => sessionTitle(i)), ["Aardvark work", `fix it, session ${A}`]);
    assertEquals(store.listSessions({ text: "aardvark" }).items.map((i) => i.id), [idOf(B)]);
    // search hits carry the name, and the starred filter narrows them
    const hits = store.search("make", { starred: true }).hits;
    assert(hits.length > 0);
    assert(hits.every((h) => h.session_id === idOf(B) && h.session.user_title === "Aardvark work"));
  } finally {
    store.close();
  }
});

Deno.test("the starred count walks the sessions_starred index", () => {
  const store = ChronicleStore.open(":memory:");
  try {
    const plan = dbOf(store).prepare(
      "EXPLAIN QUERY PLAN SELECT count(*) FROM sessions WHERE starred_at IS NOT NULL",
    ).all() as { detail: string }[];
    assert(plan.some((p) => /sessions_starred/.test(p.detail)), JSON.stringify(plan));
  } finally {
    store.close();
  }
});

Deno.test("a rename takes a change stamp: a live view of the session is sent its summary", async () => {
  await using s = await scratch();
  const store = await s.imported(A, ["one"]);
  try {
    const id = idOf(A);
    const clock = store.changeClock();
    const before = store.sessionChanges(id, { after: { stamp: clock, rowid: Infinity } })!;
    store.markSession(id, { title: "Renamed" });
    const after = store.sessionChanges(id, { after: { stamp: clock, rowid: Infinity } })!;
    assert(after.stamp > before.stamp, "the session's stamp moved");
    assertEquals(after.ops, [], "no operation is sent again");
    assertEquals(after.reset_stamp, before.reset_stamp, "no reload");
    assertEquals(store.changeClock(), clock + 1);
  } finally {
    store.close();
  }
});
