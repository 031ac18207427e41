/**
 * `chronicle exclude`: the exclude list in the data folder (`exclude.json`): log files (by
 * glob) and project folders that imports leave out. Excluding deletes nothing already stored:
 * `chronicle forget` does.
 */
import { isAbsolute, resolve } from "node:path";
import {
  type ExcludeKind,
  type ExcludeList,
  withEntry,
  withoutEntry,
} from "../core/archive/mod.ts";
import { termSafe } from "../core/security/terminal.ts";
import { ensureDataDir } from "../runtime/data_dir.ts";
import { dataDir } from "../runtime/data_dir.ts";
import {
  excludePath,
  readExcludeList,
  readExcludeText,
  writeExcludeList,
} from "../runtime/exclude_file.ts";
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";

export const EXCLUDE_HELP = `Usage: chronicle exclude list [--json]
       chronicle exclude add [GLOB]... [--project PATH]...
       chronicle exclude remove [GLOB]... [--project PATH]...

The exclude list keeps agent logs and projects out of Chronicle's store. It is a file in the
data folder, exclude.json (0600), which you may also edit by hand or in the UI's Archive page:

  { "version": 1, "paths": ["~/.claude/projects/-tmp-*"], "projects": ["/home/me/acme"] }

GLOB names log files (or a folder of them): * is any run of characters but /, ** any run, ?
one character but /. Those logs are never read. A relative GLOB or PATH is taken from the
folder you run the command in; ~/ is your home folder.
PATH is a project folder: sessions whose working folder is PATH or below it are not imported,
and logs that only hold its sessions already stored are not read again.

Excluding deletes nothing: sessions already stored stay (as they are, no longer updated) until
you forget them (\`chronicle forget --project PATH --yes\`). Removing an entry lets its logs
in again at the next import, with what they gained meanwhile (a log read while its project
was excluded is read again from its start). Forgotten sessions never come back.

A list that is not valid stops every import with one line saying which entry is wrong; fix
the file (or remove it) and import again.

Options:
  --project PATH  a project folder (repeatable)
  --json          print JSON (list)
  -h, --help      show this help
`;

/** A glob as typed: relative ones are taken from the user's folder. */
function globArg(cwd: string, glob: string): string {
  if (glob.startsWith("/") || glob.startsWith("~/") || glob.startsWith("**/")) return glob;
  return resolve(cwd, glob);
}

/** A project folder as typed: absolute, without a trailing slash; `~` kept. */
function projectArg(cwd: string, path: string): string {
  if (path === "~" || path.startsWith("~/")) {
    return path.length > 2 ? "~" + resolve("/", path.slice(1)) : "~";
  }
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

function listText(path: string, list: ExcludeList): string {
  if (!list.paths.length && !list.projects.length) {
    return `Nothing is excluded (${
      termSafe(path)
    } holds no entry; see \`chronicle exclude --help\`).\n`;
  }
  const lines = [`Exclude list ${termSafe(path)}:\n`];
  if (list.paths.length) {
    lines.push("Log files:\n", ...list.paths.map((p) => `  ${termSafe(p)}\n`));
  }
  if (list.projects.length) {
    lines.push("Projects:\n", ...list.projects.map((p) => `  ${termSafe(p)}\n`));
  }
  return lines.join("");
}

async function edit(
  io: CliIo,
  change: (list: ExcludeList) => { list: ExcludeList; said: string[] },
): Promise<number> {
  const dir = await ensureDataDir(dataDir(io.env));
  const state = await readExcludeText(dir);
  const list = await readExcludeList(dir); // a bad file is one line, and is left as it is
  const next = change(list);
  await writeExcludeList(dir, next.list, { expect: state.etag });
  io.stdout(next.said.join(""));
  return 0;
}

export const excludeCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    project: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, EXCLUDE_HELP, io);
  if (early !== null) return early;
  const [sub, ...rest] = p.positionals;
  const projects = ((p.values.project as string[] | undefined) ?? []).map((x) =>
    projectArg(io.cwd, x)
  );
  const globs = rest.map((x) => globArg(io.cwd, x));
  if (sub === "list") {
    if (rest.length || projects.length) throw new UsageError("exclude list takes no entries");
    const dir = dataDir(io.env);
    const list = await readExcludeList(dir);
    io.stdout(
      p.values.json
        ? JSON.stringify({ path: excludePath(dir), ...list }, null, 2) + "\n"
        : listText(excludePath(dir), list),
    );
    return 0;
  }
  if (sub !== "add" && sub !== "remove") {
    throw new UsageError(
      sub ? `unknown exclude command "${sub}"` : "exclude needs list, add or remove",
    );
  }
  if (!globs.length && !projects.length) {
    throw new UsageError(`exclude ${sub} needs a GLOB or --project PATH`);
  }
  const entries: [ExcludeKind, string][] = [
    ...globs.map((g) => ["paths", g] as [ExcludeKind, string]),
    ...projects.map((x) => ["projects", x] as [ExcludeKind, string]),
  ];
  return await edit(io, (list) => {
    const said: string[] = [];
    for (const [kind, entry] of entries) {
      const had = list[kind].includes(entry);
      list = sub === "add" ? withEntry(list, kind, entry) : withoutEntry(list, kind, entry);
      const what = kind === "paths" ? "log files" : "project";
      said.push(
        sub === "add"
          ? had
            ? `Already excluded (${what}): ${termSafe(entry)}\n`
            : `Excluded (${what}): ${termSafe(entry)}\n`
          : `No longer excluded (${what}): ${termSafe(entry)}\n`,
      );
    }
    said.push(
      sub === "add"
        ? "Sessions already stored stay; `chronicle forget` deletes them.\n"
        : "The next import brings in what those logs hold (forgotten sessions excepted).\n",
    );
    return { list, said };
  });
};
