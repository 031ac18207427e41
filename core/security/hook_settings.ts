/**
 * The guard's entry in Claude Code's `settings.json`, as pure text-in / text-out plans: add one
 * PreToolUse hook (idempotently), remove exactly that one, report whether it is there. Every
 * other setting and hook is kept as it was (equal as JSON). Our entry is recognised by a shell
 * comment marker at the end of its command.
 */

/** Ends the hook command (a shell comment): how install and uninstall find our entry. */
export const GUARD_MARKER = "# chronicle-guard";

/** Seconds Claude Code waits for the hook; the guard itself gives up after 3 s. */
export const GUARD_HOOK_TIMEOUT = 10;

export interface HookPlan {
  changed: boolean;
  /** The new settings file content (the current one when nothing changes). */
  text: string;
  /** One line saying what the plan does. */
  summary: string;
}

type Json = Record<string, unknown>;

interface Handler {
  type?: unknown;
  command?: unknown;
}

interface Group {
  matcher?: unknown;
  hooks?: unknown;
}

/** The command with the marker appended once. */
export function withGuardMarker(command: string): string {
  return command.includes(GUARD_MARKER) ? command : `${command} ${GUARD_MARKER}`;
}

function isOurs(h: unknown): boolean {
  const handler = h as Handler;
  return !!handler && handler.type === "command" && typeof handler.command === "string" &&
    handler.command.includes(GUARD_MARKER);
}

/** Parses settings text; throws a SyntaxError naming what is wrong with it. */
function parseSettings(text: string | null, path: string): Json {
  if (text === null || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`Cannot read "${path}": it is not valid JSON (${(e as Error).message})`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new SyntaxError(`Cannot read "${path}": it is not a JSON object`);
  }
  const settings = value as Json;
  if (settings.hooks !== undefined) {
    if (!settings.hooks || typeof settings.hooks !== "object" || Array.isArray(settings.hooks)) {
      throw new SyntaxError(`Cannot read "${path}": "hooks" is not an object`);
    }
    const pre = (settings.hooks as Json).PreToolUse;
    if (pre !== undefined && !Array.isArray(pre)) {
      throw new SyntaxError(`Cannot read "${path}": "hooks.PreToolUse" is not a list`);
    }
  }
  return settings;
}

function render(settings: Json): string {
  return JSON.stringify(settings, null, 2) + "\n";
}

function groupsOf(settings: Json): Group[] | undefined {
  const hooks = settings.hooks as Json | undefined;
  return hooks?.PreToolUse as Group[] | undefined;
}

/** Adds the guard hook running `command`, or updates the command of the one already there. */
export function planInstall(
  text: string | null,
  command: string,
  path = "settings.json",
): HookPlan {
  const settings = parseSettings(text, path);
  const wanted = withGuardMarker(command);
  const groups = groupsOf(settings);
  for (const group of groups ?? []) {
    if (!Array.isArray(group?.hooks)) continue;
    for (const handler of group.hooks as Handler[]) {
      if (!isOurs(handler)) continue;
      if (handler.command === wanted) {
        return {
          changed: false,
          text: text ?? "",
          summary: `The guard hook is already in ${path}`,
        };
      }
      handler.command = wanted;
      return { changed: true, text: render(settings), summary: `Update the guard hook in ${path}` };
    }
  }
  const entry = {
    matcher: "*",
    hooks: [{ type: "command", command: wanted, timeout: GUARD_HOOK_TIMEOUT }],
  };
  if (!settings.hooks) settings.hooks = {};
  const hooks = settings.hooks as Json;
  if (!hooks.PreToolUse) hooks.PreToolUse = [];
  (hooks.PreToolUse as unknown[]).push(entry);
  return { changed: true, text: render(settings), summary: `Add the guard hook to ${path}` };
}

/** Removes the guard hook (and only it); groups, lists and objects it leaves empty go too. */
export function planUninstall(text: string | null, path = "settings.json"): HookPlan {
  const unchanged = { changed: false, text: text ?? "", summary: `No guard hook in ${path}` };
  if (text === null) return unchanged;
  const settings = parseSettings(text, path);
  const groups = groupsOf(settings);
  if (!groups) return unchanged;
  let removed = 0;
  const kept: unknown[] = [];
  for (const group of groups) {
    if (!Array.isArray(group?.hooks) || !group.hooks.some(isOurs)) {
      kept.push(group);
      continue;
    }
    const rest = (group.hooks as unknown[]).filter((h) => !isOurs(h));
    removed += group.hooks.length - rest.length;
    if (rest.length) kept.push({ ...group, hooks: rest });
  }
  if (removed === 0) return unchanged;
  const hooks = settings.hooks as Json;
  if (kept.length) hooks.PreToolUse = kept;
  else delete hooks.PreToolUse;
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return { changed: true, text: render(settings), summary: `Remove the guard hook from ${path}` };
}

/** The command of the installed guard hook, or null. Throws a SyntaxError for bad settings. */
export function installedGuardCommand(text: string | null, path = "settings.json"): string | null {
  const settings = parseSettings(text, path);
  for (const group of groupsOf(settings) ?? []) {
    if (!Array.isArray(group?.hooks)) continue;
    const ours = (group.hooks as Handler[]).find(isOurs);
    if (ours) return ours.command as string;
  }
  return null;
}
