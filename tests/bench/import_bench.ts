/**
 * Import benchmark, all figures from one run on this machine, reported as ratios:
 * cold import vs a bare "read + JSON.parse every line" loop over the same corpus, warm
 * re-import as a share of cold, one appended line, and peak RSS.
 * Corpus: `node ../shared/tools/gen_corpus.mjs DIR MB` (default 300 MB; CHRONICLE_BENCH_MB, a
 * list such as `300,1000` measures each size in turn, for seconds per GB at each), kept under
 * CHRONICLE_BENCH_CORPUS. With CHRONICLE_ORIGINAL (an installed copy of the original
 * Chronicle, see original_bench.ts) each round also runs the original's cold import. Each size
 * measures a Codex corpus too; then come the other agents, from their real CLIs' recordings
 * and a Cursor database (CHRONICLE_BENCH_OTHER_MB, default 100 MiB each), and one big log of
 * each kind (CHRONICLE_BENCH_BIG_MB).
 */
import {
  type BareRun,
  bigCursorDb,
  bigSession,
  child,
  claudeCorpus,
  codexCorpus,
  type ImportRun,
  median,
  medianBy,
  ORIGINAL,
  original,
  type OriginalRun,
  pastedPrompts,
  REAL_LOGS,
  realCorpus,
} from "./_bench_kit.ts";
import { CURSOR_DB } from "./_big_logs.ts";
import { bytesOf } from "./_bytes_under.ts";
import { copyTree } from "../_helpers/fixtures.ts";
import { DatabaseSync } from "node:sqlite";

const SIZES = (Deno.env.get("CHRONICLE_BENCH_MB") ?? "300").split(",").map(Number);
const ROUNDS = Number(Deno.env.get("CHRONICLE_BENCH_ROUNDS") ?? 3);

function max<T>(xs: T[], key: (x: T) => number): number {
  return Math.max(...xs.map(key));
}

for (const MB of SIZES) await bench(MB);
await otherAgents();
await bigLogs();

/**
 * The agents no generator writes, each a home of its real CLI's recordings copied to
 * CHRONICLE_BENCH_OTHER_MB (default 100) MiB (`_real_corpus.ts`), and Cursor, whose IDE has no
 * CLI to record: a database of that many MiB of chats (`_big_logs.ts`). Cold import against the
 * bare loop over the same logs (a database's: its rows' data read and parsed), ROUNDS rounds
 * in turn, the median of each round's own ratio.
 */
async function otherAgents() {
  const mib = Number(Deno.env.get("CHRONICLE_BENCH_OTHER_MB") ?? 100);
  console.log(
    `--- other agents, real recordings copied (Cursor: a database written) to ${mib} MiB each`,
  );
  const data = await Deno.makeTempDir({ prefix: "chronicle-bench-" });
  try {
    for (const agent of ["gemini", "qwen", "copilot", "opencode", "cursor"] as const) {
      const home = agent === "cursor" ? await bigCursorDb(mib) : await realCorpus(agent, mib);
      const logs = `${home}/${agent === "cursor" ? CURSOR_DB : REAL_LOGS[agent]}`;
      const bareMode = agent === "opencode" || agent === "cursor" ? `bare-${agent}` : "bare";
      const bare = () => child(bareMode, logs);
      await bare(); // fills the page cache
      const rows: { bare: BareRun; cold: ImportRun }[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const b: BareRun = await bare();
        await Deno.remove(data, { recursive: true }).then(() => Deno.mkdir(data));
        rows.push({ bare: b, cold: await child("import", home, `${data}/store`, agent) });
      }
      const ratio = (f: (x: { bare: BareRun; cold: ImportRun }) => number) =>
        median(rows.map(f)).toFixed(2);
      const { cold } = rows[0];
      const logBytes = bytesOf(logs);
      console.log(
        `${agent.padEnd(26)} ${
          (logBytes / 2 ** 20).toFixed(0)
        } MiB, ${cold.summary.sessions} sessions, ${cold.summary.operations} operations: bare ${
          ratio((x) => x.bare.seconds)
        } s; browsable ${ratio((x) => x.cold.summary.browsable_seconds)} s (${
          ratio((x) => x.cold.summary.browsable_seconds / x.bare.seconds)
        }x bare), fully indexed ${ratio((x) => x.cold.seconds)} s (${
          ratio((x) => x.cold.seconds / x.bare.seconds)
        }x); peak RSS ${max(rows, (x) => x.cold.peak_rss_mb)} MB; store ${
          (cold.store_bytes / logBytes).toFixed(2)
        }x the logs`,
      );
    }
  } finally {
    await Deno.remove(data, { recursive: true });
  }
}

