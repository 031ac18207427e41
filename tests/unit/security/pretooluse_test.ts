import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  dirChange,
  type GuardFs,
  parseShell,
  preToolUseCheck,
  toolRole,
  wordCandidates,
} from "../../../core/security/mod.ts";
import { FakeSecrets } from "./_fake_secrets.ts";

const fake = new FakeSecrets(5);
const KEY = fake.anthropic();
const PASSWORD = fake.password();

/** An in-memory GuardFs (no symlinks); records what was read. */
function memFs(files: Record<string, string>): GuardFs & { reads: string[] } {
  const reads: string[] = [];
  const dirs = new Set<string>();
  for (const p of Object.keys(files)) {
    for (let d = p.slice(0, p.lastIndexOf("/")); d; d = d.slice(0, d.lastIndexOf("/"))) dirs.add(d);
  }
  return {
    reads,
    realPath: (p) => Promise.resolve(p in files || dirs.has(p) ? p : null),
    stat: (p) =>
      Promise.resolve(
        p in files
          ? { kind: "file", size: files[p].length }
          : dirs.has(p)
          ? { kind: "dir", size: 0 }
          : null,
      ),
    readDir: (d) =>
      Promise.resolve(
        [...Object.keys(files), ...dirs].filter((p) => p.slice(0, p.lastIndexOf("/")) === d).map((
          p,
        ) => ({
          name: p.slice(d.length + 1),
          kind: dirs.has(p) ? "dir" as const : "file" as const,
        })),
      ),
    readFile: (p, { maxBytes }) => {
      reads.push(p);
      return Promise.resolve(
        p in files ? new TextEncoder().encode(files[p]).subarray(0, maxBytes) : null,
      );
    },
  };
}

const FILES = {
  "/proj/settings.ini": `# local settings\nANTHROPIC_API_KEY=${KEY}\nDB_PASSWORD=${PASSWORD}\n`,
  "/proj/README.md": "# Project\nContact: maintainer@acme-corp.io\n",
  "/proj/src/main.ts": "console.log('hello');\n",
  "/notes.md": "project codename BLUEBIRD-7 ships\n",
};
const now = () => new Date("2026-02-03T04:05:06.000Z");

Deno.test("preToolUseCheck() blocks a Read of a file holding a key, naming rule and file only", async () => {
  const d = await preToolUseCheck(
    {
      tool_name: "Read",
      tool_input: { file_path: "settings.ini" },
      cwd: "/proj",
      session_id: "s1",
    },
    memFs(FILES),
    { now },
  );
  assertEquals([d.decision, d.rules, d.files], ["block", ["api_key", "password"], [
    "/proj/settings.ini",
  ]]);
  assert(d.reason!.includes("/proj/settings.ini") && d.reason!.includes("api_key (anthropic)"));
  assert(!d.reason!.includes(KEY) && !JSON.stringify(d.interception).includes(KEY));
  assertEquals(d.interception.sample, "ANTHROPIC_API_KEY=sk-ant-****");
  assertEquals(d.interception.at, "2026-02-03T04:05:06.000Z");
  assertEquals(d.interception.session_id, "s1");
});

Deno.test("preToolUseCheck() flags but allows personal data, and allows clean files", async () => {
  const fs = memFs(FILES);
  const flagged = await preToolUseCheck({
    tool_name: "Read",
    tool_input: { file_path: "/proj/README.md" },
  }, fs);
  assertEquals([flagged.decision, flagged.action, flagged.rules], ["allow", "flag", ["email"]]);
  const clean = await preToolUseCheck({
    tool_name: "Bash",
    tool_input: { command: "cat src/main.ts" },
    cwd: "/proj",
  }, fs);
  assertEquals([clean.decision, clean.action, clean.reason], ["allow", "allow", undefined]);
  assertEquals(fs.reads, ["/proj/README.md", "/proj/src/main.ts"]);
});

Deno.test("preToolUseCheck(): a custom redact rule blocks, an allow rule unblocks", async () => {
  const fs = memFs(FILES);
  const custom = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/notes.md" } },
    fs,
    {
      rules: [{
        id: "r1",
        name: "codenames",
        pattern: "BLUEBIRD-*",
        action: "redact",
        enabled: true,
      }],
    },
  );
  assertEquals([custom.decision, custom.rules], ["block", ["codenames"]]);
  assert(custom.reason!.includes("codenames") && !custom.reason!.includes("BLUEBIRD"));
  const allowed = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/proj/settings.ini" } },
    fs,
    {
      rules: [
        { id: "a1", name: "test key", pattern: "sk-ant-*", action: "allow", enabled: true },
        { id: "a2", name: "test pw", pattern: PASSWORD, action: "allow", enabled: true },
      ],
    },
  );
  assertEquals(allowed.decision, "allow");
});

Deno.test("preToolUseCheck() scans what a call would send: a Write of a secret blocks", async () => {
  const d = await preToolUseCheck(
    { tool_name: "Write", tool_input: { file_path: "/proj/x.ts", content: `const k = "${KEY}";` } },
    memFs({}),
  );
  assertEquals([d.decision, d.rules, d.files], ["block", ["api_key"], []]);
  assert(d.reason!.includes("the tool input"));
});

Deno.test("toolRole() knows the file, search and shell tools of every agent", () => {
  const roles = [
    "Read",
    "read_file",
    "read",
    "Edit",
    "replace",
    "Grep",
    "search_file_content",
    "grep",
    "Bash",
    "shell",
    "run_shell_command",
    "bash",
    "Write",
    "write_file",
    "LS",
    "glob",
    "WebFetch",
  ]
    .map(toolRole);
  assertEquals(roles, [
    "read",
    "read",
    "read",
    "edit",
    "edit",
    "search",
    "search",
    "search",
    "shell",
    "shell",
    "shell",
    "shell",
    "write",
    "write",
    "list",
    "list",
    "web",
  ]);
  assertEquals(toolRole("mcp__fs__read_file"), undefined);
});

