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
    const ok = await fetch(`${server.url}api/health`);
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).ok, true);
    const post = await fetch(`${server.url}api/security/check`, { method: "POST", body: "{}" });
    assert.equal(post.status, 401);
    await post.body?.cancel();
  } finally {
    await server.shutdown();
    store.close();
  }
});
