/**
 * Secret-scan throughput: Chronicle's `scanText` against secretlint (`@secretlint/core` with
 * `@secretlint/secretlint-rule-preset-recommend`) on the same text, in one process, rounds
 * interleaved. Two texts:
 *
 * - transcripts: Claude Code session logs from the project's corpus generator
 *   (`node ../shared/tools/gen_corpus.mjs`, as the import bench uses), concatenated;
 * - planted: a denser mix of prose, code, JSON and logs where 1 line in 100 carries a fake
 *   secret, to compare what each scanner finds as well as how fast.
 *
 * Prints both throughputs (MB/s: median and best round) and their ratio. Target (DESIGN.md):
 * at least 5x secretlint, with equal or better recall.
 *
 * Run: deno task bench:scan [SIZE_MB] [ROUNDS]   (defaults 8 and 9)
 */
import { lintSource, secretlintRecommended as recommended } from "../_helpers/test_deps.ts";
import { scanText } from "../../core/security/mod.ts";
import { FakeSecrets } from "../unit/security/_fake_secrets.ts";
import { rng } from "../_helpers/rng.ts";
import { median } from "./_bench_kit.ts";

const SIZE_MB = Number(Deno.args[0] ?? 8);
const ROUNDS = Number(Deno.args[1] ?? 9);
const ROOT = new URL("../../", import.meta.url).pathname;
const GEN = new URL("../../../shared/tools/gen_corpus.mjs", import.meta.url).pathname;

interface Planted {
  kind: string;
  start: number;
  end: number;
}

/** Transcript-like text: prose, code, JSON tool results, logs; now and then a fake secret. */
export function generateText(bytes: number, seed = 42): { text: string; planted: Planted[] } {
  const rnd = rng(seed);
  const fake = new FakeSecrets(seed + 1);
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)];
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const WORDS = ("the a to of and in is for on with that this it be as by are function return " +
    "const let import export from class interface type async await if else while test error " +
    "value file path session parser server route handler token store query index result " +
    "update render state component signal effect build bundle check lint format deno node " +
    "sqlite json line offset byte key password secret config user email phone address").split(" ");
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const filler: (() => string)[] = [
    () => `${words(int(6, 18))}.`,
    () =>
      `  const ${pick(WORDS)}_${int(0, 99)} = await ${pick(WORDS)}.${pick(WORDS)}(${int(0, 999)});`,
    () => `export function ${pick(WORDS)}${int(0, 99)}(${pick(WORDS)}: string): number {`,
    () =>
      `{"type":"tool_result","tool_use_id":"toolu_${fake.alnum(24)}","content":"${words(8)}\\n${
        words(5)
      }"}`,
    () =>
      `2025-0${int(1, 9)}-1${int(0, 9)}T10:${int(10, 59)}:${int(10, 59)}.${int(100, 999)}Z INFO ${
        words(5)
      } in ${int(1, 900)}ms`,
    () =>
      `{"usage":{"input_tokens":${int(1, 9000)},"output_tokens":${
        int(1, 900)
      }},"model":"claude-sonnet-4-5"}`,
    () => `  ${int(1, 400)}\t    if (${pick(WORDS)}.length > ${int(1, 64)}) return ${pick(WORDS)};`,
    () => `GET https://api.example.com/v1/${pick(WORDS)}?page=${int(1, 40)} 200 ${int(10, 900)}ms`,
    () =>
      `npm install ${pick(WORDS)}@${int(1, 9)}.${int(0, 20)}.${int(0, 9)} && deno task ${
        pick(WORDS)
      }`,
    () => `sha256:${fake.hex(64)}  ${pick(WORDS)}.tar.gz`,
    () => `connected to 8.8.${int(0, 255)}.${int(1, 254)} (public) after ${int(1, 9)} retries`,
  ];
  /** Each maker returns the line and the secret value planted in it. */
  const secrets: [string, () => [string, string]][] = [
    ["openai", () => ((k) => [`OPENAI_API_KEY=${k}`, k])(fake.openai())],
    ["anthropic", () => ((k) => [`export ANTHROPIC_API_KEY=${k}`, k])(fake.anthropic())],
    [
      "github",
      () =>
        ((k) => [`git remote set-url origin https://${k}@github.com/a/b.git`, k])(fake.github()),
    ],
    ["aws", () => ((k) => [`aws_access_key_id = ${k}`, k])(fake.aws())],
    ["slack", () => ((k) => [`"bot_token": "${k}"`, k])(fake.slack())],
    ["stripe", () => ((k) => [`STRIPE_SECRET_KEY=${k}`, k])(fake.stripe())],
    [
      "db_conn",
      () =>
        ((k) => [`DATABASE_URL=${k}`, k])(`postgres://app:${fake.alnum(14)}@db.acme.io:5432/app`),
    ],
    ["password", () => ((k) => [`DB_PASSWORD=${k}`, k])(fake.password())],
    ["jwt", () => ((k) => [`-H "Authorization: Bearer ${k}"`, k])(fake.jwt())],
    [
      "email",
      () =>
        ((k) => [`Co-Authored-By: Dev <${k}>`, k])(
          `dev.${fake.alnum(5).toLowerCase()}@acme-corp.io`,
        ),
    ],
  ];
  const parts: string[] = [];
  const planted: Planted[] = [];
  let size = 0;
  while (size < bytes) {
    let line: string;
    if (rnd() < 0.01) {
      const [kind, make] = pick(secrets);
      const [l, value] = make();
      line = l;
      const start = size + line.indexOf(value);
      planted.push({ kind, start, end: start + value.length });
    } else {
      line = pick(filler)();
    }
    parts.push(line);
    size += line.length + 1;
  }
  return { text: parts.join("\n"), planted };
}

