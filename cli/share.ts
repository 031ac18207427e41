/** `chronicle share`: links to a session's redacted copy, frozen when made; list and revoke. */
import { documentInTurns } from "../core/export/mod.ts";
import { pagedTurns } from "../core/paged.ts";
import { RuleStore, termSafe } from "../core/security/mod.ts";
import {
  createShare,
  DEFAULT_SHARE_DAYS,
  listShares,
  MAX_SHARE_DAYS,
  revokeShare,
  type ShareDeps,
  type ShareRow,
  shareState,
} from "../core/shares/mod.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { redactionReport } from "./export.ts";
import type { Command } from "./io.ts";
import { DEFAULT_PORT } from "./serve.ts";

export const SHARE_HELP =
  `Usage: chronicle share create ID [--days N] [--thinking] [--port N] [--json]
       chronicle share list [--session ID] [--json]
       chronicle share revoke SHARE_ID [--json]

A share link opens a session's redacted copy in any browser, as one page that needs no
script. The copy is made and redacted when the link is made and then frozen: a later rule
change does not alter it, and nothing the redaction replaced is kept with it. The link's
token (32 random bytes) is shown once; Chronicle keeps only its SHA-256.

Links are served by \`chronicle serve\` on 127.0.0.1 only. To let someone else open one, put
a reverse proxy or tunnel of your choice in front of 127.0.0.1:PORT that sends the Host
header 127.0.0.1:PORT and exposes only /share/; Chronicle never does this for you.

Commands:
  create ID        make a link for a session (prints what redaction found)
  list             every link: id, session, state, views, expiry
  revoke SHARE_ID  end a link at once (its copy is deleted)

Options:
  --days N     how long the link lives, 1 to ${MAX_SHARE_DAYS} days (default ${DEFAULT_SHARE_DAYS})
  --thinking   include the agent's thinking (left out by default)
  --port N     the port in the printed link (default ${DEFAULT_PORT}, as \`chronicle serve\`)
  --session ID list only the links of this session
  --json       print JSON
  -h, --help   show this help
`;

function listLine(row: ShareRow, now: Date): string {
  const state = shareState(row, now);
  return [
    row.id.padEnd(16),
    state.padEnd(8),
    `${row.views} view${row.views === 1 ? "" : "s"}`.padEnd(9),
    `expires ${row.expires_at.slice(0, 16).replace("T", " ")}`,
    ` ${termSafe(row.session_id)} · ${termSafe(row.title).slice(0, 60)}`,
  ].join(" ");
}

export const shareCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    days: { type: "string" },
    thinking: { type: "boolean" },
    port: { type: "string" },
    session: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, SHARE_HELP, io);
  if (early !== null) return early;
  const [sub, arg, ...rest] = p.positionals;
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (sub !== "create" && sub !== "list" && sub !== "revoke") {
    throw new UsageError(
      sub ? `unknown share command "${sub}"` : "share needs create, list or revoke",
    );
  }
  const { store } = await openUserStore(io);
  try {
    const deps: ShareDeps = { records: store.shareTable };
    if (sub === "list") {
      if (arg) throw new UsageError(`unexpected argument "${arg}"`);
      const session = str(p.values.session);
      const rows = listShares(deps, {
        sessionId: session ? store.requireSessionId(session) : undefined,
      });
      const now = new Date();
      if (p.values.json) {
        io.stdout(
          JSON.stringify(
            { items: rows.map((r) => ({ ...r, state: shareState(r, now) })) },
            null,
            2,
          ) + "\n",
        );
      } else if (!rows.length) io.stdout("No share links yet (see `chronicle share create`).\n");
      else io.stdout(rows.map((r) => listLine(r, now) + "\n").join(""));
      return 0;
    }
    if (sub === "revoke") {
      if (!arg) throw new UsageError("share revoke needs a SHARE_ID (see `chronicle share list`)");
      const row = revokeShare(deps, arg);
      io.stdout(
        p.values.json
          ? JSON.stringify({ share: { ...row, state: shareState(row) } }, null, 2) + "\n"
          : `Revoked ${row.id}: its link answers "not found" from now on.\n`,
      );
      return 0;
    }
    if (!arg) throw new UsageError("share create needs a session ID");
    const days = p.values.days === undefined ? DEFAULT_SHARE_DAYS : Number(p.values.days);
    if (!Number.isInteger(days) || days < 1 || days > MAX_SHARE_DAYS) {
      throw new UsageError(`--days must be a whole number from 1 to ${MAX_SHARE_DAYS}`);
    }
    const port = p.values.port === undefined ? DEFAULT_PORT : Number(p.values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new UsageError("--port must be a port number");
    }
    const id = store.requireSessionId(arg);
    // built a page of steps at a time, its steps packed as built (a session of 35,000 steps)
    const doc = id
      ? await documentInTurns(store, id, {
        rules: new RuleStore(store.ruleTable).active(),
        thinking: p.values.thinking === true,
        turn: pagedTurns(),
      })
      : null;
    if (!doc) {
      io.stderr(`chronicle: no session "${termSafe(arg)}" (see \`chronicle sessions\`)\n`);
      return 1;
    }
    const created = createShare(deps, doc, { days });
    const url = `http://127.0.0.1:${port}${created.path}`;
    if (p.values.json) {
      io.stdout(
        JSON.stringify({ share: created.share, url, redaction: doc.redaction }, null, 2) + "\n",
      );
      return 0;
    }
    io.stderr(redactionReport(doc.redaction));
    io.stdout(shareCreatedText(created.share, url, port));
    return 0;
  } finally {
    store.close();
  }
};

function shareCreatedText(share: ShareRow, url: string, port: number): string {
  return `Share ${share.id} of "${termSafe(share.title)}", until ${
    share.expires_at.slice(0, 16).replace("T", " ")
  } UTC.
Link (shown only now; Chronicle keeps only its hash):

  ${url}

It opens while \`chronicle serve\` runs, on this machine only. To let someone else open it,
put a reverse proxy or tunnel of your choice in front of 127.0.0.1:${port} that sends the Host
header 127.0.0.1:${port}; Chronicle never exposes it for you. Revoke it any time with
\`chronicle share revoke ${share.id}\`.
`;
}
