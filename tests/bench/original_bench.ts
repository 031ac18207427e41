/**
 * Chronicle against the original Chronicle on the same corpora: cold import, bare read+parse
 * loop and the original's import (its server and the requests its import wizard makes) take
 * turns, round after round, and each round gives its own ratios, so a shared machine's drift
 * cancels out. Not part of CI: run it when asked.
 *
 *   cp -r ../shared/anchors/chronicle-original /tmp/orig && (cd /tmp/orig && npm install --omit=dev --ignore-scripts)
 *   CHRONICLE_ORIGINAL=/tmp/orig deno task bench:original
 *
 * CHRONICLE_BENCH_MB (default 300), CHRONICLE_BENCH_ROUNDS (3), CHRONICLE_BENCH_CODEX=1 adds
 * the Codex corpus. The original keeps its data in `$HOME/.chronicle`; HOME is the corpus, and
 * that folder is removed before each of its runs.
 */
import {
  type BareRun,
  child,
  claudeCorpus,
  codexCorpus,
  type ImportRun,
  median,
  ORIGINAL,
  original,
  type OriginalRun,
} from "./_bench_kit.ts";

if (!ORIGINAL) {
  console.error("CHRONICLE_ORIGINAL must name an installed copy of the original (see above)");
  Deno.exit(2);
}
const MB = Number(Deno.env.get("CHRONICLE_BENCH_MB") ?? 300);
const ROUNDS = Number(Deno.env.get("CHRONICLE_BENCH_ROUNDS") ?? 3);

async function compare(label: string, home: string, logs: string, source: string) {
  const data = await Deno.makeTempDir({ prefix: "chronicle-bench-" });
  try {
    await child("bare", logs); // fills the page cache
    const rows: { bare: BareRun; cold: ImportRun; orig: OriginalRun }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const bare: BareRun = await child("bare", logs);
      await Deno.remove(data, { recursive: true }).then(() => Deno.mkdir(data));
      const cold: ImportRun = await child("import", home, data, source);
      const orig = await original(home);
      rows.push({ bare, cold, orig });
      console.log(
        `${label} round ${r + 1}: bare ${bare.seconds.toFixed(2)} s, Chronicle browsable ${
          cold.summary.browsable_seconds.toFixed(2)
        } s (${
          (cold.summary.browsable_seconds / orig.seconds).toFixed(2)
        }x the original), fully indexed ${
          cold.seconds.toFixed(2)
        } s (${cold.peak_rss_mb} MB), original ${
          orig.seconds.toFixed(2)
        } s (${orig.peak_rss_mb} MB, ${orig.messages} messages${
          orig.failed ? `, ${orig.failed} projects failed` : ""
        }): Chronicle / original ${(cold.seconds / orig.seconds).toFixed(2)}x in time, ${
          (cold.cpu_s / orig.cpu_s).toFixed(2)
        }x in CPU (${cold.cpu_s.toFixed(1)} s / ${orig.cpu_s.toFixed(1)} s); Chronicle's store ${
          (cold.store_bytes / bare.bytes).toFixed(2)
        }x the logs (index ${(cold.index_bytes / 2 ** 20).toFixed(0)} MB), analytics first view ${
          cold.analytics_first_ms.toFixed(0)
        } ms`,
      );
    }
    const gb = rows[0].bare.bytes / 2 ** 30;
    const m = (f: (x: (typeof rows)[number]) => number) => median(rows.map(f)).toFixed(2);
    console.log(
      `${label} (${(gb * 1024).toFixed(0)} MB, medians of ${ROUNDS} rounds' own ratios): ` +
        `Chronicle browsable / original ${
          m((x) => x.cold.summary.browsable_seconds / x.orig.seconds)
        }x, browsable / bare ${m((x) => x.cold.summary.browsable_seconds / x.bare.seconds)}x; ` +
        `fully indexed / original ${m((x) => x.cold.seconds / x.orig.seconds)}x (CPU ${
          m((x) => x.cold.cpu_s / x.orig.cpu_s)
        }x), ` +
        `Chronicle / bare ${m((x) => x.cold.seconds / x.bare.seconds)}x (CPU ${
          m((x) => x.cold.cpu_s / x.bare.cpu_s)
        }x), ` +
        `original / bare ${m((x) => x.orig.seconds / x.bare.seconds)}x; s/GB Chronicle ${
          m((x) => x.cold.seconds / gb)
        }, original ${m((x) => x.orig.seconds / gb)}; peak RSS Chronicle ${
          Math.max(...rows.map((x) => x.cold.peak_rss_mb))
        } MB, original ${Math.max(...rows.map((x) => x.orig.peak_rss_mb))} MB`,
    );
  } finally {
    await Deno.remove(data, { recursive: true });
  }
}

const claude = await claudeCorpus(MB);
await compare("claude", claude, `${claude}/.claude/projects`, "claude-code");
if (Deno.env.get("CHRONICLE_BENCH_CODEX") === "1") {
  const codex = await codexCorpus(MB);
  await compare("codex", codex, `${codex}/.codex/sessions`, "codex");
}
