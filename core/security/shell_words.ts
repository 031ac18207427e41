/**
 * A small shell lexer for the guard: what a command line would read, as a POSIX shell (bash)
 * splits it. It gives the words of every simple command after quote removal (`'.e'"nv"` is
 * `.env`), with `~`, `$HOME`, `${PWD}` ... expanded from the environment it is given, the
 * targets of redirections (`cat<.env`), and the commands inside command and process
 * substitutions (`$(cat .env)`, `` `cat .env` ``, `<(cat .env)`), subshells and here-documents,
 * all flattened into one list, in the order they run. Each command says which subshells
 * enclose it (`scope`) and whether it is part of a pipeline (`piped`: bash runs each part in a
 * subshell of its own), so a caller can follow `cd` as far as it reaches (`dirChange`). Words
 * that still hold an unquoted `*`, `?` or `[` carry a glob pattern for the caller to expand. It
 * never runs anything.
 *
 * Not a full shell: no aliases, functions, arithmetic or `case` patterns. The guard treats
 * every word as a possible file name, so what the lexer cannot understand still gets checked.
 */

export interface ShellWord {
  /** The word after quote removal and expansion. */
  text: string;
  /** Set when unquoted glob characters remain: the text with quoted ones escaped by `\`. */
  glob?: string;
  /** Set when part of the word could not be known (`$1`, `$(...)`, an unknown variable). */
  unresolved?: boolean;
}

export interface ShellRedirect {
  /** `<`, `<<<`, `>`, `>>`, `<>`, `&>` ... */
  op: string;
  target: ShellWord;
}

export interface SimpleCommand {
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** The body of a here-document fed to it, and whether the shell expands it (unquoted delimiter). */
  heredoc?: { body: string; expand: boolean };
  /**
   * The subshells around it, outermost first (`( )`, `$( )`, backquotes, `<( )`), each by a
   * number unique in the parse: a `cd` reaches the later commands whose scope starts with its own.
   */
  scope: number[];
  /** Part of a pipeline `a | b`: it runs in a subshell, so its `cd` reaches nothing after it. */
  piped?: boolean;
}

/** What `cd`, `pushd` or `popd` does to the working directory (see `dirChange`). */
export type DirChange =
  /** Goes to `to` (relative to the current directory), `push`ing the current one for pushd. */
  | { go: "to"; to: string; push: boolean }
  /** `cd` alone: home. `cd -`: the previous directory. */
  | { go: "home" | "previous" }
  /** `popd`: the directory on top of the stack; `pushd` alone: swaps with it. */
  | { go: "pop" | "swap" }
  /** Somewhere the words do not say (`cd "$X"`, `pushd +2`). */
  | { go: "unknown" }
  /** Nothing changes (`popd -n`, `cd --help`). */
  | { go: "stay" };

/** What `name args...` does to the working directory; null when it is not cd, pushd or popd. */
export function dirChange(name: string, args: readonly ShellWord[]): DirChange | null {
  if (name !== "cd" && name !== "pushd" && name !== "popd" && name !== "chdir") return null;
  let i = 0;
  let noChange = false;
  while (i < args.length && /^-[LPe@n]+$/.test(args[i].text)) {
    if (args[i].text.includes("n")) noChange = true;
    i++;
  }
  if (args[i]?.text === "--") i++;
  const arg = args[i];
  if (name === "popd") {
    if (noChange) return { go: "stay" };
    return arg ? { go: "unknown" } : { go: "pop" };
  }
  if (noChange) return { go: "stay" };
  if (!arg) return name === "pushd" ? { go: "swap" } : { go: "home" };
  if (arg.unresolved || arg.glob !== undefined) return { go: "unknown" };
  if (arg.text === "-" && name !== "pushd") return { go: "previous" };
  if (name === "pushd" && /^[+-]\d+$/.test(arg.text)) return { go: "unknown" };
  if (arg.text.startsWith("-") && arg.text !== "-") return { go: "stay" };
  return { go: "to", to: arg.text, push: name === "pushd" };
}

export interface ShellParse {
  commands: SimpleCommand[];
  /** Set when the input nests deeper than `maxDepth` or is longer than `maxLength`. */
  incomplete?: string;
}

