/**
 * The conformance scenarios as data, in a neutral vocabulary (write, edit, read, bash, grep,
 * agent). `translate.ts` turns each step into the native tool call of one agent. Paths are
 * relative to the scratch project.
 *
 * @module
 */

export type Step =
  | { op: "write"; path: string; content: string }
  /** `old` and `new` are whole lines (ending in "\n"), so Codex can express them as a patch. */
  | { op: "edit"; path: string; old: string; new: string }
  | { op: "read"; path: string }
  | { op: "bash"; command: string; description: string }
  | { op: "grep"; pattern: string; dir: string }
  /** Delegate to a sub-agent (Claude Code's Agent tool); its thread is `Scenario.subagent`. */
  | { op: "agent"; description: string; prompt: string }
  /** Wait for the sub-agents a call started (Codex's wait_agent). */
  | { op: "wait" };

/** A step plus what must hold for the operation Chronicle imports from it. */
export type ScriptedStep = Step & {
  /** The tool must report an error (expected_error in the real-client fixtures). */
  error?: boolean;
  /** Agents whose CLI refuses this step by its own policy: for them it must be an error. */
  refusedBy?: string[];
  /**
   * Agents that refuse to edit a file this process has not read (Qwen Code, after a resume):
   * for them a read of the step's path is scripted just before it.
   */
  readFirstBy?: string[];
  /** A substring the recorded tool result must contain; with a list, any one of them. */
  result_has?: string | string[];
};

export interface NeutralTurn {
  text?: string;
  steps: ScriptedStep[];
}

export interface NeutralThread {
  prompt: string;
  turns: NeutralTurn[];
  final: string;
}

export interface Scenario {
  id: string;
  description: string;
  /** Files written into the scratch project (a fresh git repository) before the run. */
  files: Record<string, string>;
  main: NeutralThread;
  subagent?: NeutralThread;
  /** A second run that resumes the first one's session with another prompt. */
  resume?: NeutralThread;
  /**
   * Secrets the run exposes: `chronicle scan --session` on the imported session must report
   * each rule, and never print a value.
   */
  secrets?: {
    rules: string[];
    values: string[];
    /**
     * Rules whose secret an agent's CLI masks itself before the model or its log sees it: for
     * those agents the rule must find nothing (the value is not in the session to find).
     */
    maskedBy?: Record<string, string[]>;
  };
  /** Agents the scenario applies to; all when absent. */
  agents?: string[];
  /** Agent features the scenario needs switched on (`spawn`: Codex's collaboration tools). */
  needs?: string[];
  title: string;
}

const s1: Scenario = {
  id: "s1-basic",
  description: "Write notes.md, edit it (typo fix), run a shell command, read README.md.",
  title: "Create and fix notes file",
  files: {
    "README.md": "# notes-app\n\nA tiny notes application used for demos.\n",
    "src/app.py": 'def main():\n    print("notes")\n',
  },
  main: {
    prompt:
      "Create a notes.md file with a short TODO list, fix the typo in it, show git status and then read the README.",
    turns: [
      {
        text: "I'll create notes.md with a TODO list.",
        steps: [{
          op: "write",
          path: "notes.md",
          content: "# TODO\n\n- [ ] add tests\n- [ ] wirte docs\n",
        }],
      },
      {
        text: "Fixing the typo.",
        steps: [{
          op: "edit",
          path: "notes.md",
          old: "- [ ] wirte docs\n",
          new: "- [ ] write docs\n",
        }],
      },
      {
        steps: [{
          op: "bash",
          command: "git status --short && wc -l notes.md",
          description: "Show git status and count lines",
          result_has: "notes.md",
        }],
      },
      { steps: [{ op: "read", path: "README.md", result_has: "A tiny notes application" }] },
    ],
    final:
      'Created notes.md with two TODO items, fixed the "wirte" typo, and checked git status (notes.md is untracked). The README describes a tiny notes application.',
  },
};

