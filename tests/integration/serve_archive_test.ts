/**
 * The archive in a running server, wired as `chronicle serve` wires it (the import worker, the
 * background passes, cli/serve_archive.ts) over a data folder on disk: the passes leave out
 * what the exclude list names and pick up an edit made through the API; a forget runs between
 * imports on the importer's connection and the next passes do not bring the session back; a
 * list broken by hand stops importing, said once.
 */
import assert from "node:assert/strict";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { liveServer } from "./_live_server.ts";

const A = "aaaaaaaa-0000-4000-8000-0000000000aa";
const B = "bbbbbbbb-0000-4000-8000-0000000000bb";
const C = "cccccccc-0000-4000-8000-0000000000cc";

Deno.test({
  name: "a running server's passes follow the exclude list; a forget through the API sticks",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const root = await Deno.makeTempDir({ prefix: "chronicle-serve-archive-" });
    const home = `${root}/home`;
    const data = `${root}/data`;
    await Deno.mkdir(data, { recursive: true });
    const write = (sid: string, cwd: string) =>
      writeClaudeSession(home, { sessionId: sid, cwd, turns: [{ user: `hello from ${sid}` }] });
    await write(A, "/work/open");
    await write(B, "/work/secret");
    await Deno.writeTextFile(
      `${data}/exclude.json`,
      JSON.stringify({ version: 1, projects: ["/work/secret"] }),
    );
    const said: string[] = [];
    const srv = await liveServer({
      home,
      data,
      archive: true,
      stderr: (t) => void said.push(t),
    });
    const { store, importing } = srv;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${srv.url}${path.slice(1)}`, {
        method,
        headers: { ...srv.headers, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      assert.equal(res.status, 200, JSON.stringify(json));
      return json;
    };
    /** Waits for a background pass to find what `done` says. */
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(done(), "the pass came");
    };
    try {
      assert.ok(store.getSession(`claude-code:${A}`));
      assert.equal(store.getSession(`claude-code:${B}`), null, "excluded project");

      // take the project off the list through the API: the next pass (started by the edit)
      // brings its session in
      const view = await api("GET", "/api/archive/exclude");
      await api("POST", "/api/archive/exclude", {
        list: { paths: [], projects: [] },
        etag: view.etag,
      });
      await until(() => store.getSession(`claude-code:${B}`) !== null);

      // forget A while the server runs; its log grows; passes do not bring it back
      const out = await api(
        "POST",
        `/api/sessions/${encodeURIComponent(`claude-code:${A}`)}/forget`,
        {
          confirm: `claude-code:${A}`,
        },
      );
      assert.equal(out.sessions.length, 1);
      await write(A, "/work/open");
      await write(C, "/work/open");
      importing.refresh();
      await until(() => store.getSession(`claude-code:${C}`) !== null);
      assert.equal(store.getSession(`claude-code:${A}`), null);

      // a list broken by hand: the next pass imports nothing and says so once
      await Deno.writeTextFile(`${data}/exclude.json`, '{"version": 1, "paths": ["nope"]}');
      await write("dddddddd-0000-4000-8000-0000000000dd", "/work/open");
      importing.refresh();
      await until(() => importing.blocked() !== null);
      importing.refresh();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(store.getSession("claude-code:dddddddd-0000-4000-8000-0000000000dd"), null);
      const lines = said.filter((l) => l.includes("exclude list"));
      assert.equal(lines.length, 1, said.join(""));
      assert.match(lines[0], /"paths"\[0\] "nope".*; nothing is imported until it is fixed\n$/);
    } finally {
      await srv.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});
