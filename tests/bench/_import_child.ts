/**
 * One measured step of the import benchmark, in its own process so peak memory is its own:
 * `bare DIR` reads and JSON-parses every line (`bare-opencode DB`: every message and part row
 * of an OpenCode database; `bare-cursor DB`: every chat and bubble row of a Cursor one);
 * `import HOME DATA` runs Chronicle's import
 * (read-only worker + store writes) exactly as `chronicle import` does. Prints one JSON line.
 */
import { ChronicleStore, discoverUnits, importAll, importUnits } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { createWorkerRunner } from "../../runtime/worker_runner.ts";
import { createPackFiles, packDir } from "../../runtime/pack_files.ts";
import { runImport } from "../../cli/import.ts";
import type { CliIo } from "../../cli/io.ts";
import { dbOf } from "../_helpers/store_db.ts";
import { appendClaudePrompt } from "../e2e/_synthetic.ts";
import { cpuUsage } from "node:process";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { bytesUnder } from "./_bytes_under.ts";

/** The process's CPU seconds, user and system, every thread. */
function cpuSeconds(): number {
  const u = cpuUsage();
  return (u.user + u.system) / 1e6;
}

function peakRssMb(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...await files(p));
    else if (e.name.endsWith(".jsonl")) out.push(p);
  }
  return out.sort();
}

const [mode, a, b] = Deno.args;
/** The agent to import (default Claude Code): `import HOME DATA codex` for the Codex corpus. */
const source = Deno.args[3] ?? "claude-code";
/** Times a bare loop, `loop` returning the bytes and lines it parsed, and prints the run. */
async function bareRun(
  loop: () => { bytes: number; lines: number } | Promise<{ bytes: number; lines: number }>,
) {
  const t0 = performance.now();
  const { bytes, lines } = await loop();
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    JSON.stringify({ seconds, cpu_s: cpuSeconds(), bytes, lines, peak_rss_mb: peakRssMb() }),
  );
}

/** A database's bare loop: every text of `sql`'s first column (NULLs aside), read and parsed. */
function parseCells(db: DatabaseSync, sql: string, ...params: string[]) {
  const decoder = new TextDecoder();
  let bytes = 0, lines = 0;
  const stmt = db.prepare(sql) as StatementSync & { setReturnArrays(on: boolean): void };
  stmt.setReturnArrays(true); // the fastest way node:sqlite has to hand rows over
  for (const row of stmt.iterate(...params) as unknown as unknown[][]) {
    const cell = row[0] as string | Uint8Array | null;
    if (cell === null) continue;
    const text = typeof cell === "string" ? cell : decoder.decode(cell);
    bytes += text.length;
    JSON.parse(text);
    lines++;
  }
  return { bytes, lines };
}