const s2: Scenario = {
  id: "s2-errors",
  description:
    "A shell command exiting 1 (failing test), an edit that does not apply, a read of a missing file.",
  title: "Failing tests and bad edit",
  files: {
    "src/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
    "tests/test_calc.py": 'import sys\n\nsys.path.insert(0, "src")\nfrom calc import add, sub\n\n' +
      'assert add(2, 2) == 4\nassert sub(3, 1) == 2, "sub(3, 1) should be 2"\n',
  },
  main: {
    prompt: "The tests are failing. Run them, fix src/calc.py, and check the CHANGELOG for notes.",
    turns: [
      {
        text: "Running the tests first.",
        steps: [{
          op: "bash",
          command: "python3 tests/test_calc.py",
          description: "Run the tests",
          error: true,
          result_has: "AssertionError",
        }],
      },
      { steps: [{ op: "read", path: "src/calc.py", result_has: "def sub(a, b):" }] },
      {
        text: "Fixing sub().",
        steps: [{
          op: "edit",
          path: "src/calc.py",
          old:
            "class Calculator:\n    def divide(self, numerator, denominator):\n        return numerator / denominator\n",
          new: "def sub(a, b):\n    return a - b\n",
          error: true,
        }],
      },
      { steps: [{ op: "read", path: "CHANGELOG.md", error: true }] },
    ],
    final:
      "The test fails with an AssertionError in sub(). My edit did not apply because the text I tried to replace is not in src/calc.py, and there is no CHANGELOG.md in the repo.",
  },
};

const S4_FILES: Record<string, string> = {
  "src/utils.py":
    '"""Helpers. 中文说明：数据处理模块 / 日本語のテスト / 한국어 설명"""\n\n\ndef slugify(s):\n    # TODO: handle unicode\n    return s.lower().replace(" ", "-")\n',
  "src/app.py":
    '"""Main app. 🚀 Launch ✅ done 🎉"""\nfrom utils import slugify\n\n\ndef run(title):\n    # TODO: validate title\n    return slugify(title)\n',
  "src/config.py":
    '# Config עברית: שלום עולם / العربية: مرحبا بالعالم\nDEBUG = True\n# TODO: read from env\nLOCALE = "en"\n',
  "docs/faq.md":
    "# FAQ ❓\n\nQ: RTL? A: עברית: שלום עולם / العربية: مرحبا بالعالم\n\nTODO: add more questions\n",
  "docs/guide.md":
    "# Guide 📘\n\nSee 中文说明：数据处理模块 / 日本語のテスト / 한국어 설명.\n\nTODO: document run()\n",
  "tests/conftest.py": 'import sys\n\nsys.path.insert(0, "src")\n# TODO: fixtures\n',
  "tests/test_app.py":
    'from app import run\n\n\ndef test_run():\n    # TODO: more cases\n    assert run("Hello World") == "hello-world"\n',
  "tests/test_utils.py":
    'from utils import slugify\n\n\ndef test_slugify():\n    # TODO: unicode case\n    assert slugify("A B") == "a-b"\n',
};

/** [file, sibling read for context, TODO line, replacement lines] in edit order. */
const S4_EDITS: [string, string, string, string][] = [
  [
    "src/app.py",
    "src/utils.py",
    "    # TODO: validate title\n",
    '    if not title:\n        raise ValueError("empty title 🚫")\n',
  ],
  [
    "src/utils.py",
    "src/app.py",
    "    # TODO: handle unicode\n",
    "    # unicode-safe: 中文 / עברית kept as-is\n",
  ],
  [
    "src/config.py",
    "src/app.py",
    "# TODO: read from env\n",
    'import os\nDEBUG = os.environ.get("DEBUG") == "1"\n',
  ],
  [
    "docs/guide.md",
    "docs/faq.md",
    "TODO: document run()\n",
    '`run(title)` returns a slug ✅ — 例: "Hello World" → "hello-world"\n',
  ],
  [
    "docs/faq.md",
    "docs/guide.md",
    "TODO: add more questions\n",
    "Q: Emoji? A: Yes 😀 — מותר / مسموح\n",
  ],
  [
    "tests/test_app.py",
    "tests/conftest.py",
    "    # TODO: more cases\n",
    '    assert run("Ünïcödé Tïtle") == "ünïcödé-tïtle"\n',
  ],
  [
    "tests/test_utils.py",
    "tests/test_app.py",
    "    # TODO: unicode case\n",
    '    assert slugify("日本 語") == "日本-語"\n',
  ],
  [
    "tests/conftest.py",
    "tests/test_utils.py",
    "# TODO: fixtures\n",
    'FIXTURE_DIR = "fixtures"  # 🧪 fixtures live here\n',
  ],
];

