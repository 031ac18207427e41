/**
 * What a shell command line reads, searches, lists and changes, as far as its words tell:
 * `cat`/`sed -n`/`head` read, `grep`/`rg`/`find -name` search, `ls`/`tree` list, and `rm`,
 * `mv`, `cp`, `touch`, `sed -i`, `tee` and `>` redirections change files. A command whose
 * effect the words do not show (a script, a build) claims nothing: never a guess.
 */
import { parseShell, type ShellWord } from "../security/mod.ts";
import { normalizePath } from "./paths.ts";

export type ShellRole = "read" | "search" | "list" | "change";

/** One thing a command does to files, with normalised paths. */
export interface ShellEffect {
  role: ShellRole;
  /** Files read or changed; for searches and listings, the folders or files they scope. */
  paths: string[];
  /** Search pattern (grep, rg, find -name, ...). */
  pattern?: string;
  /** For changes: what happens to the files. */
  change?: "write" | "edit" | "delete";
  /** For a write whose whole new content the command line holds (`cat > f <<'EOF'`). */
  content?: string;
  /** For a write by `mv` or `cp` of one file: the file whose text it takes. */
  from?: string;
  /** The program that did it (`grep`, `sed`, ...). */
  program: string;
}

interface Redirect {
  op: ">" | ">>" | "<";
  target: string;
}

interface SimpleCommand {
  argv: string[];
  redirects: Redirect[];
  /** The body of a here-document fed to this command, and whether it is taken literally. */
  heredoc?: { body: string; literal: boolean };
}

/** Longest command line read; the rest of a longer one is ignored. */
const MAX_COMMAND = 64 * 1024;

/** A word whose text the line does not fix (`$1`, `$(...)`): never a file name. */
const UNKNOWN = "\u0000";

const REDIRECTS: Record<string, Redirect["op"]> = {
  "<": "<",
  ">": ">",
  ">|": ">",
  "&>": ">",
  ">>": ">>",
  "&>>": ">>",
};

/**
 * The simple commands of a command line, in order, from the shell lexer the guard uses
 * (core/security/shell_words.ts): substitutions and subshells flattened, quotes removed,
 * variables unknown.
 */
export function splitCommands(line: string): SimpleCommand[] {
  return parseShell(line.length > MAX_COMMAND ? line.slice(0, MAX_COMMAND) : line).commands.map(
    (c) => {
      const word = (w: ShellWord) => (w.unresolved ? UNKNOWN : w.text);
      const redirects: Redirect[] = [];
      for (const r of c.redirects) {
        const op = REDIRECTS[r.op];
        if (op) redirects.push({ op, target: word(r.target) });
      }
      return {
        argv: c.words.map(word),
        redirects,
        ...(c.heredoc ? { heredoc: { body: c.heredoc.body, literal: !c.heredoc.expand } } : {}),
      };
    },
  );
}

/** Programs that run the rest of their words as a command. */
const WRAPPERS = new Set([
  "sudo",
  "env",
  "time",
  "nice",
  "nohup",
  "command",
  "exec",
  "builtin",
  "stdbuf",
  "timeout",
  "xargs",
]);

const READERS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "nl",
  "bat",
  "batcat",
  "tac",
  "sed",
  "awk",
  "gawk",
  "jq",
  "xxd",
  "od",
  "hexdump",
  "strings",
  "diff",
  "cmp",
  "get-content",
  "gc",
  "type",
]);
const SEARCHERS = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "select-string", "fd"]);
const LISTERS = new Set(["ls", "tree", "dir", "exa", "eza", "get-childitem", "gci"]);

