/**
 * guard/main.ts as Claude Code runs it: a separate process with the compile task's permissions
 * (loopback network, the token file, three variables), talking to tiny local servers.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";

const GUARD = new URL("../../guard/main.ts", import.meta.url).pathname;
const HOOKS = new URL("../../fixtures/peers/claude-code-hooks/constructed/", import.meta.url)
  .pathname;
const TOKEN = "t".repeat(64);

interface Seen {
  token: string | null;
  body: Record<string, unknown>;
}

/** A server on 127.0.0.1, port 0, answering with `respond`; records what it was sent. */
function serve(respond: (req: Request) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push({ token: req.headers.get("x-chronicle-token"), body: await req.json() });
    return await respond(req);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

async function runGuard(url: string, stdin: string) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-guard-home-" });
  const tokenFile = `${home}/token`;
  await Deno.writeTextFile(tokenFile, TOKEN + "\n", { mode: 0o600 });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--allow-net=127.0.0.1",
        `--allow-read=${tokenFile}`,
        "--allow-env=HOME,CHRONICLE_HOME,CHRONICLE_URL",
        GUARD,
      ],
      env: { CHRONICLE_HOME: home, CHRONICLE_URL: url, NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
    const out = await child.output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const READ_ENV = JSON.stringify({
  ...JSON.parse(Deno.readTextFileSync(`${HOOKS}pretooluse_edit.stdin.json`)),
  tool_name: "Read",
  tool_input: { file_path: "/home/u/proj/.env" },
});
const REASON = "Chronicle blocked Read: /home/u/proj/.env contains a secret (api_key (openai)).";

Deno.test("the guard blocks when the server says block: exit 2, reason on stderr", async () => {
  const server = serve(() =>
    Response.json({ decision: "block", reason: REASON, rules: ["api_key"] })
  );
  try {
    const r = await runGuard(server.url, READ_ENV);
    assertEquals(r, { code: 2, stdout: "", stderr: REASON + "\n" });
    assertEquals(server.seen.length, 1);
    assertEquals(server.seen[0].token, TOKEN);
    assertEquals(server.seen[0].body, {
      tool_name: "Read",
      tool_input: { file_path: "/home/u/proj/.env" },
      cwd: "/home/u/proj",
      session_id: "4f0c2b3a-1111-4222-8333-944455556666",
    });
  } finally {
    await server.close();
  }
});

Deno.test("the guard allows what the server allows: exit 0, nothing printed", async () => {
  const server = serve(() =>
    Response.json({ decision: "allow", action: "flag", rules: ["email"] })
  );
  try {
    const bash = await Deno.readTextFile(`${HOOKS}pretooluse_bash.stdin.json`);
    assertEquals(await runGuard(server.url, bash), { code: 0, stdout: "", stderr: "" });
  } finally {
    await server.close();
  }
});

Deno.test("the guard fails open with no server at all", async () => {
  const server = serve(() => new Response("unused"));
  const url = server.url;
  await server.close();
  assertEquals(await runGuard(url, READ_ENV), { code: 0, stdout: "", stderr: "" });
});

Deno.test("the guard fails open on a server that hangs (after its 3 s timeout)", async () => {
  let release!: () => void;
  const hung = new Promise<void>((r) => (release = r));
  const server = serve(async () => {
    await hung;
    return Response.json({ decision: "block", reason: "too late" });
  });
  try {
    assertEquals(await runGuard(server.url, READ_ENV), { code: 0, stdout: "", stderr: "" });
    assertEquals(server.seen.length, 1, "the request did reach the server");
  } finally {
    release();
    await server.close();
  }
});

Deno.test("the guard fails open on HTML, on an error status and on a bad payload", async () => {
  const html = serve(() =>
    new Response("<html><body>block</body></html>", { headers: { "content-type": "text/html" } })
  );
  const error = serve(() => Response.json({ decision: "block", reason: "x" }, { status: 500 }));
  try {
    assertEquals(await runGuard(html.url, READ_ENV), { code: 0, stdout: "", stderr: "" });
    assertEquals(await runGuard(error.url, READ_ENV), { code: 0, stdout: "", stderr: "" });
    const garbage = await runGuard(html.url, "this is not json");
    assertEquals(garbage, { code: 0, stdout: "", stderr: "" });
    assertEquals(html.seen.length, 1, "a bad payload is never sent");
  } finally {
    await html.close();
    await error.close();
  }
});

Deno.test("the guard ignores other hook events, and a non-loopback URL ends in a silent exit 0", async () => {
  const server = serve(() => Response.json({ decision: "block", reason: "no" }));
  try {
    const stop = await Deno.readTextFile(`${HOOKS}stop.stdin.json`);
    assertEquals((await runGuard(server.url, stop)).code, 0);
    assertEquals(server.seen.length, 0);
    const r = await runGuard("http://192.0.2.1:4173", READ_ENV);
    assertEquals(r, { code: 0, stdout: "", stderr: "" });
  } finally {
    await server.close();
  }
});

Deno.test("the guard's reason comes from the server; a block without one gets a default", async () => {
  const server = serve(() => Response.json({ decision: "block" }));
  try {
    const r = await runGuard(server.url, READ_ENV);
    assertEquals(r.code, 2);
    assertStringIncludes(r.stderr, "Chronicle blocked this tool call");
    assert(r.stdout === "");
  } finally {
    await server.close();
  }
});
