/**
 * What each operation of a session did to files, read off canonical operations of every agent:
 * reads, searches and listings (with the files they named), and changes (writes, edits,
 * deletes, and shell commands whose words show the files they change). Paths are normalised
 * against the operation's working folder or the session's project, so one file has one key.
 */
import { ERROR_SCAN_CHARS, isErrorResult } from "../analytics/error_heuristic.ts";
import {
  type CanonicalSession,
  COMMAND_KEYS,
  FOLDER_KEYS,
  type Operation,
  parseToolInput,
  PATH_LIST_KEYS,
  type PayloadRef,
  QUERY_KEYS,
  toolResultText,
} from "../model/mod.ts";
import { basename, normalizePath } from "./paths.ts";
import { shellEffects } from "./shell.ts";

/** Reads a payload's text (at most `max` characters); null when it is not available. */
export type PayloadReader = (ref: PayloadRef | undefined, max?: number) => string | null;

export type SourceKind = "read" | "search" | "list";
export type ChangeKind = "write" | "edit" | "delete" | "command";

export interface SourceFact {
  kind: SourceKind;
  /** Files whose content the operation read. */
  files: string[];
  /** Folders or files a search or listing was scoped to. */
  scopes: string[];
  /** The search pattern, as the agent wrote it. */
  pattern?: string;
  /** Base names the pattern spells out literally (`app.py` in `grep -l app.py`). */
  patternNames: string[];
  /** Files the results name (a grep hit, a glob match, a listing entry), with the line. */
  named: Map<string, string>;
  /** Globs among the files read (`cat src/*.py`). */
  globs: string[];
  failed: boolean;
}

export interface ChangeFact {
  kind: ChangeKind;
  files: string[];
  /** What happens to each file (a command can delete one and write another). */
  actions: Map<string, "write" | "edit" | "delete">;
  failed: boolean;
  /** New whole contents a shell command wrote, when its words hold them (`cat > f <<EOF`). */
  contents?: Map<string, string>;
  /** Files a shell command filled from another file (`mv a b`, `cp a b`): target -> source. */
  copies?: Map<string, string>;
}

export interface OpFacts {
  seq: number;
  op: string;
  connection: string;
  tool?: string;
  /** The folder relative paths of this operation resolve against. */
  cwd?: string;
  source?: SourceFact;
  change?: ChangeFact;
}

/** Options of {@link sessionFacts}. */
export interface FactsOptions {
  /** Characters of a search result read for the files it names. Default 256 KiB. */
  resultChars?: number;
}

