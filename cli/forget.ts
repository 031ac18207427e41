/**
 * `chronicle forget`: delete sessions (or a whole project's) from the store for good, so that
 * no import brings them back, and give their space back to the disk. Nothing is changed
 * without `--yes`; `--dry-run` (or leaving `--yes` out) lists what would go.
 */
import { withEntry } from "../core/archive/mod.ts";
import { formatBytes } from "../core/doctor/mod.ts";
import { termSafe } from "../core/security/terminal.ts";
import type { ForgetOutcome, SessionSummary } from "../core/store/mod.ts";
import { readExcludeList, writeExcludeList } from "../runtime/exclude_file.ts";
import { waitImportLock } from "../runtime/import_lock.ts";
import { packDir } from "../runtime/pack_files.ts";
import { storePath } from "../runtime/data_dir.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { type Command, plural } from "./io.ts";
import { userPath } from "./user_cwd.ts";

export const FORGET_HELP = `Usage: chronicle forget ID... (--yes | --dry-run) [--json]
       chronicle forget --project PATH (--yes | --dry-run) [--json]
       chronicle forget --list [--json]

Deletes sessions from Chronicle's store for good: their steps, the tool inputs and outputs
no other session shares, their search entries, statistics and share links. Their ids stay on
a list of forgotten sessions, so no import brings them back, even when their logs grow. The
space goes back to the disk: payload packs that are now mostly empty are rewritten, the
forgotten bytes in the others are zeroed, and the database is vacuumed. The agents' own logs
are never touched: delete them yourself to be rid of them there too.

With --project, forgets every session in the folder PATH (or below it) and puts PATH on the
exclude list (\`chronicle exclude\`), so the agents' new sessions there are not imported.

Nothing is forgotten without --yes: without it, forget lists what would go and exits 2.
There is no undo. Taking a project off the exclude list lets its sessions that were not
forgotten in again, with what their logs gained meanwhile; a forgotten session never comes
back.

Options:
  --project PATH  every session of this project folder; PATH joins the exclude list
  --yes           forget them (without it nothing changes)
  --dry-run       list what would go and change nothing (exit 0)
  --list          the forgotten sessions, the last forgotten first
  --json          print JSON
  -h, --help      show this help
`;

/** The data folder's bytes that forgetting shrinks: the database, its log, the packs. */
export async function storeBytes(dir: string): Promise<number> {
  let total = 0;
  const add = async (p: string) => {
    try {
      total += (await Deno.stat(p)).size;
    } catch { /* not there */ }
  };
  const db = storePath(dir);
  for (const p of [db, `${db}-wal`]) await add(p);
  try {
    for await (const e of Deno.readDir(packDir(dir))) await add(`${packDir(dir)}/${e.name}`);
  } catch { /* no packs */ }
  return total;
}

function sessionLine(s: SessionSummary): string {
  const title = s.title ?? s.first_prompt ?? "(untitled)";
  return `  ${termSafe(s.id)}  ${termSafe(s.project_path ?? "(no project)")}  ${
    termSafe(title.replace(/\s+/g, " ").slice(0, 60))
  }\n`;
}

function whatGoes(o: ForgetOutcome): string {
  const parts = [
    plural(o.operations, "step"),
    `${plural(o.payloads, "payload")} of ${formatBytes(o.payload_bytes)}`,
  ];
  if (o.shares) parts.push(plural(o.shares, "share link"));
  return parts.join(", ");
}