/** Options that take a value, per program (so the value is not read as a path). */
const VALUE_OPTIONS: Record<string, Set<string>> = {
  head: new Set(["-n", "-c"]),
  tail: new Set(["-n", "-c", "--pid", "-s"]),
  grep: new Set(["-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--color", "--context"]),
  rg: new Set([
    "-e",
    "-f",
    "-g",
    "-t",
    "-T",
    "-m",
    "-A",
    "-B",
    "-C",
    "-j",
    "-M",
    "--type",
    "--glob",
    "--max-count",
    "--type-not",
    "--iglob",
    "-r",
    "--replace",
  ]),
  ag: new Set(["-G", "-m", "-A", "-B", "-C", "--ignore"]),
  sed: new Set(["-e", "-f", "-l"]),
  awk: new Set(["-F", "-f", "-v"]),
  jq: new Set(["--arg", "--argjson", "-f", "--indent"]),
  ls: new Set(["-I", "--ignore", "-w", "-T"]),
  tree: new Set(["-L", "-I", "-P", "--filelimit"]),
  diff: new Set(["-U", "-C", "-x", "-X"]),
  xxd: new Set(["-l", "-s", "-c", "-g"]),
  nl: new Set(["-b", "-s", "-w", "-v", "-i"]),
  tee: new Set([]),
  cp: new Set(["-t", "--target-directory", "-S"]),
  mv: new Set(["-t", "--target-directory", "-S"]),
  truncate: new Set(["-s", "-r"]),
  touch: new Set(["-d", "-t", "-r"]),
  fd: new Set(["-e", "-t", "-d", "-E", "--extension", "--type", "--max-depth", "--exclude"]),
};

function operands(program: string, args: string[]): { positional: string[]; options: string[] } {
  const takes = VALUE_OPTIONS[program] ?? new Set<string>();
  const positional: string[] = [];
  const options: string[] = [];
  let onlyPositional = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (onlyPositional || a === "-" || !a.startsWith("-")) {
      positional.push(a);
      continue;
    }
    if (a === "--") {
      onlyPositional = true;
      continue;
    }
    options.push(a);
    if (takes.has(a) && i + 1 < args.length) options.push(args[++i]);
  }
  return { positional, options };
}

function isFileWord(w: string): boolean {
  return w !== "" && w !== "-" && !w.includes(UNKNOWN) && !/^\/dev\//.test(w) &&
    !/^[a-z]+:\/\//i.test(w);
}

/** The value of `-e PAT` / `--regexp=PAT` / `--name PAT` style options. */
function optionValue(args: string[], names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    for (const n of names) {
      if (a === n && i + 1 < args.length) return args[i + 1];
      if (n.startsWith("--") && a.startsWith(n + "=")) return a.slice(n.length + 1);
    }
  }
  return undefined;
}