/**
 * Peak memory with one big log (the goal: under 300 MB whatever a log's size): one Claude Code
 * session, read in slices, and one Cursor database, read in parts of whole chats.
 */
async function bigLogs() {
  const mib = Number(Deno.env.get("CHRONICLE_BENCH_BIG_MB") ?? 200);
  console.log(`--- one big log (${mib} MiB)`);
  const data = await Deno.makeTempDir({ prefix: "chronicle-bench-" });
  try {
    const logs: [string, string, string][] = [
      ["one claude-code session", await bigSession(mib), "claude-code"],
      ["one cursor database", await bigCursorDb(Math.round(mib / 2)), "cursor"],
      // lines just under the longest read whole, one after another
      ["8 pasted 26 MiB prompts", await pastedPrompts(8, 26), "claude-code"],
    ];
    for (const [label, home, source] of logs) {
      const logBytes = bytesOf(`${home}/${source === "cursor" ? CURSOR_DB : ".claude"}`);
      const r: ImportRun = await child("import", home, `${data}/${source}`, source);
      console.log(
        `${label.padEnd(26)} ${
          (logBytes / 2 ** 20).toFixed(0)
        } MiB, ${r.summary.operations} operations: ${
          r.seconds.toFixed(2)
        } s, peak RSS ${r.peak_rss_mb} MB (goal < 300 MB)`,
      );
    }
    // The database read again once one chat changed, as Cursor changes it while it is used:
    // in a copy, so the kept corpus stays as it was made.
    const home = `${data}/cursor-home`;
    await copyTree(logs[1][1], home);
    await child("import", home, `${data}/again`, "cursor");
    renameFirstChat(`${home}/${CURSOR_DB}`);
    const again: ImportRun = await child("import", home, `${data}/again`, "cursor");
    console.log(
      `${"  read again, 1 chat moved".padEnd(26)} ${
        again.seconds.toFixed(2)
      } s, ${again.summary.sources.cursor.operations} operations written, peak RSS ${again.peak_rss_mb} MB`,
    );
  } finally {
    await Deno.remove(data, { recursive: true });
  }
}

/** Renames a database's first chat, as Cursor rewrites a chat's row when it changes. */
function renameFirstChat(path: string): void {
  const db = new DatabaseSync(path);
  try {
    const row = db.prepare(
      "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' ORDER BY key LIMIT 1",
    ).get() as { key: string; value: string };
    const chat = JSON.parse(String(row.value));
    chat.name = `${chat.name} (renamed)`;
    chat.lastUpdatedAt += 1;
    db.prepare("UPDATE cursorDiskKV SET value = ? WHERE key = ?").run(
      JSON.stringify(chat),
      row.key,
    );
  } finally {
    db.close();
  }
}

