/**
 * Causality on the sessions the real agent CLIs wrote (fixtures/realclients), imported through
 * the real importers and store. Every agent ran the same scripted scenarios, so one table of
 * expected read -> change pairs, written from each scenario's script (`scenario.json`), holds
 * for all of them: steps are named by their number in the script.
 */
import { analyseSession, chainTo, type Tier } from "../../../core/causality/mod.ts";
import { readScenario } from "../sources/_run_importer.ts";
import { fixtureStore, realClients } from "../server/_helpers.ts";
import { assertEquals } from "../../_helpers/assert.ts";

type Pairs = Record<number, [number, Tier][]>;

/** Change (script step) -> its sources (script steps) with their tiers, best first. */
const EXPECTED: Record<string, Pairs> = {
  // write notes.md, edit notes.md, git status, read README.md: nothing was read before a change.
  "s1-basic": { 1: [], 2: [] },
  // run tests, read src/calc.py, edit src/calc.py (does not apply), read CHANGELOG.md.
  "s2-errors": { 3: [[2, "same_file"]] },
  "s4-long": {
    // ls -R (1), grep TODO . (2), grep 'def ' src (3), read utils (4), read app (5), edit app
    6: [[5, "same_file"], [4, "same_folder"], [3, "search_match"], [2, "search_match"], [
      1,
      "search_match",
    ]],
    9: [
      [8, "same_file"],
      [4, "same_file"],
      [7, "same_folder"],
      [3, "search_match"],
      [2, "search_match"],
      [1, "search_match"],
    ],
    // 'def ' finds only app.py and utils.py: it is a background search for config.py.
    12: [
      [11, "same_file"],
      [10, "same_folder"],
      [8, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [3, "recent"],
    ],
    15: [
      [14, "same_file"],
      [13, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [11, "recent"],
      [10, "recent"],
      [8, "recent"],
    ],
    18: [
      [17, "same_file"],
      [13, "same_file"],
      [16, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [11, "recent"],
      [10, "recent"],
      [8, "recent"],
    ],
    21: [
      [20, "same_file"],
      [19, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [17, "recent"],
      [16, "recent"],
      [11, "recent"],
      [10, "recent"],
    ],
    24: [
      [23, "same_file"],
      [22, "same_folder"],
      [19, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [17, "recent"],
      [16, "recent"],
    ],
    27: [
      [26, "same_file"],
      [19, "same_file"],
      [25, "same_folder"],
      [22, "same_folder"],
      [2, "search_match"],
      [1, "search_match"],
      [17, "recent"],
      [16, "recent"],
    ],
    // New files: nothing named them yet; their folders' files were read.
    28: [
      [11, "same_folder"],
      [10, "same_folder"],
      [8, "same_folder"],
      [26, "recent"],
      [25, "recent"],
      [22, "recent"],
      [17, "recent"],
      [16, "recent"],
    ],
    29: [[17, "same_folder"], [16, "same_folder"], [26, "recent"], [25, "recent"], [22, "recent"]],
  },
  // main: Agent (1); sub-agent: ls -la (2), read README.md (3); main: write SUMMARY.md (4).
  "s6-subagent": { 4: [[3, "same_folder"], [2, "recent"]] },
};

const AGENTS: Record<string, string[]> = {
  claude: ["s1-basic", "s2-errors", "s4-long", "s6-subagent"],
  codex: ["s1-basic", "s2-errors", "s4-long"],
  gemini: ["s1-basic", "s2-errors", "s4-long"],
  opencode: ["s1-basic", "s2-errors", "s4-long"],
};

const NOT_TOOLS = new Set(["prompt", "reply", "thinking", "event"]);

for (const [agent, scenarios] of Object.entries(AGENTS)) {
  Deno.test(`causality finds the expected read -> change pairs in ${agent}'s real sessions`, async (t) => {
    for (const scenario of scenarios) {
      await t.step(scenario, async () => {
        const store = await fixtureStore([`${agent}/${scenario}`]);
        try {
          const script = await readScenario(`${realClients()}/${agent}/${scenario}`);
          const [summary] = store.listSessions().items;
          const session = store.loadSession(summary.id)!;
          // The script's tool calls, in order, are the session's tool operations, in order.
          const toolSeqs = session.timeline
            .filter((e) => !NOT_TOOLS.has(session.operations[e.op].kind))
            .map((e) => e.seq);
          assertEquals(
            toolSeqs.length,
            script.tool_calls.length,
            "one operation per scripted call",
          );
          const stepOf = new Map(toolSeqs.map((seq, i) => [seq, script.tool_calls[i].seq]));
          const report = analyseSession(session, (ref, max) => store.payloadText(ref, max));
          const got: Pairs = {};
          for (const c of report.changes) {
            got[stepOf.get(c.seq)!] = c.sources.map((s) => [stepOf.get(s.seq)!, s.tier]);
          }
          assertEquals(got, EXPECTED[scenario]);
          const changed = report.changes.map((c) => c.files.join(","));
          const scripted = script.tool_calls.filter((c) => c.op === "write" || c.op === "edit")
            .map((c) => c.path);
          assertEquals(changed, scripted, "every scripted write and edit is a change");
          if (scenario === "s4-long") {
            // edit app.py (6) -> read app.py (10) -> edit config.py (12); and the docs chain.
            const via = (op: string) =>
              chainTo(report.edges, op).map((e) => [
                stepOf.get(e.from_seq),
                stepOf.get(e.via_seq),
                stepOf.get(e.to_seq),
                e.file,
              ]);
            const at = (step: number) => report.changes.find((c) => stepOf.get(c.seq) === step)!.op;
            assertEquals(via(at(12)), [[6, 10, 12, "src/app.py"]]);
            assertEquals(via(at(18)), [[6, 10, 15, "src/app.py"], [15, 16, 18, "docs/guide.md"]]);
            const app = report.files.find((f) => f.path === "src/app.py")!;
            assertEquals([app.reads, app.changes], [3, 1]);
            assertEquals(
              app.events.filter((e) => e.role !== "search" && e.role !== "list")
                .map((e) => [stepOf.get(e.seq), e.role]),
              [[5, "read"], [6, "change"], [7, "read"], [10, "read"]],
            );
          }
        } finally {
          store.close();
        }
      });
    }
  });
}
