/**
 * The live guard's decision: before a tool call runs, find every file it would read and check
 * each by name (the sensitive-path policy) and by content (the same rules as every scan), and
 * scan what it would send (its input). High-severity findings and sensitive files block;
 * personal data is flagged and allowed. Every decision yields an interception record with a
 * masked sample, never the secret itself.
 *
 * What "a file it would read" means: the path a Read-like tool names; every word of a shell
 * command (after quote removal, `~`/`$HOME`/`$PWD` and glob expansion, through `sh -c`
 * strings, substitutions and redirections, `@file` arguments, paths inside `python -c` code)
 * that names an existing file, resolved through symlinks; the files a search tool would read
 * in the folders it searches; any path-like string of an MCP or unknown tool's input that names
 * a file. FIFOs, devices and sockets are never opened. The decision has a time budget: past it
 * the call is blocked (the guard fails closed), never waved through.
 */
import { COMMAND_KEYS, pathsOf, toolRole } from "../model/tools.ts";
import { type Deadline, deadlineIn, isTimeout } from "./budget.ts";
import { decodeForScan } from "./decode.ts";
import { compileGlobMatcher, globMatches } from "./glob_match.ts";
import type { CustomRule } from "./glob_rule.ts";
import { type Finding, maskedSample, scanText } from "./scan.ts";
import { authConfigPattern, pathVerdict } from "./sensitive_paths.ts";
import { dirChange, parseShell, type ShellWord, type SimpleCommand } from "./shell_words.ts";

/** What a path is, symlinks followed. */
export interface PathInfo {
  kind: "file" | "dir" | "other";
  size: number;
}

/** The file system as the guard sees it (injected: guard/fs.ts is the real one). */
export interface GuardFs {
  /**
   * The absolute path behind every symlink and `..` (resolved as the kernel does: `dir/..`
   * through a symlinked `dir` leaves the link's target); null when nothing is there; the path
   * itself when it is there but cannot be looked into.
   */
  realPath(path: string): Promise<string | null>;
  /** What a path is, following symlinks; null when nothing is there; `other` when unknowable. */
  stat(path: string): Promise<PathInfo | null>;
  /** A folder's entries (symlinks not followed); [] when it cannot be read. */
  readDir(path: string): Promise<{ name: string; kind: "file" | "dir" | "symlink" | "other" }[]>;
  /**
   * At most `maxBytes` from the start of a regular file (and, past that, the last `tailBytes`),
   * read in chunks with `deadline` checked; null when it is not a regular file once opened.
   */
  readFile(
    path: string,
    options: { maxBytes: number; tailBytes: number; deadline: Deadline },
  ): Promise<Uint8Array | null>;
}

export interface PreToolUseInput {
  tool_name: string;
  tool_input: unknown;
  /** The agent's working directory, to resolve relative paths. */
  cwd?: string;
  session_id?: string;
}

export interface PreToolUseOptions {
  /** Custom rules (text and `path:` rules, allow and redact). Default: none. */
  rules?: readonly CustomRule[];
  /** The home folder, for `~` and `$HOME`. Default: none (left unexpanded). */
  home?: string;
  /** Milliseconds for the whole decision; past it the call is blocked. Default 2500. */
  budgetMs?: number;
  /** Bytes of a file scanned from its start. Default 8 MiB. */
  maxBytes?: number;
  /** Clock for the interception record. Default: `new Date()`. */
  now?: () => Date;
}

export type GuardAction = "block" | "flag" | "allow";

/** One logged decision (table `interceptions`, and the guard's journal). */
export interface Interception {
  at: string;
  session_id?: string;
  tool: string;
  file?: string;
  rules: string[];
  /** The first offending line with every finding masked, at most 160 characters. */
  sample?: string;
  action: GuardAction;
}

