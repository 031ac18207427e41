/**
 * The exclude list: what the user keeps out of the archive. A JSON file in the data folder
 * (`exclude.json`, written by `chronicle exclude` and the UI, or by hand):
 *
 * ```json
 * { "version": 1, "paths": ["~/.claude/projects/-tmp-*"], "projects": ["/home/me/clients/acme"] }
 * ```
 *
 * - `paths`: globs over the paths of agent log files (and databases). `*` is a run of
 *   characters other than `/`, `**` any run (`/**\/` zero folders too), `?` one character
 *   other than `/`; everything else is literal. A pattern starts with `/`, `~/` (the home folder) or `**\/`. A pattern that names
 *   a folder excludes everything below it. Excluded logs are never read.
 * - `projects`: project folders (a session's working folder); the folder and everything below
 *   it. Their sessions are not imported; logs that only hold sessions already stored from there
 *   are not read again. Taking an entry out brings in what the logs held meanwhile (admit.ts).
 *
 * Matching runs the linear-time NFA of core/security (`glob_match.ts`): a pattern can never
 * make discovery slow, whatever the paths.
 */
import { ChronicleError } from "../model/errors.ts";
import { type CompiledGlob, compileGlobMatcher, globMatches } from "../security/glob_match.ts";

/** The file's name in the data folder. */
export const EXCLUDE_FILE = "exclude.json";

/** The only version of the file there is. */
export const EXCLUDE_VERSION = 1;

/** The longest pattern or path accepted. */
export const MAX_ENTRY_LENGTH = 1000;

/** The most entries a list may hold (each kind). */
export const MAX_ENTRIES = 1000;

export interface ExcludeList {
  /** Globs over log file paths. */
  paths: string[];
  /** Project folders. */
  projects: string[];
}

export type ExcludeKind = keyof ExcludeList;

export const EMPTY_EXCLUDE: ExcludeList = Object.freeze({ paths: [], projects: [] }) as never;

function invalid(where: string, why: string): ChronicleError {
  return new ChronicleError("invalid_config", `The exclude list ${where} is not valid: ${why}`);
}

function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Why `value` is not a path glob the list accepts; null when it is. */
export function pathGlobProblem(value: string): string | null {
  if (value.length === 0) return "it is empty";
  if (value.length > MAX_ENTRY_LENGTH) return `it is longer than ${MAX_ENTRY_LENGTH} characters`;
  if (hasControl(value)) return "it holds a control character";
  if (!(value.startsWith("/") || value.startsWith("~/") || value.startsWith("**/"))) {
    return "it must start with /, ~/ or **/";
  }
  if (!/[^*?/]/.test(value)) return "it needs at least one character other than / * ?";
  return null;
}

/** Why `value` is not a project folder the list accepts; null when it is. */
export function projectProblem(value: string): string | null {
  if (value.length === 0) return "it is empty";
  if (value.length > MAX_ENTRY_LENGTH) return `it is longer than ${MAX_ENTRY_LENGTH} characters`;
  if (hasControl(value)) return "it holds a control character";
  if (!(value.startsWith("/") || value === "~" || value.startsWith("~/"))) {
    return "it must be an absolute folder (start with / or ~/)";
  }
  if (value.length > 1 && value.endsWith("/")) return "it must not end with /";
  if (/\/\/|(^|\/)\.\.?(\/|$)/.test(value.replace(/^~/, ""))) {
    return "it must be written plainly (no //, . or .. parts)";
  }
  return null;
}

const PROBLEM: Record<ExcludeKind, (v: string) => string | null> = {
  paths: pathGlobProblem,
  projects: projectProblem,
};

/**
 * Checks a parsed file: exactly `version` 1, `paths` and `projects` (each a list of distinct
 * entries; both may be left out). Throws a ChronicleError (`invalid_config`) naming the first
 * problem, with `where` (the file) in the message.
 */
export function validateExcludeList(value: unknown, where: string): ExcludeList {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(where, "it must be a JSON object");
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== "version" && key !== "paths" && key !== "projects") {
      throw invalid(where, `unknown key "${key.slice(0, 40)}" (known: version, paths, projects)`);
    }
  }
  if (o.version !== EXCLUDE_VERSION) {
    throw invalid(where, `"version" must be ${EXCLUDE_VERSION}`);
  }
  const out: ExcludeList = { paths: [], projects: [] };
  for (const kind of ["paths", "projects"] as const) {
    const list = o[kind] ?? [];
    if (!Array.isArray(list)) throw invalid(where, `"${kind}" must be a list of strings`);
    if (list.length > MAX_ENTRIES) throw invalid(where, `"${kind}" holds over ${MAX_ENTRIES}`);
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (typeof entry !== "string") throw invalid(where, `"${kind}"[${i}] is not a string`);
      const problem = PROBLEM[kind](entry);
      const shown = JSON.stringify(entry.slice(0, 80));
      if (problem) throw invalid(where, `"${kind}"[${i}] ${shown}: ${problem}`);
      if (seen.has(entry)) throw invalid(where, `"${kind}"[${i}] ${shown} is there twice`);
      seen.add(entry);
      out[kind].push(entry);
    });
  }
  return out;
}

