/**
 * Live benchmark, through `main.ts serve` with the task's permission flags:
 *
 * 1. Latency from a line appended to a session's log to the `ops` event an SSE client of that
 *    session receives: p50 and p95 over 200 appends (target p95 under 100 ms; the original
 *    Chronicle measured 318 / 628 ms here).
 * 2. A first start on a big history (`node ../shared/tools/gen_corpus.mjs DIR MB`, 1000 MB by
 *    default, CHRONICLE_LIVE_BENCH_MB; made under /tmp and deleted after): the time from
 *    `chronicle` starting to the first page of the session list answering (target under 1 s),
 *    to a first page holding sessions, and to the end of the first import; then the same for a
 *    second start on the imported history. CHRONICLE_LIVE_BENCH_CORPUS names a corpus made
 *    before (kept; the data folder is made beside it and deleted).
 */
import { SseClient } from "../_helpers/sse_client.ts";
import { ClaudeLines, claudeSessionPath } from "../e2e/_synthetic.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ") as string[];
const MB = Number(Deno.env.get("CHRONICLE_LIVE_BENCH_MB") ?? 1000);
const APPENDS = 200;
const gen = new URL("../../../shared/tools/gen_corpus.mjs", import.meta.url).pathname;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

interface Served {
  url: string;
  /** The install token, as a header for every request. */
  auth: { headers: Record<string, string> };
  child: Deno.ChildProcess;
  /** performance.now() when the process was spawned, and when the URL was printed. */
  spawned: number;
  printed: number;
  /** CPU milliseconds the server process has used so far (this process's threads, Linux). */
  cpuMs: () => Promise<number>;
  /** Its CPU milliseconds when the URL was printed. */
  printedCpuMs: number;
  lines: () => string;
  stop(): Promise<void>;
}

/**
 * User + system CPU time of a process, from /proc (NaN elsewhere). On a shared machine the wall
 * time of a start is mostly waiting for a core; its CPU time is what the start itself costs.
 * Read through `cat`: Deno's read permission does not reach another process's /proc entry.
 */
async function procCpuMs(pid: number): Promise<number> {
  try {
    const out = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
      .output();
    const stat = new TextDecoder().decode(out.stdout);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 (utime, stime) in clock ticks, 100 a second on Linux.
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * Deno's own cache, as the user's Chronicle has it: the server runs with HOME set to the
 * corpus, and without this Deno would fill a new cache there on the first start (fetching and
 * transpiling every module: most of a "cold start", and nothing a user's start pays).
 */
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

/** Starts `main.ts` (no command: serve) and waits for its URL line. */
async function serve(home: string, data: string): Promise<Served> {
  const spawned = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, "--port", "0"],
    env: { HOME: home, CHRONICLE_HOME: data, PATH: Deno.env.get("PATH") ?? "", DENO_DIR },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/http:\/\/127\.0\.0\.1:\d+\//.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve stopped: ${seen}`);
    seen += value;
  }
  const printed = performance.now();
  const cpuMs = () => procCpuMs(child.pid);
  const printedCpuMs = await cpuMs();
  const token = (await Deno.readTextFile(`${data}/token`)).trim();
  const pump = (async () => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      seen += value;
    }
  })();
  return {
    url: seen.match(/http:\/\/127\.0\.0\.1:\d+\//)![0],
    auth: { headers: { "x-chronicle-token": token } },
    child,
    spawned,
    printed,
    cpuMs,
    printedCpuMs,
    lines: () => seen,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await pump;
    },
  };
}

