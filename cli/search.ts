/** `chronicle search QUERY`: full-text search over every imported session, from a terminal. */
import { SOURCE_IDS } from "../core/sources/registry.ts";
import { queryParts, SEARCH_PAGE_MAX, type SearchResult } from "../core/store/mod.ts";
import { dateArg, helpOrVersion, intArg, parseArgs, sourceArg, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import { termSafe } from "../core/security/terminal.ts";
import type { Command } from "./io.ts";
import { titleLine } from "./sessions.ts";

export const SEARCH_HELP =
  `Usage: chronicle search QUERY [--source ID] [--project PATH] [--since DATE] [--until DATE]
                        [--starred] [--limit N] [--offset N] [--json]

Searches every imported session: prompts, replies, thinking, tool inputs (code written,
commands run) and whole tool outputs. Hits come newest first.

  word            every word must appear; the last one is also a prefix (from 2 letters)
  aws_access_key  an identifier or path matches its words in order, joined by any
                  punctuation (_ . - / ::) but not by spaces
  "exact phrase"  a quoted phrase matches its words in order, adjacent, whatever is
                  between them

Options:
  --source ID     only this agent: ${SOURCE_IDS.join(", ")}
  --project PATH  only sessions in this project folder (or below it)
  --since DATE    only sessions active on or after DATE (YYYY-MM-DD or ISO 8601)
  --until DATE    only sessions started on or before DATE
  --starred       only the sessions you starred
  --limit N       at most N hits (default 20, at most ${SEARCH_PAGE_MAX})
  --offset N      skip the first N hits (to page on)
  --json          print JSON: { total, total_capped, offset, limit, hits }
  -h, --help      show this help

Exit codes: 0 hits found, 1 no hit, 2 usage error.
`;

export const searchCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    source: { type: "string" },
    project: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    starred: { type: "boolean" },
    limit: { type: "string" },
    offset: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, SEARCH_HELP, io);
  if (early !== null) return early;
  const q = p.positionals.join(" ").trim();
  if (!q) throw new UsageError("search takes the text to look for");
  if (!queryParts(q).length) {
    throw new UsageError(
      `${JSON.stringify(q)} has no word to search for (a word is letters or digits)`,
    );
  }
  const source = sourceArg(p.values.source);
  if (source !== undefined && !(SOURCE_IDS as readonly string[]).includes(source)) {
    throw new UsageError(`--source takes one of ${SOURCE_IDS.join(", ")}`);
  }
  const limit = intArg(p.values.limit, "limit", 20, 1, SEARCH_PAGE_MAX);
  const offset = intArg(p.values.offset, "offset", 0, 0, 100_000_000);
  // every argument is checked before the store is opened (or made)
  const query = {
    source,
    project: str(p.values.project),
    from: dateArg(p.values.since, "since"),
    to: dateArg(p.values.until, "until"),
    starred: p.values.starred === true,
    limit,
    offset,
  };
  const { store } = await openUserStore(io);
  let result: SearchResult;
  try {
    result = store.search(q, query);
  } finally {
    store.close();
  }
  if (p.values.json) {
    io.stdout(JSON.stringify(result, null, 2) + "\n");
    return result.hits.length ? 0 : 1;
  }
  const bold = (s: string) => io.isTerminal ? `\x1b[1m${s}\x1b[0m` : `[${s}]`;
  for (const h of result.hits) {
    // foreign text (ids, paths, titles, snippets) escaped for the terminal
    io.stdout(
      `${termSafe(h.session_id)} #${h.seq}  ${termSafe(h.tool ?? h.kind)} (${h.field})\n` +
        `  ${termSafe(h.session.project_path ?? "(no project)")} · ${
          titleLine(h.session, 70, io)
        }\n  ` +
        h.snippet.map((s) => s.match ? bold(termSafe(s.text)) : termSafe(s.text)).join("") + "\n",
    );
  }
  const total = `${result.total_capped ? "at least " : ""}${result.total.toLocaleString("en-US")}`;
  const more = offset + result.hits.length < result.total || result.total_capped
    ? `; next: --offset ${offset + result.hits.length}`
    : "";
  io.stdout(
    result.hits.length
      ? `hits ${offset + 1}-${offset + result.hits.length} of ${total}${more}\n`
      : result.total
      ? `no hits from --offset ${offset}: there are ${total}\n`
      : "no hits\n",
  );
  if (result.unindexed) {
    io.stderr(
      `note: ${
        result.unindexed.toLocaleString("en-US")
      } stored operations are not indexed for search yet (an import or the server indexes them)\n`,
    );
  }
  return result.hits.length ? 0 : 1;
};
