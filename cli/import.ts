/** `chronicle import`: discover every agent's logs and import what changed. */
import { termSafe } from "../core/security/terminal.ts";
import { RuleStore } from "../core/security/rule_store.ts";
import { takeGuardJournal } from "../guard/files.ts";
import { importAll, type ImportSummary, type UnitRunner } from "../core/store/mod.ts";
import type { DiscoverEnv } from "../core/sources/types.ts";
import { SOURCE_IDS } from "../core/sources/registry.ts";
import { createDenoFs } from "../runtime/deno_fs.ts";
import { createWorkerRunner } from "../runtime/worker_runner.ts";
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { importCanonical } from "./export.ts";
import type { CliIo, Command } from "./io.ts";
import type { ChronicleStore } from "../core/store/mod.ts";

export const IMPORT_HELP = `Usage: chronicle import [--source ID]... [--json]
       chronicle import --canonical DIR [--json]

Finds the session logs of every agent (from HOME and the agents' own variables:
CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME, ...) and imports what changed since the last
import into the local store. Unchanged files cost one stat each.

With --canonical, imports the canonical session files that \`chronicle export --format
canonical\` wrote (on this machine or another), each verified first. Importing the same
export twice changes nothing; a session this machine's own logs hold is left as they say.

Options:
  --source ID      only this agent (repeatable): ${SOURCE_IDS.join(", ")}
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
export function progressBar(done: number, total: number, note = ""): string {
  const width = 30;
  const filled = Math.round((Math.min(done, total) / Math.max(total, 1)) * width);
  return `\r[${"#".repeat(filled)}${
    "-".repeat(width - filled)
  }] ${done}/${total} files${note}\x1b[K`;
}

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
  },
): Promise<ImportSummary> {
  const fs = createDenoFs({ tempRoot: options.tempRoot });
  const worker = options.inProcess || options.runner
    ? null
    : createWorkerRunner({ tempRoot: options.tempRoot });
  let lastDraw = 0;
  try {
    return await importAll(store, {
      env: discoverEnv(io),
      fs,
      sources: options.sources,
      runner: options.runner ?? worker?.runner,
      onProgress: options.progress
        ? (done, total) => {
          const t = performance.now();
          if (t - lastDraw < 80 && done < total) return;
          lastDraw = t;
          io.stderr(progressBar(done, total));
          if (done === total) io.stderr("\n");
        }
        : undefined,
    });
  } finally {
    worker?.close();
  }
}

export function formatSummary(s: ImportSummary): string {
  const lines = [
    `Imported in ${
      s.seconds.toFixed(2)
    } s: ${s.sessions} sessions, ${s.operations} operations, ${s.issues} issues, ${s.loss_windows} loss windows.`,
  ];
  for (const [id, src] of Object.entries(s.sources)) {
    lines.push(
      `  ${
        id.padEnd(12)
      } ${src.units} files (${src.full} new or rewritten, ${src.appended} appended, ${src.unchanged} unchanged), ${src.operations} operations written`,
    );
  }
  for (const e of s.errors) lines.push(`  ! ${termSafe(e.message)}`);
  return lines.join("\n") + "\n";
}

export const importCommand: Command = async (args, io) => {
  const parsed = parseArgs(args, {
    source: { type: "string", multiple: true },
    json: { type: "boolean" },
    "in-process": { type: "boolean" },
    canonical: { type: "string" },
  });
  const early = helpOrVersion(parsed, IMPORT_HELP, io);
  if (early !== null) return early;
  if (typeof parsed.values.canonical === "string") {
    if (parsed.positionals.length || parsed.values.source) {
      throw new UsageError("--canonical DIR takes no other sources");
    }
    return await importCanonical(io, parsed.values.canonical, parsed.values.json === true);
  }
  if (parsed.positionals.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  }
  const sources = parsed.values.source as string[] | undefined;
  for (const s of sources ?? []) {
    if (!SOURCE_IDS.includes(s as never)) {
      throw new UsageError(`unknown source "${s}" (known: ${SOURCE_IDS.join(", ")})`);
    }
  }
  const { store, dir } = await openUserStore(io);
  try {
    const summary = await runImport(store, io, {
      sources,
      tempRoot: `${dir}/tmp`,
      inProcess: parsed.values["in-process"] === true,
      progress: io.isTerminal && !parsed.values.json,
    });
    // what the guard journaled while no server ran goes into the store too
    const log = new RuleStore(store.ruleTable);
    for (const i of takeGuardJournal(dir)) log.logInterception(i);
    io.stdout(
      parsed.values.json ? JSON.stringify(summary, null, 2) + "\n" : formatSummary(summary),
    );
    return summary.errors.length && summary.sessions === 0 ? 1 : 0;
  } finally {
    store.close();
  }
};
