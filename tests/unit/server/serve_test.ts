/** `chronicle serve`: loopback only, a free port on request, usage errors for bad options. */
import assert from "node:assert/strict";
import { UsageError } from "../../../cli/args.ts";
import type { CliIo } from "../../../cli/io.ts";
import { serveCommand, startServer } from "../../../cli/serve.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { TOKEN } from "./_helpers.ts";

function io(): CliIo & { out: string[] } {
  const out: string[] = [];
  return {
    out,
    stdout: (t) => void out.push(t),
    stderr: (t) => void out.push(t),
    stdin: () => Promise.resolve(new Uint8Array()),
    env: { CHRONICLE_HOME: "/nonexistent/chronicle-test", HOME: "/nonexistent" },
    cwd: "/",
    isTerminal: false,
  };
}

Deno.test("serve refuses to listen anywhere but loopback, and bad options are usage errors", async (t) => {
  for (
    const args of [
      ["--host", "0.0.0.0"],
      ["--host", "192.168.1.5"],
      ["--port", "http"],
      ["--port", "70000"],
      ["--interval", "0"],
      ["extra"],
    ]
  ) {
    await t.step(args.join(" "), async () => {
      await assert.rejects(() => serveCommand(args, io()), UsageError);
    });
  }
});

Deno.test("serve --help describes the command and exits 0", async () => {
  const out = io();
  assert.equal(await serveCommand(["--help"], out), 0);
  assert.match(out.out.join(""), /Usage: chronicle serve \[--port N\] \[--no-import\] \[--open\]/);
});

Deno.test("startServer() binds 127.0.0.1 on a free port and answers as that host only", async () => {
  const store = ChronicleStore.open(":memory:");
  const server = await startServer({ store, token: TOKEN, port: 0 });
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.notEqual(server.port, 0);
    const ok = await fetch(`${server.url}api/health`, { headers: { "x-chronicle-token": TOKEN } });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).ok, true);
    for (
      const [method, path] of [["GET", "api/health"], ["GET", "api/sessions"], [
        "POST",
        "api/security/check",
      ]]
    ) {
      const res = await fetch(`${server.url}${path}`, {
        method,
        body: method === "POST" ? "{}" : undefined,
      });
      assert.equal(res.status, 401, `${method} ${path}`);
      await res.body?.cancel();
    }
    // the printed URL, through a real socket: a cookie, a clean URL, and the cookie opens the API
    const signIn = await fetch(`${server.url}?token=${TOKEN}`, { redirect: "manual" });
    assert.equal(signIn.status, 303);
    assert.equal(signIn.headers.get("location"), "/");
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    await signIn.body?.cancel();
    const list = await fetch(`${server.url}api/sessions`, { headers: { cookie } });
    assert.equal(list.status, 200);
    await list.body?.cancel();
  } finally {
    await server.shutdown();
    store.close();
  }
});
