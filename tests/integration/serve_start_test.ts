/**
 * A first start that never waits, through `deno run main.ts serve` with the task's permission
 * flags: the server answers before the first import has finished, and a busy port is reported
 * before anything is imported.
 */
import { DatabaseSync } from "node:sqlite";
import type { CliIo } from "../../cli/io.ts";
import { startImporting } from "../../cli/serve_import.ts";
import { ChronicleStore } from "../../core/store/mod.ts";
import { createEventHub } from "../../server/sse.ts";
import { assert, assertEquals, assertMatch } from "../_helpers/assert.ts";
import { beforeIndex, traceCollections } from "../_helpers/gc_trace.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

function serve(home: string, args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, "serve", ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, HOME: home, CHRONICLE_HOME: `${home}/data` },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function history(sessions: number): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "chronicle-start-test-" });
  for (let i = 0; i < sessions; i++) {
    await writeClaudeSession(home, {
      sessionId: `5747${String(i).padStart(4, "0")}-0000-4000-8000-000000000000`,
      cwd: `/work/p${i % 5}`,
      start: Date.parse("2026-01-01T00:00:00Z") + i * 3_600_000,
      turns: Array.from({ length: 40 }, (_, k) => ({
        tool: { name: "Bash", input: { command: `make ${k}` }, result: `ok ${k} `.repeat(200) },
      })),
    });
  }
  return home;
}

/**
 * `serve --port 0` on `home`, read until its output matches `until`; its address, the token's
 * header, and `stop` (SIGTERM, a clean exit, `home` removed).
 */