Deno.test("wordCandidates() finds file names in flags, @file arguments and code", async (t) => {
  const table: [string, string[]][] = [
    [".env", [".env"]],
    ["@.env", ["@.env", ".env"]],
    ["--env-file=.env", [".env"]],
    ["file=@secrets.json", ["file=@secrets.json", "@secrets.json", "secrets.json"]],
    ["-v", []],
    ["print(open('.env').read())", [
      "print(open('.env').read())",
      "print",
      "open",
      ".env",
      ".read",
    ]],
  ];
  for (const [word, want] of table) {
    await t.step(word, () => assertEquals(wordCandidates(word), want));
  }
});

Deno.test("parseShell() gives the words a shell would, after quote removal and expansion", async (t) => {
  const env = { HOME: "/home/u", PWD: "/proj" };
  const table: [string, string[][]][] = [
    ["cat .env", [["cat", ".env"]]],
    ["cat '.e'\"nv\"", [["cat", ".env"]]],
    ["cat \\.env", [["cat", ".env"]]],
    ["cat $'\\x2eenv'", [["cat", ".env"]]],
    ["grep KEY .env && echo ok || true; ls", [["grep", "KEY", ".env"], ["echo", "ok"], ["true"], [
      "ls",
    ]]],
    ["cat ~/.netrc", [["cat", "/home/u/.netrc"]]],
    ["cat $HOME/.aws/credentials", [["cat", "/home/u/.aws/credentials"]]],
    ['cat "${PWD}/.env"', [["cat", "/proj/.env"]]],
    ["cat ${NOPE:-.env}", [["cat", ".env"]]],
    ["echo $(cat .env)", [["cat", ".env"], ["echo", ""]]],
    ["echo `cat .env`", [["cat", ".env"], ["echo", ""]]],
    ["diff <(cat .env) x", [["cat", ".env"], ["diff", "", "x"]]],
    ["(cd src; cat .env)", [["cd", "src"], ["cat", ".env"]]],
    ["a | b |& c", [["a"], ["b"], ["c"]]],
    ["echo hi # cat .env", [["echo", "hi"]]],
    ["cat <<EOF\n$(cat .env)\nEOF\nls", [["cat"], ["cat", ".env"], ["ls"]]],
    ["cat <<'EOF'\n$(cat .env)\nEOF", [["cat"]]],
    ['git commit -m "fix: a (b) c"', [["git", "commit", "-m", "fix: a (b) c"]]],
  ];
  for (const [command, want] of table) {
    await t.step(JSON.stringify(command), () => {
      const got = parseShell(command, { env }).commands.map((c) => c.words.map((w) => w.text));
      assertEquals(got, want);
    });
  }
});

Deno.test("parseShell() keeps redirection targets and glob patterns apart from words", () => {
  const [cmd] = parseShell("cat<.env 2>/dev/null '*.env' *.env").commands;
  assertEquals(cmd.words.map((w) => [w.text, w.glob ?? null]), [["cat", null], ["*.env", null], [
    "*.env",
    "*.env",
  ]]);
  assertEquals(cmd.redirects.map((r) => [r.op, r.target.text]), [["<", ".env"], [
    ">",
    "/dev/null",
  ]]);
});

Deno.test("parseShell() says when it cannot finish: nesting too deep, input too long", () => {
  assertEquals(
    parseShell("$(".repeat(40) + "cat .env" + ")".repeat(40)).incomplete,
    "commands nest too deeply",
  );
  assertEquals(
    parseShell("x".repeat(100), { maxLength: 10 }).incomplete,
    "the command is too long to check",
  );
});

Deno.test("parseShell() says which subshell each command runs in and whether it is piped", () => {
  const got = parseShell("cd a; (cd b; cat x) | wc; echo $(cd c) && cat y &").commands.map((c) => ({
    w: c.words.map((w) => w.text).join(" "),
    scope: c.scope.length,
    piped: c.piped === true,
  }));
  assertEquals(got, [
    { w: "cd a", scope: 0, piped: false },
    { w: "cd b", scope: 1, piped: false },
    { w: "cat x", scope: 1, piped: false },
    { w: "wc", scope: 0, piped: true },
    { w: "cd c", scope: 1, piped: false },
    { w: "echo ", scope: 0, piped: false }, // the substitution: an unresolved empty word
    { w: "cat y", scope: 0, piped: true },
  ]);
  const [a, b] = parseShell("(cd x); (cat y)").commands;
  assertEquals(a.scope.length === 1 && b.scope.length === 1 && a.scope[0] !== b.scope[0], true);
});

Deno.test("dirChange() reads cd, pushd and popd as bash does", async (t) => {
  const cases: [string, unknown][] = [
    ["cd src", { go: "to", to: "src", push: false }],
    ["cd -P -- ../x", { go: "to", to: "../x", push: false }],
    ["cd", { go: "home" }],
    ["cd -", { go: "previous" }],
    ['cd "$TARGET"', { go: "unknown" }],
    ["cd sr*", { go: "unknown" }],
    ["pushd lib", { go: "to", to: "lib", push: true }],
    ["pushd", { go: "swap" }],
    ["pushd +1", { go: "unknown" }],
    ["popd", { go: "pop" }],
    ["popd -n", { go: "stay" }],
    ["ls src", null],
  ];
  for (const [line, want] of cases) {
    await t.step(line, () => {
      const [cmd] = parseShell(line).commands;
      assertEquals(dirChange(cmd.words[0].text, cmd.words.slice(1)), want);
    });
  }
});
