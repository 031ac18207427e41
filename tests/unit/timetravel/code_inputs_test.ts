/**
 * The code inputs a server keeps for a session's later requests (`codeInputs`): the code at
 * every step they give is the code the whole loaded session gives, for every real client's
 * recordings, and they hold no more of the session than the code reads.
 */
import { sessionFacts } from "../../../core/causality/mod.ts";
import {
  codeInputs,
  gatherSession,
  type SessionCode,
  sessionCode,
  type TimeTravelDeps,
} from "../../../core/timetravel/mod.ts";
import type { GitEngine } from "../../../core/git/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";
import { bash, edit, inlineReader, read, sessionOf } from "../causality/_session.ts";

/** A git engine for a project folder that no longer exists. */
const GONE = {
  repo: () => Promise.reject(new ChronicleError("not_found", "The project folder is gone")),
} as unknown as GitEngine;

/** Every answer of a session's code: its tree, each change and each touched file at every step. */
async function answers(code: SessionCode): Promise<unknown[]> {
  const out: unknown[] = [await code.whatChanged()];
  const paths = new Set<string>();
  for (let seq = -1; seq < code.steps; seq++) {
    const tree = await code.treeAt(seq);
    for (const e of tree.entries) paths.add(e.path);
    out.push(tree, await code.changeAt(seq));
  }
  for (const path of paths) {
    for (let seq = -1; seq < code.steps; seq += 3) out.push(await code.fileAt(path, seq));
  }
  return out;
}

const SCENARIOS = [
  "claude/s4-long",
  "codex/s4-long",
  "gemini/s4-long",
  "opencode/s4-long",
  "claude/s6-subagent",
];

for (const scenario of SCENARIOS) {
  Deno.test(`the code inputs of ${scenario} answer what the whole session answers`, async () => {
    const store = await fixtureStore([scenario]);
    try {
      const session = store.loadSession(store.listSessions().items[0].id)!;
      const deps: TimeTravelDeps = {
        read: (ref, max) => store.payloadText(ref, max),
        git: GONE,
      };
      const facts = sessionFacts(session, deps.read);
      const whole = await answers(await sessionCode({ session, facts }, deps));
      const kept = codeInputs(session, facts);
      assertEquals(await answers(await sessionCode(kept, deps)), whole);
      assert(whole.length > session.timeline.length * 2, "every step answered");
      // kept: the steps that change or read files, and of the others their kind and time
      assert(kept.facts.length < facts.length, "a step that neither reads nor changes is left");
      for (const [id, op] of Object.entries(kept.session.operations)) {
        const wholeOp = session.operations[id];
        assertEquals(op.kind, wholeOp.kind);
        assertEquals(op.ts_ms, wholeOp.ts_ms);
        const fact = facts.find((f) => f.op === id)!;
        if (!fact.change && fact.source?.kind !== "read" && op.kind !== "exec") {
          assertEquals(Object.keys(op).sort(), ["kind", "ts_ms"], `${id} (${op.kind})`);
        } else {
          assertEquals(op.request, wholeOp.request);
          assertEquals(op.response, wholeOp.response);
        }
      }
    } finally {
      store.close();
    }
  });
}

Deno.test("the code inputs keep a command's payloads, a search's files, every step's time", async () => {
  const session = sessionOf([
    read("src/a.py"),
    edit("src/a.py"),
    bash("git commit -am 'one'", "[main 1a2b3c4] one"),
    { tool: "", kind: "reply", input: "done" },
    bash("cat src/b.py | grep def", "def main():"),
  ], { startMs: 1_000 });
  const facts = sessionFacts(session, inlineReader);
  const kept = codeInputs(session, facts);
  const deps = { read: inlineReader, git: GONE };
  const whole = await sessionCode({ session, facts }, deps);
  assertEquals(await answers(await sessionCode(kept, deps)), await answers(whole));
  // without a repository the files the session read are all that is known to exist, a file a
  // search read among them
  assertEquals((await whole.treeAt(4)).entries.map((e) => e.path), ["src/a.py", "src/b.py"]);
  assertEquals(kept.session.session.project, session.session.project);
  assertEquals(kept.session.timeline, session.timeline);
  const ops = session.timeline.map((t) => kept.session.operations[t.op]);
  assertEquals(ops.map((o) => o.kind), ["read", "edit", "exec", "reply", "exec"]);
  assertEquals(
    ops.map((o) => o.ts_ms),
    session.timeline.map((t) => session.operations[t.op].ts_ms),
  );
  assert(ops[2].request && ops[2].response, "a command keeps what it ran and printed");
  assertEquals(Object.keys(ops[3]).sort(), ["kind", "ts_ms"]);
  // the commit names no file: its step is kept for its command alone
  assertEquals(kept.facts.map((f) => f.seq), [0, 1, 4]);
});

Deno.test("the code is prepared with a turn every page of steps, however few change files", async () => {
  const steps = Array.from(
    { length: 2_500 },
    (_, i) =>
      i === 10 || i === 1_500 || i === 2_400
        ? edit("src/a.py")
        : { tool: "", kind: "reply" as const, input: "ok" },
  );
  const session = sessionOf(steps);
  const facts = sessionFacts(session, inlineReader);
  let turns = 0;
  const code = await sessionCode(codeInputs(session, facts), {
    read: inlineReader,
    git: GONE,
    turn: () => (turns++, Promise.resolve()),
  });
  assertEquals(code.steps, 2_500);
  // the changes at steps 1,500 and 2,400 are on the second and third pages of 1,000 steps
  assertEquals(turns, 2);
});

for (const scenario of SCENARIOS) {
  Deno.test(`${scenario} gathered a few steps at a time gives the whole session's facts and inputs`, async () => {
    const store = await fixtureStore([scenario]);
    try {
      const id = store.listSessions().items[0].id;
      const read = (ref: Parameters<typeof store.payloadText>[0], max?: number) =>
        store.payloadText(ref, max);
      const session = store.loadSession(id)!;
      const facts = sessionFacts(session, read);
      let turns = 0;
      const got = await gatherSession(
        store.sessionParts(id, { steps: 3 }),
        read,
        () => (turns++, Promise.resolve()),
      );
      assert(got && turns > 3, `${turns} parts`);
      // an operation's facts are its own: the parts' facts are the whole session's
      assertEquals(got.facts, facts);
      assertEquals(got.inputs, codeInputs(session, facts));
      assertEquals(got.head.session, session.session);
      assertEquals([got.head.timeline, got.head.operations], [[], {}]);
    } finally {
      store.close();
    }
  });
}

Deno.test("a session of no part gathers to nothing", async () => {
  assertEquals(await gatherSession([], inlineReader), null);
});