export interface PreToolUseDecision {
  decision: "block" | "allow";
  action: GuardAction;
  /** Why the call was blocked or flagged: names the rules and the file, never the secret. */
  reason?: string;
  /** Rule names that fired, blocking ones first. */
  rules: string[];
  /** Files whose content was scanned. */
  files: string[];
  interception: Interception;
}

// ---------------------------------------------------------------------------------------------
// tool vocabulary: core/model/tools.ts (one copy, shared with the importers)

export { toolRole };

/** Lockfiles are full of hashes that look random; reading them is never a leak. */
const LOCKFILE_RE =
  /(?:^|\/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|deno\.lock|bun\.lockb?|go\.sum|Cargo\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|composer\.lock|Gemfile\.lock|flake\.lock)$/;

/** Commands that never print or send what the files they name hold. */
const NO_READ_COMMANDS = new Set(
  ("ls ll la dir stat touch mkdir rmdir rm mv chmod chown chgrp ln which type test [ [[ cd " +
    "pushd popd realpath readlink basename dirname du df file unlink trash").split(" "),
);
/** Wrappers whose first non-option word is the command that runs. */
const WRAPPERS = new Set(
  "sudo doas env nohup time command exec nice ionice stdbuf timeout xargs builtin".split(" "),
);
const SHELLS = new Set("sh bash zsh dash ksh mksh fish ash busybox".split(" "));
/** Search commands: the folders they name are read file by file; `hidden` when dotfiles too. */
const SEARCHERS: Record<string, { hidden: boolean; recursiveFlag?: RegExp }> = {
  grep: {
    hidden: true,
    recursiveFlag: /^-(?:[a-zA-Z]*[rR][a-zA-Z]*|-recursive|-dereference-recursive)$/,
  },
  egrep: { hidden: true, recursiveFlag: /^-[a-zA-Z]*[rR][a-zA-Z]*$/ },
  fgrep: { hidden: true, recursiveFlag: /^-[a-zA-Z]*[rR][a-zA-Z]*$/ },
  rg: { hidden: false },
  ag: { hidden: false },
  ack: { hidden: false },
};

const DEFAULT_BUDGET_MS = 2500;
const DEFAULT_MAX_BYTES = 8 << 20;
const TAIL_BYTES = 1 << 20;
/** Distinct paths looked at, at most; past it the call is blocked as uncheckable. */
const MAX_CANDIDATES = 4096;
/** Files a folder search reads, at most, and bytes. */
const WALK_FILES = 2000;
const WALK_BYTES = 32 << 20;
/** Matches of one glob, at most. */
const GLOB_MATCHES = 512;

// ---------------------------------------------------------------------------------------------
// paths

