/**
 * The CLI end to end, through `deno run` with the same permission flags as `deno task
 * chronicle`, on fixture homes: import, sessions, show, export, verify, exit codes.
 */
import { FIXTURES } from "../_helpers/fixtures.ts";
import { sessionDirName } from "../../core/artifacts/mod.ts";
import { formatBytes } from "../../core/doctor/mod.ts";
import { MAX_LINE_BYTES } from "../../core/sources/jsonl.ts";
import { KEEP_TEXT_BYTES } from "../../core/sources/json_cut.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SHARED = FIXTURES;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");

const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

async function chronicle(args: string[], env: Record<string, string>, stdin?: string) {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, ...args],
    // Deno keeps its module cache under HOME unless told otherwise; the tests point HOME at
    // fixtures, so keep the cache where the test runner's is.
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, ...env },
    clearEnv: true,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("chronicle import, sessions, show, export and verify work end to end", async () => {
  const data = await Deno.makeTempDir({ prefix: "chronicle-cli-test-" });
  const env = {
    HOME: `${SHARED}/realclients/claude/s2-errors/native`,
    CHRONICLE_HOME: `${data}/home`,
  };
  try {
    const imp = await chronicle(["import", "--json"], env);
    assertEquals(imp.code, 0, imp.stderr);
    const summary = JSON.parse(imp.stdout);
    assertEquals([summary.sessions, summary.operations], [1, 8]);
    assertEquals((await Deno.stat(`${data}/home`)).mode! & 0o777, 0o700);
    assertEquals((await Deno.stat(`${data}/home/chronicle.db`)).mode! & 0o777, 0o600);

    const again = await chronicle(["import"], env);
    assertMatch(again.stdout, /1 unchanged/);

    const list = JSON.parse((await chronicle(["sessions", "--json"], env)).stdout);
    assertEquals(list.total, 1);
    const s = list.sessions[0];
    for (
      const k of [
        "id",
        "source",
        "native_id",
        "project_path",
        "started_at",
        "ended_at",
        "title",
        "op_count",
      ]
    ) {
      assert(k in s, k);
    }
    assertEquals(s.source, "claude-code");

    const show = await chronicle(["show", s.native_id.slice(0, 8)], env);
    assertEquals(show.code, 0, show.stderr);
    assertStringIncludes(show.stdout, "exec Bash: python3 tests/test_calc.py ✗ error");

    const exp = await chronicle(
      ["export", s.id, "--format", "canonical", "--out", `${data}/out`],
      env,
    );
    assertEquals(exp.code, 0, exp.stderr);
    const ok = await chronicle(["verify", `${data}/out`], env);
    assertEquals(ok.code, 0, ok.stdout);
    const sessionJson = `${data}/out/sessions/${sessionDirName(s.id)}/session.json`;
    assert(!sessionDirName(s.id).includes(":"), "portable folder names");
    await Deno.writeTextFile(sessionJson, (await Deno.readTextFile(sessionJson)) + " ");
    const bad = await chronicle(["verify", `${data}/out`], env);
    assertEquals(bad.code, 1);
    assertMatch(bad.stdout, /FAIL/);
  } finally {
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("chronicle answers usage errors with exit 2 and one clear line", async (t) => {
  const env = { HOME: "/nonexistent", CHRONICLE_HOME: "/tmp/chronicle-cli-usage-never-created" };
  const cases: { args: string[]; code: number; stderr: RegExp }[] = [
    { args: ["frobnicate"], code: 2, stderr: /unknown command "frobnicate"/ },
    { args: ["sessions", "--bogus"], code: 2, stderr: /unknown option "--bogus"/ },
    { args: ["import", "--source", "vim"], code: 2, stderr: /unknown source "vim"/ },
    { args: ["export", "x"], code: 2, stderr: /needs --out/ },
    { args: ["verify"], code: 2, stderr: /exactly one folder/ },
    { args: ["search"], code: 2, stderr: /takes the text to look for/ },
    { args: ["search", "::"], code: 2, stderr: /"::" has no word to search for/ },
    { args: ["search", "x", "--since", "last week"], code: 2, stderr: /--since takes a date/ },
    {
      args: ["search", "x", "--limit", "0"],
      code: 2,
      stderr: /--limit takes an integer from 1 to/,
    },
    {
      args: ["search", "x", "--offset", "-1"],
      code: 2,
      stderr: /--offset takes an integer from 0/,
    },
    { args: ["sessions", "--until", "soon"], code: 2, stderr: /--until takes a date/ },
  ];
  for (const c of cases) {
    await t.step(c.args.join(" "), async () => {
      const r = await chronicle(c.args, env);
      assertEquals(r.code, c.code);
      assertMatch(r.stderr, c.stderr);
      assert(!r.stderr.includes("    at "), "no stack trace");
      const made = await Deno.stat(env.CHRONICLE_HOME).then(() => true, () => false);
      assert(!made, "a usage error makes no data folder");
    });
  }
});

Deno.test("every command answers --help and --version", async (t) => {
  const commands = [
    "serve",
    "import",
    "sessions",
    "show",
    "search",
    "export",
    "verify",
    "doctor",
    "issues",
    "completion",
  ];
  for (const cmd of [...commands, "scan", "guard"]) {
    await t.step(cmd, async () => {
      const help = await chronicle([cmd, "--help"], { HOME: "/nonexistent" });
      assertEquals(help.code, 0);
      assertMatch(help.stdout, new RegExp(`^Usage: chronicle ${cmd}`));
      const v = await chronicle([cmd, "--version"], { HOME: "/nonexistent" });
      assertMatch(v.stdout, /^chronicle \d+\.\d+\.\d+/);
    });
  }
});

Deno.test("chronicle search finds a command's words and output, pages on, and exits 1 on no hit", async () => {
  const data = await Deno.makeTempDir({ prefix: "chronicle-cli-test-" });
  const env = {
    HOME: `${SHARED}/realclients/claude/s2-errors/native`,
    CHRONICLE_HOME: `${data}/home`,
  };
  try {
    assertEquals((await chronicle(["import"], env)).code, 0);
    const found = await chronicle(["search", "tests/test_calc.py", "--json"], env);
    assertEquals(found.code, 0, found.stderr);
    const r = JSON.parse(found.stdout);
    assert(r.total >= 1 && r.hits.length === Math.min(r.total, 20), found.stdout);
    assertEquals(r.hits[0].session.source, "claude-code");
    const page = JSON.parse(
      (await chronicle(["search", "test_calc", "--limit", "1", "--offset", "1", "--json"], env))
        .stdout,
    );
    assertEquals([page.offset, page.hits.length <= 1], [1, true]);
    const text = await chronicle(["search", "test_calc.py", "--source", "claude-code"], env);
    assertMatch(text.stdout, /\[test_calc\.py\]/);
    assertMatch(text.stdout, /hits 1-\d+ of \d+/);
    const none = await chronicle(["search", "zzqqnothinglikethis"], env);
    assertEquals(none.code, 1);
    assertEquals(none.stdout, "no hits\n");
    const past = await chronicle(["search", "tests/test_calc.py", "--offset", "500"], env);
    assertEquals(past.code, 1);
    // the count the first page gave (it said the offset: "there are 500")
    assertEquals(past.stdout, `no hits from --offset 500: there are ${r.total}\n`);
    const pastNone = await chronicle(["search", "zzqqnothinglikethis", "--offset", "7"], env);
    assertEquals([pastNone.code, pastNone.stdout], [1, "no hits\n"]);
    assertEquals((await chronicle(["search", "test_calc", "--source", "codex"], env)).code, 1);
  } finally {
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("chronicle show of an unknown session fails with exit 1", async () => {
  const data = await Deno.makeTempDir({ prefix: "chronicle-cli-test-" });
  try {
    const r = await chronicle(["show", "nope"], { HOME: "/nonexistent", CHRONICLE_HOME: data });
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /no session "nope"/);
  } finally {
    await Deno.remove(data, { recursive: true });
  }
});

Deno.test("chronicle show says how much of a step's output or a prompt was cut on import, and only for those steps", async () => {
  const home = await Deno.makeTempDir({ prefix: "chronicle-cli-test-" });
  const env = { HOME: home, CHRONICLE_HOME: `${home}/data` };
  // texts longer than the longest line read whole: each line is cut, its step truncated
  const long = (seed: string, extra: number) =>
    seed + " " + "0123456789abcdef".repeat((MAX_LINE_BYTES >> 4) + extra);
  const output = long("bigstart", 4096), prompt = long("bigprompt", 1 << 16);
  const call = (command: string, result: string) => ({
    tool: { name: "Bash", input: { command }, result },
  });
  try {
    await writeClaudeSession(home, {
      sessionId: "cccccccc-1",
      cwd: "/work/demo",
      turns: [
        { user: "dump it" },
        call("make small", "ok"),
        call("cat huge.log", output),
        { user: prompt },
      ],
    });
    assertEquals((await chronicle(["import"], env)).code, 0);
    const shown = await chronicle(["show", "cccccccc-1"], env);
    assertEquals(shown.code, 0, shown.stderr);
    const lines = shown.stdout.split("\n");
    const cut = (text: string) =>
      `(truncated: ${formatBytes(text.length - KEEP_TEXT_BYTES)} cut on import)`;
    assertEquals(lines.filter((l) => l.includes("cut on import")).length, 2, shown.stdout);
    assert(lines.find((l) => l.includes("cat huge.log"))!.endsWith(cut(output)), shown.stdout);
    assert(lines.find((l) => l.includes("user: bigprompt"))!.endsWith(cut(prompt)), shown.stdout);
    assert(cut(output) !== cut(prompt), "the two amounts tell the steps apart");
    assert(!lines.find((l) => l.includes("make small"))!.includes("truncated"));
    assert(!lines.find((l) => l.includes("user: dump it"))!.includes("truncated"));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("chronicle serve imports new logs in the background while the API takes writes, and stops on SIGTERM", async () => {
  const { writeClaudeSession } = await import("../e2e/_synthetic.ts");
  const home = await Deno.makeTempDir({ prefix: "chronicle-serve-test-" });
  const session = (i: number) =>
    writeClaudeSession(home, {
      sessionId: `5e55${String(i).padStart(4, "0")}-0000-4000-8000-000000000000`,
      cwd: "/work/demo",
      turns: [{ user: `task ${i}` }, {
        tool: { name: "Bash", input: { command: "make" }, result: `ok ${i} `.repeat(800) },
      }],
    });
  await session(0);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, "serve", "--port", "0", "--interval", "1"],
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, HOME: home, CHRONICLE_HOME: `${home}/data` },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let seen = "";
    while (!/http:\/\/127\.0\.0\.1:\d+/.test(seen)) {
      const { value, done } = await stdout.read();
      if (done) throw new Error(`serve stopped: ${seen}`);
      seen += value;
    }
    const url = seen.match(/http:\/\/127\.0\.0\.1:\d+/)![0];
    const token = (await Deno.readTextFile(`${home}/data/token`)).trim();
    const auth = { headers: { "x-chronicle-token": token } };
    const total = async () =>
      (await (await fetch(`${url}/api/sessions`, auth)).json()).total as number;
    // Serving starts at once; the first import runs in the background.
    for (let tries = 0; tries < 100 && await total() < 1; tries++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(await total(), 1);
    // Enough new files for a bulk pass (a transaction open across units), and a rule written
    // through the API while it runs.
    for (let i = 1; i <= 20; i++) await session(i);
    const added = await fetch(`${url}/api/security/rules`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-chronicle-token": token },
      body: JSON.stringify({ name: "internal host", pattern: "*.corp.internal" }),
    });
    assertEquals(added.status, 201, await added.text());
    for (let tries = 0; tries < 100 && await total() < 21; tries++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assertEquals(await total(), 21);
    const rules = (await (await fetch(`${url}/api/security/rules`, auth)).json()).items as {
      name: string;
    }[];
    assert(rules.some((r) => r.name === "internal host"), JSON.stringify(rules));
    // serve printed the URL that carries the token; `chronicle open --print` prints it again
    assert(seen.includes(`${url}/?token=${token}`), seen);
    const open = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, "open", "--print"],
      env: {
        PATH: Deno.env.get("PATH") ?? "",
        DENO_DIR,
        HOME: home,
        CHRONICLE_HOME: `${home}/data`,
      },
      clearEnv: true,
      stdin: "null",
    }).output();
    assertEquals(open.code, 0, new TextDecoder().decode(open.stderr));
    assertEquals(new TextDecoder().decode(open.stdout).trim(), `${url}/?token=${token}`);
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    const rest = await stderr.read();
    await stdout.cancel();
    await stderr.cancel();
    await Deno.remove(home, { recursive: true });
    assertEquals(status.code, 0, rest.value ?? "");
  }
});

Deno.test("deno task chronicle resolves the paths a user types against the folder they typed them in", async () => {
  const user = await Deno.makeTempDir({ prefix: "chronicle-user-" });
  try {
    await Deno.writeTextFile(
      `${user}/.env`,
      "OPENAI_API_KEY=sk-proj-" + "a1B2c3D4e5F6g7H8".repeat(3) + "\n",
    );
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["task", "--quiet", "--config", `${ROOT}deno.json`, "chronicle", ...args],
        cwd: user,
        env: {
          PATH: Deno.env.get("PATH") ?? "",
          DENO_DIR,
          HOME: `${SHARED}/realclients/claude/s2-errors/native`,
          CHRONICLE_HOME: "data",
        },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    const scan = await run(["scan", ".env", "--format", "json"]);
    const text = new TextDecoder().decode(scan.stdout);
    assertEquals(scan.code, 1, new TextDecoder().decode(scan.stderr));
    // The checkout has no .env: only the user's own can give this finding.
    assertEquals(JSON.parse(text).histogram, { api_key: 1 });

    const imp = await run(["import", "--json"]);
    assertEquals(imp.code, 0, new TextDecoder().decode(imp.stderr));
    // A relative CHRONICLE_HOME is the user's folder's "data", not the checkout's.
    assert((await Deno.stat(`${user}/data/chronicle.db`)).isFile);
    assertEquals(await Deno.stat(`${ROOT}data`).catch(() => null), null);
  } finally {
    await Deno.remove(user, { recursive: true });
  }
});
