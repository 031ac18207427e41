/**
 * Slash-command markup never titles a session: promptTitle() reads the command out of it, and
 * the store's list, one session's summary and the export all show that command.
 */
import { promptTitle } from "../../../core/model/mod.ts";
import { documentOf } from "../../../core/export/mod.ts";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";
import { assertEquals } from "../../_helpers/assert.ts";

// As Claude Code writes them (taken from the peers' fixtures).
const ORCHESTRATOR = "<command-message>orchestrator is running…</command-message>\n" +
  "<command-name>/orchestrator</command-name>\n" +
  "<command-args>create TODO app by Next.js</command-args>";
const INIT = "<command-message>init is analyzing your codebase…</command-message>\n" +
  "<command-name>/init</command-name>";

Deno.test("promptTitle() makes a slash command's markup its command", async (t) => {
  const cases = [
    {
      name: "a command with arguments",
      input: ORCHESTRATOR,
      expected: "/orchestrator create TODO app by Next.js",
    },
    { name: "a command alone", input: INIT, expected: "/init" },
    {
      name: "a command name without its slash",
      input: "<command-name>review</command-name>\n<command-args></command-args>",
      expected: "/review",
    },
    {
      name: "only a command's message",
      input:
        "<command-message>Running a test command</command-message><command-contents>{}</command-contents>",
      expected: "Running a test command",
    },
    {
      name: "a ! shell line",
      input: "<bash-input>git status</bash-input>",
      expected: "! git status",
    },
    { name: "plain words", input: "  fix the\n  login bug ", expected: "fix the login bug" },
    {
      name: "markup inside the user's words stays",
      input: "why does <div> overflow?",
      expected: "why does <div> overflow?",
    },
  ];
  for (const c of cases) await t.step(c.name, () => assertEquals(promptTitle(c.input), c.expected));
  assertEquals(promptTitle("first line\nsecond", { firstLine: true }), "first line");
  assertEquals(promptTitle(INIT, { firstLine: true }), "/init");
  assertEquals(promptTitle("x".repeat(500)).length, 300);
});

Deno.test("a session opened by a slash command is titled by the command in the list, its summary and the export", async () => {
  const home = await Deno.makeTempDir({ prefix: "chronicle-titles-" });
  const sid = "77777777-1111-4222-8333-444444444444";
  await writeClaudeSession(home, {
    sessionId: sid,
    cwd: "/work/todo",
    turns: [{ user: ORCHESTRATOR, assistant: "Starting." }, { user: "thanks", assistant: "ok" }],
  });
  const store = ChronicleStore.open(":memory:");
  try {
    await importAll(store, {
      env: { home, env: {}, platform: "linux" },
      fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
    });
    const [listed] = store.listSessions({}).items;
    const want = "/orchestrator create TODO app by Next.js";
    assertEquals(listed.first_prompt, want);
    assertEquals(store.getSession(listed.id)?.first_prompt, want);
    assertEquals(documentOf(store, listed.id)?.session.title, want);
  } finally {
    store.close();
    await Deno.remove(home, { recursive: true });
  }
});