/** `p` against `cwd`, with `.` and `..` resolved by the letter (the real path comes later). */
export function joinPath(cwd: string | undefined, p: string): string {
  const abs = p.startsWith("/") ? p : `${(cwd ?? "/").replace(/\/+$/, "")}/${p}`;
  const out: string[] = [];
  for (const part of abs.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return "/" + out.join("/");
}

/** A file the call would read, by every name it goes by. */
interface Target {
  /** The path as the call names it (resolved by the letter). */
  path: string;
  /** The real path behind symlinks. */
  real: string;
  kind: PathInfo["kind"];
  size: number;
}

/** Why a call could not be checked: it is blocked. */
class Uncheckable extends Error {}

class Collector {
  readonly seen = new Set<string>();
  readonly targets: Target[] = [];
  readonly folders: { target: Target; hidden: boolean }[] = [];
  constructor(
    private readonly fs: GuardFs,
    private readonly cwd: string | undefined,
    private readonly home: string | undefined,
    private readonly deadline: Deadline,
  ) {}

  /** Adds a path if it names something; `walk` for folders a search reads. */
  async add(
    raw: string,
    options: {
      walk?: boolean;
      hidden?: boolean;
      glob?: string;
      byName?: boolean;
      /** The directory a relative path is in (a shell's after `cd`); default: the call's. */
      cwd?: string;
    } = {},
  ) {
    if (!raw || raw.length > 4096 || raw.includes("\0") || raw.includes("\n")) return;
    let p = raw;
    if (p.startsWith("file://")) p = decodeURIComponent(p.slice(7));
    if ((p === "~" || p.startsWith("~/")) && this.home) p = this.home + p.slice(1);
    const cwd = options.cwd ?? this.cwd;
    if (options.glob) {
      for (const hit of await this.expandGlob(joinPath(cwd, options.glob))) {
        await this.add(hit, { walk: options.walk, hidden: options.hidden });
      }
      return;
    }
    const path = joinPath(cwd, p);
    const asWritten = p.startsWith("/") ? p : `${(cwd ?? "/").replace(/\/+$/, "")}/${p}`;
    if (this.seen.has(asWritten)) return;
    this.seen.add(asWritten);
    if (this.seen.size > MAX_CANDIDATES) {
      throw new Uncheckable("it names too many paths to check");
    }
    this.deadline.check();
    const real = await this.fs.realPath(asWritten);
    if (real === null) {
      // a file a read tool names: its name alone decides, even before it exists
      if (options.byName) this.targets.push({ path, real: path, kind: "other", size: 0 });
      return;
    }
    const info = await this.fs.stat(real);
    if (!info) return;
    const target: Target = { path, real, kind: info.kind, size: info.size };
    if (info.kind === "dir") {
      if (options.walk) this.folders.push({ target, hidden: options.hidden ?? false });
      return;
    }
    this.targets.push(target);
  }

  /** True when `path` is a folder a shell could `cd` into. */
  async isDir(path: string): Promise<boolean> {
    this.deadline.check();
    const real = await this.fs.realPath(path);
    return real !== null && (await this.fs.stat(real))?.kind === "dir";
  }

  /** Expands a glob pattern (absolute) against the file system, like a shell: dotfiles only by a dot. */
  async expandGlob(pattern: string): Promise<string[]> {
    const parts = pattern.split("/").filter(Boolean);
    let bases = ["/"];
    for (const [k, part] of parts.entries()) {
      const last = k === parts.length - 1;
      if (!/[*?[]/.test(part)) {
        bases = bases.map((b) => (b === "/" ? "/" : b + "/") + part.replace(/\\(.)/g, "$1"));
        continue;
      }
      const matcher = compileGlobMatcher(
        part.replace(/\[[^\]]*\]/g, "?").replace(/\\(.)/g, "$1"),
        "path",
      );
      const next: string[] = [];
      for (const b of bases) {
        this.deadline.check();
        for (const e of await this.fs.readDir(b)) {
          if (e.name.startsWith(".") && !part.startsWith(".")) continue;
          if (!last && e.kind !== "dir" && e.kind !== "symlink") continue;
          if (globMatches(matcher, e.name)) next.push((b === "/" ? "/" : b + "/") + e.name);
          if (next.length >= GLOB_MATCHES) break;
        }
      }
      bases = next;
      if (!bases.length) break;
    }
    return bases;
  }

  /** The files under the folders a search reads (no symlinks followed, heavy folders skipped). */
  async walkFolders(): Promise<Target[]> {
    const out: Target[] = [];
    let bytes = 0;
    const stack = this.folders.map((f) => ({
      dir: f.target.real,
      shown: f.target.path,
      hidden: f.hidden,
    }));
    while (stack.length && out.length < WALK_FILES && bytes < WALK_BYTES) {
      this.deadline.check();
      const { dir, shown, hidden } = stack.pop()!;
      for (const e of await this.fs.readDir(dir)) {
        if (e.name === ".git" || e.name === "node_modules") continue;
        if (!hidden && e.name.startsWith(".")) continue;
        const real = `${dir}/${e.name}`;
        const path = `${shown}/${e.name}`;
        if (e.kind === "dir") stack.push({ dir: real, shown: path, hidden });
        else if (e.kind === "file" && !this.seen.has(real)) {
          this.seen.add(real);
          const info = await this.fs.stat(real);
          if (!info || info.kind !== "file") continue;
          out.push({ path, real, kind: "file", size: info.size });
          bytes += info.size;
        }
      }
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// what a call reads

function shellCommandOf(input: Record<string, unknown>): string | null {
  for (const key of COMMAND_KEYS) {
    const c = input[key];
    if (typeof c === "string") return c;
    if (Array.isArray(c) && c.every((x) => typeof x === "string")) {
      // Codex: ["bash", "-lc", "cat .env"]; a plain argv is quoted back into one line
      return c.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
    }
  }
  return null;
}

/** The possible file names inside one word: itself, `--x=VALUE`, `@file`, paths inside code. */
export function wordCandidates(text: string): string[] {
  const out: string[] = [];
  const push = (s: string) => {
    if (s.length < 1) return;
    out.push(s);
    if (s.length > 1 && s.startsWith("@")) out.push(s.slice(1));
  };
  if (!text.startsWith("-")) push(text);
  const eq = text.indexOf("=");
  if (eq >= 0) push(text.slice(eq + 1));
  if (/[\s'"(),;{}[\]<>|&]/.test(text)) {
    const tokens = text.match(/[A-Za-z0-9_.~/+@%:-]{2,}/g) ?? [];
    for (const t of tokens.slice(0, 256)) push(t.replace(/[.:,-]+$/, ""));
  }
  return out;
}

function commandName(words: ShellWord[]): { index: number; name: string } {
  let i = 0;
  while (i < words.length) {
    const w = words[i].text;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      i++;
      continue;
    }
    const base = w.slice(w.lastIndexOf("/") + 1);
    if (WRAPPERS.has(base)) {
      i++;
      // options of the wrapper, and timeout's duration
      while (
        i < words.length && (words[i].text.startsWith("-") || /^\d+[smhd]?$/.test(words[i].text))
      ) {
        i++;
      }
      continue;
    }
    return { index: i, name: base };
  }
  return { index: words.length, name: "" };
}

/**
 * Where `$PWD` (and `~+`) expand to while lexing: a placeholder replaced, command by command,
 * by the directory the shell is in by then (after any `cd`).
 */
const PWD_MARK = "\uE000PWD\uE000";

/** The shell's directory state: where it is, where it was (`cd -`), the pushd stack. */
interface ShellDir {
  cwd?: string;
  old?: string;
  stack: string[];
}

/**
 * Collects what a command line reads, in `start` (the directory it runs in). A `cd`, `pushd`
 * or `popd` to a folder that exists moves the later commands it reaches (same subshell or
 * nested in it, not part of a pipeline); one to a folder that does not exist fails and moves
 * nothing; one to a place the words do not say (`cd "$X"`) leaves the directory as it was.
 */
async function collectShell(
  c: Collector,
  command: string,
  env: Record<string, string | undefined>,
  depth: number,
  start: string | undefined,
): Promise<void> {
  const parsed = parseShell(command, {
    env: { ...env, PWD: start === undefined ? undefined : PWD_MARK },
  });
  if (parsed.incomplete) throw new Uncheckable(parsed.incomplete);
  /** Each change of directory, with the scope it reaches. */
  const moves: { scope: number[]; dir: ShellDir }[] = [];
  const stateFor = (scope: number[]): ShellDir => {
    for (let k = moves.length - 1; k >= 0; k--) {
      const m = moves[k].scope;
      if (m.length <= scope.length && m.every((n, j) => scope[j] === n)) return moves[k].dir;
    }
    return { cwd: start, stack: [] };
  };
  for (const cmd of parsed.commands) {
    const dir = stateFor(cmd.scope);
    await collectCommand(c, cmd, env, depth, dir.cwd);
    const { index, name } = commandName(cmd.words);
    const change = dirChange(name, cmd.words.slice(index + 1).map((w) => withCwd(w, dir.cwd)));
    if (!change || cmd.piped || dir.cwd === undefined) continue;
    let next: ShellDir | null = null;
    switch (change.go) {
      case "to": {
        const to = joinPath(dir.cwd, change.to);
        if (!(await c.isDir(to))) break; // cd fails: nothing moves
        next = {
          cwd: to,
          old: dir.cwd,
          stack: change.push ? [dir.cwd, ...dir.stack] : dir.stack,
        };
        break;
      }
      case "home":
        if (env.HOME) next = { cwd: env.HOME, old: dir.cwd, stack: dir.stack };
        break;
      case "previous":
        if (dir.old) next = { cwd: dir.old, old: dir.cwd, stack: dir.stack };
        break;
      case "pop":
        if (dir.stack.length) next = { cwd: dir.stack[0], old: dir.cwd, stack: dir.stack.slice(1) };
        break;
      case "swap":
        if (dir.stack.length) {
          next = { cwd: dir.stack[0], old: dir.cwd, stack: [dir.cwd, ...dir.stack.slice(1)] };
        }
        break;
      case "unknown":
      case "stay":
        break;
    }
    if (next) moves.push({ scope: cmd.scope, dir: next });
  }
}

/** A word with the `$PWD` placeholder replaced by the directory the shell is in. */
function withCwd(w: ShellWord, cwd: string | undefined): ShellWord {
  if (!w.text.includes(PWD_MARK)) return w;
  const dir = (cwd ?? "").replace(/\/+$/, "");
  const out: ShellWord = { ...w, text: w.text.replaceAll(PWD_MARK, dir) };
  if (w.glob) out.glob = w.glob.replaceAll(PWD_MARK, dir.replace(/[*?[\]\\]/g, "\\$&"));
  return out;
}

async function collectCommand(
  c: Collector,
  cmd: SimpleCommand,
  env: Record<string, string | undefined>,
  depth: number,
  cwd: string | undefined,
): Promise<void> {
  const at = (w: ShellWord) => withCwd(w, cwd);
  for (const r of cmd.redirects) {
    if (r.op === "<" || r.op === "<>" || r.op === "<&") {
      const t = at(r.target);
      await c.add(t.text, t.glob ? { glob: t.glob, cwd } : { cwd });
    }
  }
  const words = cmd.words.map(at);
  const { index, name } = commandName(words);
  const args = words.slice(index + 1);
  // `sh -c '...'`, `bash -lc "..."`, `eval ...`: the string is a command line too
  if (SHELLS.has(name) || name === "eval") {
    if (depth > 8) throw new Uncheckable("shells nest too deeply");
    const flag = args.findIndex((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text));
    const script = name === "eval"
      ? args.map((w) => w.text).join(" ")
      : flag >= 0 && args[flag + 1]
      ? args[flag + 1].text
      : null;
    if (script !== null) await collectShell(c, script, env, depth + 1, cwd);
  }
  if (NO_READ_COMMANDS.has(name)) return;
  const searcher = SEARCHERS[name];
  const walk = searcher !== undefined &&
    (!searcher.recursiveFlag || args.some((w) => searcher.recursiveFlag!.test(w.text)));
  const before = c.folders.length + c.targets.length;
  for (const w of args) {
    if (w.glob) {
      await c.add(w.text, { glob: w.glob, walk, hidden: searcher?.hidden, cwd });
      continue;
    }
    for (const candidate of wordCandidates(w.text)) {
      await c.add(candidate, { walk, hidden: searcher?.hidden, cwd });
    }
  }
  // `rg TODO`, `grep -r KEY`: with no folder named, the search reads the working directory
  if (walk && c.folders.length + c.targets.length === before && cwd) {
    await c.add(cwd, { walk: true, hidden: searcher?.hidden });
  }
}

/** Every string leaf of a value. */
function inputStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const v of value) inputStrings(v, out); }
  else if (value && typeof value === "object") {
    for (const v of Object.values(value)) inputStrings(v, out);
  }
  return out;
}

async function collect(c: Collector, input: PreToolUseInput, home: string | undefined) {
  const role = toolRole(input.tool_name);
  const args = input.tool_input && typeof input.tool_input === "object" &&
      !Array.isArray(input.tool_input)
    ? input.tool_input as Record<string, unknown>
    : {};
  const glob = (p: string) => (/[*?[]/.test(p) ? { glob: p } : {});
  switch (role) {
    case "read":
    case "edit":
      for (const p of pathsOf(args)) await c.add(p, { ...glob(p), byName: true });
      return;
    case "search": {
      const paths = pathsOf(args);
      if (!paths.length && input.cwd) paths.push(input.cwd);
      for (const p of paths) await c.add(p, { walk: true, hidden: false, ...glob(p) });
      return;
    }
    case "shell": {
      const command = shellCommandOf(args);
      const env: Record<string, string | undefined> = { HOME: home };
      if (command !== null) await collectShell(c, command, env, 0, input.cwd);
      return;
    }
    case "write":
    case "list":
    case "web":
      return;
    default:
      // MCP and unknown tools: any string that looks like a path and names a file
      for (const s of inputStrings(args)) {
        if (s.length <= 4096 && !/[\n\r\t]/.test(s) && /^(?:[~./]|file:\/\/|[\w.-]+\/)/.test(s)) {
          await c.add(s);
        }
      }
  }
}

// ---------------------------------------------------------------------------------------------
// the decision

interface Hit {
  file?: string;
  findings: Finding[];
  redacted: string;
}

function describeRules(findings: Finding[]): string {
  const names: string[] = [];
  for (const f of findings) {
    const label = f.detail && f.detail !== f.rule && !f.custom ? `${f.rule} (${f.detail})` : f.rule;
    if (!names.includes(label)) names.push(label);
  }
  return names.join(", ");
}

function interceptionOf(
  input: PreToolUseInput,
  options: PreToolUseOptions,
  fields: { action: GuardAction; rules: string[]; file?: string; sample?: string },
): Interception {
  const i: Interception = {
    at: (options.now?.() ?? new Date()).toISOString(),
    tool: input.tool_name,
    rules: fields.rules,
    action: fields.action,
  };
  if (input.session_id) i.session_id = input.session_id;
  if (fields.file) i.file = fields.file;
  if (fields.sample) i.sample = fields.sample;
  return i;
}

function blocked(
  input: PreToolUseInput,
  options: PreToolUseOptions,
  rule: string,
  reason: string,
  files: string[],
  file?: string,
): PreToolUseDecision {
  return {
    decision: "block",
    action: "block",
    reason,
    rules: [rule],
    files,
    interception: interceptionOf(input, options, { action: "block", rules: [rule], file }),
  };
}

/**
 * Decides a tool call (see the module comment). Never throws for what the call holds: a call
 * that cannot be checked in time, or at all, is blocked with a reason saying so.
 */
export async function preToolUseCheck(
  input: PreToolUseInput,
  fs: GuardFs,
  options: PreToolUseOptions = {},
): Promise<PreToolUseDecision> {
  const budget = options.budgetMs ?? DEFAULT_BUDGET_MS;
  const deadline = deadlineIn(budget);
  const tool = input.tool_name;
  const files: string[] = [];
  try {
    return await decide(input, fs, options, deadline, files);
  } catch (e) {
    if (isTimeout(e)) {
      return blocked(
        input,
        options,
        "guard_budget",
        `Chronicle blocked ${tool}: checking it took longer than ${budget} ms, so it was blocked ` +
          "to be safe. Try a narrower command.",
        files,
      );
    }
    if (e instanceof Uncheckable) {
      return blocked(
        input,
        options,
        "guard_uncheckable",
        `Chronicle blocked ${tool}: ${e.message}, so it was blocked to be safe.`,
        files,
      );
    }
    throw e;
  }
}

async function decide(
  input: PreToolUseInput,
  fs: GuardFs,
  options: PreToolUseOptions,
  deadline: Deadline,
  files: string[],
): Promise<PreToolUseDecision> {
  const tool = input.tool_name;
  const rules = options.rules;
  const c = new Collector(fs, input.cwd, options.home, deadline);
  await collect(c, input, options.home);
  const targets = [...c.targets, ...(c.folders.length ? await c.walkFolders() : [])];

  // by name: a sensitive file blocks whatever it holds
  for (const t of targets) {
    const verdict = pathVerdict(t.path === t.real ? [t.path] : [t.path, t.real], rules);
    if (verdict?.action === "block") {
      const shown = t.path === t.real ? t.path : `${t.path} (${t.real})`;
      return blocked(
        input,
        options,
        "sensitive_path",
        `Chronicle blocked ${tool}: it would read ${shown}, ${verdict.name}, which tools may ` +
          "never read. If it holds no secret, add an allow path rule in Chronicle.",
        files,
        t.path,
      );
    }
  }

  // by content
  const hits: Hit[] = [];
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  for (const t of targets) {
    if (t.kind !== "file") continue; // FIFOs, devices, sockets: never opened
    if (LOCKFILE_RE.test(t.path) && LOCKFILE_RE.test(t.real)) continue;
    const bytes = await fs.readFile(t.real, { maxBytes, tailBytes: TAIL_BYTES, deadline });
    if (!bytes) continue;
    files.push(t.path);
    const text = decodeForScan(bytes);
    const auth = authConfigPattern(t.real) ?? authConfigPattern(t.path);
    if (auth?.test(text)) {
      return blocked(
        input,
        options,
        "sensitive_path",
        `Chronicle blocked ${tool}: ${t.path} holds registry credentials, which tools may never read.`,
        files,
        t.path,
      );
    }
    const r = scanText(text, { rules, deadline });
    if (r.findings.length) hits.push({ file: t.path, ...r });
  }
  for (const s of inputStrings(input.tool_input)) {
    const r = scanText(s, { rules, deadline });
    if (r.findings.length) hits.push(r);
  }

  const all = hits.flatMap((h) => h.findings.map((f) => ({ hit: h, f })));
  const high = all.filter(({ f }) => f.severity === "high");
  const action: GuardAction = high.length ? "block" : all.length ? "flag" : "allow";
  const ordered = [...high, ...all.filter(({ f }) => f.severity !== "high")];
  const ruleNames = [...new Set(ordered.map(({ f }) => f.rule))];
  const first = ordered[0];

  let reason: string | undefined;
  if (first) {
    const relevant = ordered.filter(({ f }) => f.severity === first.f.severity);
    const inFiles = [...new Set(relevant.flatMap(({ hit }) => (hit.file ? [hit.file] : [])))];
    const inInput = relevant.some(({ hit }) => !hit.file);
    const where = [
      ...inFiles,
      ...(inInput ? [inFiles.length ? "its input" : "the tool input"] : []),
    ]
      .join(" and ");
    const what = describeRules(relevant.map(({ f }) => f));
    reason = action === "block"
      ? `Chronicle blocked ${tool}: ${where} contains a secret (${what}). ` +
        "The value was not shown. If this is a false positive, add an allow rule in Chronicle."
      : `Chronicle flagged ${tool}: ${where} contains personal data (${what}).`;
  }
  const decision: PreToolUseDecision = {
    decision: action === "block" ? "block" : "allow",
    action,
    rules: ruleNames,
    files,
    interception: interceptionOf(input, options, {
      action,
      rules: ruleNames,
      file: first?.hit.file ?? files[0],
      sample: first ? maskedSample(first.hit.redacted, first.f) : undefined,
    }),
  };
  if (reason) decision.reason = reason;
  return decision;
}
