/** `chronicle sessions` and `chronicle show`: list sessions and read one in a terminal. */
import { termSafe } from "../core/security/terminal.ts";
import {
  cutBytes,
  isHashRef,
  type Operation,
  type PayloadRef,
  recordedTitle,
  sessionTitle,
  storedCutBytes,
  textLine,
} from "../core/model/mod.ts";
import { formatBytes } from "../core/doctor/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { SOURCE_IDS } from "../core/sources/registry.ts";
import { dateArg, helpOrVersion, parseArgs, sourceArg, UsageError } from "./args.ts";
import { userPath } from "./user_cwd.ts";
import { loadNamedSession, openUserStore } from "./context.ts";
import { type CliIo, type Command, plural, starMark } from "./io.ts";

export const SESSIONS_HELP =
  `Usage: chronicle sessions [--source ID] [--project PATH] [--since DATE] [--until DATE]
                          [--starred] [--limit N] [--json]

Lists imported sessions, newest first: id, source, native id, project, start, end, title (the
name you gave it with \`chronicle rename\`, else its own, else its first prompt) and operation
count; a starred session's title is marked ★ (* when not on a terminal).

Options:
  --source ID     only this agent: ${SOURCE_IDS.join(", ")}
  --project PATH  only sessions in this project folder (or below it)
  --since DATE    only sessions active on or after DATE (YYYY-MM-DD or ISO 8601)
  --until DATE    only sessions started on or before DATE (a whole day for YYYY-MM-DD)
  --starred       only the sessions you starred (\`chronicle star\`)
  --limit N       at most N sessions (default 100)
  --json          print JSON
  -h, --help      show this help
`;

export const sessionsCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    source: { type: "string" },
    project: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    starred: { type: "boolean" },
    limit: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, SESSIONS_HELP, io);
  if (early !== null) return early;
  const limit = p.values.limit === undefined ? 100 : Number(p.values.limit);
  if (!Number.isInteger(limit) || limit < 1) {
    throw new UsageError("--limit takes a positive integer");
  }
  // every argument is checked before the store is opened (or made)
  const query = {
    source: sourceArg(p.values.source),
    project: p.values.project === undefined
      ? undefined
      : userPath(io.cwd, String(p.values.project)),
    from: dateArg(p.values.since, "since"),
    to: dateArg(p.values.until, "until"),
    starred: p.values.starred === true,
    limit,
  };
  const { store } = await openUserStore(io);
  try {
    const { total, items } = store.listSessions(query);
    if (p.values.json) {
      io.stdout(JSON.stringify({ total, sessions: items }, null, 2) + "\n");
      return 0;
    }
    if (!items.length) {
      io.stdout(
        p.values.starred
          ? "No starred sessions. Star one with `chronicle star ID`.\n"
          : "No sessions. Run `chronicle import` first.\n",
      );
      return 0;
    }
    for (const s of items) {
      const title = titleLine(s, 70, io);
      io.stdout(
        `${termSafe(s.id)}\n  ${termSafe(s.source)} · ${
          termSafe(s.project_path ?? "(no project)")
        } · ${termSafe(s.started_at ?? "?")} → ${termSafe(s.ended_at ?? "?")} · ${
          plural(s.op_count, "op")
        }${s.error_count ? ` · ${plural(s.error_count, "error")}` : ""}${
          keptNote(s)
        }\n  ${title}\n`,
      );
    }
    if (total > items.length) io.stdout(`(${items.length} of ${total}; use --limit)\n`);
    return 0;
  } finally {
    store.close();
  }
};

export const SHOW_HELP = `Usage: chronicle show ID [--json]

Prints one session's timeline: every prompt, reply, tool call and event in order, with its
offset from the start, its connection (main or a sub-agent) and errors marked. A step whose
record is not complete says how ("(incomplete)": a call with no result); one whose output or input
was too long to keep whole says how much was cut on import ("(truncated: 199 MiB cut on import)").

Options:
  --json      print the canonical session (schema v1) as JSON
  -h, --help  show this help
`;