async function bench(MB: number) {
  console.log(`--- ${MB} MB`);
  const corpus = await claudeCorpus(MB);
  const data = await Deno.makeTempDir({ prefix: "chronicle-bench-" });
  try {
    // A first pass only fills the page cache, so every measured pass reads from memory. Then
    // bare loop and cold import take turns, ROUNDS times: on a shared machine the median of each
    // is steadier than any single run.
    await child("bare", `${corpus}/.claude/projects`);
    const bares: BareRun[] = [], colds: ImportRun[] = [], origs: OriginalRun[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      bares.push(await child("bare", `${corpus}/.claude/projects`));
      if (r > 0) await Deno.remove(data, { recursive: true }).then(() => Deno.mkdir(data));
      colds.push(await child("import", corpus, data));
      if (ORIGINAL) origs.push(await original(corpus));
    }
    const bare = medianBy(bares, (x) => x.seconds);
    const cold = {
      ...medianBy(colds, (x) => x.seconds),
      peak_rss_mb: max(colds, (x) => x.peak_rss_mb),
    };
    const ratios = colds.map((c, i) => c.seconds / bares[i].seconds).sort((x, y) => x - y);
    const vsOriginal = origs.map((o, i) => colds[i].seconds / o.seconds).sort((x, y) => x - y);
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
        "cold import: sessions browsable",
        `${cold.summary.browsable_seconds.toFixed(2)} s (${
          (mb / cold.summary.browsable_seconds).toFixed(0)
        } MB/s); browsable / bare ${
          (cold.summary.browsable_seconds / bare.seconds).toFixed(2)
        }x (the search index is built after)`,
      ],
      [
        "cold import (fully indexed)",
        `${cold.seconds.toFixed(2)} s (${(mb / cold.seconds).toFixed(0)} MB/s)`,
      ],
      [
        "cold / bare",
        `${
          (cold.seconds / bare.seconds).toFixed(2)
        }x (target <= 3x), medians of ${ROUNDS} rounds; ` +
        `each round ${ratios[0].toFixed(2)}x to ${ratios[ratios.length - 1].toFixed(2)}x`,
      ],
      [
        "cold / bare in CPU",
        `${(cold.cpu_s / bare.cpu_s).toFixed(2)}x (${cold.cpu_s.toFixed(1)} s over two threads / ${
          bare.cpu_s.toFixed(1)
        } s; CPU seconds hold on a shared machine, wall seconds do not)`,
      ],
      [
        "cold / original",
        vsOriginal.length
          ? `${
            vsOriginal[Math.floor(vsOriginal.length / 2)].toFixed(2)
          }x (target < 1), median of ${ROUNDS} rounds' own ratios; original peak RSS ${
            max(origs, (o) => o.peak_rss_mb)
          } MB`
          : "not run (CHRONICLE_ORIGINAL unset; deno task bench:original)",
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
        "re-read, nothing changed",
        `${inc.full_s.toFixed(2)} s = ${
          (inc.full_s / cold.seconds).toFixed(2)
        }x cold (import --full: every file read again, only changed steps written)`,
      ],
      [
        "one appended line",
        `${
          (append.seconds * 1000).toFixed(0)
        } ms, median of 5, its unit alone through a live worker, as the live tail imports it (target < 50 ms)`,
      ],
      [
        "peak RSS, cold import",
        `${cold.peak_rss_mb} MB, highest of the rounds (target < 300 MB; bare loop ${bare.peak_rss_mb} MB)`,
      ],
      ["seconds per GB", `${(cold.seconds / (bare.bytes / 2 ** 30)).toFixed(1)} s (cold import)`],
      [
        "fully indexed",
        `${cold.seconds.toFixed(2)} s: ${
          cold.summary.indexed.toLocaleString("en-US")
        } operations indexed in ${
          (cold.seconds - cold.summary.browsable_seconds).toFixed(2)
        } s once every session was stored`,
      ],
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
      [
        "search on this store",
        Object.entries(cold.search_classes_ms).map(([k, ms]) => `${k} ${ms.toFixed(1)} ms`)
          .join(", ") + " (warm, median of each class; the 1M-message bench's texts are shorter)",
      ],
    ];
    for (const [k, v] of rows) console.log(`${k.padEnd(26)} ${v}`);

    // Codex CLI: a corpus of comparable size, generated here, imported cold.
    const codex = await codexCorpus(MB);
    await child("bare", `${codex}/.codex/sessions`);
    const codexBare = await child("bare", `${codex}/.codex/sessions`);
    const codexCold = await child("import", codex, `${data}/codex`, "codex");
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
}
