/**
 * A replay's plan made a page of the session at a time (`planInParts`, what `chronicle replay`
 * and the server's replay mode plan with) is the plan of the whole session: reasoning before a
 * step carries across pages, for every real client's recordings, from the store and from the
 * session's exported files.
 */
import { exportSession } from "../../../core/artifacts/mod.ts";
import {
  buildPlan,
  loadArtifactSession,
  PLAN_TEXT_CHARS,
  planInParts,
} from "../../../core/replay/mod.ts";
import { denoArtifactReader, denoArtifactWriter } from "../../../runtime/artifact_fs.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../_helpers/assert.ts";
import { ChronicleError, type PayloadRef, sha256Hex } from "../../../core/model/mod.ts";
import { fixtureStore } from "../server/_helpers.ts";

const SCENARIOS = [
  "claude/s4-long",
  "claude/s6-subagent",
  "codex/s4-long",
  "gemini/s4-long",
  "opencode/s4-long",
];

for (const scenario of SCENARIOS) {
  Deno.test(`the plan of ${scenario} made two steps at a time is the whole session's`, async () => {
    const store = await fixtureStore([scenario]);
    try {
      const id = store.listSessions().items[0].id;
      const text = (ref: Parameters<typeof store.payloadText>[0]) => store.payloadText(ref);
      const whole = store.loadSession(id, { textChars: PLAN_TEXT_CHARS })!;
      const want = buildPlan(whole, text);
      let turns = 0;
      const got = await planInParts(
        store.sessionParts(id, { textChars: PLAN_TEXT_CHARS, steps: 2 }),
        text,
        () => (turns++, Promise.resolve()),
      );
      assert(got && turns > 3, `${turns} parts`);
      assertEquals(got.plan, want);
      assertEquals(got.head.session, whole.session);
      assertEquals([got.head.timeline, got.head.operations], [[], {}]);
      assert(want.steps.some((s) => s.reasoning.length), "some step has reasoning before it");
      // from its exported files, read as they stream in, a page and its payloads at a time
      const out = await Deno.makeTempDir({ prefix: "chronicle-plan-test-" });
      try {
        const dir = await exportSession(store.loadSession(id)!, {
          writer: denoArtifactWriter,
          readPayload: (sha) => store.payload(sha),
        }, out);
        const told: unknown[] = [];
        const readFiles: string[] = [];
        const counting: typeof denoArtifactReader = {
          ...denoArtifactReader,
          readFile: (path, max) => (readFiles.push(path), denoArtifactReader.readFile(path, max)),
        };
        const a = await loadArtifactSession(counting, dir, {
          partSteps: 3,
          accept: (ids) => told.push(ids),
        });
        // the manifest's ids, then session.json's
        const ids = { id: whole.session.id, native_id: whole.session.native_id };
        assertEquals(told, [ids, ids]);
        // refused as the manifest names it: session.json is never opened
        const opened: string[] = [];
        const watching = {
          ...denoArtifactReader,
          stream: (
            path: string,
            max?: number,
          ) => (opened.push(path), denoArtifactReader.stream(path, max)),
        };
        const refuse = () => {
          throw new RangeError("not this one");
        };
        await assertRejects(
          () => loadArtifactSession(watching, dir, { accept: refuse }),
          RangeError,
        );
        assertEquals(opened, []);
        let parts = 0;
        const fromFiles = await planInParts(a.parts(), a.text, () => (parts++, Promise.resolve()));
        assert(parts > 3, `${parts} parts`);
        assertEquals(fromFiles?.plan, want);
        assertEquals(fromFiles?.head.session, whole.session);
        assertEquals([a.problems, Object.keys(a.session.operations)], [[], []]);
        // its pages read what a plan reads and a command's result (told of before the run when it
        // is bad), never a file step's result
        const readShas = new Set(readFiles.map((f) => f.slice(f.lastIndexOf("/") + 1)));
        const sha = (ref: PayloadRef | null | undefined) =>
          ref && "sha256" in ref ? ref.sha256 : "";
        const requests = new Set(want.steps.map((s) => sha(s.input)));
        const fileResults = want.steps.filter((s) => s.kind !== "exec")
          .map((s) => sha(s.recorded.output)).filter((h) => h && !requests.has(h));
        assert(fileResults.length > 0, "some file step's result is a payload file");
        assertEquals(fileResults.filter((h) => readShas.has(h)), []);
        // a step's recorded result and a file step's input are read from their files as the step
        // runs, as the store has them
        const refs = want.steps.flatMap((s) => [s.recorded.output ?? [], s.input ?? []].flat());
        assert(refs.some((ref) => "sha256" in ref), "some result is a payload file");
        assert(want.steps.some((s) => s.input), "some step is a file step");
        for (const ref of refs) assertEquals(await a.payload(ref), text(ref));
      } finally {
        await Deno.remove(out, { recursive: true });
      }
    } finally {
      store.close();
    }
  });
}

Deno.test("a session of no part plans to nothing", async () => {
  assertEquals(await planInParts([], () => null), null);
});

Deno.test("an export whose session.json is not JSON, though its checksum matches, is refused by name", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-plan-test-" });
  try {
    for (const [body, said] of [["hello", /is not valid JSON/], ["[]", /is not a JSON object/]]) {
      await Deno.writeTextFile(`${dir}/session.json`, body as string);
      await Deno.writeTextFile(
        `${dir}/manifest.json`,
        JSON.stringify({ session_sha256: sha256Hex(new TextEncoder().encode(body as string)) }),
      );
      const e = await assertRejects(
        () => loadArtifactSession(denoArtifactReader, dir),
        ChronicleError,
      ) as ChronicleError;
      assertEquals(e.code, "invalid_session");
      assertMatch(e.message, new RegExp(`^${dir}/session.json `));
      assertMatch(e.message, said as RegExp);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
