/**
 * `chronicle diff ID [--at SEQ] [PATH]`: what a session changed. With --at, the change made
 * at that step against each file just before it; without, every file the session changed,
 * from its start to its end, and the commits made meanwhile.
 */
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import { describeRepo, openSessionCode, parseAt } from "./files.ts";
import type { Command } from "./io.ts";

export const DIFF_HELP = `Usage: chronicle diff ID [--at SEQ] [PATH] [--json]

Without --at: every file session ID changed, each as a unified diff from the session's
start (the commit it started from) to its end, uncommitted work included, and the commits
made while it ran. With --at SEQ: the change made at step SEQ, against each file as it was
just before. PATH limits either to one file. Lines starting with "#" are notes (a change
the log does not spell out, a file that differed from what was rebuilt). Steps are numbered
as \`chronicle show\` numbers them.

Options:
  --at SEQ     the step whose change to show
  --json       print JSON
  -h, --help   show this help
`;

export const diffCommand: Command = async (args, io) => {
  const p = parseArgs(args, { at: { type: "string" }, json: { type: "boolean" } });
  const early = helpOrVersion(p, DIFF_HELP, io);
  if (early !== null) return early;
  const [id, path, ...rest] = p.positionals;
  if (!id || rest.length) throw new UsageError("diff takes a session id and at most one path");
  return await openSessionCode(id, io, async (code, steps) => {
    if (p.values.at !== undefined) {
      const change = await code.changeAt(parseAt(p.values.at, steps), { path });
      if (p.values.json) {
        io.stdout(JSON.stringify(change, null, 2) + "\n");
        return 0;
      }
      if (!change.files.length) {
        io.stdout(`# Step ${change.seq} changed no file${path ? ` named ${path}` : ""}\n`);
      }
      for (const f of change.files) {
        if (f.applied && f.applied.status !== "applied") {
          io.stdout(
            `# ${f.path}: ${f.applied.status}${f.applied.detail ? ` (${f.applied.detail})` : ""}\n`,
          );
        }
        for (const n of f.notes) io.stdout(`# ${f.path}: ${n}\n`);
        io.stdout(f.patch);
      }
      return 0;
    }
    const all = await code.whatChanged({ path });
    if (p.values.json) {
      io.stdout(JSON.stringify(all, null, 2) + "\n");
      return 0;
    }
    io.stdout(`# ${describeRepo(all.repo)}\n`);
    if (all.start) {
      io.stdout(`# started from ${all.start.sha.slice(0, 10)} "${all.start.subject}"\n`);
    }
    for (const c of all.commits) {
      io.stdout(
        `# commit ${
          c.sha.slice(0, 10)
        } "${c.subject}" after step ${c.after} (matched by ${c.matched})\n`,
      );
    }
    for (const f of all.files) {
      io.stdout(`# ${f.state} ${f.path} (+${f.added} -${f.removed})\n`);
      for (const n of f.notes) io.stdout(`#   ${n}\n`);
    }
    for (const f of all.files) io.stdout(f.patch);
    return 0;
  });
};
