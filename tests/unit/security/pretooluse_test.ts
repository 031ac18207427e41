import { assert, assertEquals, assertRejects } from "../../_helpers/assert.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import {
  filesReadByShell,
  handlePreToolUse,
  type Interception,
  preToolUseCheck,
  type ReadFile,
} from "../../../core/security/mod.ts";
import { FakeSecrets } from "./_fake_secrets.ts";

const fake = new FakeSecrets(5);
const KEY = fake.anthropic();
const PASSWORD = fake.password();

/** An in-memory file system for the injected reader; records what was read. */
function memFs(files: Record<string, string | Uint8Array>) {
  const reads: [string, number][] = [];
  const readFile: ReadFile = (path, maxBytes) => {
    reads.push([path, maxBytes]);
    const f = files[path];
    if (f === undefined) return Promise.resolve(null);
    const bytes = typeof f === "string" ? new TextEncoder().encode(f) : f;
    return Promise.resolve(bytes.subarray(0, maxBytes));
  };
  return { readFile, reads };
}

const FILES = {
  "/proj/.env": `# local settings\nANTHROPIC_API_KEY=${KEY}\nDB_PASSWORD=${PASSWORD}\n`,
  "/proj/README.md": "# Project\nContact: maintainer@acme-corp.io\n",
  "/proj/src/main.ts": "console.log('hello');\n",
  "/proj/package-lock.json": `{"integrity": "sha512-${fake.alnum(80)}", "token": "${
    fake.alnum(40)
  }"}`,
  "/proj/logo.png": new Uint8Array([
    0x89,
    0x50,
    0x4e,
    0x47,
    0,
    0,
    0,
    13,
    ...new TextEncoder().encode(KEY),
  ]),
};

const now = () => new Date("2026-02-03T04:05:06.000Z");

Deno.test("preToolUseCheck() blocks a Read of a file holding a key, naming rule and file only", async () => {
  const fs = memFs(FILES);
  const d = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/proj/.env" }, session_id: "s1" },
    fs.readFile,
    { now },
  );
  assertEquals(d.decision, "block");
  assertEquals(d.action, "block");
  assertEquals(d.rules, ["api_key", "password"]);
  assertEquals(d.files, ["/proj/.env"]);
  assert(d.reason!.includes("/proj/.env"), d.reason);
  assert(d.reason!.includes("api_key (anthropic)"), d.reason);
  assert(d.reason!.includes("password"), d.reason);
  assert(!d.reason!.includes(KEY) && !d.reason!.includes(PASSWORD));
  assertEquals(d.interception, {
    at: "2026-02-03T04:05:06.000Z",
    session_id: "s1",
    tool: "Read",
    file: "/proj/.env",
    rules: ["api_key", "password"],
    sample: "ANTHROPIC_API_KEY=sk-ant-****",
    action: "block",
  });
  assertEquals(fs.reads, [["/proj/.env", 1 << 20]]);
});

Deno.test("preToolUseCheck() resolves relative paths against cwd", async () => {
  const d = await preToolUseCheck(
    { tool_name: "read_file", tool_input: { path: "./../.env" }, cwd: "/proj/src" },
    memFs(FILES).readFile,
  );
  assertEquals([d.decision, d.files], ["block", ["/proj/.env"]]);
});

Deno.test("preToolUseCheck() allows a benign Bash command", async () => {
  const fs = memFs(FILES);
  const d = await preToolUseCheck(
    { tool_name: "Bash", tool_input: { command: "deno task test", description: "Run tests" } },
    fs.readFile,
  );
  assertEquals([d.decision, d.action, d.rules, d.reason], ["allow", "allow", [], undefined]);
  assertEquals(d.interception.action, "allow");
  assertEquals(fs.reads, []);
});

Deno.test("preToolUseCheck() blocks `cat .env` in a shell command", async () => {
  for (
    const tool_input of [{ command: "cd /proj && cat .env | head -n 5" }, {
      command: ["bash", "-lc", "cat /proj/.env"],
    }]
  ) {
    const d = await preToolUseCheck(
      { tool_name: "Bash", tool_input, cwd: "/proj" },
      memFs(FILES).readFile,
    );
    assertEquals([d.decision, d.files], ["block", ["/proj/.env"]]);
  }
});

Deno.test("preToolUseCheck() flags but allows personal data", async () => {
  const d = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/proj/README.md" } },
    memFs(FILES).readFile,
  );
  assertEquals([d.decision, d.action, d.rules], ["allow", "flag", ["email"]]);
  assertEquals(d.interception.sample, "Contact: ***@***.io");
  assert(d.reason!.startsWith("Chronicle flagged Read"));
});