async function latency(): Promise<number[]> {
  const root = await Deno.makeTempDir({ prefix: "chronicle-live-bench-" });
  const sid = "be7c0000-0000-4000-8000-000000000001";
  const path = claudeSessionPath(`${root}/home`, "/work/bench", sid);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const lines = new ClaudeLines({ sessionId: sid, cwd: "/work/bench", start: Date.now() });
  await Deno.writeTextFile(path, lines.turn({ user: "benchmark" }));
  const srv = await serve(`${root}/home`, `${root}/data`);
  try {
    const id = `claude-code:${sid}`;
    // The first import runs in the background: wait for the session to be there.
    let page: { stamp?: number; total?: number } = {};
    while (!page.total) {
      page = await (await fetch(`${srv.url}api/sessions/${id}/timeline`, srv.auth)).json();
      if (!page.total) await new Promise((r) => setTimeout(r, 50));
    }
    const client = await SseClient.connect(
      `${srv.url}api/sessions/${id}/live?since=${page.stamp}`,
      srv.auth,
    );
    await client.next((e) => e.event === "session");
    const file = await Deno.open(path, { append: true });
    const out: number[] = [];
    try {
      for (let i = 0; i < APPENDS; i++) {
        const line = new TextEncoder().encode(lines.turn({ user: `prompt ${i}` }));
        const from = client.events.length;
        const t0 = performance.now();
        await file.write(line);
        const e = await client.next((x) => x.event === "ops", from);
        out.push(e.at - t0);
        // A person's agent writes a few lines a second, not a stream without pause.
        await new Promise((r) => setTimeout(r, 30));
      }
    } finally {
      file.close();
      await client.close();
    }
    return out;
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
  }
}

interface StartFigures {
  first_answer_ms: number;
  /** CPU the server had used when the URL was printed, and when the first page answered. */
  url_cpu_ms: number;
  first_answer_cpu_ms: number;
  first_sessions_ms: number;
  imported_ms: number;
  url_ms: number;
}

/** One start: until the list answers, until it holds sessions, until the first pass ended. */
async function start(home: string, data: string): Promise<StartFigures> {
  const srv = await serve(home, data);
  try {
    const list = () =>
      fetch(`${srv.url}api/sessions?limit=50`, srv.auth).then(async (r) => {
        const body = await r.json();
        return r.ok ? body.total as number : -1;
      });
    let total = await list();
    const first = performance.now();
    const firstCpu = await srv.cpuMs();
    while (total <= 0) {
      await new Promise((r) => setTimeout(r, 20));
      total = await list();
    }
    const sessions = performance.now();
    while (!/Imported /.test(srv.lines())) await new Promise((r) => setTimeout(r, 50));
    const done = performance.now();
    return {
      url_ms: srv.printed - srv.spawned,
      url_cpu_ms: srv.printedCpuMs,
      first_answer_cpu_ms: firstCpu,
      first_answer_ms: first - srv.spawned,
      first_sessions_ms: sessions - srv.spawned,
      imported_ms: done - srv.spawned,
    };
  } finally {
    await srv.stop();
  }
}

const ONLY = Deno.env.get("CHRONICLE_LIVE_BENCH_ONLY"); // "latency" or "start"
if (ONLY !== "start") {
  const lat = await latency();
  console.log(
    `live: line appended -> ops event, ${APPENDS} appends: p50 ${
      quantile(lat, 0.5).toFixed(1)
    } ms, ` +
      `p95 ${quantile(lat, 0.95).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms ` +
      `(target p95 < 100 ms; the original Chronicle: 318 / 628 ms)`,
  );
}
if (ONLY !== "latency") {
  const given = Deno.env.get("CHRONICLE_LIVE_BENCH_CORPUS");
  const corpus = given ?? await Deno.makeTempDir({ prefix: "chronicle-live-bench-corpus-" });
  const data = given
    ? await Deno.makeTempDir({ dir: `${given}/..`, prefix: "chronicle-live-bench-data-" })
    : `${corpus}/.chronicle-data`;
  try {
    if (!given) {
      console.log(`generating a ${MB} MB corpus in ${corpus} ...`);
      const made = await new Deno.Command("node", {
        args: [gen, corpus, String(MB)],
        stdout: "null",
      }).output();
      if (!made.success) throw new Error("gen_corpus.mjs failed");
    }
    const cold = await start(corpus, data);
    const warm = await start(corpus, data);
    const row = (name: string, f: StartFigures) =>
      console.log(
        `${name.padEnd(12)} URL printed ${f.url_ms.toFixed(0)} ms (CPU ${f.url_cpu_ms} ms), ` +
          `first page answered ${
            f.first_answer_ms.toFixed(0)
          } ms (CPU ${f.first_answer_cpu_ms} ms; ` +
          `target < 1000 ms), first page with sessions ${
            f.first_sessions_ms.toFixed(0)
          } ms, first import done ${(f.imported_ms / 1000).toFixed(1)} s`,
      );
    row(`start, ${given ? corpus : `${MB} MB`} history, empty store:`, cold);
    row("second start:", warm);
  } finally {
    await Deno.remove(given ? data : corpus, { recursive: true });
  }
}
