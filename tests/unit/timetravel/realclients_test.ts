/**
 * Time travel on the sessions the real agent CLIs wrote, whose project folders are gone: the
 * files are rebuilt from the recording alone. Every whole-file read the agent made after a
 * change is the check: the text rebuilt from the steps before it (that read left out) must be
 * what the agent saw.
 */
import { sessionFacts } from "../../../core/causality/mod.ts";
import {
  createHistory,
  fileState,
  type Observation,
  observe,
  prepareSessionCode,
  sameText,
  stepEdits,
} from "../../../core/timetravel/mod.ts";
import type { GitEngine } from "../../../core/git/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";

/** A git engine for a project folder that no longer exists. */
const GONE = {
  repo: () => Promise.reject(new ChronicleError("not_found", "The project folder is gone")),
} as unknown as GitEngine;

/**
 * Whole-file reads of a file after the session changed it, from the scripts: s4 reads back
 * app.py twice, guide.md, test_app.py, test_utils.py, i18n.py, CHANGELOG.md and faq.md; Claude
 * Code answered one of the app.py reads with "file unchanged" instead of its text.
 */
const READ_BACKS: Record<string, number> = {
  "claude/s1-basic": 0,
  "claude/s4-long": 7,
  "codex/s1-basic": 0,
  "codex/s4-long": 8,
  "gemini/s1-basic": 0,
  "gemini/s4-long": 8,
  "opencode/s1-basic": 0,
  "opencode/s4-long": 8,
};

const S4_EDITED = [
  "docs/faq.md",
  "docs/guide.md",
  "src/app.py",
  "src/config.py",
  "src/utils.py",
  "tests/conftest.py",
  "tests/test_app.py",
  "tests/test_utils.py",
];
/**
 * The net change of each file, start to end, known from the recording alone. OpenCode's log
 * does not say whether a write created its file, so new files there are "unknown".
 */
function net(created: string): Record<string, [string, string][]> {
  const s4: [string, string][] = [
    ...S4_EDITED.map((p): [string, string] => [p, "modified"]),
    ["docs/CHANGELOG.md", created],
    ["src/i18n.py", created],
  ];
  return {
    "s1-basic": [["notes.md", created]],
    "s4-long": s4.sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  };
}
const NET: Record<string, Record<string, [string, string][]>> = {
  claude: net("added"),
  codex: net("added"),
  gemini: net("added"),
  opencode: net("unknown"),
};

const SCENARIOS = [
  "claude/s1-basic",
  "claude/s4-long",
  "codex/s1-basic",
  "codex/s4-long",
  "gemini/s1-basic",
  "gemini/s4-long",
  "opencode/s1-basic",
  "opencode/s4-long",
];

for (const scenario of SCENARIOS) {
  Deno.test(`time travel rebuilds ${scenario}'s files as the agent read them back`, async () => {
    const store = await fixtureStore([scenario]);
    try {
      const session = store.loadSession(store.listSessions().items[0].id)!;
      const read = (ref: Parameters<typeof store.payloadText>[0], max?: number) =>
        store.payloadText(ref, max);
      const facts = sessionFacts(session, read);
      const edits = facts.flatMap((f) => {
        const op = session.operations[f.op];
        return f.change ? stepEdits(op, f, read(op.request), read(op.response, 2000)) : [];
      });
      const seen: Observation[] = [];
      for (const f of facts) {
        const op = session.operations[f.op];
        const o = observe(op, f, (w) => read(w === "request" ? op.request : op.response));
        if (o) seen.push(o);
      }
      const none = () => Promise.resolve(undefined);
      let checked = 0;
      for (const o of seen) {
        const changedBefore = edits.some((e) => e.path === o.path && e.seq < o.seq);
        if (!changedBefore) continue;
        // Rebuild from everything before this read, the read itself and later steps left out.
        const h = createHistory(
          [],
          edits.filter((e) => e.seq < o.seq),
          none,
          seen.filter((x) => x.seq < o.seq),
        );
        const state = await fileState(h, o.path, o.seq - 1);
        assertEquals(state.status, "exact", `${o.path} before step ${o.seq + 1}: ${state.notes}`);
        assert(
          sameText(state.text ?? "", o.text, o.eolUnknown),
          `${o.path} before step ${o.seq + 1}`,
        );
        checked++;
      }
      assertEquals(checked, READ_BACKS[scenario]);
      const code = await prepareSessionCode(session, { read, git: GONE });
      assertEquals(code.repo.kind, "gone");
      const changed = await code.whatChanged();
      const [agent, name] = scenario.split("/");
      assertEquals(changed.files.map((f) => [f.path, f.state]), NET[agent][name]);
    } finally {
      store.close();
    }
  });
}