// The input keys naming files, folders, queries and commands are the importers' vocabulary
// (core/model/tools.ts). The file an operation reads or changes is its canonical `target`.
/** A search's scope: the folder keys, then a plain `path`. */
const SCOPE_KEYS = [...FOLDER_KEYS, "path"];
/** Keys naming the folder a shell step ran in. */
const CWD_KEYS = ["workdir", "cwd", "working_directory", "directory"];
/** Tools whose result lists bare entry names of the one folder they were given. */
const LIST_TOOLS = new Set([
  "ls",
  "list",
  "list_dir",
  "list_directory",
  "listdirectory",
  "list_files",
  "glob_file_search",
]);
const DELETE_TOOLS = new Set(["delete_file", "deletefile", "remove_file"]);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** The command line of a shell step's input: a string, or an argument vector quoted back into one (`["bash", "-lc", s]` is `s`). */
export function commandLine(input: unknown): string | undefined {
  if (typeof input === "string") return input;
  if (!isRecord(input)) return undefined;
  for (const k of COMMAND_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v) return v;
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) {
      // ["bash", "-lc", "..."] runs its last word; anything else is a plain argument vector.
      const words = v as string[];
      if (words.length === 3 && /(^|\/)(ba|z)?sh$/.test(words[0]) && /^-l?c$/.test(words[1])) {
        return words[2];
      }
      return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`))
        .join(" ");
    }
  }
  return undefined;
}

const GLOB = /[*?[]/;

/** Base names a search pattern spells out: `app.py` in `from app.py`, `**\/utils.py`. */
export function literalNames(pattern: string | undefined): string[] {
  if (!pattern) return [];
  const out = new Set<string>();
  for (const token of pattern.split(/[^A-Za-z0-9_.\-/\u00C0-\uFFFF]+/)) {
    const name = basename(token.replace(/\\\./g, "."));
    if (/[A-Za-z0-9_\-\u00C0-\uFFFF]\.[A-Za-z0-9]{1,12}$/.test(name)) out.add(name);
  }
  return [...out];
}

const LONG_LISTING =
  /^[-dlcbps][-rwxsStT]{9}[.@+]?\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(.+)$/;
const PATHISH =
  /^(?:\.{1,2}\/|\/)?[\w@+\-\u00C0-\uFFFF][\w@+.\-\u00C0-\uFFFF]*(?:\/[\w@+.\-\u00C0-\uFFFF]+)*\/?$/;

/**
 * The paths a search or listing result names, each with the line that named it: grep hits
 * (`path:12:text`), Gemini's `File: path`, bare paths (globs, `find`), listing entries (`ls`,
 * `ls -l`, `ls -R` headings). Relative names come back relative; the caller resolves them.
 */
export function namesInResult(
  text: string,
  options: { listing?: boolean; maxLines?: number } = {},
): { name: string; line: string; under?: string }[] {
  const out: { name: string; line: string; under?: string }[] = [];
  let heading: string | undefined;
  const lines = text.split("\n", options.maxLines ?? 5000);
  for (const raw of lines) {
    const line = raw.replace(/\r$/, "");
    const t = line.trim();
    if (!t) continue;
    let m = /^File: (.+)$/.exec(t);
    if (m) {
      out.push({ name: m[1], line: t });
      continue;
    }
    if (options.listing) {
      m = /^(\S.*):$/.exec(t);
      if (m && !/\s/.test(m[1])) {
        heading = m[1];
        continue;
      }
      if (/^total \d+$/.test(t)) continue;
      m = LONG_LISTING.exec(t);
      const entry = m ? m[1].replace(/ -> .*$/, "") : t;
      if (entry === "." || entry === "..") continue;
      if (!/\s/.test(entry) || m) out.push({ name: entry, line: t, under: heading });
      continue;
    }
    m = /^(.+?):(\d+)[:-]/.exec(t);
    if (m && PATHISH.test(m[1])) {
      out.push({ name: m[1], line: t });
      continue;
    }
    m = /^([^\s:]+):/.exec(t);
    if (m && PATHISH.test(m[1]) && /[/.]/.test(m[1]) && !/^\w+:\/\//.test(t)) {
      out.push({ name: m[1], line: t });
      continue;
    }
    if (PATHISH.test(t) && /[/.]/.test(t) && /[A-Za-z\u00C0-\uFFFF]/.test(t) && !/^\d/.test(t)) {
      out.push({ name: t.replace(/\/$/, ""), line: t });
    }
  }
  return out;
}

/**
 * Resolves result names to paths: plain names against each of `bases`, names under a listing
 * heading (`src/sub:`) against the heading, itself relative to `cwd`.
 */
function resolveNamed(
  names: { name: string; line: string; under?: string }[],
  bases: string[],
  cwd: string | undefined,
): Map<string, string> {
  const named = new Map<string, string>();
  for (const n of names) {
    const roots = n.under ? [normalizePath(n.under, cwd)] : bases;
    for (const b of roots) {
      const p = normalizePath(n.name, b);
      if (!named.has(p)) named.set(p, n.line.slice(0, 240));
    }
    if (named.size > 5000) break;
  }
  return named;
}

/** The files a read or change names: its target, and the `paths` of a multi-file read. */
function fileInputs(input: unknown, target: string | undefined): string[] {
  const out: string[] = target ? [target] : [];
  if (isRecord(input)) {
    for (const k of PATH_LIST_KEYS) {
      const v = input[k];
      if (Array.isArray(v)) { for (const x of v) if (typeof x === "string" && x) out.push(x); }
    }
  }
  return out;
}

function scopeInputs(input: unknown, target: string | undefined): string[] {
  const out: string[] = [];
  if (isRecord(input)) {
    for (const k of SCOPE_KEYS) {
      const v = str(input[k]);
      if (v && !GLOB.test(v)) out.push(v);
    }
  }
  if (target && !out.includes(target) && !GLOB.test(target)) out.push(target);
  return out;
}

function patternInput(input: unknown): string | undefined {
  if (!isRecord(input)) return undefined;
  for (const k of QUERY_KEYS) {
    const v = str(input[k]);
    if (v) return v;
  }
  return undefined;
}

function uniq(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** One operation's facts. `project` is the folder relative paths resolve against by default. */
export function opFacts(
  op: Operation,
  at: { seq: number; op: string; connection: string },
  ctx: { project?: string; read: PayloadReader; resultChars?: number },
): OpFacts {
  const base: OpFacts = { ...at, tool: op.tool };
  const kind = op.kind;
  if (
    kind !== "read" && kind !== "search" && kind !== "write" && kind !== "edit" && kind !== "exec"
  ) {
    return base;
  }
  const input = parseToolInput(ctx.read(op.request, 256 * 1024));
  const cwdInput = isRecord(input)
    ? CWD_KEYS.map((k) => str(input[k])).find((v) => v !== undefined)
    : undefined;
  const cwd = cwdInput
    ? normalizePath(cwdInput, ctx.project)
    : ctx.project
    ? normalizePath(ctx.project)
    : undefined;
  if (cwd) base.cwd = cwd;
  const resolve = (p: string) => normalizePath(p, cwd);
  const tool = (op.tool ?? "").toLowerCase();
  // Only a search's whole result is read (for the files it names); anything else needs at most
  // the opening the error rule reads, and none when the log recorded the outcome.
  const fullResult = () => ctx.read(op.response, ctx.resultChars ?? 256 * 1024);
  const failedBy = (text?: string | null) => {
    if (op.is_error === true) return true;
    if (op.is_error === false && kind !== "exec") return false;
    return isErrorResult(op, text === undefined ? ctx.read(op.response, ERROR_SCAN_CHARS) : text);
  };

  if (kind === "read") {
    const failed = failedBy();
    const all = fileInputs(input, op.target);
    const files = uniq(all.filter((p) => !GLOB.test(p)).map(resolve));
    const globs = uniq(all.filter((p) => GLOB.test(p)).map(resolve));
    base.source = {
      kind: "read",
      files,
      scopes: [],
      patternNames: [],
      named: new Map(),
      globs,
      failed,
    };
    return base;
  }

  if (kind === "search") {
    const rawResult = fullResult();
    const failed = failedBy(rawResult);
    const listing = LIST_TOOLS.has(tool);
    const scopes = uniq(scopeInputs(input, op.target).map(resolve));
    const pattern = patternInput(input);
    const text = toolResultText(rawResult);
    const bases = uniq([...scopes, ...(cwd ? [cwd] : [])]);
    base.source = {
      kind: listing ? "list" : "search",
      files: [],
      scopes: scopes.length ? scopes : cwd ? [cwd] : [],
      pattern,
      patternNames: literalNames(pattern),
      named: failed ? new Map() : resolveNamed(
        namesInResult(text, { listing }),
        listing && scopes.length ? scopes : bases,
        cwd,
      ),
      globs: [],
      failed,
    };
    return base;
  }

  if (kind === "write" || kind === "edit") {
    const ext = (op.extensions?.codex ?? {}) as Record<string, unknown>;
    const files = uniq(fileInputs(input, op.target).slice(0, 1).map(resolve));
    const actions = new Map<string, "write" | "edit" | "delete">();
    let changeKind: ChangeKind = kind;
    if (DELETE_TOOLS.has(tool) || ext.patch_action === "delete") changeKind = "delete";
    for (const f of files) actions.set(f, changeKind === "delete" ? "delete" : kind);
    const moved = str(ext.move_to);
    if (moved) {
      const to = resolve(moved);
      files.push(to);
      actions.set(files[0], "delete");
      actions.set(to, "write");
    }
    // A failed change is kept (the agent meant it); its result decides the flag.
    base.change = { kind: changeKind, files, actions, failed: failedBy() };
    return base;
  }

  // exec: what the command line's words show.
  const command = commandLine(input);
  const effects = command ? shellEffects(command, cwd ?? ".") : [];
  const reads = effects.filter((e) => e.role === "read");
  const searches = effects.filter((e) => e.role === "search" || e.role === "list");
  const changes = effects.filter((e) => e.role === "change");
  const parsed = (op.extensions?.codex as Record<string, unknown> | undefined)?.parsed_cmd;
  if (!reads.length && !searches.length && op.target && typeof parsed === "string") {
    // Codex parsed the command itself; trust its reading when the words told us nothing.
    if (parsed === "read") reads.push({ role: "read", paths: [resolve(op.target)], program: "" });
    if (parsed === "search" || parsed === "list_files") {
      searches.push({
        role: parsed === "search" ? "search" : "list",
        paths: [resolve(op.target)],
        program: "",
      });
    }
  }
  const rawResult = searches.length ? fullResult() : ctx.read(op.response, ERROR_SCAN_CHARS);
  const failed = failedBy(rawResult);
  if (reads.length || searches.length) {
    const listing = !searches.some((s) => s.role === "search") && searches.length > 0 &&
      !reads.length;
    const search = searches.find((s) => s.role === "search");
    const scopes = uniq(searches.flatMap((s) => s.paths));
    const text = searches.length ? toolResultText(rawResult) : "";
    const all = reads.flatMap((r) => r.paths);
    base.source = {
      kind: search ? "search" : listing ? "list" : "read",
      files: uniq(all.filter((p) => !GLOB.test(p))),
      globs: uniq(all.filter((p) => GLOB.test(p))),
      scopes,
      pattern: search?.pattern,
      patternNames: literalNames(search?.pattern),
      named: searches.length && !failed
        // A shell search prints paths as its words gave them: relative to the working folder.
        ? resolveNamed(namesInResult(text, { listing }), listing ? scopes : cwd ? [cwd] : [], cwd)
        : new Map(),
      failed,
    };
  }
  if (changes.length) {
    const actions = new Map<string, "write" | "edit" | "delete">();
    const contents = new Map<string, string>();
    const copies = new Map<string, string>();
    for (const e of changes) {
      for (const p of e.paths) {
        actions.set(p, e.change ?? "edit");
        contents.delete(p);
        copies.delete(p);
        if (e.content !== undefined && e.paths.length === 1) contents.set(p, e.content);
        if (e.from !== undefined && e.paths.length === 1) copies.set(p, e.from);
      }
    }
    base.change = {
      kind: "command",
      files: [...actions.keys()],
      actions,
      failed,
      ...(contents.size ? { contents } : {}),
      ...(copies.size ? { copies } : {}),
    };
  }
  return base;
}

/** Every operation's facts, in timeline order. */
export function sessionFacts(
  session: CanonicalSession,
  read: PayloadReader,
  options: FactsOptions = {},
): OpFacts[] {
  const project = session.session.project.path;
  return session.timeline.map((t) =>
    opFacts(session.operations[t.op], { seq: t.seq, op: t.op, connection: t.connection }, {
      project,
      read,
      resultChars: options.resultChars,
    })
  );
}