/** Parses the file's text (see `validateExcludeList`). */
export function parseExcludeList(text: string, where: string): ExcludeList {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw invalid(where, `it is not JSON (${(e as Error).message.split("\n")[0].slice(0, 120)})`);
  }
  return validateExcludeList(value, where);
}

/** The file's text for a list: stable, one entry a line. */
export function excludeListText(list: ExcludeList): string {
  return JSON.stringify(
    { version: EXCLUDE_VERSION, paths: list.paths, projects: list.projects },
    null,
    2,
  ) + "\n";
}

/**
 * The list with `entry` added to `kind` (unchanged when it is there). Throws a ChronicleError
 * (`usage`) saying why an entry is not accepted.
 */
export function withEntry(list: ExcludeList, kind: ExcludeKind, entry: string): ExcludeList {
  const problem = PROBLEM[kind](entry);
  if (problem) {
    throw new ChronicleError("usage", `Cannot exclude ${JSON.stringify(entry)}: ${problem}`);
  }
  if (list[kind].includes(entry)) return list;
  if (list[kind].length >= MAX_ENTRIES) {
    throw new ChronicleError("usage", `The exclude list holds ${MAX_ENTRIES} ${kind} already`);
  }
  return { ...list, [kind]: [...list[kind], entry] };
}

/** The list without `entry` in `kind`; a ChronicleError (`not_found`) when it is not there. */
export function withoutEntry(list: ExcludeList, kind: ExcludeKind, entry: string): ExcludeList {
  if (!list[kind].includes(entry)) {
    throw new ChronicleError(
      "not_found",
      `${
        JSON.stringify(entry)
      } is not in the exclude list's ${kind} (see \`chronicle exclude list\`)`,
    );
  }
  return { ...list, [kind]: list[kind].filter((e) => e !== entry) };
}

/** The list compiled for an import pass. */
export interface ExcludeRules {
  /** Nothing is excluded. */
  readonly empty: boolean;
  /** No project is excluded. */
  readonly noProjects: boolean;
  /** True when the log at `path` (absolute) is excluded: it is not read. */
  unit(path: string): boolean;
  /** True when sessions in the project folder `path` are not imported. */
  project(path: string): boolean;
}

function expandHome(entry: string, home: string): string | null {
  if (entry === "~") return home || null;
  if (entry.startsWith("~/")) return home ? home.replace(/\/+$/, "") + entry.slice(1) : null;
  return entry;
}

/** How many `/**\/` of a pattern may each also stand for one `/` (2^n patterns compiled). */
const MAX_GLOBSTAR_GAPS = 4;

/**
 * A pattern and its spellings where a `/**\/` is a single `/` (zero folders), as in
 * `.gitignore`: `/logs/**\/a.jsonl` also matches `/logs/a.jsonl`.
 */
function globVariants(pattern: string): string[] {
  const parts = pattern.split("/**/");
  if (parts.length === 1 || parts.length - 1 > MAX_GLOBSTAR_GAPS) return [pattern];
  let out = [parts[0]];
  for (const part of parts.slice(1)) {
    out = out.flatMap((head) => [`${head}/**/${part}`, `${head}/${part}`]);
  }
  return out;
}

/** Compiles a list; `home` is what `~` means (an entry with `~` and no home matches nothing). */
export function compileExclude(list: ExcludeList, options: { home: string }): ExcludeRules {
  const globs: CompiledGlob[] = list.paths.flatMap((p) => {
    const full = expandHome(p, options.home);
    return full === null ? [] : globVariants(full).map((g) => compileGlobMatcher(g, "path"));
  });
  const folders = list.projects.flatMap((p) => {
    const full = expandHome(p, options.home);
    return full === null ? [] : [full.length > 1 ? full.replace(/\/+$/, "") : full];
  });
  return {
    empty: !globs.length && !folders.length,
    noProjects: !folders.length,
    unit(path) {
      if (!globs.length) return false;
      // the path, then each folder above it: a pattern naming a folder covers what is in it
      for (let end = path.length; end > 0; end = path.lastIndexOf("/", end - 1)) {
        const part = path.slice(0, end);
        if (globs.some((g) => globMatches(g, part))) return true;
      }
      return false;
    },
    project(path) {
      const p = path.length > 1 ? path.replace(/\/+$/, "") : path;
      return folders.some((f) => p === f || p.startsWith(f === "/" ? "/" : f + "/"));
    },
  };
}

/** Rules that exclude nothing. */
export const NO_EXCLUDE: ExcludeRules = compileExclude(EMPTY_EXCLUDE, { home: "" });
