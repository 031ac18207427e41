/**
 * `chronicle completion bash|zsh|fish`: a completion script for the user's shell, made from the
 * command table and each command's own `--help` (so a new option completes without a change
 * here). Install: `chronicle completion bash > ~/.local/share/bash-completion/completions/chronicle`.
 */
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import type { CliIo, Command } from "./io.ts";
import { SOURCE_IDS } from "../core/model/agents.ts";

export const COMPLETION_HELP = `Usage: chronicle completion bash|zsh|fish

Prints a shell completion script for chronicle's commands and options (and the agent ids
after --source). Load it from your shell's start-up file, or save it where your shell looks:

  bash  chronicle completion bash > ~/.local/share/bash-completion/completions/chronicle
  zsh   chronicle completion zsh > "\${fpath[1]}/_chronicle"   (then: autoload -U compinit; compinit)
  fish  chronicle completion fish > ~/.config/fish/completions/chronicle.fish
`;

/** Each command's options, read from its `--help` text. */
async function optionsOf(
  commands: Record<string, { run: Command }>,
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
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
    out[name] = [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])].sort();
  }
  return out;
}

const words = (xs: string[]) => xs.join(" ");

function bash(opts: Record<string, string[]>): string {
  const cases = Object.entries(opts).map(([c, o]) => `    ${c}) opts="${words(o)}" ;;`).join("\n");
  return `# chronicle completion for bash: source it, or save it as completions/chronicle
_chronicle() {
  local cur prev cmd opts
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
    *) opts="" ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  else COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -o filenames -F _chronicle chronicle
`;
}

function zsh(opts: Record<string, string[]>): string {
  const cases = Object.entries(opts).map(([c, o]) => `    ${c}) opts=(${words(o)}) ;;`).join("\n");
  return `#compdef chronicle
# chronicle completion for zsh: save it as _chronicle in a folder of $fpath
_chronicle() {
  local -a opts
  if (( CURRENT == 2 )); then
    compadd -- ${words(Object.keys(opts))} --help --version; return
  fi
  if [[ "\${words[CURRENT-1]}" == --source ]]; then
    compadd -- ${words([...SOURCE_IDS])}; return
  fi
  case "\${words[2]}" in
${cases}
    *) opts=() ;;
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then compadd -- $opts; else _files; fi
}
compdef _chronicle chronicle
`;
}

function fish(opts: Record<string, string[]>): string {
  const lines = [
    "# chronicle completion for fish: save it as ~/.config/fish/completions/chronicle.fish",
    "complete -c chronicle -f",
    `complete -c chronicle -n __fish_use_subcommand -a "${words(Object.keys(opts))}"`,
  ];
  for (const [c, o] of Object.entries(opts)) {
    for (const opt of o) {
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
