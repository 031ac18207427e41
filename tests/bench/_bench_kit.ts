/**
 * What the import benchmarks share: the corpora (generated once, kept), the measured child
 * process (`_import_child.ts`, run with the V8 flags `deno task chronicle` uses), medians.
 *
 * Corpora go to `CHRONICLE_BENCH_CORPUS` (default `tests/bench/.corpus`, ignored by git).
 */
import { writeBigClaudeSession, writeBigCursorDb, writePastedPrompts } from "./_big_logs.ts";
import { generateCodexCorpus } from "./_codex_corpus.ts";
import { type JsonlAgent, writeRealJsonlHome, writeRealOpencodeHome } from "./_real_corpus.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
const CORPORA = Deno.env.get("CHRONICLE_BENCH_CORPUS") ?? `${ROOT}tests/bench/.corpus`;
const GEN = new URL("../../../shared/tools/gen_corpus.mjs", import.meta.url).pathname;

/** What `_import_child.ts` prints for `bare`. */
export interface BareRun {
  seconds: number;
  /** CPU seconds of its process, start included. */
  cpu_s: number;
  bytes: number;
  lines: number;
  peak_rss_mb: number;
}

/** What `_import_child.ts` prints for `import`. */
export interface ImportRun {
  seconds: number;
  /** CPU seconds (user + system, both threads) of the import, store opening excluded. */
  cpu_s: number;
  peak_rss_mb: number;
  summary: {
    sessions: number;
    operations: number;
    /** Every session stored and browsable; the search index is built after (`seconds`). */
    browsable_seconds: number;
    indexed: number;
    /** Per source: the operations this import wrote. */
    sources: Record<string, { operations: number }>;
  };
  store_bytes: number;
  index_bytes: number;
  analytics_first_ms: number;
  search_ms: number;
  /** Warm search on the imported store, the median of each query class (_import_child.ts). */
  search_classes_ms: Record<string, number>;
}

export async function run(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "inherit" })
    .output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed with ${out.code}`);
  return new TextDecoder().decode(out.stdout);
}

/** The V8 flags `deno task chronicle` runs with, so the bench measures what users run. */
const V8_FLAGS = (JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .match(/--v8-flags=\S+/g) ?? []) as string[];

/** One measured step in its own process (its peak memory is its own); its JSON line. */
export async function child(...args: string[]) {
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

/** A generated Claude Code corpus of about `mb` MiB (a home: `<dir>/.claude/projects`). */
export async function claudeCorpus(mb: number): Promise<string> {
  return await kept(String(mb), async (dir) => {
    console.log(`generating a ${mb} MB corpus in ${dir} ...`);
    await run("node", [GEN, dir, String(mb)]);
  });
}

/** A generated Codex CLI corpus of about `mb` MiB (a home: `<dir>/.codex/sessions`). */
export async function codexCorpus(mb: number): Promise<string> {
  return await kept(`codex-${mb}`, async (dir) => {
    console.log(`generating a ${mb} MB Codex corpus in ${dir} ...`);
    await generateCodexCorpus(dir, mb);
  });
}

/** A home holding one Claude Code session of about `mib` MiB, made from the 300 MB corpus. */
export async function bigSession(mib: number): Promise<string> {
  return await kept(`big-session-${mib}`, async (dir) => {
    console.log(`writing one ${mib} MiB Claude Code session in ${dir} ...`);
    await writeBigClaudeSession(await claudeCorpus(300), dir, mib);
  });
}

/** A home holding one Claude Code session of `count` pasted prompts of `mib` MiB each. */
export async function pastedPrompts(count: number, mib: number): Promise<string> {
  return await kept(`pasted-${count}x${mib}`, async (dir) => {
    console.log(`writing a session of ${count} pasted ${mib} MiB prompts in ${dir} ...`);
    await writePastedPrompts(dir, count, mib);
  });
}

/** A home holding one Cursor database of about `mib` MiB of chats. */
export async function bigCursorDb(mib: number): Promise<string> {
  return await kept(`cursor-${mib}`, (dir) => {
    console.log(`writing a ${mib} MiB Cursor database in ${dir} ...`);
    writeBigCursorDb(dir, mib);
  });
}

/**
 * A home of about `mib` MiB of one agent's logs made of the real CLIs' recordings
 * (`_real_corpus.ts`): Gemini CLI, Qwen Code, Copilot CLI or OpenCode.
 */
export async function realCorpus(agent: JsonlAgent | "opencode", mib: number): Promise<string> {
  return await kept(`real-${agent}-${mib}`, (dir) => {
    console.log(`copying ${agent}'s recordings into a ${mib} MiB home in ${dir} ...`);
    if (agent === "opencode") writeRealOpencodeHome(dir, mib);
    else writeRealJsonlHome(agent, dir, mib);
  });
}

/** Where a home from {@link realCorpus} keeps the logs a bare loop reads. */
export const REAL_LOGS: Record<JsonlAgent | "opencode", string> = {
  gemini: ".gemini/tmp",
  qwen: ".qwen/projects",
  copilot: ".copilot/session-state",
  opencode: ".local/share/opencode/opencode.db",
};

/** A corpus folder made once (`.done` marks it whole). */
async function kept(name: string, make: (dir: string) => unknown): Promise<string> {
  const dir = `${CORPORA}/${name}`;
  try {
    await Deno.stat(`${dir}/.done`);
  } catch {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true });
    await make(dir);
    await Deno.writeTextFile(`${dir}/.done`, "");
  }
  return dir;
}

/** An installed copy of the original Chronicle (see original_bench.ts), when one is given. */
export const ORIGINAL = Deno.env.get("CHRONICLE_ORIGINAL");
const PORT = 41790;

export interface OriginalRun {
  seconds: number;
  /** CPU seconds (user + system) of its server, start included. */
  cpu_s: number;
  peak_rss_mb: number;
  messages: number;
  failed: number;
}

/** One cold import by the original (CHRONICLE_ORIGINAL): its server started on `home`, its wizard's requests. */
export async function original(home: string): Promise<OriginalRun> {
  await Deno.remove(`${home}/.chronicle`, { recursive: true }).catch(() => {});
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--node-modules-dir=manual", "server/standalone.js"],
    cwd: ORIGINAL!,
    env: { HOME: home, PORT: String(PORT) },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    for (let seen = ""; !seen.includes("Chronicle standalone on");) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the original's server exited before it listened");
      seen += value;
    }
    reader.releaseLock();
    const out = await new Deno.Command("node", {
      args: ["import-driver.mjs", `http://127.0.0.1:${PORT}`],
      cwd: ORIGINAL!,
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!);
    // Read by `cat`: Deno lets only --allow-all read /proc, and --allow-run is enough for this.
    const status = await run("cat", [`/proc/${server.pid}/status`]);
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    // utime and stime, in clock ticks (100 a second on Linux), after the command's name.
    const stat = (await run("cat", [`/proc/${server.pid}/stat`])).split(") ")[1].split(" ");
    const cpu = (Number(stat[11]) + Number(stat[12])) / 100;
    return {
      seconds: r.total_s,
      cpu_s: cpu,
      peak_rss_mb: Math.round(kb / 1024),
      messages: r.messages,
      failed: r.failed,
    };
  } finally {
    server.kill("SIGTERM");
    await server.stdout.cancel().catch(() => {});
    await server.status;
  }
}

/** The middle value; of an even count, the mean of the two middle ones (not the upper one). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function medianBy<T>(xs: T[], key: (x: T) => number): T {
  return [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];
}