/** ~300 KB of output from one shell command. */
export const S4_BIG_COMMAND =
  "seq -f 'row %06g: the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJ' 1 3600";

const s4: Scenario = {
  id: "s4-long",
  description:
    "40+ tool calls across 8 files in 3 folders, one ~300 KB shell output, emoji/CJK/RTL text.",
  title: "Resolve TODOs with unicode",
  files: S4_FILES,
  main: {
    prompt:
      "Resolve every TODO in src/, docs/ and tests/ 🚀 — keep the unicode text (中文, 日本語, עברית, العربية) intact, add an i18n module and a changelog, then generate the big fixture log.",
    turns: [
      {
        text: "Let me look at the project layout first. 👀",
        steps: [{
          op: "bash",
          command: "ls -R src docs tests",
          description: "List project layout",
          result_has: "conftest.py",
        }],
      },
      {
        text: "Searching for TODO markers (all of these files will be edited).",
        steps: [{ op: "grep", pattern: "TODO", dir: ".", result_has: "validate title" }],
      },
      { steps: [{ op: "grep", pattern: "def ", dir: "src", result_has: "slugify" }] },
      ...S4_EDITS.flatMap(([file, sibling, old, replacement]): NeutralTurn[] => [
        {
          text: `Reading ${sibling} for context before editing ${file}.`,
          steps: [{ op: "read", path: sibling }],
        },
        // No result_has: Claude Code answers a re-read of an unchanged file with a notice.
        { steps: [{ op: "read", path: file }] },
        {
          text: `Resolving the TODO in ${file}.`,
          steps: [{ op: "edit", path: file, old, new: replacement }],
        },
      ]),
      {
        steps: [{
          op: "write",
          path: "src/i18n.py",
          content:
            'GREETINGS = {\n    "zh": "你好，世界",\n    "ja": "こんにちは世界",\n    "he": "שלום עולם",\n    "ar": "مرحبا بالعالم",\n    "emoji": "👋🌍",\n}\n',
        }],
      },
      {
        steps: [{
          op: "write",
          path: "docs/CHANGELOG.md",
          content:
            "# Changelog\n\n- Resolved all TODOs ✅\n- Added i18n greetings 🌐 (中文, 日本語, עברית, العربية)\n",
        }],
      },
      {
        text: "Verifying no TODO markers remain.",
        steps: [{
          op: "bash",
          command: "grep -rn 'TODO:' src docs tests || echo none left",
          description: "Search for TODO",
          result_has: "none left",
        }],
      },
      { steps: [{ op: "grep", pattern: "שלום|你好", dir: "src", result_has: "你好" }] },
      {
        text: "Generating the large fixture output to check the log pipeline.",
        steps: [{
          op: "bash",
          command: S4_BIG_COMMAND,
          description: "Generate the large fixture log (~300 KB)",
          // Agents keep the head (Claude Code, Codex, Gemini) or a window of the output
          // (OpenCode, which saves the whole of it beside its database) in the log: any two
          // consecutive rows prove it is the real output, not a notice about it.
          result_has: "lazy dog 0123456789 ABCDEFGHIJ\nrow 00",
        }],
      },
      {
        steps: [{
          op: "bash",
          command: "wc -c src/*.py docs/*.md tests/*.py",
          description: "Count bytes per file",
          result_has: "total",
        }],
      },
      {
        steps: [{
          op: "bash",
          command:
            "python3 -c \"import sys; sys.path.insert(0,'src'); import app, i18n; print(app.run('Hello World'), i18n.GREETINGS['zh'])\"",
          description: "Smoke-test the modules",
          result_has: "hello-world 你好，世界",
        }],
      },
      { steps: [{ op: "read", path: "src/i18n.py", result_has: "こんにちは世界" }] },
      { steps: [{ op: "read", path: "docs/CHANGELOG.md", result_has: "Resolved all TODOs" }] },
      { steps: [{ op: "grep", pattern: "import", dir: "tests", result_has: "slugify" }] },
      {
        steps: [{
          op: "bash",
          command:
            "python3 -m py_compile src/app.py src/utils.py src/config.py src/i18n.py && echo compiled OK",
          description: "Byte-compile sources",
          result_has: "compiled OK",
        }],
      },
      {
        text: "Double-checking the RTL text in the FAQ.",
        steps: [{ op: "read", path: "docs/faq.md", result_has: "מותר / مسموح" }],
      },
      { steps: [{ op: "grep", pattern: "slugify", dir: ".", result_has: "def slugify" }] },
      {
        steps: [{
          op: "bash",
          command: "git diff --stat",
          description: "Show diff summary",
          result_has: "src/app.py",
        }],
      },
      {
        steps: [{
          op: "bash",
          command: "git status --short",
          description: "Show git status",
          result_has: "i18n.py",
        }],
      },
    ],
    final:
      'All 8 TODOs are resolved ✅ across src/, docs/ and tests/. I added src/i18n.py (你好，世界 / שלום עולם / مرحبا بالعالم 👋🌍) and docs/CHANGELOG.md, generated the ~300 KB fixture log, and the smoke test prints "hello-world 你好，世界".',
  },
};