function effectsOf(cmd: SimpleCommand, cwd: string, depth: number): ShellEffect[] {
  let argv = cmd.argv;
  // Leading assignments and wrappers (`FOO=1 sudo -E grep ...`).
  while (argv.length) {
    const head = argv[0];
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(head)) argv = argv.slice(1);
    else if (WRAPPERS.has(head)) {
      argv = argv.slice(1);
      while (argv.length && (argv[0].startsWith("-") || /^\d+[smhd]?$/.test(argv[0]))) {
        argv = argv.slice(1);
      }
    } else break;
  }
  const out: ShellEffect[] = [];
  const resolve = (p: string) => normalizePath(p, cwd);
  const files = (ws: string[]) => ws.filter(isFileWord).map(resolve);
  for (const r of cmd.redirects) {
    if (!isFileWord(r.target)) continue;
    if (r.op === "<") out.push({ role: "read", paths: [resolve(r.target)], program: "<" });
  }
  if (!argv.length) {
    addRedirectChanges(cmd, out, resolve, undefined);
    return out;
  }
  const program = argv[0].replace(/^.*\//, "").toLowerCase();
  let args = argv.slice(1);
  const op = operands(program, args);

  if ((program === "bash" || program === "sh" || program === "zsh") && depth < 3) {
    const c = optionValue(args, ["-c", "-lc", "-ic"]);
    if (c !== undefined) return [...out, ...shellEffects(c, cwd, { depth: depth + 1 })];
  }
  if (program === "git") {
    // `git -C dir sub ...`
    let gitCwd = cwd;
    while (args.length && args[0].startsWith("-")) {
      if (args[0] === "-C" && args[1]) {
        gitCwd = normalizePath(args[1], cwd);
        args = args.slice(2);
      } else if (args[0] === "-c") args = args.slice(2);
      else args = args.slice(1);
    }
    const sub = args[0];
    const rest = operands("git", args.slice(1)).positional;
    const gitFiles = (ws: string[]) => ws.filter(isFileWord).map((w) => normalizePath(w, gitCwd));
    if (sub === "grep") {
      const pattern = optionValue(args, ["-e"]) ?? rest[0];
      const scope = optionValue(args, ["-e"]) !== undefined ? rest : rest.slice(1);
      out.push({
        role: "search",
        paths: scope.length ? gitFiles(scope) : [gitCwd],
        pattern,
        program: "git grep",
      });
    } else if (sub === "ls-files") {
      out.push({
        role: "list",
        paths: rest.length ? gitFiles(rest) : [gitCwd],
        program: "git ls-files",
      });
    } else if (sub === "rm") {
      out.push({ role: "change", change: "delete", paths: gitFiles(rest), program: "git rm" });
    } else if (sub === "mv") {
      out.push(...transfer("git mv", gitFiles(rest), false));
    } else if ((sub === "checkout" || sub === "restore") && args.includes("--")) {
      const after = args.slice(args.indexOf("--") + 1);
      out.push({ role: "change", change: "edit", paths: gitFiles(after), program: `git ${sub}` });
    } else if (sub === "restore" && rest.length) {
      out.push({ role: "change", change: "edit", paths: gitFiles(rest), program: "git restore" });
    }
    addRedirectChanges(cmd, out, resolve, undefined);
    return out;
  }

  if (READERS.has(program)) {
    let pos = op.positional;
    if (program === "sed") {
      const inPlace = op.options.some((o) => /^-[a-zA-Z]*i/.test(o) || o.startsWith("--in-place"));
      const script = optionValue(args, ["-e", "--expression"]) !== undefined ||
        optionValue(args, ["-f", "--file"]) !== undefined;
      // BSD sed takes the backup suffix as its own (often empty) word: `sed -i '' ...`.
      if (inPlace && pos[0] === "") pos = pos.slice(1);
      pos = script ? pos : pos.slice(1);
      if (inPlace) {
        if (pos.length) {
          out.push({ role: "change", change: "edit", paths: files(pos), program });
        }
        addRedirectChanges(cmd, out, resolve, undefined);
        return out;
      }
    } else if (program === "awk" || program === "gawk") {
      pos = optionValue(args, ["-f"]) !== undefined ? pos : pos.slice(1);
      pos = pos.filter((p) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(p));
    } else if (program === "jq") {
      pos = optionValue(args, ["-f"]) !== undefined ? pos : pos.slice(1);
    }
    const paths = files(pos);
    if (paths.length) out.push({ role: "read", paths, program });
    addRedirectChanges(cmd, out, resolve, program === "cat" && !paths.length ? cmd : undefined);
    return out;
  }

  if (SEARCHERS.has(program)) {
    const explicit = optionValue(args, ["-e", "--regexp", "-Pattern"]);
    const rest = explicit !== undefined ? op.positional : op.positional.slice(1);
    const pattern = explicit ?? op.positional[0];
    const paths = program === "fd" ? files(rest.slice(0, 1)) : files(rest);
    out.push({
      role: "search",
      paths: paths.length ? paths : [normalizePath(cwd)],
      pattern,
      program,
    });
    addRedirectChanges(cmd, out, resolve, undefined);
    return out;
  }

  if (program === "find") {
    const roots: string[] = [];
    let k = 0;
    while (k < args.length && !/^[-(!]/.test(args[k])) roots.push(args[k++]);
    const pattern = optionValue(args, ["-name", "-iname", "-path", "-ipath", "-regex"]);
    const deletes = args.includes("-delete");
    const scope = roots.length ? files(roots) : [normalizePath(cwd)];
    out.push({ role: pattern !== undefined ? "search" : "list", paths: scope, pattern, program });
    if (deletes && pattern !== undefined) {
      // The files are not named; the pattern is kept as the change's path.
      out.push({
        role: "change",
        change: "delete",
        paths: scope.map((s) => `${s}/**/${pattern}`),
        program,
      });
    }
    addRedirectChanges(cmd, out, resolve, undefined);
    return out;
  }

  if (LISTERS.has(program)) {
    const paths = files(op.positional);
    out.push({ role: "list", paths: paths.length ? paths : [normalizePath(cwd)], program });
    addRedirectChanges(cmd, out, resolve, undefined);
    return out;
  }

  switch (program) {
    case "rm":
    case "unlink":
    case "remove-item":
    case "del":
      if (op.positional.length) {
        out.push({ role: "change", change: "delete", paths: files(op.positional), program });
      }
      break;
    case "mv":
    case "move-item":
    case "cp":
    case "copy-item":
      out.push(...transfer(program, files(op.positional), program.startsWith("c")));
      break;
    case "touch":
    case "truncate":
      if (op.positional.length) {
        out.push({
          role: "change",
          change: program === "touch" ? "write" : "edit",
          paths: files(op.positional),
          program,
        });
      }
      break;
    case "tee":
      if (op.positional.length) {
        const append = op.options.some((o) => o === "-a" || o === "--append");
        const literal = cmd.heredoc?.literal || (cmd.heredoc && !/[$`\\]/.test(cmd.heredoc.body));
        out.push({
          role: "change",
          change: append ? "edit" : "write",
          paths: files(op.positional),
          program,
          ...(cmd.heredoc && literal && !append ? { content: cmd.heredoc.body } : {}),
        });
      }
      break;
    case "perl":
      if (op.options.some((o) => /^-[a-zA-Z]*i/.test(o))) {
        const e = optionValue(args, ["-e", "-pe", "-ne", "-pie"]);
        const pos = e !== undefined ? op.positional.filter((p) => p !== e) : op.positional.slice(1);
        if (pos.length) out.push({ role: "change", change: "edit", paths: files(pos), program });
      }
      break;
  }
  addRedirectChanges(cmd, out, resolve, program === "echo" ? cmd : undefined);
  return out;
}

/** `mv a b` deletes `a` and writes `b`; `cp a b` reads `a` and writes `b`. */
function transfer(program: string, paths: string[], copy: boolean): ShellEffect[] {
  if (paths.length < 2) return [];
  const from = paths.slice(0, -1);
  return [
    copy
      ? { role: "read", paths: from, program }
      : { role: "change", change: "delete", paths: from, program },
    {
      role: "change",
      change: "write",
      paths: paths.slice(-1),
      program,
      ...(from.length === 1 ? { from: from[0] } : {}),
    },
  ];
}

/** `> f` writes and `>> f` appends; `cat > f <<'EOF'` and `echo x > f` say what is written. */
function addRedirectChanges(
  cmd: SimpleCommand,
  out: ShellEffect[],
  resolve: (p: string) => string,
  contentOf: SimpleCommand | undefined,
): void {
  for (const r of cmd.redirects) {
    if (r.op === "<" || !isFileWord(r.target)) continue;
    const effect: ShellEffect = {
      role: "change",
      change: r.op === ">" ? "write" : "edit",
      paths: [resolve(r.target)],
      program: cmd.argv[0] ?? r.op,
    };
    if (r.op === ">" && contentOf) {
      const content = knownContent(contentOf);
      if (content !== undefined) effect.content = content;
    }
    out.push(effect);
  }
}

function knownContent(cmd: SimpleCommand): string | undefined {
  const program = cmd.argv[0];
  if (program === "cat" && cmd.argv.length === 1 && cmd.heredoc) {
    const { body, literal } = cmd.heredoc;
    return literal || !/[$`\\]/.test(body) ? body : undefined;
  }
  if (program === "echo" && cmd.argv.length >= 1 && !cmd.argv[1]?.startsWith("-")) {
    const words = cmd.argv.slice(1);
    if (words.some((w) => /[$`*?[]/.test(w))) return undefined;
    return words.join(" ") + "\n";
  }
  return undefined;
}

/** Options of {@link shellEffects}. */
export interface ShellOptions {
  /** How deep `bash -c '...'` is followed (internal). */
  depth?: number;
}

/**
 * The effects of a command line run in `cwd`, in order. `cd DIR &&` moves the folder the
 * later commands of the line resolve their paths against.
 */
export function shellEffects(line: string, cwd: string, options: ShellOptions = {}): ShellEffect[] {
  const out: ShellEffect[] = [];
  let dir = normalizePath(cwd);
  for (const cmd of splitCommands(line)) {
    if (cmd.argv[0] === "cd" || cmd.argv[0] === "pushd") {
      const to = cmd.argv[1];
      if (to && to !== "-" && !to.includes(UNKNOWN)) dir = normalizePath(to, dir);
      continue;
    }
    out.push(...effectsOf(cmd, dir, options.depth ?? 0));
  }
  return out.filter((e) => e.paths.length > 0 || e.role === "search");
}
