/**
 * The guard as Claude Code runs it: a new process per call, fed the hook payload on stdin,
 * with the permissions the installed launcher gives it (read, write to the data folder, two
 * variables; no network). No Chronicle server runs in these tests, except the one that checks
 * what a running `chronicle serve` makes of the guard's interceptions and rules.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { SseClient, type SseEvent } from "../_helpers/sse_client.ts";
import { makeGuardProject } from "../unit/security/_guard_project.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const GUARD = `${ROOT}/guard/main.ts`;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

async function runCommand(
  cmd: string,
  args: string[],
  stdin: string,
  env: Record<string, string>,
): Promise<Ran> {
  const start = performance.now();
  const child = new Deno.Command(cmd, {
    args,
    env: { NO_COLOR: "1", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ms: performance.now() - start,
  };
}

/** guard/main.ts with the launcher's flags (and --deny-net: it must not need any). */
function runGuard(stdin: string, data: string, home: string): Promise<Ran> {
  return runCommand(
    Deno.execPath(),
    [
      "run",
      "--quiet",
      "--no-prompt",
      "--deny-net",
      "--allow-read",
      `--allow-write=${data}`,
      "--allow-env=HOME,CHRONICLE_HOME",
      GUARD,
    ],
    stdin,
    { CHRONICLE_HOME: data, HOME: home },
  );
}

const payload = (tool: string, input: Record<string, unknown>, cwd: string) =>
  JSON.stringify({
    session_id: "s-1",
    transcript_path: "/x.jsonl",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: input,
  });

const p = await makeGuardProject();
const data = `${p.root}/data`;

Deno.test("the guard blocks a .env read with no server running: exit 2, reason, journal", async () => {
  const r = await runGuard(payload("Bash", { command: "grep TOKEN .env" }, p.proj), data, p.home);
  assertEquals(r.code, 2, r.stderr);
  assertEquals(r.stdout, "");
  assertStringIncludes(r.stderr, `${p.proj}/.env`);
  assert(!r.stderr.includes(p.token));
  const journal = await Deno.readTextFile(`${data}/interceptions.jsonl`);
  assertStringIncludes(journal, '"action":"block"');
  assert(!journal.includes(p.token));
  assertEquals((await Deno.stat(`${data}/interceptions.jsonl`)).mode! & 0o777, 0o600);
});

Deno.test("the guard allows ordinary work: exit 0, nothing printed", async () => {
  for (
    const [tool, input] of [["Bash", { command: "git diff && npm test" }], ["Read", {
      file_path: `${p.proj}/src/app.ts`,
    }]] as const
  ) {
    const r = await runGuard(payload(tool, input, p.proj), data, p.home);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
  }
});

Deno.test("an impostor on Chronicle's port learns nothing and changes nothing", async () => {
  const seen: string[] = [];
  const impostor = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname} ${await req.text()}`);
    return Response.json({ decision: "allow", action: "allow" });
  });
  try {
    const url = `http://127.0.0.1:${impostor.addr.port}`;
    const r = await runCommand(
      Deno.execPath(),
      [
        "run",
        "--quiet",
        "--no-prompt",
        "--allow-net=127.0.0.1",
        "--allow-read",
        `--allow-write=${data}`,
        "--allow-env",
        GUARD,
      ],
      payload("Read", { file_path: `${p.proj}/.env` }, p.proj),
      {
        CHRONICLE_HOME: data,
        HOME: p.home,
        CHRONICLE_URL: url,
      },
    );
    assertEquals(r.code, 2, "the decision is the guard's own");
    assertEquals(seen, [], "no token, no tool input, no request at all");
  } finally {
    await impostor.shutdown();
  }
});

Deno.test("the guard does not hang on a FIFO, named directly or through a shell word", async () => {
  const fifo = `${p.proj}/pipe`;
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assertEquals(mk.code, 0);
  try {
    for (
      const [tool, input] of [["Read", { file_path: fifo }], ["Bash", {
        command: "cat pipe",
      }]] as const
    ) {
      const r = await runGuard(payload(tool, input, p.proj), data, p.home);
      assertEquals(r.code, 0, r.stderr);
    }
  } finally {
    await Deno.remove(fifo);
  }
});

