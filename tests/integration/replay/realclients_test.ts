/**
 * The real-client sessions of every agent, imported through the real importers and the store,
 * replayed from a git repository made here: every step applies (the errors scenario reproduces
 * its recorded failures), and the sandbox ends equal to the project as the agent left it, file
 * by file. Shell steps run under bubblewrap, which `.ci/run` installs.
 */
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { reasoningTexts } from "../../../core/replay/mod.ts";
import { fixtureStore } from "../../unit/server/_helpers.ts";
import { finalFiles, projectRepo } from "./_projects.ts";
import { replay, treeOf } from "./_run.ts";

const AGENTS = ["claude", "codex", "gemini", "opencode"];
const SCENARIOS = ["s1-basic", "s2-errors", "s4-long"];

/**
 * Steps whose replayed output honestly differs from the recording. Claude Code 2.1.197 runs
 * `grep` in its Bash tool as its bundled ripgrep: paths without "./", binary files skipped; the
 * jail's grep is GNU grep.
 */
const KNOWN_DIVERGENCES: Record<string, number[]> = { "claude/s4-long": [4, 49, 61] };

for (const agent of AGENTS) {
  for (const scenario of SCENARIOS) {
    Deno.test(`replay of ${agent}/${scenario} applies every step and ends as the agent left the project`, async () => {
      const store = await fixtureStore([`${agent}/${scenario}`]);
      const session = store.loadSession(store.listSessions().items[0].id)!;
      const { dir, commit } = await projectRepo(scenario, { final: true });
      const r = await replay(session, (ref) => store.payloadText(ref), { repo: dir });
      try {
        assertEquals(r.seed.seeded_from, commit);
        assertEquals(r.seed.notices, []);
        const known = KNOWN_DIVERGENCES[`${agent}/${scenario}`] ?? [];
        for (const s of r.steps) {
          if (known.includes(s.seq)) {
            assertEquals(s.status, "diverged", `step ${s.seq}`);
            assertMatch(s.detail, /^output differs from the recording/);
          } else assertEquals([s.seq, s.status], [s.seq, "applied"], `${s.seq}: ${s.detail}`);
        }
        assertEquals(r.steps.filter((s) => s.status === "diverged").map((s) => s.seq), known);
        // Independently of the engine: the sandbox holds exactly the project as left.
        assertEquals(await treeOf(r.sandbox), finalFiles(scenario));
        // And the engine's own comparison with the working tree agrees.
        assertEquals(r.report.final?.differing, []);
        assertEquals(r.report.final?.compared_with, "the working tree");
        assertEquals(r.report.divergences, known.length);

        const kinds = r.steps.map((s) => s.kind);
        if (scenario === "s1-basic") {
          assert(kinds.includes("write") && kinds.includes("exec"), kinds.join());
        }
        if (scenario === "s2-errors") {
          const failing = r.steps.find((s) =>
            s.kind === "exec" && /test_calc/.test(s.target ?? "")
          )!;
          assertMatch(failing.detail, /^exit 1, failing as recorded/);
          const edit = r.steps.find((s) => s.kind === "edit")!;
          assertEquals(edit.status, "applied");
          assertMatch(edit.detail, /^did not apply, as recorded: /);
        }
        if (scenario === "s4-long") {
          const edited = new Set(r.plan.steps.filter((s) => s.kind === "edit").map((s) => s.path));
          const written = new Set(
            r.plan.steps.filter((s) => s.kind === "write").map((s) => s.path),
          );
          assertEquals(edited.size, 8);
          assertEquals([...written].sort(), ["docs/CHANGELOG.md", "src/i18n.py"]);
          // Each edit carries the reply that preceded it, read from the store when shown.
          const text = (op: string, maxChars: number) =>
            store.operationText(session.session.id, op, maxChars);
          for (const s of r.plan.steps.filter((s) => s.kind === "edit")) {
            const shown = reasoningTexts(s, text);
            assert(
              shown.some((x) => x.text.includes(`Resolving the TODO in ${s.path}`)),
              `${s.seq}: ${JSON.stringify(shown)}`,
            );
          }
        }
      } finally {
        r.files.close();
        store.close();
        await Deno.remove(dir, { recursive: true });
        await Deno.remove(r.sandbox, { recursive: true });
      }
    });
  }
}