Deno.test("preToolUseCheck() scans the input of other tools: a Write of a secret blocks", async () => {
  const d = await preToolUseCheck(
    {
      tool_name: "Write",
      tool_input: {
        file_path: "/proj/config.ts",
        content: `export const url = "postgres://app:${PASSWORD}@db.acme.io/app";`,
      },
    },
    memFs(FILES).readFile,
  );
  assertEquals([d.decision, d.rules, d.files], ["block", ["db_conn"], []]);
  assert(d.reason!.includes("the tool input"));
  assert(!d.reason!.includes(PASSWORD));
});

Deno.test("preToolUseCheck() skips binary files and lockfiles, and missing files", async () => {
  const fs = memFs(FILES);
  for (const file_path of ["/proj/logo.png", "/proj/package-lock.json", "/proj/nope.txt"]) {
    const d = await preToolUseCheck({ tool_name: "Read", tool_input: { file_path } }, fs.readFile);
    assertEquals(d.decision, "allow", file_path);
  }
  assertEquals(fs.reads.map(([p]) => p), ["/proj/logo.png", "/proj/nope.txt"]);
});

Deno.test("preToolUseCheck() caps how much of a file it reads", async () => {
  const big = "x".repeat(5000) + `\nANTHROPIC_API_KEY=${KEY}\n`;
  const fs = memFs({ "/big.txt": big });
  const d = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/big.txt" } },
    fs.readFile,
    { maxBytes: 4096 },
  );
  assertEquals(d.decision, "allow");
  assertEquals(fs.reads, [["/big.txt", 4096]]);
});

Deno.test("preToolUseCheck(): a custom redact rule blocks, an allow rule unblocks", async () => {
  const fs = memFs({
    "/notes.md": "project codename BLUEBIRD-7 ships\n",
    "/proj/.env": FILES["/proj/.env"],
  });
  const custom = await preToolUseCheck(
    { tool_name: "Read", tool_input: { file_path: "/notes.md" } },
    fs.readFile,
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
    { tool_name: "Read", tool_input: { file_path: "/proj/.env" } },
    fs.readFile,
    {
      rules: [
        { id: "a1", name: "test key", pattern: "sk-ant-*", action: "allow", enabled: true },
        { id: "a2", name: "test pw", pattern: PASSWORD, action: "allow", enabled: true },
      ],
    },
  );
  assertEquals(allowed.decision, "allow");
});

Deno.test("filesReadByShell() finds the files printing commands name", async (t) => {
  const table: [string, string[]][] = [
    ["cat .env", [".env"]],
    ["head -n 20 config/secrets.yml", ["config/secrets.yml"]],
    ["tail -f log.txt 2>&1", ["log.txt"]],
    ["sudo cat /etc/shadow", ["/etc/shadow"]],
    ["FOO=1 less 'my file.txt'", ["my file.txt"]],
    ["source .envrc && npm test", [".envrc"]],
    ["psql < dump.sql", ["dump.sql"]],
    ["grep -r TODO src", []],
    ["echo cat .env", []],
    ["npm run build; ls -la", []],
  ];
  for (const [cmd, want] of table) {
    await t.step(cmd, () => assertEquals(filesReadByShell(cmd), want));
  }
});

Deno.test("handlePreToolUse() decides, logs the interception and answers the guard", async () => {
  const logged: Interception[] = [];
  const deps = {
    readFile: memFs(FILES).readFile,
    rules: () => [],
    log: (i: Interception) => void logged.push(i),
    now,
  };
  const block = await handlePreToolUse({
    tool_name: "Read",
    tool_input: { file_path: ".env" },
    cwd: "/proj",
    session_id: "abc",
  }, deps);
  assertEquals(block.decision, "block");
  assertEquals(block.file, "/proj/.env");
  assertEquals(block.rules, ["api_key", "password"]);
  const allow = await handlePreToolUse({ tool_name: "Bash", tool_input: { command: "ls" } }, deps);
  assertEquals(allow, { decision: "allow", action: "allow", rules: [] });
  assertEquals(logged.map((i) => [i.tool, i.action, i.session_id]), [
    ["Read", "block", "abc"],
    ["Bash", "allow", undefined],
  ]);
  assert(!JSON.stringify(logged).includes(KEY));
});

Deno.test("handlePreToolUse() rejects a body without a tool name and survives a failing log", async () => {
  const deps = { readFile: memFs({}).readFile };
  for (const body of [null, [], "x", { tool_input: {} }, { tool_name: "" }]) {
    const e = await assertRejects(() => handlePreToolUse(body, deps), ChronicleError);
    assertEquals((e as ChronicleError).code, "usage");
  }
  const r = await handlePreToolUse({ tool_name: "Bash", tool_input: { command: "ls" } }, {
    ...deps,
    log: () => {
      throw new Error("disk full");
    },
  });
  assertEquals(r.decision, "allow");
});
