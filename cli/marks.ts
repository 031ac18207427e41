/**
 * `chronicle rename`, `chronicle star` and `chronicle unstar`: what the user marks on a session
 * (the store's `markSession`). An import never changes either; `sessions`, `show`, search, the
 * UI, exports and shares all show the name (sessionTitle, core/model/titles.ts).
 */
import { recordedTitle, sessionTitle, USER_TITLE_CHARS, userTitle } from "../core/model/mod.ts";
import { termSafe } from "../core/security/terminal.ts";
import type { SessionSummary } from "../core/store/mod.ts";
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { type CliIo, type Command, starMark } from "./io.ts";
import { oneLine } from "./sessions.ts";

export const RENAME_HELP = `Usage: chronicle rename ID TITLE... [--json]
       chronicle rename ID --clear [--json]

Gives a session a name of your own: the list, \`show\`, search, the UI, exports and share links
show it instead of the session's own title or first prompt. The words of TITLE are joined by
spaces and kept on one line, at most ${USER_TITLE_CHARS} characters. An empty TITLE ("") or
--clear removes the name. Importing the session again never changes it.

ID is a session id, a native id or a unique prefix of either (as for \`show\`).

Options:
  --clear     remove the name: the session's own title shows again
  --json      print the session's summary as JSON
  -h, --help  show this help

Exit codes: 0 renamed, 1 no such session, 2 usage error.
`;

export const renameCommand: Command = async (args, io) => {
  const p = parseArgs(args, { clear: { type: "boolean" }, json: { type: "boolean" } });
  const early = helpOrVersion(p, RENAME_HELP, io);
  if (early !== null) return early;
  const [id, ...words] = p.positionals;
  if (!id) throw new UsageError("rename takes a session id and a title (or --clear)");
  if (p.values.clear && words.length) throw new UsageError("--clear takes no title");
  if (!p.values.clear && !words.length) {
    throw new UsageError("rename takes a title after the session id (or --clear)");
  }
  let title: string | null;
  try {
    title = p.values.clear ? null : userTitle(words.join(" "));
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
  const { store } = await openUserStore(io);
  try {
    const resolved = store.requireSessionId(id);
    const after = store.markSession(resolved, { title })!;
    if (p.values.json) {
      io.stdout(JSON.stringify(after, null, 2) + "\n");
      return 0;
    }
    if (after.user_title) {
      io.stdout(`Renamed ${termSafe(after.id)}: "${oneLine(after.user_title, 200)}"\n`);
    } else {
      const own = recordedTitle(after);
      io.stdout(
        `Cleared the name of ${termSafe(after.id)}${
          own ? `: it shows as "${oneLine(own, 120)}" again` : ""
        }\n`,
      );
    }
    return 0;
  } finally {
    store.close();
  }
};

export const STAR_HELP = `Usage: chronicle star ID... [--json]

Stars sessions: \`chronicle sessions --starred\` (and the UI's Starred filter) lists them, and
the list marks them ★ (* when not on a terminal). Starring a starred session keeps the time it
was first starred; importing a session again never changes its star.

ID is a session id, a native id or a unique prefix of either (as for \`show\`); every ID is
checked before any session is changed.

Options:
  --json      print the sessions' summaries as JSON
  -h, --help  show this help

Exit codes: 0 starred, 1 no such session (nothing changed), 2 usage error.
`;

export const UNSTAR_HELP = `Usage: chronicle unstar ID... [--json]

Removes the star of sessions (see \`chronicle star\`).

ID is a session id, a native id or a unique prefix of either (as for \`show\`); every ID is
checked before any session is changed.

Options:
  --json      print the sessions' summaries as JSON
  -h, --help  show this help

Exit codes: 0 unstarred, 1 no such session (nothing changed), 2 usage error.
`;

function starCommand(star: boolean): Command {
  return async (args, io) => {
    const p = parseArgs(args, { json: { type: "boolean" } });
    const early = helpOrVersion(p, star ? STAR_HELP : UNSTAR_HELP, io);
    if (early !== null) return early;
    if (!p.positionals.length) {
      throw new UsageError(`${star ? "star" : "unstar"} takes one or more session ids`);
    }
    const { store } = await openUserStore(io);
    try {
      const ids = [...new Set(p.positionals.map((id) => store.requireSessionId(id)))];
      const done = ids.map((id) => store.markSession(id, { starred: star })!);
      if (p.values.json) io.stdout(JSON.stringify({ sessions: done }, null, 2) + "\n");
      else for (const s of done) io.stdout(starLine(s, star, io) + "\n");
      return 0;
    } finally {
      store.close();
    }
  };
}

function starLine(s: SessionSummary, star: boolean, io: CliIo): string {
  const title = oneLine(sessionTitle(s) ?? "(untitled)", 70);
  return `${star ? `Starred ${starMark(io)}` : "Unstarred"} ${termSafe(s.id)}  ${title}`;
}

export const starSessionsCommand: Command = starCommand(true);
export const unstarSessionsCommand: Command = starCommand(false);
