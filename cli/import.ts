/** `chronicle import`: discover every agent's logs and import what changed. */
import { termSafe } from "../core/security/terminal.ts";
import { RuleStore } from "../core/security/rule_store.ts";
import { takeGuardJournal } from "../guard/files.ts";
import {
  importAll,
  type ImportSummary,
  indexSearchBacklog,
  type SourceSummary,
  type UnitRunner,
} from "../core/store/mod.ts";
import { formatBytes } from "../core/doctor/mod.ts";
import { isNoSpace } from "./os_error.ts";
import { dataDir } from "../runtime/data_dir.ts";
import { loadExcludeRules } from "../runtime/exclude_file.ts";
import type { ExcludeRules } from "../core/archive/mod.ts";
import { ChronicleError } from "../core/model/mod.ts";
import { type ImportLock, waitImportLock } from "../runtime/import_lock.ts";
import { listenForInterrupt } from "./interrupt.ts";
import type { DiscoverEnv } from "../core/sources/types.ts";
import { SOURCE_IDS } from "../core/sources/registry.ts";
import { createDenoFs } from "../runtime/deno_fs.ts";
import { createWorkerRunner } from "../runtime/worker_runner.ts";
import { createTextWorker } from "../runtime/text_builder.ts";
import { helpOrVersion, parseArgs, sourceArg, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { importCanonical } from "./export.ts";
import { type CliIo, type Command, plural } from "./io.ts";
import type { ChronicleStore } from "../core/store/mod.ts";

export const IMPORT_HELP = `Usage: chronicle import [--source ID]... [--full] [--json]
       chronicle import --canonical DIR [--json]

Finds the session logs of every agent (from HOME and the agents' own variables:
CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME, ...) and imports what changed since the last
import into the local store. Unchanged files cost one stat each. Logs and projects on the
exclude list (\`chronicle exclude\`) are left out; forgotten sessions never come back.

With --full, every log is read again from its start (forgotten sessions still stay out). A
log read while its project was excluded is read from its start anyway, once the project is
no longer excluded.

With --canonical, imports the canonical session files that \`chronicle export --format
canonical\` wrote (on this machine or another), each verified first. Importing the same
export twice changes nothing; a session this machine's own logs hold is left as they say.

Options:
  --source ID      only this agent (repeatable): ${SOURCE_IDS.join(", ")}
  --full           read every log from its start, not from where the last import stopped
  --canonical DIR  import exported canonical sessions from DIR instead
  --json           print the summary as JSON
  -h, --help       show this help
`;

/** Where the agents' logs are: the user's HOME and the agents' own variables. */
export function discoverEnv(io: CliIo): DiscoverEnv {
  return {
    home: io.env.HOME ?? "",
    env: io.env,
    platform: Deno.build.os === "darwin"
      ? "darwin"
      : Deno.build.os === "windows"
      ? "windows"
      : "linux",
  };
}

/** One line of a terminal progress bar, drawn over itself: `[####------] 12/40 files ...`. */
export function progressBar(done: number, total: number, note = "", what = "files"): string {
  const width = 30;
  const filled = Math.round((Math.min(done, total) / Math.max(total, 1)) * width);
  return `\r[${"#".repeat(filled)}${
    "-".repeat(width - filled)
  }] ${done}/${total} ${what}${note}\x1b[K`;
}

/** The progress bar of the search index a bulk import builds once its sessions are stored. */
export const INDEXING_WHAT = "operations indexed for search";

/** Imports with the read-only worker; `inProcess` skips the worker (tests, debugging). */
export async function runImport(
  store: ChronicleStore,
  io: CliIo,
  options: {
    sources?: string[];
    tempRoot: string;
    inProcess?: boolean;
    progress?: boolean;
    /** A long-lived runner (the server's background importer); otherwise one worker per call. */
    runner?: UnitRunner;
    /** Stop the pass at the first unit the store cannot take when this says so. */
    stopOnStoreError?: (e: unknown) => boolean;
    /** The user's exclude list. Default: nothing excluded. */
    exclude?: ExcludeRules;
    /** Read every unit from its start. */
    full?: boolean;
    /** Stops the pass, then its indexing, once aborted (Ctrl-C): see `ImportOptions.signal`. */
    signal?: AbortSignal;
  },
): Promise<ImportSummary> {
  const fs = createDenoFs({ tempRoot: options.tempRoot });
  const worker = options.inProcess || options.runner
    ? null
    : createWorkerRunner({ tempRoot: options.tempRoot });
  let lastDraw = 0;
  let summary: ImportSummary;
  try {
    summary = await importAll(store, {
      env: discoverEnv(io),
      fs,
      sources: options.sources,
      runner: options.runner ?? worker?.runner,
      stopOnStoreError: options.stopOnStoreError,
      exclude: options.exclude,
      full: options.full,
      signal: options.signal,
      onProgress: options.progress
        ? (done, total) => {
          const t = performance.now();
          if (options.signal?.aborted || (t - lastDraw < 80 && done < total)) return;
          lastDraw = t;
          io.stderr(progressBar(done, total));
          if (done === total) io.stderr("\n");
        }
        : undefined,
      // indexed below, once the worker's memory is given back
      searchLater: true,
      deferSliced: true,
    });
  } finally {
    worker?.close();
  }
  const started = performance.now();
  // The texts are built in a worker of their own (no permissions) while this thread indexes.
  // (A pass with nothing to index starts no worker.)
  const texts = options.inProcess || !store.searchBacklog() ? null : createTextWorker();
  try {
    await indexSearchBacklog(store, summary, {
      onProgress: options.progress
        ? (done, total) => {
          const t = performance.now();
          if (options.signal?.aborted || (t - lastDraw < 80 && done < total)) return;
          lastDraw = t;
          io.stderr(progressBar(done, total, "", INDEXING_WHAT));
          if (done === total) io.stderr("\n");
        }
        : undefined,
      build: texts?.build,
      compress: texts?.compress,
      signal: options.signal,
    });
  } finally {
    texts?.close();
  }
  summary.seconds = Math.round(1000 * summary.seconds + performance.now() - started) / 1000;
  // stopped while indexing: every file was read (`unindexed` says what the index lacks)
  if (options.signal?.aborted) summary.interrupted ??= { remaining_paths: [] };
  return summary;
}

/** "6 new, 2 appended, 10 unchanged": the non-zero kinds of what a pass did with files. */
function unitCounts(src: SourceSummary): string {
  const parts = (["new", "rewritten", "appended", "unchanged", "failed"] as const)
    .filter((k) => src[k] > 0).map((k) => `${src[k]} ${k}`);
  return parts.join(", ") || "none";
}

/** What this run did, per source (the counts add up to the files found), then the store. */
export function formatSummary(s: ImportSummary): string {
  const all = Object.values(s.sources);
  const files = all.reduce((n, x) => n + x.units, 0);
  const ops = all.reduce((n, x) => n + x.operations, 0);
  const lines = [
    `${s.interrupted ? "Stopped after" : "Imported in"} ${s.seconds.toFixed(2)} s: ${
      plural(files, "file")
    }, ${plural(ops, "operation")} written.`,
  ];
  // A bulk import stores every session first, then counts their statistics, builds their search
  // index and compresses their payloads.
  if (s.indexed) {
    lines.push(
      `  sessions browsable after ${s.browsable_seconds.toFixed(2)} s, then ${
        plural(s.indexed, "operation")
      } indexed for search${s.interrupted ? "" : " (statistics counted, payloads compressed)"} in ${
        (s.seconds - s.browsable_seconds).toFixed(2)
      } s`,
    );
  }
  if (s.unindexed) {
    lines.push(
      `  ${
        plural(s.unindexed, "operation")
      } not indexed for search yet: the next import indexes them`,
    );
  }
  for (const [id, src] of Object.entries(s.sources)) {
    lines.push(
      `  ${id.padEnd(12)} ${plural(src.units, "file")}: ${unitCounts(src)}${
        src.removed ? `; ${src.removed} no longer on disk (kept)` : ""
      }${src.excluded ? `; ${src.excluded} excluded (not read)` : ""}; ${
        plural(src.operations, "operation")
      } written`,
    );
  }
  lines.push(
    `The store holds ${plural(s.sessions, "session")} and ${plural(s.operations, "operation")}${
      s.issues || s.loss_windows
        ? `, with ${plural(s.issues, "issue")} and ${
          plural(s.loss_windows, "loss window")
        } (see \`chronicle issues\`)`
        : ""
    }.`,
  );
  for (const e of s.errors) lines.push(`  ! ${termSafe(e.message)}`);
  if (s.interrupted) {
    const left = s.interrupted.remaining_paths.length;
    lines.push(
      `${
        left ? `${plural(left, "file")} not read to the end yet` : "Every file read"
      }; \`chronicle import\` goes on from there.`,
    );
  }
  return lines.join("\n") + "\n";
}