export interface ShellOptions {
  /** Variables to expand (`HOME`, `PWD` ...); any other variable is unresolved. */
  env?: Readonly<Record<string, string | undefined>>;
  /** How deep substitutions may nest. Default 16. */
  maxDepth?: number;
  /** Longest input lexed. Default 1 MiB of characters. */
  maxLength?: number;
}

const GLOB_CHARS = new Set(["*", "?", "["]);
const BREAKS = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);

class Lexer {
  readonly commands: SimpleCommand[] = [];
  incomplete?: string;
  private cmd: SimpleCommand;
  /** The subshells open at this point, outermost first. */
  private scope: number[];
  private nextScope = { n: 0 };
  private text = "";
  private glob = "";
  private hasGlob = false;
  private unresolved = false;
  private started = false;
  private redirect: string | null = null;
  private heredocs: { delim: string; expand: boolean; strip: boolean; cmd: SimpleCommand }[] = [];
  pos = 0;

  constructor(
    private readonly src: string,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly depth: number,
    private readonly maxDepth: number,
    private readonly sink: Lexer | null,
    scope: number[] = [],
  ) {
    this.scope = scope;
    this.cmd = { words: [], redirects: [], scope };
    if (sink) this.nextScope = sink.nextScope;
  }

  private newScope(): number {
    return ++this.root.nextScope.n;
  }

  /** Where nested commands go: the outermost lexer's list. */
  private get root(): Lexer {
    return this.sink ?? this;
  }

  private append(s: string, quoted: boolean): void {
    this.started = true;
    this.text += s;
    this.glob += quoted ? s.replace(/[*?[\]\\]/g, "\\$&") : s;
  }

  private endWord(): void {
    if (!this.started) return;
    const word: ShellWord = { text: this.text };
    if (this.hasGlob) word.glob = this.glob;
    if (this.unresolved) word.unresolved = true;
    if (this.redirect !== null) {
      const op = this.redirect;
      this.redirect = null;
      if (op === "<<" || op === "<<-") {
        this.heredocs.push({
          delim: word.text,
          expand: !this.quotedDelim,
          strip: op === "<<-",
          cmd: this.cmd,
        });
      } else this.cmd.redirects.push({ op, target: word });
    } else this.cmd.words.push(word);
    this.text = this.glob = "";
    this.hasGlob = this.unresolved = this.started = false;
    this.quotedDelim = false;
  }
  private quotedDelim = false;

  /** Ends the command being read; an empty one stays the one being read (and keeps `piped`). */
  private endCommand(): void {
    this.endWord();
    if (!this.cmd.words.length && !this.cmd.redirects.length) return;
    this.cmd.scope = [...this.scope];
    this.root.commands.push(this.cmd);
    this.cmd = { words: [], redirects: [], scope: this.scope };
  }

  /** Lexes a nested source (a substitution, a `sh -c` string) into the same list. */
  private nested(src: string, untilParen: boolean): number {
    if (this.depth + 1 > this.maxDepth) {
      this.root.incomplete = "commands nest too deeply";
      return untilParen ? src.length : src.length;
    }
    const inner = new Lexer(src, this.env, this.depth + 1, this.maxDepth, this.root, [
      ...this.scope,
      this.newScope(),
    ]);
    inner.run(untilParen);
    return inner.pos;
  }

  /** Lexes `$(...)` starting right after the `(`; returns the index after the `)`. */
  private substitution(from: number): number {
    const sub = this.src.slice(from);
    const used = this.nested(sub, true);
    this.unresolved = true;
    this.started = true;
    return from + used + 1;
  }

  private variable(name: string, fallback?: string): void {
    const value = this.env[name];
    if (value !== undefined) this.append(value, true);
    else if (fallback !== undefined) this.append(fallback, true);
    else {
      this.unresolved = true;
      this.started = true;
    }
  }

