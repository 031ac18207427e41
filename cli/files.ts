/**
 * `chronicle files ID [--at SEQ]`: the project's files as they were after a step of a session
 * (the commit nearest before it plus the session's own changes), each marked by where it comes
 * from. The loader here is shared with `chronicle diff`.
 */
import { pagedTurns } from "../core/paged.ts";
import type { PayloadRef } from "../core/model/mod.ts";
import { createGitEngine, gitEnv } from "../core/git/mod.ts";
import {
  ANALYSED_TEXT_CHARS,
  gatherSession,
  type RepoState,
  type SessionCode,
  sessionCode,
} from "../core/timetravel/mod.ts";
import { denoProcessRunner } from "../runtime/process_runner.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { namedSessionId, openUserStore, unreadableSession } from "./context.ts";
import type { CliIo, Command } from "./io.ts";

export const FILES_HELP = `Usage: chronicle files ID [--at SEQ] [--touched] [--json]

Lists the project's files as they were after step SEQ of session ID (default: its last
step): the commit nearest before that step, plus the changes the session itself recorded up
to it, committed or not. Each file is marked: M modified, A added, D deleted by the session
(since that commit), * changed by the session and committed since, and where its text comes
from (commit, session, or recorded when the project is not a git repository any more).
Steps are numbered as \`chronicle show\` numbers them.

Options:
  --at SEQ     the step (default: the last one; --at=-1: before the first)
  --touched    only the files the session changed
  --json       print JSON
  -h, --help   show this help
`;

/** Opens a session's code over time for a command; null (after a message) when unknown. */
export async function openSessionCode(
  id: string,
  io: CliIo,
  run: (code: SessionCode, steps: number) => Promise<number>,
): Promise<number> {
  const { store } = await openUserStore(io);
  try {
    const resolved = namedSessionId(store, id, io);
    if (resolved === null) return 1;
    const read = (ref: PayloadRef | undefined, max?: number) => store.payloadText(ref, max);
    const turn = pagedTurns();
    // read a page at a time: what the code reads of the session is kept, the session is not
    const parts = store.sessionParts(resolved, { textChars: ANALYSED_TEXT_CHARS });
    const got = await gatherSession(parts, read, turn);
    if (!got) {
      unreadableSession(resolved, io);
      return 1;
    }
    const code = await sessionCode(got.inputs, {
      git: createGitEngine(denoProcessRunner, { env: gitEnv(io.env) }),
      read,
      turn,
    });
    return await run(code, got.inputs.session.timeline.length);
  } finally {
    store.close();
  }
}

/** `--at SEQ` as a step number within the session. */
export function parseAt(raw: unknown, steps: number): number {
  const at = str(raw);
  if (at === undefined) return steps - 1;
  if (!/^-?\d+$/.test(at) || Number(at) < -1 || Number(at) >= steps) {
    throw new UsageError(`--at takes a step -1..${steps - 1}, not "${at}"`);
  }
  return Number(at);
}

/** One line about where the code comes from. */
export function describeRepo(repo: RepoState): string {
  switch (repo.kind) {
    case "git":
      return `git repository ${repo.root}${repo.branch ? ` (${repo.branch})` : ""}`;
    default:
      return `${repo.message}: only the session's recorded changes are shown`;
  }
}

const MARK: Record<string, string> = { modified: "M", added: "A", deleted: "D", unchanged: " " };

export const filesCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    at: { type: "string" },
    touched: { type: "boolean" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, FILES_HELP, io);
  if (early !== null) return early;
  const id = p.positionals[0];
  if (!id || p.positionals.length > 1) throw new UsageError("files takes exactly one session id");
  return await openSessionCode(id, io, async (code, steps) => {
    const tree = await code.treeAt(parseAt(p.values.at, steps));
    const entries = p.values.touched ? tree.entries.filter((e) => e.touched) : tree.entries;
    if (p.values.json) {
      io.stdout(
        JSON.stringify({ ...tree, entries, start: code.start, commits: code.commits }, null, 2) +
          "\n",
      );
      return 0;
    }
    io.stdout(`${code.project ?? "(no project)"} · ${describeRepo(tree.repo)}\n`);
    io.stdout(
      `After step ${tree.seq} of ${steps - 1}${
        tree.commit
          ? ` · commit ${
            tree.commit.sha.slice(0, 10)
          } "${tree.commit.subject}" (${tree.commit.committed_at})`
          : ""
      }\n\n`,
    );
    for (const e of entries) {
      const mark = e.state === "unchanged" && e.touched ? "*" : MARK[e.state];
      const from = e.touched ? `  ${e.origin}, step ${e.last_seq}` : "";
      io.stdout(`${mark} ${e.path}${from}\n`);
    }
    if (tree.omitted) io.stdout(`(${tree.omitted} more files not listed)\n`);
    return 0;
  });
};