Deno.test("chronicle scan does not hang on a FIFO, named or inside a folder", async () => {
  const dir = `${p.root}/scan-fifo`;
  await Deno.mkdir(dir);
  const mk = await new Deno.Command("mkfifo", { args: [`${dir}/pipe`] }).output();
  assertEquals(mk.code, 0);
  await Deno.writeTextFile(`${dir}/clean.txt`, "nothing here\n");
  for (const target of [dir, `${dir}/pipe`]) {
    const r = await runCommand(
      Deno.execPath(),
      ["run", "-A", `${ROOT}/main.ts`, "scan", target],
      "",
      {
        CHRONICLE_HOME: data,
        HOME: p.home,
      },
    );
    assertEquals(r.code, 0, `${target}: ${r.stdout}${r.stderr}`);
  }
});

Deno.test("a payload the guard cannot read, and its usage errors, exit 1, never 2", async () => {
  const r = await runGuard("not json", data, p.home);
  assertEquals(r.code, 1);
  assertStringIncludes(r.stderr, "NOT checked");
  for (const args of [["guard"], ["guard", "hook", "--bogus"], ["guard", "nonsense"]]) {
    const u = await runCommand(Deno.execPath(), ["run", "-A", `${ROOT}/main.ts`, ...args], "{}", {
      CHRONICLE_HOME: data,
      HOME: p.home,
    });
    assertEquals(u.code, 1, `${args.join(" ")}: ${u.stderr}`);
  }
});

Deno.test("guard install writes a launcher that survives a moved checkout and a cleared cache; status runs it", async () => {
  const home = `${p.root}/home-install`;
  const data2 = `${p.root}/data-install`;
  await Deno.mkdir(`${home}/.claude`, { recursive: true });
  await Deno.writeTextFile(`${home}/.claude/settings.json`, '{\n  // mine\n  "model": "opus"\n}\n');
  const env = { HOME: home, CHRONICLE_HOME: data2, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const chronicle = (...args: string[]) =>
    runCommand(Deno.execPath(), ["run", "-A", `${ROOT}/main.ts`, ...args], "", env);
  const install = await chronicle("guard", "install");
  assertEquals(install.code, 0, install.stderr);
  const launcher = `${data2}/guard/chronicle-guard`;
  assertStringIncludes(install.stdout, launcher);
  const text = await Deno.readTextFile(launcher);
  assert(
    !text.includes(ROOT + "/"),
    "the launcher runs the bundle in the data folder, not the checkout",
  );
  assertEquals((await Deno.stat(launcher)).mode! & 0o777, 0o700);
  const settings = await Deno.readTextFile(`${home}/.claude/settings.json`);
  assertStringIncludes(settings, "// mine");

  // as Claude Code runs it: the command through a shell
  const blocked = await runCommand(
    "sh",
    ["-c", launcher],
    payload("Read", { file_path: `${p.proj}/.env` }, p.proj),
    env,
  );
  assertEquals(blocked.code, 2, blocked.stderr);
  // a cleared Deno cache (npm packages included): the bundled guard needs nothing from it
  const emptyCache = `${p.root}/empty-deno-dir`;
  await Deno.mkdir(emptyCache);
  const uncached = await runCommand(
    "sh",
    ["-c", launcher],
    payload("Read", { file_path: `${p.proj}/.env` }, p.proj),
    { ...env, DENO_DIR: emptyCache },
  );
  assertEquals(uncached.code, 2, uncached.stderr);
  const fetched = [...Deno.readDirSync(emptyCache)].flatMap((e) =>
    e.isDirectory && (e.name === "npm" || e.name === "remote")
      ? [...Deno.readDirSync(`${emptyCache}/${e.name}`)].map((f) => `${e.name}/${f.name}`)
      : []
  );
  assertEquals(fetched, [], "nothing was fetched");

  const status = await chronicle("guard", "status");
  assertEquals(status.code, 0, status.stdout + status.stderr);
  assertStringIncludes(status.stdout, "installed and working");

  // a broken install is reported as broken, not as installed
  await Deno.remove(`${data2}/guard/guard.js`);
  const broken = await chronicle("guard", "status");
  assertEquals(broken.code, 1);
  assertStringIncludes(broken.stdout, "BROKEN");

  const uninstall = await chronicle("guard", "uninstall");
  assertEquals(uninstall.code, 0, uninstall.stderr);
  assertEquals(
    await Deno.readTextFile(`${home}/.claude/settings.json`),
    '{\n  // mine\n  "model": "opus"\n}\n',
  );
});

const SERVE_FLAGS: string[] = JSON.parse(
  await Deno.readTextFile(`${ROOT}/deno.json`),
).tasks.chronicle.command.replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
    }),
  ]);
}

