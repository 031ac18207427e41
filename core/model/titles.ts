/**
 * What a session is titled. The user's name for it (`chronicle rename`, the UI) comes first,
 * then the title its agent recorded, then its first prompt: {@link sessionTitle}, which the
 * list, `show`, search, export, shares and the UI all read. A prompt reads as a title through
 * {@link promptTitle}: Claude Code records a slash command as markup
 * (`<command-message>init is analyzing…</command-message><command-name>/init
 * </command-name><command-args>…</command-args>`) and a `!` shell line as `<bash-input>`;
 * such markup never shows as a title: the command is the title, with its arguments.
 */
import { flatOpening } from "./text_line.ts";

/** Characters of a prompt kept as a session's title. */
export const TITLE_CHARS = 300;

/** Markup tags as spaces; a tag the opening's end cut in two is left out with what follows. */
function stripTags(part: string, whole: boolean): string {
  const lt = part.lastIndexOf("<");
  const kept = !whole && lt > part.lastIndexOf(">") ? part.slice(0, lt) : part;
  return kept.replace(/<\/?[a-z-]+>/g, " ");
}

/**
 * What the first `<name>` tag holds, up to the first `</name>` after it: what the pattern
 * `<name>([\s\S]*?)</name>` matches, found in one pass (a later tag never closes where the
 * first does not, and the pattern tried each open tag to the text's end).
 */
const tag = (name: string, text: string, max: number): string | undefined => {
  const open = text.indexOf(`<${name}>`);
  if (open < 0) return undefined;
  const from = open + name.length + 2;
  const close = text.indexOf(`</${name}>`, from);
  return close < 0 ? undefined : flatOpening(text.slice(from, close), max);
};

/** How a prompt of Claude Code's markup opens. */
const MARKUP = /^<(command-(message|name|args|contents)|bash-input)>/;

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
 * together), at most {@link TITLE_CHARS} characters. A long prompt is read only as far as its
 * title goes.
 */
export function promptTitle(text: string, options: PromptTitleOptions = {}): string {
  const max = options.max ?? TITLE_CHARS;
  const t = text.trim();
  if (MARKUP.test(t)) {
    const name = tag("command-name", t, max);
    if (name) {
      const args = tag("command-args", t, max);
      const cmd = name.startsWith("/") ? name : `/${name}`;
      return flatOpening(args ? `${cmd} ${args}` : cmd, max);
    }
    const bash = tag("bash-input", t, max);
    if (bash !== undefined) return flatOpening(`! ${bash}`, max);
    return tag("command-message", t, max) ?? flatOpening(t, max, stripTags);
  }
  if (!options.firstLine) return flatOpening(t, max);
  const end = t.indexOf("\n");
  return flatOpening(end < 0 ? t : t.slice(0, end), max);
}

/** Characters of a prompt's opening {@link openingTitle} reads a title from. */
export const TITLE_OPENING_CHARS = 64 << 10;

/**
 * A prompt's {@link promptTitle} from its opening, its first {@link TITLE_OPENING_CHARS}
 * characters (all of it when shorter); `whole` gives the whole prompt, read only when the
 * opening cannot tell: markup, whose tags may close further on, or an opening that is mostly
 * whitespace. A session's first prompt may be a pasted log of megabytes.
 */
export function openingTitle(opening: string, whole: () => string | null): string {
  const title = promptTitle(opening);
  if (opening.length < TITLE_OPENING_CHARS) return title;
  if (title.length >= TITLE_CHARS && !MARKUP.test(opening.trimStart())) return title;
  const text = whole();
  return text === null ? title : promptTitle(text);
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