function foundCount(
  planted: Planted[],
  spans: [number, number][],
): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  for (const p of planted) {
    out[p.kind] ??= [0, 0];
    out[p.kind][1]++;
    // binary search for a span overlapping the planted value
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid][1] <= p.start) lo = mid + 1;
      else hi = mid;
    }
    if (lo < sorted.length && sorted[lo][0] < p.end) out[p.kind][0]++;
  }
  return out;
}

async function secretlint(text: string) {
  const result = await lintSource({
    source: { content: text, filePath: "/bench/transcript.txt", ext: ".txt", contentType: "text" },
    options: {
      config: {
        rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }],
      },
      noPhysicFilePath: true,
    },
  });
  return result.messages.map((m) => m.range as [number, number]);
}

/** Concatenated session logs from the project's corpus generator; null without node. */
async function transcripts(mb: number): Promise<string | null> {
  const dir = `${ROOT}tests/bench/.corpus/scan-${mb}`;
  try {
    await Deno.stat(`${dir}/.done`);
  } catch {
    try {
      await Deno.mkdir(dir, { recursive: true });
      const out = await new Deno.Command("node", { args: [GEN, dir, String(mb)], stdout: "null" })
        .output();
      if (!out.success) return null;
      await Deno.writeTextFile(`${dir}/.done`, "");
    } catch {
      return null;
    }
  }
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of [...Deno.readDirSync(d)].sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory) walk(`${d}/${e.name}`);
      else if (e.name.endsWith(".jsonl")) files.push(`${d}/${e.name}`);
    }
  };
  walk(`${dir}/.claude/projects`);
  return files.map((f) => Deno.readTextFileSync(f)).join("\n");
}

interface Measured {
  ours: number[];
  theirs: number[];
  ourSpans: [number, number][];
  theirSpans: [number, number][];
}

async function measure(text: string, mb: number): Promise<Measured> {
  // warm both up (JIT, regex tier-up) on the same text
  scanText(text);
  await secretlint(text);
  const m: Measured = { ours: [], theirs: [], ourSpans: [], theirSpans: [] };
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    const r = scanText(text);
    m.ours.push(mb / ((performance.now() - t) / 1000));
    m.ourSpans = r.findings.map((f) => [f.start, f.end]);
    t = performance.now();
    m.theirSpans = await secretlint(text);
    m.theirs.push(mb / ((performance.now() - t) / 1000));
  }
  return m;
}

function report(name: string, mb: number, m: Measured): number {
  const a = median(m.ours);
  const b = median(m.theirs);
  const aBest = Math.max(...m.ours);
  const bBest = Math.max(...m.theirs);
  console.log(`${name}: ${mb.toFixed(1)} MB, ${ROUNDS} rounds`);
  console.log(
    `  chronicle scanText            median ${a.toFixed(1)} MB/s, best ${
      aBest.toFixed(1)
    } MB/s (${m.ourSpans.length} findings)`,
  );
  console.log(
    `  secretlint preset-recommend   median ${b.toFixed(1)} MB/s, best ${
      bBest.toFixed(1)
    } MB/s (${m.theirSpans.length} findings)`,
  );
  console.log(
    `  ratio ${(a / b).toFixed(2)}x on medians, ${
      (aBest / bBest).toFixed(2)
    }x on best rounds (target >= 5x)`,
  );
  return a / b;
}

if (import.meta.main) {
  const corpus = await transcripts(SIZE_MB);
  if (corpus === null) {
    console.log("transcripts: skipped (node or ../shared/tools/gen_corpus.mjs not available)");
  } else {
    const mb = new TextEncoder().encode(corpus).length / (1024 * 1024);
    report("transcripts (gen_corpus.mjs session logs)", mb, await measure(corpus, mb));
  }

  const { text, planted } = generateText(SIZE_MB * 1024 * 1024);
  const mb = new TextEncoder().encode(text).length / (1024 * 1024);
  const m = await measure(text, mb);
  report(`planted (1 line in 100 holds one of ${planted.length} fake secrets)`, mb, m);
  const ourFound = foundCount(planted, m.ourSpans);
  const theirFound = foundCount(planted, m.theirSpans);
  const total = (f: Record<string, [number, number]>) =>
    Object.values(f).reduce((n, [x]) => n + x, 0);
  console.log(
    `  planted secrets found: chronicle ${total(ourFound)}/${planted.length}, secretlint ${
      total(theirFound)
    }/${planted.length}`,
  );
  for (const kind of Object.keys(ourFound).sort()) {
    const [o, n] = ourFound[kind];
    console.log(
      `    ${kind.padEnd(10)} chronicle ${o}/${n}  secretlint ${theirFound[kind]?.[0] ?? 0}/${n}`,
    );
  }
}