async function served(home: string, until: RegExp) {
  const child = serve(home, ["--port", "0"]);
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stop = async () => {
    child.kill("SIGTERM");
    assertEquals((await child.status).code, 0);
    await out.cancel();
    await child.stderr.cancel();
    await Deno.remove(home, { recursive: true });
  };
  let seen = "";
  try {
    while (!until.test(seen)) {
      const { value, done } = await out.read();
      if (done) throw new Error(`serve stopped: ${seen}`);
      seen += value;
    }
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
  const url = seen.match(/http:\/\/127\.0\.0\.1:\d+\//)![0];
  const token = (await Deno.readTextFile(`${home}/data/token`)).trim();
  return { seen, url, auth: { headers: { "x-chronicle-token": token } }, stop };
}

Deno.test("serve answers at once and fills the list in while the first import runs", async () => {
  const home = await history(40);
  const { seen, url, auth, stop } = await served(home, /Imported /);
  try {
    const lines = seen.split("\n");
    const serving = lines.findIndex((l) => l.startsWith("Chronicle is serving"));
    const imported = lines.findIndex((l) => l.startsWith("Imported "));
    assert(serving >= 0 && serving < imported, `served before imported: ${seen}`);
    assertMatch(seen, /Imported 40 new or changed files \(40 sessions\)/);
    const list = await (await fetch(`${url}api/sessions?sort=started_at`, auth)).json();
    assertEquals(list.total, 40);
    const live = await (await fetch(`${url}api/live`, auth)).json();
    assertEquals(live.import.state, "idle");
    assertEquals(live.import.files_done, 40);
    assertEquals(live.import.percent, 100);
    // The pass left nothing for later: every session counted in the analytics, every payload
    // frame compressed, and the pack its plain frames were written to gone.
    const stats = await (await fetch(`${url}api/analytics`, auth)).json();
    assertEquals(stats.sessions, 40);
    const db = new DatabaseSync(`${home}/data/chronicle.db`, { readOnly: true });
    try {
      const codecs = db.prepare(
        "SELECT codec, count(*) AS n FROM frames GROUP BY codec",
      ).all().map((r) => Number(r.codec));
      assertEquals(codecs, [2]);
      assertEquals(db.prepare("SELECT count(*) AS n FROM stats_backlog").get()?.n, 0);
    } finally {
      db.close();
    }
    assertEquals([...Deno.readDirSync(`${home}/data/payloads`)].map((e) => e.name), ["0002.pack"]);
  } finally {
    await stop();
  }
});

Deno.test("while the first import indexes for search, the server answers and says how far it is", async () => {
  // about 9,700 steps: some twenty slices of the backlog
  const { url, auth, stop } = await served(await history(120), /Chronicle is serving/);
  try {
    // Ask for the import's progress over and over until the pass is over: answers must keep
    // coming while the index fills in, each with the steps indexed so far.
    const indexing: number[] = [];
    const searchSaid: number[] = [];
    for (let state = "";;) {
      const live = await (await fetch(`${url}api/live`, auth)).json();
      state = live.import.state;
      if (state === "indexing") {
        indexing.push(live.import.index_done);
        // (the pass may finish between the two answers: the last slice is quick)
        const search = await (await fetch(`${url}api/search?q=make`, auth)).json();
        if (search.indexing !== null) searchSaid.push(search.indexing.unindexed);
      }
      if (state === "idle" && live.import.files_done === 120) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert(indexing.length >= 2, `answered while indexing: ${indexing}`);
    assert(indexing.at(-1)! > indexing[0], `progress moved: ${indexing}`);
    assert(
      searchSaid.some((n) => n > 0),
      `search said the index is still filling in: ${searchSaid}`,
    );
  } finally {
    await stop();
  }
});

Deno.test("a busy port is reported before anything is imported", async () => {
  const home = await history(3);
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const child = serve(home, ["--port", String(taken.addr.port)]);
    const { code, stderr, stdout } = await child.output();
    assertEquals(code, 1);
    assertMatch(new TextDecoder().decode(stderr), /port is in use/);
    assertEquals(new TextDecoder().decode(stdout), "");
    const store = ChronicleStore.open(`${home}/data/chronicle.db`);
    try {
      assertEquals(store.listSessions().total, 0, "nothing was imported");
    } finally {
      store.close();
    }
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});

/** The serve loop's importing over `home`, its terminal output kept; stopped on dispose. */
async function importing(
  home: string,
  terminal: boolean,
  store = ChronicleStore.open(":memory:"),
) {
  const err: string[] = [];
  const out: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    stdin: () => Promise.resolve(new Uint8Array()),
    env: { HOME: home, CHRONICLE_HOME: `${home}/data` },
    cwd: home,
    isTerminal: terminal,
  };
  const run = startImporting({
    store,
    writer: store,
    io,
    tempRoot: await Deno.makeTempDir({ dir: home }),
    intervalS: 3600,
    events: createEventHub(),
    terminal,
  });
  run.start();
  await run.firstPass;
  return {
    stderr: err.join(""),
    stdout: out.join(""),
    async [Symbol.asyncDispose]() {
      await run.stop();
      store.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

Deno.test("on a terminal, the first import draws a progress bar over itself, ending at 100%", async () => {
  await using run = await importing(await history(6), true);
  // Each frame returns to the line's start and clears what is left of the last one.
  const frames = run.stderr.split("\r").filter(Boolean);
  assert(frames.length >= 1, `a bar was drawn: ${JSON.stringify(run.stderr)}`);
  // Files, then (on a slow machine, where a frame falls in it) the search index being built.
  const kinds = frames.map((f) =>
    /^\[[#-]{30}\] \d+\/6 files \d+%, \d+ sessions/.test(f)
      ? "files"
      : /^\[[#-]{30}\] \d+\/\d+ operations indexed for search \d+%/.test(f)
      ? "index"
      : JSON.stringify(f)
  );
  assertMatch(kinds.join(" "), /^(files )+(index )*files$/);
  // deno-lint-ignore no-control-regex -- the bar ends each frame with ESC [K
  assertMatch(frames.at(-1)!, /^\[#{30}\] 6\/6 files 100%, 6 sessions.*\x1b\[K\n$/);
  assertMatch(run.stdout, /Imported 6 new or changed files \(6 sessions\)/);
});

Deno.test("off a terminal, the first import draws no bar", async () => {
  await using run = await importing(await history(2), false);
  assertEquals(run.stderr, "");
  assertMatch(run.stdout, /Imported 2 new or changed files/);
});

Deno.test("the first import collects its garbage after each chunk, the last before it reads the search backlog", async () => {
  const store = ChronicleStore.open(":memory:");
  // (what its chunks left: a session of eight pasted 26 MiB prompts peaked at 358-365 MiB)
  const seen = await traceCollections(store, async () => {
    await using _ = await importing(await history(6), false, store);
    assertEquals(store.searchBacklog(), 0);
  });
  const chunks = beforeIndex(seen).join(" ").replace(/write( write)*/g, "chunk");
  assertMatch(chunks, /^chunk gc( chunk gc)*$/); // (a chunk's writes, a collection)
  assert(seen.includes("read"), "and then it indexes");
});
