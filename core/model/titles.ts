/**
 * What a session is titled. The user's name for it (`chronicle rename`, the UI) comes first,
 * then the title its agent recorded, then its first prompt: {@link sessionTitle}, which the
 * list, `show`, search, export, shares and the UI all read. A prompt reads as a title through
 * {@link promptTitle}: Claude Code records a slash command as markup
 * (`<command-message>init is analyzing…</command-message><command-name>/init
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

/** Characters a user's name for a session may have. */
export const USER_TITLE_CHARS = 200;

// deno-lint-ignore no-control-regex -- dropping control characters is the point
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;

/**
 * A name the user typed for a session, as it is kept: on one line (line breaks and tabs become
 * spaces, other control characters are dropped, whitespace runs together), trimmed. Null for an
 * empty name, which clears it. A RangeError when it has more than {@link USER_TITLE_CHARS}
 * characters.
 */
export function userTitle(typed: string): string | null {
  const t = typed.replace(/[\t\n\v\f\r\x85\u2028\u2029]/g, " ").replace(CONTROLS, "")
    .replace(/\s+/g, " ").trim();
  if (!t) return null;
  const n = [...t].length;
  if (n > USER_TITLE_CHARS) {
    throw new RangeError(
      `a session's name is at most ${USER_TITLE_CHARS} characters (this one has ${n})`,
    );
  }
  return t;
}

/** What a session's title is decided from (a session summary, a search hit's session). */
export interface TitleParts {
  /** The user's name for the session. */
  user_title?: string | null;
  /** The title its agent recorded. */
  title?: string | null;
  /** Its first prompt, as {@link promptTitle} reads it (the store keeps it). */
  first_prompt?: string | null;
}

const present = (s: string | null | undefined) => s && s.trim() ? s : null;

/**
 * The title a session goes by: the user's name for it, else the title its agent recorded,
 * else its first prompt; null when it has none of them.
 */
export function sessionTitle(s: TitleParts): string | null {
  return present(s.user_title) ?? recordedTitle(s);
}

/**
 * The title the agent's log gives a session (its own, else its first prompt): what a user's
 * name replaced ("renamed from").
 */
export function recordedTitle(s: TitleParts): string | null {
  return present(s.title) ?? present(s.first_prompt);
}
