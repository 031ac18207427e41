/**
 * spawnParents(): the one rule for which call spawned a sub-agent thread, and the store and
 * export both reading it (the session view and an export nest a thread under the same call).
 */
import { assertEquals } from "../../_helpers/assert.ts";
import { type SpawnFacts, spawnParents } from "../../../core/model/spawn.ts";
import { threadParents } from "../../../core/export/document.ts";
import { fixtureStore } from "../server/_helpers.ts";

type Conn = SpawnFacts["connections"][number];

/** A session in brief: main-thread task calls at times, threads with their first step's time. */
function facts(
  conns: (Conn & { first?: number })[],
  tasks: { op: string; at: number | null }[],
  /** Operations inside sub-agent threads: op -> thread. */
  inside: Record<string, string> = {},
): SpawnFacts {
  return {
    connections: conns,
    tasks: () => tasks,
    firstAt: (id) => conns.find((c) => c.id === id)?.first ?? null,
    connectionOf: (op) => inside[op] ?? (tasks.some((t) => t.op === op) ? "main" : undefined),
  };
}

const main: Conn = { id: "main", kind: "main" };

Deno.test("spawnParents() names each thread's call: the log's word, else the latest unclaimed task before it", async (t) => {
  const cases: {
    name: string;
    input: SpawnFacts;
    expected: Record<string, { op: string; guessed: boolean }>;
  }[] = [
    {
      name: "a parent the log names is kept, not guessed",
      input: facts([main, { id: "a", kind: "subagent", parent_op: "t1", first: 5 }], [
        { op: "t1", at: 1 },
        { op: "t2", at: 2 },
      ]),
      expected: { a: { op: "t1", guessed: false } },
    },
    {
      name: "an unnamed thread takes the latest task call at or before its first step",
      input: facts([main, { id: "a", kind: "subagent", first: 2 }], [
        { op: "t1", at: 1 },
        { op: "t2", at: 2 },
        { op: "t3", at: 3 },
      ]),
      expected: { a: { op: "t2", guessed: true } },
    },
    {
      name: "threads are placed earliest first, and a claimed call is not taken twice",
      input: facts(
        [main, { id: "b", kind: "subagent", first: 4 }, { id: "a", kind: "subagent", first: 3 }, {
          id: "c",
          kind: "subagent",
          parent_op: "t2",
          first: 9,
        }],
        [{ op: "t1", at: 1 }, { op: "t2", at: 2 }, { op: "t3", at: 3 }],
      ),
      expected: {
        c: { op: "t2", guessed: false },
        a: { op: "t3", guessed: true },
        b: { op: "t1", guessed: true },
      },
    },
    {
      name: "a named parent the session does not hold is guessed like an unnamed one",
      input: facts([main, { id: "a", kind: "subagent", parent_op: "gone", first: 5 }], [
        { op: "t1", at: 1 },
      ]),
      expected: { a: { op: "t1", guessed: true } },
    },
    {
      name: "no task call before the thread: no parent; an untimed task counts as before",
      input: facts(
        [main, { id: "a", kind: "subagent", first: 1 }, { id: "b", kind: "subagent" }],
        [{ op: "t1", at: 5 }, { op: "t0", at: null }],
      ),
      expected: { a: { op: "t0", guessed: true }, b: { op: "t1", guessed: true } },
    },
    {
      name: "a cycle of parents (each call inside the other thread) is broken at its first thread",
      input: facts(
        [
          main,
          { id: "a", kind: "subagent", parent_op: "x", first: 1 },
          { id: "b", kind: "subagent", parent_op: "y", first: 2 },
        ],
        [],
        { x: "b", y: "a" },
      ),
      expected: { b: { op: "y", guessed: false } },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assertEquals(Object.fromEntries(spawnParents(c.input)), c.expected);
    });
  }
});

Deno.test("the session view's connections and an export nest each sub-agent under the same call", async () => {
  const store = await fixtureStore(["claude/s6-subagent"]);
  try {
    let threads = 0;
    for (const s of store.listSessions({ limit: 100 }).items) {
      const fromStore = Object.fromEntries(
        store.connections(s.id).filter((c) => c.kind === "subagent").map((c) => [
          c.id,
          c.parent_op ? { op: c.parent_op, guessed: c.parent_guessed === true } : null,
        ]),
      );
      const session = store.loadSession(s.id)!;
      const exported = threadParents(session);
      threads += Object.keys(fromStore).length;
      assertEquals(
        fromStore,
        Object.fromEntries(
          session.connections.filter((c) => c.kind === "subagent").map((
            c,
          ) => [c.id, exported.get(c.id) ?? null]),
        ),
        s.id,
      );
    }
    assertEquals(threads > 0, true, "the fixtures hold sub-agent threads");
  } finally {
    store.close();
  }
});
