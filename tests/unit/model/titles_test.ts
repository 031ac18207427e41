/**
 * Slash-command markup never titles a session: promptTitle() reads the command out of it, and
 * the store's list, one session's summary and the export all show that command.
 */
import { openingTitle, promptTitle, TITLE_OPENING_CHARS } from "../../../core/model/mod.ts";
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

/** promptTitle as it read every prompt whole, before it read only as far as its title goes. */
function wholeTitle(text: string, options: { firstLine?: boolean; max?: number } = {}): string {
  const tag = (name: string, t: string) => {
    const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(t);
    return m ? m[1].replace(/\s+/g, " ").trim() : undefined;
  };
  const t = text.trim();
  let title = options.firstLine ? t.split("\n")[0] : t;
  if (/^<(command-(message|name|args|contents)|bash-input)>/.test(t)) {
    const name = tag("command-name", t);
    const bash = tag("bash-input", t);
    if (name) {
      const args = tag("command-args", t);
      const cmd = name.startsWith("/") ? name : `/${name}`;
      title = args ? `${cmd} ${args}` : cmd;
    } else if (bash !== undefined) title = `! ${bash}`;
    else title = tag("command-message", t) ?? t.replace(/<\/?[a-z-]+>/g, " ");
  }
  return title.replace(/\s+/g, " ").trim().slice(0, options.max ?? 300);
}

/** Deterministic prompts: words, whitespace runs of every length, markup, tags cut anywhere. */
function* prompts(count: number): Generator<string> {
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const pieces = [ // words and whitespace first, then markup
    "fix",
    "the",
    "login-bug",
    "é",
    "😀",
    " ",
    "\n",
    "\t",
    "  \n\n  ",
    "<div>",
    "</command-args>",
    "<command-name>",
    "<",
    ">",
    "</",
  ];
  const openings = ["", "<command-message>", "<command-name>", "<bash-input>", "<command-args>"];
  for (let i = 0; i < count; i++) {
    let text = openings[next(openings.length)];
    const n = next(6) === 0 ? 1_000 + next(3_000) : next(80);
    for (let j = 0; j < n; j++) {
      // (markup one piece in 20: the reference's pattern tries each open tag to the end)
      const p = pieces[next(20) === 0 ? next(pieces.length) : next(9)];
      text += next(40) === 0 ? " ".repeat(next(3_000)) : p;
    }
    yield text;
  }
}

Deno.test("promptTitle() reads only as far as the title goes, and gives what reading it whole gave", () => {
  for (const text of prompts(150)) {
    for (const max of [1, 7, 40, 300]) {
      assertEquals(promptTitle(text, { max }), wholeTitle(text, { max }), JSON.stringify(text));
    }
    assertEquals(promptTitle(text, { firstLine: true }), wholeTitle(text, { firstLine: true }));
    assertEquals(
      promptTitle(text, { firstLine: true, max: Infinity }),
      wholeTitle(text, { firstLine: true, max: Infinity }),
    );
  }
  // a pasted log: what the title needs is its opening (the whole made 470 MB of garbage at
  // 28 MiB); the same words
  const log = "paste of the log:\n" + "2026-12-06 10:00:00 INFO request served\n".repeat(20_000);
  assertEquals(promptTitle(log), wholeTitle(log));
});

Deno.test("openingTitle() titles a prompt from its opening, and reads the whole only when the opening cannot tell", () => {
  let wholeReads = 0;
  const title = (text: string) =>
    openingTitle(text.slice(0, TITLE_OPENING_CHARS), () => (wholeReads++, text));
  const cases = [
    "short prompt",
    "word ".repeat(TITLE_OPENING_CHARS), // plain and long: the opening tells
    " ".repeat(TITLE_OPENING_CHARS + 10) + "late words", // nothing but whitespace in the opening
    "a" + " ".repeat(TITLE_OPENING_CHARS) + "late words", // a title shorter than 300 so far
    // a command whose arguments close past the opening
    `<command-name>/review</command-name><command-args>${"x ".repeat(TITLE_OPENING_CHARS)}` +
    "</command-args>",
  ];
  for (const text of cases) assertEquals(title(text), promptTitle(text), text.slice(0, 40));
  assertEquals(wholeReads, 3, "the whitespace, the short title so far and the markup");
});