Deno.test("with chronicle serve running, an interception reaches its event stream and the Security log; its custom rules are the guard's", async () => {
  const home = `${p.root}/home-serve`;
  const dataS = `${home}/data`;
  await Deno.mkdir(home, { recursive: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...SERVE_FLAGS, `${ROOT}/main.ts`, "serve", "--port", "0"],
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: home, CHRONICLE_HOME: dataS },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let events: SseClient | undefined;
  try {
    let seen = "";
    while (!/http:\/\/127\.0\.0\.1:\d+/.test(seen)) {
      const { value, done } = await stdout.read();
      if (done) throw new Error(`serve stopped: ${seen}`);
      seen += value;
    }
    const url = seen.match(/http:\/\/127\.0\.0\.1:\d+/)![0];
    const token = (await Deno.readTextFile(`${dataS}/token`)).trim();
    const headers = { "x-chronicle-token": token };
    events = await SseClient.connect(`${url}/api/events`, { headers });

    // a custom rule added through the API: the guard, deciding alone, applies it next call
    await Deno.writeTextFile(`${p.proj}/hosts.txt`, "deploy to build7.corp.internal\n");
    const read = (file: string) => payload("Read", { file_path: `${p.proj}/${file}` }, p.proj);
    assertEquals((await runGuard(read("hosts.txt"), dataS, p.home)).code, 0);
    const added = await fetch(`${url}/api/security/rules`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "internal hosts", pattern: "*.corp.internal" }),
    });
    assertEquals(added.status, 201, await added.text());
    const ruled = await runGuard(read("hosts.txt"), dataS, p.home);
    assertEquals(ruled.code, 2, ruled.stderr);
    assertStringIncludes(ruled.stderr, "internal hosts");

    const blocked = await runGuard(read(".env"), dataS, p.home);
    assertEquals(blocked.code, 2, blocked.stderr);
    const isEnv = (e: SseEvent) =>
      e.event === "interception" && (e.data as { file?: string }).file === `${p.proj}/.env`;
    const live = await within(10_000, "the interception event", events.next(isEnv));
    assertEquals((live.data as { action: string }).action, "block");
    assert(!JSON.stringify(live.data).includes(p.token), "the event never holds the secret");
    const log = await (await fetch(`${url}/api/security/interceptions?limit=10`, { headers }))
      .json();
    const files = (log.items as { file?: string; tool: string }[]).map((i) => i.file);
    assert(files.includes(`${p.proj}/.env`), JSON.stringify(log));
    assert(files.includes(`${p.proj}/hosts.txt`), JSON.stringify(log));
    assert(!JSON.stringify(log).includes(p.token));
  } finally {
    await events?.close();
    child.kill("SIGTERM");
    await child.status;
    await stdout.cancel().catch(() => {});
    await Deno.remove(`${p.proj}/hosts.txt`).catch(() => {});
  }
});

Deno.test("cleanup", async () => {
  await p.cleanup();
});
