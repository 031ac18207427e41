/**
 * What a prompt reads as when it titles a session. Claude Code records a slash command as
 * markup (`<command-message>init is analyzing…</command-message><command-name>/init
 * </command-name><command-args>…</command-args>`) and a `!` shell line as `<bash-input>`;
 * such markup never shows as a title: the command is the title, with its arguments.
 */

/** Characters of a prompt kept as a session's title. */
export const TITLE_CHARS = 300;

const tag = (name: string, text: string): string | undefined => {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text);
  return m ? m[1].replace(/\s+/g, " ").trim() : undefined;
};

/** Options of {@link promptTitle}. */
export interface PromptTitleOptions {
  /** Plain text gives only its first line (default false: all of it, on one line). */
  firstLine?: boolean;
  /** At most this many characters (default {@link TITLE_CHARS}). */
  max?: number;
}

/**
 * A prompt's text as a title: a slash command as `/name args`, a shell line as `! command`,
 * a command's message alone as its text; anything else its text as typed (whitespace run
 * together), at most {@link TITLE_CHARS} characters.
 */
export function promptTitle(text: string, options: PromptTitleOptions = {}): string {
  const t = text.trim();
  let title = options.firstLine ? t.split("\n")[0] : t;
  if (/^<(command-(message|name|args|contents)|bash-input)>/.test(t)) {
    const name = tag("command-name", t);
    const bash = tag("bash-input", t);
    if (name) {
      const args = tag("command-args", t);
      const cmd = name.startsWith("/") ? name : `/${name}`;
      title = args ? `${cmd} ${args}` : cmd;
    } else if (bash !== undefined) title = `! ${bash}`;
    else title = tag("command-message", t) ?? t.replace(/<\/?[a-z-]+>/g, " ");
  }
  return title.replace(/\s+/g, " ").trim().slice(0, options.max ?? TITLE_CHARS);
}