export const forgetCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    project: { type: "string" },
    yes: { type: "boolean" },
    "dry-run": { type: "boolean" },
    list: { type: "boolean" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, FORGET_HELP, io);
  if (early !== null) return early;
  const json = p.values.json === true;
  const projectArg = str(p.values.project);
  if (p.values.list) {
    if (p.positionals.length || projectArg || p.values.yes || p.values["dry-run"]) {
      throw new UsageError("--list takes no sessions and no other options");
    }
    const { store } = await openUserStore(io);
    try {
      const items = store.forgottenSessions();
      if (json) io.stdout(JSON.stringify({ items }, null, 2) + "\n");
      else if (!items.length) io.stdout("No session has been forgotten.\n");
      else {
        for (const f of items) {
          io.stdout(
            `  ${f.forgotten_at.slice(0, 16).replace("T", " ")}  ${termSafe(f.id)}  ${
              termSafe(f.project_path ?? "(no project)")
            }${f.title ? `  ${termSafe(f.title.slice(0, 60))}` : ""}\n`,
          );
        }
      }
      return 0;
    } finally {
      store.close();
    }
  }
  if (projectArg !== undefined && p.positionals.length) {
    throw new UsageError("give session IDs or --project PATH, not both");
  }
  if (projectArg === undefined && !p.positionals.length) {
    throw new UsageError("forget needs session IDs or --project PATH");
  }
  if (p.values.yes && p.values["dry-run"]) throw new UsageError("--yes and --dry-run disagree");
  const project = projectArg === undefined ? null : userPath(io.cwd, projectArg);
  const dryRun = p.values.yes !== true;
  const { store, dir } = await openUserStore(io);
  try {
    // Read first: a bad exclude list stops a project's forget before anything changes.
    const exclude = project === null ? null : await readExcludeList(dir);
    const ids = project === null
      ? [...new Set(p.positionals.map((x) => store.requireSessionId(x)))]
      : store.projectSessionIds(project);
    const shown = ids.map((id) => store.getSession(id)).filter((s) => s !== null);
    const lock = dryRun ? null : await waitImportLock(dir, "chronicle forget", {
      onWait: (h) =>
        io.stderr(`Waiting for the import running (pid ${h.pid}) to finish before forgetting...\n`),
    });
    try {
      const before = await storeBytes(dir);
      // A project is excluded before its sessions go, so an import meanwhile cannot add one.
      if (project !== null && !dryRun && exclude && !exclude.projects.includes(project)) {
        await writeExcludeList(dir, withEntry(exclude, "projects", project));
      }
      const started = performance.now();
      const outcome = store.forget(ids, { dryRun });
      const seconds = (performance.now() - started) / 1000;
      const after = dryRun ? before : await storeBytes(dir);
      if (json) {
        io.stdout(
          JSON.stringify(
            { ...outcome, excluded_project: project, store_bytes: { before, after } },
            null,
            2,
          ) + "\n",
        );
      } else {
        io.stdout(report(outcome, shown, { project, before, after, seconds }));
      }
      if (dryRun && p.values["dry-run"] !== true) {
        io.stderr(
          "chronicle: nothing was forgotten: forgetting cannot be undone; add --yes to do it\n",
        );
        return 2;
      }
      return 0;
    } finally {
      lock?.release();
    }
  } finally {
    store.close();
  }
};

function report(
  o: ForgetOutcome,
  shown: SessionSummary[],
  { project, before, after, seconds }: {
    project: string | null;
    before: number;
    after: number;
    seconds: number;
  },
): string {
  const where = project === null ? "" : ` in ${termSafe(project)}`;
  const lines: string[] = [];
  if (o.dry_run) {
    lines.push(
      o.sessions.length
        ? `Would forget ${plural(o.sessions.length, "session")}${where} (${whatGoes(o)}):\n`
        : `No session${where} to forget.\n`,
    );
    lines.push(...shown.map(sessionLine));
    if (project !== null) lines.push(`and put ${termSafe(project)} on the exclude list.\n`);
    return lines.join("");
  }
  lines.push(
    o.sessions.length
      ? `Forgot ${plural(o.sessions.length, "session")}${where} (${whatGoes(o)}):\n`
      : `No session${where} to forget.\n`,
  );
  lines.push(...shown.map(sessionLine));
  if (project !== null) {
    lines.push(`${termSafe(project)} is on the exclude list: its new sessions are not imported.\n`);
  }
  const r = o.reclaim;
  if (r && o.sessions.length) {
    const packs = r.packs_compacted ? `, ${plural(r.packs_compacted, "pack")} compacted` : "";
    lines.push(
      `The store went from ${formatBytes(before)} to ${formatBytes(after)} (${
        formatBytes(Math.max(0, before - after))
      } freed${packs}) in ${seconds.toFixed(2)} s.\n`,
    );
    if (r.pages === "none" && r.db_free_bytes > 0) {
      lines.push(
        `The database keeps ${
          formatBytes(r.db_free_bytes)
        } of free pages (zeroed) that later imports fill first: it was made before Chronicle could give pages back without VACUUM, which Deno runs only with every permission.\n`,
      );
    }
    if (!r.wal_truncated) {
      lines.push(
        "Another process is reading the store: its log file shrinks once that reader is done.\n",
      );
    }
  }
  return lines.join("");
}
