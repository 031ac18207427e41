/**
 * One very big session in the server: the 200 MiB Claude Code session (35,342 steps) of the
 * import bench, each heavy per-session route asked once of a fresh `chronicle serve`, with its
 * time and the server's peak RSS against the 286 MiB (300 MB) goal; heavy routes asked together
 * and in a row; how long the session's timeline pages take while its causality is analysed (a
 * page at a time, core/paged.ts's `pagedTurns`). Figures only: no limit is asserted on this shared machine.
 *
 *   deno task bench:big-session
 */
import { bigSession } from "./_bench_kit.ts";
import { spawnChronicle } from "../_helpers/chronicle_cli.ts";

const MIB = 1024 * 1024;
const GOAL_MIB = 286;
const home = await bigSession(200);
const data = await Deno.makeTempDir({ prefix: "chronicle-bench-big-" });
const env = { HOME: home, CHRONICLE_HOME: data };

try {
  console.log("importing the 200 MiB session ...");
  const imported = spawnChronicle(["import"], env);
  await imported.stdout.cancel();
  await imported.stderr.cancel();
  if (!(await imported.status).success) throw new Error("chronicle import failed");

  /** A fresh server: its address, token and pid; stopped by the caller. */
  const serve = async () => {
    const child = spawnChronicle(["serve", "--no-import", "--port", "0"], env);
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!/token=[0-9a-f]{64}/.test(out)) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`the server did not start: ${out}`);
      out += value;
    }
    const url = new URL(/http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(out)![0]);
    const token = url.searchParams.get("token")!;
    const stop = async () => {
      child.kill("SIGTERM");
      await lines.cancel();
      await child.stderr.cancel();
      await child.status;
    };
    return { base: url.origin, token, pid: child.pid, stop };
  };
  /** Asks `path` of server `s`: the time to the whole answer, and the answer. */
  const get = async (
    s: Awaited<ReturnType<typeof serve>>,
    path: string,
    init: RequestInit = {},
  ) => {
    const t = performance.now();
    const res = await fetch(`${s.base}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${s.token}`,
        origin: s.base,
        "content-type": "application/json",
      },
    });
    const body = await res.text();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
    return { ms: performance.now() - t, body };
  };
  const line = (name: string, ms: number, chars: number, peak: number) =>
    console.log(
      `  ${name.padEnd(18)} ${(ms / 1000).toFixed(2).padStart(6)} s  ${
        (chars / MIB).toFixed(1).padStart(5)
      } Mi chars  peak ${peak.toFixed(0)} MiB (${(peak / GOAL_MIB).toFixed(2)}x the goal)`,
    );

  const first = await serve();
  const listed = await fetch(`${first.base}/api/sessions`, {
    headers: { authorization: `Bearer ${first.token}` },
  });
  const body = await listed.json();
  if (!listed.ok) throw new Error(`the session list: ${JSON.stringify(body)}`);
  const [session] = body.items;
  await first.stop();
  const id = encodeURIComponent(session.id);
  console.log(
    `one session of ${
      session.op_count.toLocaleString("en-US")
    } steps; each route asked once of a fresh server:`,
  );
  const routes: [string, string, RequestInit?][] = [
    ["session", `/api/sessions/${id}`],
    ["stats", `/api/sessions/${id}/stats`],
    ["causality", `/api/sessions/${id}/causality`],
    ["code at the end", `/api/sessions/${id}/code`],
    ["redaction preview", `/api/sessions/${id}/redaction`],
    ["Markdown download", `/api/sessions/${id}/export?format=md`],
    ["HTML download", `/api/sessions/${id}/export?format=html`],
    ["security check", "/api/security/check", {
      method: "POST",
      body: JSON.stringify({ session_id: session.id }),
    }],
    ["share made", `/api/sessions/${id}/shares`, {
      method: "POST",
      body: JSON.stringify({ days: 1 }),
    }],
    // the replay mode opened: its plan of every step, its sandbox seeded
    ["replay opened", `/api/sessions/${id}/replays`, { method: "POST", body: "{}" }],
  ];
  let sharePath = "";
  for (const [name, path, init] of routes) {
    const s = await serve();
    try {
      const r = await get(s, path, init);
      if (name === "share made") sharePath = JSON.parse(r.body).path;
      line(name, r.ms, r.body.length, await peakMiB(s.pid));
    } finally {
      await s.stop();
    }
  }
  // the share page, the one route without the token, of a server that did not make it
  {
    const s = await serve();
    try {
      const r = await get(s, sharePath);
      line("share page", r.ms, r.body.length, await peakMiB(s.pid));
    } finally {
      await s.stop();
    }
  }
  // heavy requests together, 0.3 s apart (as a user clicking through them), and then in a row:
  // heavy work on one session runs one piece at a time (server/session_work.ts), so the peak is
  // what each leaves behind for the next
  const named = new Map(routes.map(([name, path, init]) => [name, { path, init }]));
  const together = async (names: string[], gapMs: number) => {
    const s = await serve();
    try {
      const t = performance.now();
      const asked: Promise<unknown>[] = [];
      for (const name of names) {
        const r = named.get(name)!;
        const answered = get(s, r.path, r.init);
        if (gapMs) {
          asked.push(answered);
          await new Promise((done) => setTimeout(done, gapMs));
        } else await answered;
      }
      await Promise.all(asked);
      const peak = await peakMiB(s.pid);
      console.log(
        `  ${names.join(", ")}: ${((performance.now() - t) / 1000).toFixed(2)} s, peak ${
          peak.toFixed(0)
        } MiB (${(peak / GOAL_MIB).toFixed(2)}x the goal)`,
      );
    } finally {
      await s.stop();
    }
  };
  const [causality, preview, download] = ["causality", "redaction preview", "Markdown download"];
  console.log("three at once, 0.3 s apart, a fresh server each:");
  for (
    const names of [
      [causality, preview, download],
      [preview, causality, download],
      [download, causality, preview],
      [causality, download, preview],
      ["security check", causality, download],
      [causality, "share made", preview],
    ]
  ) await together(names, 300);
  console.log("in a row, a fresh server each:");
  for (
    const names of [
      [causality, "share made"],
      ["security check", causality, download],
      ["replay opened", causality, download],
    ]
  ) await together(names, 0);
  // the timeline's pages while the causality is analysed
  {
    const s = await serve();
    try {
      const analysis = get(s, `/api/sessions/${id}/causality`);
      const pages: number[] = [];
      let done = false;
      analysis.then(() => (done = true));
      for (let i = 1; !done && i < 40; i++) {
        await new Promise((r) => setTimeout(r, 250));
        if (done) break;
        pages.push((await get(s, `/api/sessions/${id}/timeline?offset=${i * 800}&limit=100`)).ms);
      }
      const a = await analysis;
      pages.sort((x, y) => x - y);
      console.log(
        `  while its causality is analysed (${
          (a.ms / 1000).toFixed(2)
        } s), ${pages.length} timeline pages: median ${
          pages[Math.floor(pages.length / 2)]?.toFixed(0)
        } ms, slowest ${pages.at(-1)?.toFixed(0)} ms`,
      );
    } finally {
      await s.stop();
    }
  }
  // the CLI's own export of it, to a file (its peak read from /proc while it runs)
  const out = `${data}/big.md`;
  const md = await cliRun(["export", session.id, "--format", "md", "--out", out], env);
  console.log(
    `  chronicle export to a file: ${md.s} s, ${
      ((await Deno.stat(out)).size / MIB).toFixed(1)
    } MiB written, peak at least ${md.peak} MiB`,
  );
  // its canonical files: exported, verified, and imported into a data folder of their own
  const files = `${data}/canonical`;
  const canonical = await cliRun(
    ["export", session.id, "--format", "canonical", "--out", files],
    env,
  );
  const verified = await cliRun(["verify", files], env);
  await Deno.mkdir(`${data}/other`);
  const other = { HOME: home, CHRONICLE_HOME: `${data}/other` };
  const fresh = await cliRun(["import", "--canonical", files], other);
  const again = await cliRun(["import", "--canonical", files], other);
  // its replay planned and its first 50 steps run, from the store and from its canonical files
  // (exit 1: its project folder is gone, so its steps are blocked)
  const replay = ["replay", session.id, "--to", "50", "--json"];
  const replayed = await cliRun(replay, env, { exitCodes: [0, 1] });
  const replayedFrom = await cliRun([...replay, "--from", files], env, { exitCodes: [0, 1] });
  for (
    const [name, r] of [
      ["export --format canonical", canonical],
      ["verify", verified],
      ["import --canonical (a fresh data folder)", fresh],
      ["import --canonical (the same files again)", again],
      ["replay --to 50", replayed],
      ["replay --to 50 --from its canonical files", replayedFrom],
    ] as const
  ) {
    console.log(`  chronicle ${name}: ${r.s} s, peak at least ${r.peak} MiB`);
  }
} finally {
  await Deno.remove(data, { recursive: true });
}

/**
 * Runs a chronicle command to its end: its time (s) and its peak RSS (MiB), read from /proc
 * every 50 ms while it runs. Throws when it fails.
 */
async function cliRun(
  args: string[],
  env: Record<string, string>,
  { exitCodes = [0] }: { exitCodes?: number[] } = {},
): Promise<{ s: string; peak: string }> {
  const started = performance.now();
  const child = spawnChronicle(args, env);
  let peak = 0;
  let ended = false;
  const result = child.output().then((r) => (ended = true, r));
  while (!ended) {
    peak = Math.max(peak, await peakMiB(child.pid).catch(() => 0));
    await new Promise((r) => setTimeout(r, 50));
  }
  const r = await result;
  if (!exitCodes.includes(r.code)) {
    throw new Error(`chronicle ${args[0]} failed: ${new TextDecoder().decode(r.stderr)}`);
  }
  return { s: ((performance.now() - started) / 1000).toFixed(2), peak: peak.toFixed(0) };
}

/** A process's peak RSS so far (VmHWM), MiB. */
async function peakMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+)/.exec(status)![1]) * 1024 / MIB;
}