export const showCommand: Command = async (args, io) => {
  const p = parseArgs(args, { json: { type: "boolean" } });
  const early = helpOrVersion(p, SHOW_HELP, io);
  if (early !== null) return early;
  const id = p.positionals[0];
  if (!id || p.positionals.length > 1) throw new UsageError("show takes exactly one session id");
  const { store } = await openUserStore(io);
  try {
    // one line a step: a text's opening is all a line shows (a pasted log of 26 MiB, whole,
    // made `show` take 11 s and 1.8 GB for a session of eight)
    const session = await loadNamedSession(
      store,
      id,
      io,
      p.values.json ? {} : { textChars: LINE_CHARS },
    );
    if (!session) return 1;
    if (p.values.json) {
      io.stdout(JSON.stringify(session, null, 2) + "\n");
      return 0;
    }
    const s = session.session;
    // the list's title (sessionTitle: the user's name, else its own, else its first prompt)
    const summary = store.getSession(s.id);
    io.stdout(
      `${summary ? titleLine(summary, 200, io) : oneLine(s.title ?? "(untitled)", 200)}\n${
        termSafe(s.id)
      } · ${termSafe(s.project.path ?? "")} · ${termSafe(s.started_at ?? "")}\n`,
    );
    if (summary?.user_title) {
      const was = recordedTitle(summary);
      io.stdout(`  renamed${was ? ` from "${oneLine(was, 120)}"` : ""}\n`);
    }
    if (summary?.starred_at) io.stdout(`  starred ${termSafe(summary.starred_at)}\n`);
    const kept = summary?.kept_count ? store.keptOps(s.id) : new Set<string>();
    if (summary?.kept_count) {
      io.stdout(
        summary.kept_count === summary.op_count
          ? "The agent's log of this session is gone: every step is Chronicle's copy.\n"
          : `${summary.kept_count} of ${summary.op_count} steps are no longer in the agent's log: Chronicle kept them (marked [kept]).\n`,
      );
    }
    for (const c of session.connections) {
      io.stdout(
        termSafe(
          `  connection ${c.id} (${c.kind}): ${c.client.agent}${
            c.client.version ? " " + c.client.version : ""
          }${c.server.model ? " → " + c.server.model : ""}`,
        ) + "\n",
      );
    }
    io.stdout("\n");
    for (const t of session.timeline) {
      const op = session.operations[t.op];
      const conn = t.connection === "main" ? "" : `[${t.connection}] `;
      io.stdout(
        `${String(t.seq).padStart(5)} ${formatOffset(t.offset_ns)} ${termSafe(conn)}${
          termSafe(describe(op, cutOf(store, s.id, t.op, op)))
        }${kept.has(t.op) ? " [kept]" : ""}\n`,
      );
    }
    if (session.issues.length) {
      io.stdout(`\nIssues:\n`);
      for (const i of session.issues) {
        io.stdout(
          `  ${termSafe(i.code)}: ${termSafe(i.message)}${
            i.count && i.count > 1 ? ` (×${i.count})` : ""
          }\n`,
        );
      }
    }
    if (session.provenance.loss_windows.length) {
      io.stdout(`\nLoss windows:\n`);
      for (const l of session.provenance.loss_windows) {
        io.stdout(
          `  ${termSafe(l.file)}: lines ${l.lines[0]}-${l.lines[1]}: ${termSafe(l.reason)}\n`,
        );
      }
    }
    return 0;
  } finally {
    store.close();
  }
};

/**
 * The bytes a truncated step lost on import, as its cut marks say: a prompt's, reply's or
 * thinking's in its text (its request, when it has one, holds the same text), a call's in its
 * input and its result.
 */
function cutOf(store: ChronicleStore, sessionId: string, opId: string, op: Operation): number {
  if (op.completeness !== "truncated") return 0;
  // (a cut text is at most a MiB and its mark, which ends it: read whole)
  if (TEXT_KINDS.has(op.kind)) return cutBytes(store.operationText(sessionId, opId) ?? "");
  const cut = (ref: PayloadRef | undefined) =>
    isHashRef(ref) ? storedCutBytes(ref.size, () => store.payloadText(ref)) : 0;
  return cut(op.request) + cut(op.response);
}

const TEXT_KINDS = new Set<Operation["kind"]>(["prompt", "reply", "thinking", "event"]);

/** Characters of a text `show` reads for its line: far more than the line, whitespace aside. */
const LINE_CHARS = 64 << 10;

/** One step on one line; `cut`: the bytes its texts lost on import (a truncated step's). */
function describe(op: Operation, cut: number): string {
  const err = op.is_error ? " ✗ error" : "";
  const lost = cut ? ` (truncated: ${formatBytes(cut)} cut on import)` : "";
  const state = op.completeness === "complete" ? "" : lost || ` (${op.completeness})`;
  switch (op.kind) {
    case "prompt":
      return `${op.injected ? "context" : "user"}: ${oneLine(op.text ?? "", 100)}${lost}`;
    case "reply":
      return `assistant: ${oneLine(op.text ?? "", 100)}${err}${lost}`;
    case "thinking":
      return `thinking: ${oneLine(op.text ?? "", 80)}${lost}`;
    case "event":
      return `— ${op.event ?? "event"}: ${oneLine(op.text ?? "", 90)}${err}${lost}`;
    default:
      return `${op.kind} ${op.tool ?? ""}${
        op.summary ? ": " + oneLine(op.summary, 90) : ""
      }${err}${state}`;
  }
}

function formatOffset(ns: number): string {
  const ms = Math.floor(ns / 1e6);
  const m = Math.floor(ms / 60000);
  const s = ((ms % 60000) / 1000).toFixed(1).padStart(4, "0");
  return `+${String(m).padStart(2, "0")}:${s}`;
}

/** " · N kept" when some of a session's steps are no longer in its agent's logs. */
function keptNote(s: { kept_count: number; op_count: number }): string {
  if (!s.kept_count) return "";
  return s.kept_count === s.op_count ? " · log gone (kept)" : ` · ${s.kept_count} kept`;
}

/** Foreign text on one line, at most `max` characters, controls escaped (termSafe). */
export function oneLine(s: string, max: number): string {
  return termSafe(textLine(s, max));
}

/**
 * A session's title as the terminal shows it: `sessionTitle` (core/model/titles.ts) on one line,
 * at most `max` characters, escaped, after the star of a starred session.
 */
export function titleLine(
  s: { title: string | null; user_title: string | null; first_prompt: string | null } & {
    starred?: boolean;
  },
  max: number,
  io: CliIo,
): string {
  const title = oneLine(sessionTitle(s) ?? "(untitled)", max);
  return s.starred ? `${starMark(io)} ${title}` : title;
}