const SUMMARY_MD =
  "# Summary\n\ninventory-api is a small REST API for warehouse inventory; the entry point is src/server.py.\n";

const SUB_PROMPT =
  "Inspect the repository in the current directory: list its files and read README.md, then report the project name and purpose in one sentence.";

const s6: Scenario = {
  id: "s6-subagent",
  description:
    "The main agent delegates to a sub-agent (2 tool calls: ls, read README.md), then writes SUMMARY.md.",
  title: "Summarise repository with sub-agent",
  agents: ["claude"],
  files: {
    "README.md": "# inventory-api\n\nA REST API for warehouse inventory.\n",
    "src/server.py": 'def serve():\n    return "ok"\n',
  },
  main: {
    prompt: "Use a sub-agent to inspect this repository, then write a one-paragraph SUMMARY.md.",
    turns: [
      {
        text: "I'll delegate the inspection to a sub-agent.",
        steps: [{
          op: "agent",
          description: "Inspect repository files",
          prompt: SUB_PROMPT,
          // Claude Code up to 2.1.2xx waits for the sub-agent and returns its report; later
          // versions launch it in the background and return launch metadata (the report
          // comes back as a <task-notification> user record).
          result_has: ["inventory-api", "Async agent launched"],
        }],
      },
      {
        steps: [{
          op: "write",
          path: "SUMMARY.md",
          content: SUMMARY_MD,
        }],
      },
    ],
    final:
      "The sub-agent found that this is inventory-api, a REST API for warehouse inventory. I wrote SUMMARY.md with a one-paragraph summary.",
  },
  subagent: {
    prompt: SUB_PROMPT,
    turns: [
      {
        text: "Listing the files.",
        steps: [{
          op: "bash",
          command: "ls -la",
          description: "List repository files",
          result_has: "README.md",
        }],
      },
      { steps: [{ op: "read", path: "README.md", result_has: "warehouse inventory" }] },
    ],
    final:
      "The project is inventory-api, a REST API for warehouse inventory (files: README.md, src/server.py).",
  },
};