  /** At a `$` (outside single quotes): reads the expansion; returns the index after it. */
  private dollar(i: number, inDouble: boolean): number {
    const s = this.src;
    const next = s[i + 1];
    if (next === "(") {
      if (s[i + 2] === "(") {
        const close = s.indexOf("))", i + 3);
        this.unresolved = this.started = true;
        return close < 0 ? s.length : close + 2;
      }
      return this.substitution(i + 2);
    }
    if (next === "{") {
      const close = s.indexOf("}", i + 2);
      const body = s.slice(i + 2, close < 0 ? s.length : close);
      const m = /^#?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?::?([-=?+])(.*))?$/s.exec(body);
      if (!m || body.startsWith("#")) {
        this.unresolved = this.started = true;
      } else if (m[2] === "-" || m[2] === "=") this.variable(m[1], m[3]);
      else if (m[2] === "+") {
        if (this.env[m[1]] !== undefined) this.append(m[3], true);
        else this.unresolved = this.started = true;
      } else this.variable(m[1]);
      return close < 0 ? s.length : close + 1;
    }
    if (next === "'" && !inDouble) {
      let j = i + 2;
      let out = "";
      for (; j < s.length && s[j] !== "'"; j++) {
        if (s[j] === "\\" && j + 1 < s.length) {
          const e = s[++j];
          const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'" };
          if (map[e] !== undefined) out += map[e];
          else if (e === "x") {
            const hex = /^[0-9a-fA-F]{1,2}/.exec(s.slice(j + 1))?.[0] ?? "";
            out += hex ? String.fromCharCode(parseInt(hex, 16)) : "\\x";
            j += hex.length;
          } else out += "\\" + e;
        } else out += s[j];
      }
      this.append(out, true);
      return j + 1;
    }
    const m = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(s.slice(i + 1, i + 64));
    if (!m) {
      this.append("$", inDouble);
      return i + 1;
    }
    if (/^[A-Za-z_]/.test(m[0])) this.variable(m[0]);
    else this.unresolved = this.started = true;
    return i + 1 + m[0].length;
  }

  /** At a backquote: the command up to the closing one; returns the index after it. */
  private backquote(i: number): number {
    const s = this.src;
    let j = i + 1;
    let inner = "";
    for (; j < s.length && s[j] !== "`"; j++) {
      if (s[j] === "\\" && (s[j + 1] === "`" || s[j + 1] === "\\" || s[j + 1] === "$")) j++;
      inner += s[j];
    }
    this.nested(inner, false);
    this.unresolved = this.started = true;
    return j + 1;
  }

  private doubleQuoted(i: number): number {
    const s = this.src;
    this.started = true;
    let j = i + 1;
    while (j < s.length && s[j] !== '"') {
      const c = s[j];
      if (c === "\\" && j + 1 < s.length) {
        const e = s[j + 1];
        if (e === "\n") j += 2;
        else if (e === "$" || e === "`" || e === '"' || e === "\\") {
          this.append(e, true);
          j += 2;
        } else {
          this.append("\\", true);
          j++;
        }
      } else if (c === "$") j = this.dollar(j, true);
      else if (c === "`") j = this.backquote(j);
      else {
        this.append(c, true);
        j++;
      }
    }
    return j + 1;
  }

  /** Here-document bodies after a line break: skipped, their substitutions lexed. */
  private heredocBodies(i: number): number {
    const s = this.src;
    for (const doc of this.heredocs) {
      const body: string[] = [];
      for (;;) {
        if (i >= s.length) break;
        const nl = s.indexOf("\n", i);
        const line = s.slice(i, nl < 0 ? s.length : nl);
        i = nl < 0 ? s.length : nl + 1;
        const text = doc.strip ? line.replace(/^\t+/, "") : line;
        if (text === doc.delim) break;
        body.push(text);
        if (doc.expand) this.bodyLine(line);
      }
      doc.cmd.heredoc = { body: body.length ? body.join("\n") + "\n" : "", expand: doc.expand };
    }
    this.heredocs = [];
    return i;
  }

  private bodyLine(line: string): void {
    for (let k = line.indexOf("$("); k >= 0; k = line.indexOf("$(", k + 2)) {
      this.nested(line.slice(k + 2), true);
    }
    const ticks = line.split("`");
    for (let k = 1; k + 1 < ticks.length; k += 2) this.nested(ticks[k], false);
  }

