/** `chronicle issues`: what imports recorded as going wrong, all sessions' or one's. */
import { termSafe } from "../core/security/terminal.ts";
import { helpOrVersion, intArg, parseArgs, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import type { Command } from "./io.ts";

export const ISSUES_HELP = `Usage: chronicle issues [--session ID] [--notes] [--limit N] [--json]

Lists what imports recorded as going wrong: files that could not be read (a corrupt or
locked database), each session's issues (unknown record types, conflicting versions, ...)
and its loss windows (log lines that could not be read, with the reason). Nothing is lost
silently: this is where it shows.

Options:
  --session ID  one session (an id, a native id or a unique prefix)
  --notes       include info-level notes ("client version not recorded", ...)
  --limit N     at most N issues and N loss windows (default 200)
  --json        print JSON
  -h, --help    show this help

Exit codes: 0 listed (none is fine), 1 failure, 2 usage error.
`;

export const issuesCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    session: { type: "string" },
    notes: { type: "boolean" },
    limit: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, ISSUES_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const limit = intArg(p.values.limit, "limit", 200, 1, 10_000);
  const { store } = await openUserStore(io);
  try {
    const named = typeof p.values.session === "string" ? p.values.session : undefined;
    const sessionId = named === undefined ? undefined : store.requireSessionId(named);
    const r = store.importIssues({ sessionId, limit, notes: p.values.notes === true });
    if (p.values.json) {
      io.stdout(JSON.stringify(r, null, 2) + "\n");
      return 0;
    }
    const out: string[] = [];
    if (r.units.length) {
      out.push("Files:");
      for (const u of r.units) {
        for (const i of u.issues) {
          out.push(
            `  ${termSafe(u.file)}: ${termSafe(i.severity)} ${termSafe(i.code)}: ${
              termSafe(i.message)
            }`,
          );
        }
      }
    }
    if (r.issues.length) {
      out.push(`Issues (${r.total_issues}):`);
      let last = "";
      for (const i of r.issues) {
        if (i.session_id !== last) out.push(`  ${termSafe(i.session_id)}`);
        last = i.session_id;
        const where = i.file ? ` (${termSafe(i.file)}${i.line ? `:${i.line}` : ""})` : "";
        const times = i.count && i.count > 1 ? ` ×${i.count}` : "";
        out.push(
          `    ${termSafe(i.severity)} ${termSafe(i.code)}${times}: ${termSafe(i.message)}${where}`,
        );
      }
      if (r.total_issues > r.issues.length) {
        out.push(`  (${r.issues.length} of ${r.total_issues}; use --limit)`);
      }
    }
    if (r.loss_windows.length) {
      out.push(`Loss windows (${r.total_loss_windows}):`);
      let last = "";
      for (const l of r.loss_windows) {
        if (l.session_id !== last) out.push(`  ${termSafe(l.session_id)}`);
        last = l.session_id;
        out.push(
          `    ${termSafe(l.file)}: lines ${l.lines[0]}-${l.lines[1]}: ${termSafe(l.reason)}`,
        );
      }
      if (r.total_loss_windows > r.loss_windows.length) {
        out.push(`  (${r.loss_windows.length} of ${r.total_loss_windows}; use --limit)`);
      }
    }
    io.stdout(out.length ? out.join("\n") + "\n" : "No import issues and no loss windows.\n");
    return 0;
  } finally {
    store.close();
  }
};