const s7: Scenario = {
  id: "s7-resume",
  description:
    "Run, exit, then resume the same session with another prompt: each run's calls appear once, in order.",
  title: "Greeting script, resumed",
  files: { "README.md": "# greeter\n\nSays hello.\n" },
  main: {
    prompt: "Create hello.py that prints a greeting, then run it.",
    turns: [
      {
        text: "Creating hello.py.",
        steps: [{ op: "write", path: "hello.py", content: 'print("hello")\n' }],
      },
      {
        steps: [{
          op: "bash",
          command: "python3 hello.py",
          description: "Run the greeting",
          result_has: "hello",
        }],
      },
    ],
    final: "hello.py prints hello.",
  },
  resume: {
    prompt: "Now make the greeting say goodbye as well, and run it again.",
    turns: [
      {
        text: "Adding the goodbye line.",
        steps: [{
          op: "edit",
          path: "hello.py",
          old: 'print("hello")\n',
          new: 'print("hello")\nprint("goodbye")\n',
          readFirstBy: ["qwen"],
        }],
      },
      { steps: [{ op: "read", path: "hello.py", result_has: "goodbye" }] },
      {
        steps: [{
          op: "bash",
          command: "python3 hello.py",
          description: "Run the greeting again",
          result_has: "goodbye",
        }],
      },
    ],
    final: "hello.py now prints hello and then goodbye.",
  },
};

const s8: Scenario = {
  id: "s8-spawn",
  description:
    "Codex spawns a sub-agent thread that inherits the conversation (fork_turns all), waits for it, then writes SUMMARY.md.",
  title: "Summarise repository with a spawned thread",
  agents: ["codex"],
  needs: ["spawn"],
  files: s6.files,
  main: {
    prompt:
      "Spawn a sub-agent to inspect this repository, wait for it, then write a one-paragraph SUMMARY.md.",
    turns: [
      {
        text: "Spawning a sub-agent for the inspection.",
        steps: [{
          op: "agent",
          description: "inspect",
          prompt: SUB_PROMPT,
          result_has: ["inspect", "agent", "task_name"],
        }],
      },
      { steps: [{ op: "wait" }] },
      { steps: [{ op: "write", path: "SUMMARY.md", content: SUMMARY_MD }] },
    ],
    final:
      "The spawned thread reported inventory-api, a REST API for warehouse inventory; I wrote SUMMARY.md.",
  },
  subagent: s6.subagent,
};

/**
 * Credentials made up for this scenario, shaped like real ones (a value that says "fake" or
 * "example" is a placeholder to the scanner, so these do not).
 */
const FAKE_PASSWORD = "Tr0ub4dor-9x2Q-Lm7v";
const FAKE_DB_URL = "postgres://app:s3cr3tPw71Zk@db.internal:5432/inventory";

const s9: Scenario = {
  id: "s9-secrets",
  description: "The agent reads a .env and greps the project for a password.",
  title: "Find the database password",
  files: {
    ".env": `APP_ENV=production\nDB_PASSWORD=${FAKE_PASSWORD}\nDATABASE_URL=${FAKE_DB_URL}\n`,
    "src/db.py": 'import os\n\nPASSWORD = os.environ["DB_PASSWORD"]\n',
  },
  // Gemini CLI refuses to read a path with a `.env` segment (its own protection), but its
  // grep_search still prints the file's lines: the secrets reach its session all the same.
  // Copilot CLI masks a connection string's credentials (`DATABASE_URL=******db.internal...`)
  // in every tool result, so no db_conn reaches its session.
  secrets: {
    rules: ["password", "db_conn"],
    values: [FAKE_PASSWORD, "s3cr3tPw71Zk"],
    maskedBy: { db_conn: ["copilot"] },
  },
  main: {
    prompt: "Where does the app get its database password? Check the .env and search the code.",
    turns: [
      {
        text: "Reading the .env first.",
        steps: [{
          op: "read",
          path: ".env",
          result_has: ["DB_PASSWORD", "Path not in workspace"],
          refusedBy: ["gemini"],
        }],
      },
      {
        steps: [{ op: "grep", pattern: "PASSWORD", dir: ".", result_has: "DB_PASSWORD" }],
      },
    ],
    final: "The password comes from DB_PASSWORD in .env, read by src/db.py through os.environ.",
  },
};

export const SCENARIOS: readonly Scenario[] = [s1, s2, s4, s6, s7, s8, s9];

/** The text a script matches a request's first user message against. */
export function matchOf(prompt: string): string {
  return prompt.slice(0, 80);
}
