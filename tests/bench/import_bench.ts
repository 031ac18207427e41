/**
 * Import benchmark, all figures from one run on this machine, reported as ratios:
 * cold import vs a bare "read + JSON.parse every line" loop over the same corpus, warm
 * re-import as a share of cold, one appended line, and peak RSS.
 * Corpus: `node ../shared/tools/gen_corpus.mjs DIR MB` (default 300 MB; CHRONICLE_BENCH_MB).
 */
import { generateCodexCorpus } from "./_codex_corpus.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MB = Number(Deno.env.get("CHRONICLE_BENCH_MB") ?? 300);
const corpus = `${ROOT}tests/bench/.corpus/${MB}`;
const ROUNDS = Number(Deno.env.get("CHRONICLE_BENCH_ROUNDS") ?? 3);

/** What `_import_child.ts` prints for `bare` and for `import`. */
interface BareRun {
  seconds: number;
  bytes: number;
  lines: number;
  peak_rss_mb: number;
}
interface ImportRun {
  seconds: number;
  peak_rss_mb: number;
  summary: { sessions: number; operations: number };
  store_bytes: number;
  index_bytes: number;
  analytics_first_ms: number;
  search_ms: number;
}

function medianBy<T>(xs: T[], key: (x: T) => number): T {
  return [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];
}
function max<T>(xs: T[], key: (x: T) => number): number {
  return Math.max(...xs.map(key));
}
const gen = new URL("../../../shared/tools/gen_corpus.mjs", import.meta.url).pathname;

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "inherit" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed with ${out.code}`);
  return new TextDecoder().decode(out.stdout);
}

/** The V8 flags `deno task chronicle` runs with, so the bench measures what users run. */
const V8_FLAGS = (JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .match(/--v8-flags=\S+/g) ?? []) as string[];

async function child(...args: string[]) {
  const out = await run(Deno.execPath(), [
    "run",
    "--quiet",
    ...V8_FLAGS,
    "--allow-all", // /proc/self/status (peak RSS) needs it
    "--unstable-worker-options",
    `${ROOT}tests/bench/_import_child.ts`,
    ...args,
  ]);
  return JSON.parse(out.trim().split("\n").pop()!);
}

try {
  await Deno.stat(`${corpus}/.done`);
} catch {
  console.log(`generating a ${MB} MB corpus in ${corpus} ...`);
  await Deno.mkdir(corpus, { recursive: true });
  await run("node", [gen, corpus, String(MB)]);
  await Deno.writeTextFile(`${corpus}/.done`, "");
}

const data = await Deno.makeTempDir({ prefix: "chronicle-bench-" });
try {
  // A first pass only fills the page cache, so every measured pass reads from memory. Then
  // bare loop and cold import take turns, ROUNDS times: on a shared machine the median of each
  // is steadier than any single run.
  await child("bare", `${corpus}/.claude/projects`);
  const bares: BareRun[] = [], colds: ImportRun[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    bares.push(await child("bare", `${corpus}/.claude/projects`));
    if (r > 0) await Deno.remove(data, { recursive: true }).then(() => Deno.mkdir(data));
    colds.push(await child("import", corpus, data));
  }
  const bare = medianBy(bares, (x) => x.seconds);
  const cold = {
    ...medianBy(colds, (x) => x.seconds),
    peak_rss_mb: max(colds, (x) => x.peak_rss_mb),
  };
  const ratios = colds.map((c, i) => c.seconds / bares[i].seconds).sort((x, y) => x - y);
  // one appended line to one session file, with a live worker (as the server runs it)
  const dirs = [...Deno.readDirSync(`${corpus}/.claude/projects`)].map((d) => d.name).sort();
  const dir = `${corpus}/.claude/projects/${dirs[0]}`;
  const file = `${dir}/${
    [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => e.name).sort()[0]
  }`;
  const inc = await child("incremental", corpus, data, file);
  const warm = { seconds: inc.warm_s };
  const append = { seconds: inc.append_s };
  const mb = bare.bytes / 1024 / 1024;
  const rows = [
    [
      "corpus",
      `${
        mb.toFixed(0)
      } MB, ${bare.lines} lines, ${cold.summary.sessions} sessions, ${cold.summary.operations} operations`,
    ],
    [
      "bare read + JSON.parse",
      `${bare.seconds.toFixed(2)} s (${(mb / bare.seconds).toFixed(0)} MB/s)`,
    ],
    [
      "cold import (indexed)",
      `${cold.seconds.toFixed(2)} s (${(mb / cold.seconds).toFixed(0)} MB/s)`,
    ],
    [
      "cold / bare",
      `${(cold.seconds / bare.seconds).toFixed(2)}x (target <= 3x), medians of ${ROUNDS} rounds; ` +
      `each round ${ratios[0].toFixed(2)}x to ${ratios[ratios.length - 1].toFixed(2)}x`,
    ],
    [
      "warm re-import",
      `${(warm.seconds * 1000).toFixed(0)} ms (median of 5) = ${
        (100 * warm.seconds / cold.seconds).toFixed(2)
      }% of cold (target < 2%)`,
    ],
    [
      "warm, new process",
      `${(inc.warm_first_s * 1000).toFixed(0)} ms (includes starting the import worker)`,
    ],
    [
      "one appended line",
      `${(append.seconds * 1000).toFixed(0)} ms, median of 5, live worker (target < 50 ms)`,
    ],
    [
      "peak RSS, cold import",
      `${cold.peak_rss_mb} MB, highest of the rounds (target < 300 MB; bare loop ${bare.peak_rss_mb} MB)`,
    ],
    ["seconds per GB", `${(cold.seconds / (bare.bytes / 2 ** 30)).toFixed(1)} s (cold import)`],
    ["fully indexed", `${cold.seconds.toFixed(2)} s (the index is built during the import)`],
    [
      "store size / log size",
      `${(cold.store_bytes / bare.bytes).toFixed(2)}x (${
        (cold.store_bytes / 2 ** 20).toFixed(0)
      } MB; ` +
      `search index ${(cold.index_bytes / 2 ** 20).toFixed(0)} MB; target <= 0.4x)`,
    ],
    [
      "analytics first view",
      `${cold.analytics_first_ms.toFixed(1)} ms (target < 100 ms); one search ${
        cold.search_ms.toFixed(1)
      } ms`,
    ],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(26)} ${v}`);

  // Codex CLI: a corpus of comparable size, generated here, imported cold.
  const codexCorpus = `${ROOT}tests/bench/.corpus/codex-${MB}`;
  try {
    await Deno.stat(`${codexCorpus}/.done`);
  } catch {
    console.log(`generating a ${MB} MB Codex corpus in ${codexCorpus} ...`);
    await generateCodexCorpus(codexCorpus, MB);
    await Deno.writeTextFile(`${codexCorpus}/.done`, "");
  }
  await child("bare", `${codexCorpus}/.codex/sessions`);
  const codexBare = await child("bare", `${codexCorpus}/.codex/sessions`);
  const codexCold = await child("import", codexCorpus, `${data}/codex`, "codex");
  const codexMb = codexBare.bytes / 1024 / 1024;
  const codexRows = [
    [
      "codex corpus",
      `${
        codexMb.toFixed(0)
      } MB, ${codexBare.lines} lines, ${codexCold.summary.sessions} sessions, ${codexCold.summary.operations} operations`,
    ],
    [
      "codex bare read + parse",
      `${codexBare.seconds.toFixed(2)} s (${(codexMb / codexBare.seconds).toFixed(0)} MB/s)`,
    ],
    [
      "codex cold import",
      `${codexCold.seconds.toFixed(2)} s (${(codexMb / codexCold.seconds).toFixed(0)} MB/s), ${
        (codexCold.seconds / codexBare.seconds).toFixed(2)
      }x bare, peak RSS ${codexCold.peak_rss_mb} MB`,
    ],
    [
      "codex store / log size",
      `${(codexCold.store_bytes / codexBare.bytes).toFixed(2)}x; analytics first view ${
        codexCold.analytics_first_ms.toFixed(1)
      } ms`,
    ],
  ];
  for (const [k, v] of codexRows) console.log(`${k.padEnd(26)} ${v}`);
} finally {
  await Deno.remove(data, { recursive: true });
}