if (mode === "bare") {
  await bareRun(async () => {
    let bytes = 0, lines = 0;
    const decoder = new TextDecoder();
    for (const f of await files(a)) {
      const file = await Deno.open(f);
      let carry = "";
      for await (const chunk of file.readable) {
        bytes += chunk.byteLength;
        const text = carry + decoder.decode(chunk, { stream: true });
        const parts = text.split("\n");
        carry = parts.pop()!;
        for (const l of parts) if (l) (JSON.parse(l), lines++);
      }
      if (carry) (JSON.parse(carry), lines++);
    }
    return { bytes, lines };
  });
} else if (mode === "bare-opencode" || mode === "bare-cursor") {
  // A database's bare loop: OpenCode's message and part rows' data, Cursor's chat and bubble
  // rows' values, each read and parsed.
  await bareRun(() => {
    const db = new DatabaseSync(a, { readOnly: true });
    const queries = mode === "bare-opencode"
      ? ["message", "part"].map((table) => [`SELECT data FROM ${table}`])
      : ["composerData:", "bubbleId:"].map((prefix) => [
        "SELECT value FROM cursorDiskKV WHERE key >= ? AND key < ?",
        prefix,
        prefix.slice(0, -1) + ";",
      ]);
    let bytes = 0, lines = 0;
    for (const [sql, ...params] of queries) {
      const n = parseCells(db, sql, ...params);
      bytes += n.bytes;
      lines += n.lines;
    }
    db.close();
    return { bytes, lines };
  });
} else if (mode === "import") {
  await Deno.mkdir(b, { recursive: true });
  const store = ChronicleStore.open(`${b}/chronicle.db`, { packs: createPackFiles(packDir(b)) });
  const io: CliIo = {
    stdout: () => {},
    stderr: () => {},
    stdin: () => Promise.resolve(new Uint8Array()),
    env: { HOME: a },
    cwd: Deno.cwd(),
    isTerminal: false,
  };
  const t0 = performance.now();
  const c0 = cpuSeconds();
  const summary = await runImport(store, io, { tempRoot: `${b}/tmp`, sources: [source] });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - c0;
  const peak = peakRssMb();
  store.close();
  // The analytics page's first view, on the store as the server would open it.
  const again = ChronicleStore.open(`${b}/chronicle.db`, { packs: createPackFiles(packDir(b)) });
  const t1 = performance.now();
  again.stats();
  const analyticsMs = performance.now() - t1;
  const t2 = performance.now();
  const search = again.search("error");
  const searchMs = performance.now() - t2;
  // Search on this store, warm, by query class: the 1M-message bench's texts are short, these
  // are the corpus's own (longer, more words each).
  const classes: Record<string, string[]> = {
    word: ["error", "render", "session"],
    prefix: ["rend", "pars", "sessi"],
    phrase: ['"file path"', '"return the"'],
    identifier: ["src/import", "files_with_matches", "error_code"],
  };
  const searchClasses: Record<string, number> = {};
  for (const [name, queries] of Object.entries(classes)) {
    const times: number[] = [];
    for (const q of queries) {
      again.search(q);
      for (let r = 0; r < 3; r++) {
        const t = performance.now();
        again.search(q);
        times.push(performance.now() - t);
      }
    }
    times.sort((x, y) => x - y);
    searchClasses[name] = times[Math.floor(times.length / 2)];
  }
  const indexBytes = (dbOf(again).prepare(
    "SELECT sum(pgsize) AS n FROM dbstat WHERE name LIKE 'operations_fts%'",
  ).get() as { n: number }).n;
  again.close();
  console.log(JSON.stringify({
    seconds,
    cpu_s: cpu,
    summary,
    peak_rss_mb: peak,
    store_bytes: bytesUnder(b),
    index_bytes: indexBytes,
    analytics_first_ms: analyticsMs,
    search_ms: searchMs,
    search_total: search.total,
    search_classes_ms: searchClasses,
  }));
} else if (mode === "incremental") {
  // What the server's background importer does: one live worker, a re-import with nothing
  // changed, then one appended line. Args: HOME DATA FILE-TO-APPEND-TO.
  const file = Deno.args[3];
  const store = ChronicleStore.open(`${b}/chronicle.db`, { packs: createPackFiles(packDir(b)) });
  const fs = createDenoFs({ tempRoot: `${b}/tmp` });
  const t0 = performance.now();
  const worker = createWorkerRunner({ tempRoot: `${b}/tmp` });
  const env = { home: a, env: { HOME: a }, platform: "linux" as const };
  const run = async (full = false) => {
    const t = performance.now();
    await importAll(store, { env, fs, runner: worker.runner, sources: ["claude-code"], full });
    return (performance.now() - t) / 1000;
  };
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const warmFirst = await run(); // includes starting the worker
  const warms: number[] = [];
  for (let i = 0; i < 5; i++) warms.push(await run());
  const warm = median(warms);
  const original = await Deno.readFile(file);
  const sid = file.slice(file.lastIndexOf("/") + 1, -6);
  // As the live tail imports an append: that file's unit alone, no store totals (serve_import).
  const { units } = await discoverUnits({ env, fs, sources: ["claude-code"] });
  const unit = units.find((u) => u.path === file);
  if (!unit) throw new Error(`no unit for ${file}`);
  const appendOne = async () => {
    const t = performance.now();
    await importUnits(store, [unit], { fs, runner: worker.runner, totals: false });
    return (performance.now() - t) / 1000;
  };
  const appends: number[] = [];
  for (let i = 0; i < 5; i++) {
    await appendClaudePrompt(file, sid, `one more line (${i})`);
    appends.push(await appendOne());
  }
  const append = median(appends);
  await Deno.writeFile(file, original); // leave the corpus as generated
  const restore = await run();
  // `chronicle import --full`: every file read again from its start, nothing in it changed
  const full = await run(true);
  worker.close();
  store.close();
  console.log(JSON.stringify({
    warm_first_s: warmFirst,
    warm_s: warm,
    append_s: append,
    restore_s: restore,
    full_s: full,
    total_s: (performance.now() - t0) / 1000,
  }));
} else {
  console.error(
    "usage: _import_child.ts bare DIR | bare-opencode DB | bare-cursor DB | import HOME DATA",
  );
  Deno.exit(2);
}