/**
 * The one line a full disk gets: what was stored, about how much more space the rest needs
 * (the store is about the size of the logs it holds), and how to resume.
 */
export async function noSpaceLine(
  dir: string,
  stored: { sessions: number; operations: number },
  remaining: readonly string[],
): Promise<string> {
  let bytes = 0;
  for (const p of remaining) {
    try {
      bytes += (await Deno.stat(p)).size;
    } catch { /* gone meanwhile */ }
  }
  const done = stored.operations
    ? `${plural(stored.operations, "operation")} of ${plural(stored.sessions, "session")} stored`
    : "nothing stored yet";
  const need = remaining.length
    ? `; the ${plural(remaining.length, "file")} left hold ${
      formatBytes(bytes)
    } of logs and need about as much space`
    : "";
  return `chronicle: the disk holding ${
    termSafe(dir)
  } is full: ${done}, nothing lost${need}. Free some space, then run \`chronicle import\` again: it goes on from there.\n`;
}

export const importCommand: Command = async (args, io) => {
  const parsed = parseArgs(args, {
    source: { type: "string", multiple: true },
    json: { type: "boolean" },
    "in-process": { type: "boolean" },
    canonical: { type: "string" },
    full: { type: "boolean" },
  });
  const early = helpOrVersion(parsed, IMPORT_HELP, io);
  if (early !== null) return early;
  if (typeof parsed.values.canonical === "string") {
    if (parsed.positionals.length || parsed.values.source || parsed.values.full) {
      throw new UsageError("--canonical DIR takes no other sources");
    }
    return await importCanonical(io, parsed.values.canonical, parsed.values.json === true);
  }
  if (parsed.positionals.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  }
  const sources = parsed.values.source as string[] | undefined;
  for (const s of sources ?? []) sourceArg(s);
  // A bad exclude list stops the import: what it keeps out must never come in meanwhile.
  let exclude: ExcludeRules;
  try {
    exclude = await loadExcludeRules(dataDir(io.env), io.env.HOME ?? "");
  } catch (e) {
    if (!(e instanceof ChronicleError && e.code === "invalid_config")) throw e;
    io.stderr(`chronicle: ${termSafe(e.message)}; fix it (nothing was imported)\n`);
    return 1;
  }
  let opened: Awaited<ReturnType<typeof openUserStore>>;
  try {
    opened = await openUserStore(io);
  } catch (e) {
    if (!isNoSpace(e)) throw e;
    io.stderr(await noSpaceLine(dataDir(io.env), { sessions: 0, operations: 0 }, []));
    return 1;
  }
  const { store, dir } = opened;
  let lock: ImportLock | null = null;
  // Ctrl-C: the file being stored is finished, then what is left is said; twice: at once
  const interrupt = listenForInterrupt(
    () => io.stderr(`${io.isTerminal ? "\n" : ""}${STOPPING}\n`),
    (code) => {
      io.stderr(STOPPED_AT_ONCE);
      lock?.release();
      Deno.exit(code);
    },
  );
  try {
    // one import at a time: a second one waits, then finds the files imported (no work twice)
    lock = await waitImportLock(dir, "chronicle import", {
      onWait: (h) =>
        io.stderr(
          `Waiting for the import already running (pid ${h.pid}, ${
            termSafe(h.command)
          }) to finish...\n`,
        ),
      signal: interrupt.signal,
    });
    if (!lock) {
      io.stderr("Stopped before importing anything.\n");
      return interrupt.code;
    }

    const before = store.totals();
    const storedSince = () => {
      const after = store.totals();
      return {
        sessions: Math.max(0, after.sessions - before.sessions),
        operations: Math.max(0, after.operations - before.operations),
      };
    };
    let summary: ImportSummary;
    try {
      summary = await runImport(store, io, {
        sources,
        tempRoot: `${dir}/tmp`,
        inProcess: parsed.values["in-process"] === true,
        progress: io.isTerminal && !parsed.values.json,
        stopOnStoreError: isNoSpace,
        exclude,
        full: parsed.values.full === true,
        signal: interrupt.signal,
      });
    } catch (e) {
      // a shared commit that failed for space at the end of the pass
      if (!isNoSpace(e)) throw e;
      if (io.isTerminal) io.stderr("\n");
      io.stderr(await noSpaceLine(dir, storedSince(), []));
      return 1;
    }
    if (summary.stopped && isNoSpace(summary.stopped.error.message)) {
      if (io.isTerminal) io.stderr("\n");
      io.stderr(await noSpaceLine(dir, storedSince(), summary.stopped.remaining_paths));
      return 1;
    }
    // what the guard journaled while no server ran goes into the store too
    const log = new RuleStore(store.ruleTable);
    for (const i of takeGuardJournal(dir)) log.logInterception(i);
    io.stdout(
      parsed.values.json ? JSON.stringify(summary, null, 2) + "\n" : formatSummary(summary),
    );
    if (interrupt.signal.aborted) return interrupt.code;
    // a source that could not be read (a corrupt database) fails the run; the others imported
    return summary.errors.length ? 1 : 0;
  } finally {
    interrupt.dispose();
    lock?.release();
    store.close();
  }
};

/** What the first Ctrl-C prints at once: the import stops at the next safe point. */
export const STOPPING =
  "Stopping: what is being written is finished first (Ctrl-C again stops at once)...";

/** What a second Ctrl-C prints before it exits. */
export const STOPPED_AT_ONCE =
  "\nStopped at once: everything stored so far is kept; `chronicle import` goes on from there.\n";
