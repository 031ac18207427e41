/**
 * `chronicle completion bash|zsh|fish`: a completion script for the user's shell, made from the
 * command table and each command's own `--help` (so a new option completes without a change
 * here). Install: `chronicle completion bash > ~/.local/share/bash-completion/completions/chronicle`.
 */
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";
import { SOURCE_IDS } from "../core/model/agents.ts";

export const COMPLETION_HELP = `Usage: chronicle completion bash|zsh|fish

Prints a shell completion script for chronicle's commands, their sub-commands (share create,
exclude add, ...) and options (and the agent ids after --source). Load it from your shell's start-up file, or save it where your shell looks:

  bash  chronicle completion bash > ~/.local/share/bash-completion/completions/chronicle
  zsh   chronicle completion zsh > "\${fpath[1]}/_chronicle"   (then: autoload -U compinit; compinit)
  fish  chronicle completion fish > ~/.config/fish/completions/chronicle.fish
`;

/** A command's options and sub-commands (`share create`, `exclude add`), from its usage. */
interface Words {
  opts: string[];
  subs: string[];
}

/** The lines of a help text that name its own options: usage, option and sub-command lines. */
function usageAndOptions(text: string): string {
  const lines = text.split("\n");
  const usage: string[] = [];
  for (const line of lines) {
    if (usage.length && !/^\s+(chronicle|\S*\[)/.test(line)) break;
    if (usage.length || line.startsWith("Usage:")) usage.push(line);
  }
  // option lines (`  --json ...`) and sub-command lines (`  hook   read ... (--offline ...)`)
  return [...usage, ...lines.filter((l) => /^\s+(-|[a-z]+\S*\s{2,})/.test(l))].join("\n");
}

/** Each command's options and sub-commands, read from its `--help` text. */
async function optionsOf(
  commands: Record<string, { run: Command }>,
): Promise<Record<string, Words>> {
  const out: Record<string, Words> = {};
  for (const [name, c] of Object.entries(commands)) {
    let text = "";
    const io: CliIo = {
      stdout: (t) => void (text += t),
      stderr: () => {},
      stdin: () => Promise.resolve(new Uint8Array()),
      env: {},
      cwd: "/",
      isTerminal: false,
    };
    try {
      await c.run(["--help"], io);
    } catch { /* a command without help: its name still completes */ }
    const subs = [
      ...text.matchAll(new RegExp(`^(?:Usage:)?\\s*chronicle ${name} ([a-z][a-z|]*)\\b`, "gm")),
    ]
      .flatMap((m) => m[1].split("|"));
    out[name] = {
      // the usage lines and the option lines, not the prose (which names other commands' options)
      opts: [...new Set(usageAndOptions(text).match(/--[a-z][a-z-]*/g) ?? [])].sort(),
      subs: [...new Set(subs)],
    };
  }
  return out;
}

const words = (xs: string[]) => xs.join(" ");

function bash(opts: Record<string, Words>): string {
  const cases = Object.entries(opts).map(([c, o]) =>
    `    ${c}) opts="${words(o.opts)}"; subs="${words(o.subs)}" ;;`
  ).join("\n");
  return `# chronicle completion for bash: source it, or save it as completions/chronicle
_chronicle() {
  local cur prev cmd opts subs
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  if [ "$prev" = "--source" ]; then
    COMPREPLY=( $(compgen -W "${words([...SOURCE_IDS])}" -- "$cur") ); return
  fi
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${words(Object.keys(opts))} --help --version" -- "$cur") ); return
  fi
  case "$cmd" in
${cases}
    *) opts=""; subs="" ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  else COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -o filenames -F _chronicle chronicle
`;
}

function zsh(opts: Record<string, Words>): string {
  const cases = Object.entries(opts).map(([c, o]) =>
    `    ${c}) opts=(${words(o.opts)}); subs=(${words(o.subs)}) ;;`
  ).join("\n");
  return `#compdef chronicle
# chronicle completion for zsh: save it as _chronicle in a folder of $fpath
_chronicle() {
  local -a opts subs
  if (( CURRENT == 2 )); then
    compadd -- ${words(Object.keys(opts))} --help --version; return
  fi
  if [[ "\${words[CURRENT-1]}" == --source ]]; then
    compadd -- ${words([...SOURCE_IDS])}; return
  fi
  case "\${words[2]}" in
${cases}
    *) opts=(); subs=() ;;
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then compadd -- $opts
  elif (( CURRENT == 3 && \${#subs} )); then compadd -- $subs
  else _files; fi
}
compdef _chronicle chronicle
`;
}

function fish(opts: Record<string, Words>): string {
  const lines = [
    "# chronicle completion for fish: save it as ~/.config/fish/completions/chronicle.fish",
    "complete -c chronicle -f",
    `complete -c chronicle -n __fish_use_subcommand -a "${words(Object.keys(opts))}"`,
  ];
  for (const [c, o] of Object.entries(opts)) {
    if (o.subs.length) {
      lines.push(
        `complete -c chronicle -n "__fish_seen_subcommand_from ${c}; and test (count (commandline -opc)) -eq 2" -a "${
          words(o.subs)
        }"`,
      );
    }
    for (const opt of o.opts) {
      const long = opt.slice(2);
      const arg = long === "source" ? ` -x -a "${words([...SOURCE_IDS])}"` : "";
      lines.push(`complete -c chronicle -n "__fish_seen_subcommand_from ${c}" -l ${long}${arg}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Makes the command over a command table (the real one is passed in by commands.ts). */
export function makeCompletionCommand(
  commands: () => Record<string, { run: Command }>,
): Command {
  return async (args, io) => {
    const p = parseArgs(args, {});
    const early = helpOrVersion(p, COMPLETION_HELP, io);
    if (early !== null) return early;
    const shell = p.positionals[0];
    if (p.positionals.length !== 1 || !["bash", "zsh", "fish"].includes(shell)) {
      throw new UsageError("completion takes one shell: bash, zsh or fish");
    }
    const opts = await optionsOf(commands());
    io.stdout(shell === "bash" ? bash(opts) : shell === "zsh" ? zsh(opts) : fish(opts));
    return 0;
  };
}