  /** Lexes until the end (or, `untilParen`, an unmatched `)`); `pos` is where it stopped. */
  run(untilParen: boolean): void {
    const s = this.src;
    let i = 0;
    let parens = 0;
    const opened: number[][] = [];
    while (i < s.length) {
      const c = s[i];
      if (c === "#" && !this.started) {
        const nl = s.indexOf("\n", i);
        i = nl < 0 ? s.length : nl;
        continue;
      }
      if (c === " " || c === "\t" || c === "\r") {
        this.endWord();
        i++;
      } else if (c === "\n") {
        this.endCommand();
        i = this.heredocs.length ? this.heredocBodies(i + 1) : i + 1;
      } else if (c === ";" || c === "|") {
        const pipe = c === "|" && s[i + 1] !== "|";
        if (pipe) this.cmd.piped = true;
        this.endCommand();
        if (pipe) this.cmd.piped = true;
        else delete this.cmd.piped;
        i += s[i + 1] === c || (c === "|" && s[i + 1] === "&") ? 2 : 1;
      } else if (c === "&") {
        if (s[i + 1] === ">") {
          this.endWord();
          const op = s[i + 2] === ">" ? "&>>" : "&>";
          this.redirect = op;
          i += op.length;
        } else {
          // `a &` runs in the background, a subshell of its own: mark it as piped
          if (s[i + 1] !== "&") this.cmd.piped = true;
          this.endCommand();
          delete this.cmd.piped;
          i += s[i + 1] === "&" ? 2 : 1;
        }
      } else if (c === "(") {
        this.endCommand();
        parens++;
        opened.push(this.scope);
        this.scope = [...this.scope, this.newScope()];
        this.cmd = { words: [], redirects: [], scope: this.scope };
        i++;
      } else if (c === ")") {
        this.endCommand();
        if (parens === 0 && untilParen) {
          this.pos = i;
          return;
        }
        parens = Math.max(0, parens - 1);
        this.scope = opened.pop() ?? this.scope;
        this.cmd = { words: [], redirects: [], scope: this.scope };
        i++;
      } else if (c === "<" || c === ">") {
        // a file descriptor number glued to the operator: 2>, 0<
        if (this.started && /^\d+$/.test(this.text) && !this.hasGlob) {
          this.text = this.glob = "";
          this.started = false;
        } else this.endWord();
        const rest = s.slice(i, i + 3);
        if (rest[1] === "(") {
          i = this.substitution(i + 2);
          this.endWord();
          continue;
        }
        const op = /^(?:<<<|<<-|<<|<>|<&|>>|>&|>\||<|>)/.exec(rest)![0];
        this.redirect = op;
        i += op.length;
        if (op === "<<" || op === "<<-") {
          while (s[i] === " " || s[i] === "\t") i++;
          this.quotedDelim = s[i] === "'" || s[i] === '"' || s[i] === "\\";
        }
      } else if (c === "\\") {
        if (s[i + 1] === "\n") i += 2;
        else {
          if (i + 1 < s.length) this.append(s[i + 1], true);
          i += 2;
        }
      } else if (c === "'") {
        const close = s.indexOf("'", i + 1);
        this.append(s.slice(i + 1, close < 0 ? s.length : close), true);
        i = close < 0 ? s.length : close + 1;
      } else if (c === '"') {
        i = this.doubleQuoted(i);
      } else if (c === "$") {
        i = this.dollar(i, false);
      } else if (c === "`") {
        i = this.backquote(i);
      } else if (c === "~" && !this.started) {
        const m = /^~([A-Za-z0-9_.-]*)(?=\/|$|[\s;&|()<>])/.exec(s.slice(i, i + 64));
        if (m && m[1] === "" && this.env.HOME !== undefined) {
          this.append(this.env.HOME, true);
          i++;
        } else if (m && m[1] === "+" && this.env.PWD !== undefined) {
          this.append(this.env.PWD, true);
          i += 2;
        } else {
          this.append("~", false);
          i++;
        }
      } else {
        if (GLOB_CHARS.has(c)) this.hasGlob = true;
        let j = i + 1;
        while (j < s.length && !BREAKS.has(s[j]) && !"\\'\"$`#~*?[".includes(s[j])) j++;
        this.append(s.slice(i, j), false);
        i = j;
      }
    }
    this.endCommand();
    this.pos = s.length;
  }
}

/** Lexes a command line into simple commands (substitutions and subshells flattened). */
export function parseShell(command: string, options: ShellOptions = {}): ShellParse {
  const maxLength = options.maxLength ?? 1 << 20;
  const lexer = new Lexer(
    command.length > maxLength ? command.slice(0, maxLength) : command,
    options.env ?? {},
    0,
    options.maxDepth ?? 16,
    null,
  );
  lexer.run(false);
  const out: ShellParse = { commands: lexer.commands };
  if (command.length > maxLength) out.incomplete = "the command is too long to check";
  else if (lexer.incomplete) out.incomplete = lexer.incomplete;
  return out;
}
