/**
 * The guard's entry in Claude Code's `settings.json`, as pure text-in / text-out plans: add one
 * PreToolUse hook (idempotently), remove exactly that one, report whether it is there. The file
 * is edited in place and minimally (npm `jsonc-parser` locates the nodes; only the entry's own
 * text changes), so comments, formatting, key order and numbers too big for a double survive.
 * Our entry is recognised exactly: a `command` hook whose command is the one we install, or one
 * of the commands an earlier installer wrote (`isLegacyGuardCommand`: its whole shape, never a
 * substring a user's own hook could contain), which install upgrades and uninstall removes.
 */
import {
  applyEdits,
  type Edit,
  findNodeAtLocation,
  type FormattingOptions,
  modify,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";

/** Seconds Claude Code waits for the hook; the guard blocks on its own after 3.5 s. */
export const GUARD_HOOK_TIMEOUT = 10;

export interface HookPlan {
  changed: boolean;
  /** The new settings file content (the current one when nothing changes). */
  text: string;
  /** One line saying what the plan does. */
  summary: string;
}

/** Parses settings text; throws a SyntaxError naming what is wrong with it. */
function parseSettings(text: string, path: string): Node | undefined {
  if (text.trim() === "") return undefined;
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const e = errors[0];
    throw new SyntaxError(
      `Cannot read "${path}": it is not valid JSON (${
        printParseErrorCode(e.error)
      } at offset ${e.offset})`,
    );
  }
  if (!root || root.type !== "object") {
    throw new SyntaxError(`Cannot read "${path}": it is not a JSON object`);
  }
  const hooks = findNodeAtLocation(root, ["hooks"]);
  if (hooks && hooks.type !== "object") {
    throw new SyntaxError(`Cannot read "${path}": "hooks" is not an object`);
  }
  const pre = findNodeAtLocation(root, ["hooks", "PreToolUse"]);
  if (pre && pre.type !== "array") {
    throw new SyntaxError(`Cannot read "${path}": "hooks.PreToolUse" is not a list`);
  }
  return root;
}

/** One word as the earlier installer's `shellQuote` wrote it, ending in `suffix`. */
function quotedEnding(suffix: string): string {
  const esc = suffix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return `(?:[\\w@%+=:,./-]*${esc}|'(?:[^']|'\\\\'')*${esc}')`;
}

/**
 * The commands the first installer (before the guard decided on its own) wrote, whole: an
 * optional `CHRONICLE_HOME=` / `CHRONICLE_URL=` prefix, then the compiled guard, a compiled
 * chronicle's `guard hook`, or `deno run` of guard/main.ts with its exact flags, then its
 * marker comment ` # chronicle-guard`. A user's hook that merely holds the marker is none of these.
 */
const LEGACY_COMMAND = new RegExp(
  "^(?:CHRONICLE_HOME=" + quotedEnding("") + " )?(?:CHRONICLE_URL=" + quotedEnding("") + " )?" +
    "(?:" + quotedEnding("/chronicle-guard") +
    "|" + quotedEnding("/chronicle") + " guard hook" +
    "|" + quotedEnding("/deno") +
    " run --quiet --no-prompt --allow-net=127\\.0\\.0\\.1 --allow-read=" + quotedEnding("/token") +
    " --allow-env=HOME,CHRONICLE_HOME,CHRONICLE_URL " + quotedEnding("/guard/main.ts") +
    ") # chronicle-guard$",
);

/** True for a hook command an earlier `chronicle guard install` wrote (see LEGACY_COMMAND). */
export function isLegacyGuardCommand(command: string): boolean {
  return command.length < 8192 && LEGACY_COMMAND.test(command);
}

/**
 * Where the handlers `match` accepts are: `[group, handler]` indexes in hooks.PreToolUse,
 * every one of them, in order.
 */
function findHandlers(
  root: Node | undefined,
  match: (command: string) => boolean,
): [number, number][] {
  const pre = root && findNodeAtLocation(root, ["hooks", "PreToolUse"]);
  const out: [number, number][] = [];
  (pre?.children ?? []).forEach((group, g) => {
    const handlers = findNodeAtLocation(group, ["hooks"]);
    if (handlers?.type !== "array") return;
    handlers.children?.forEach((h, k) => {
      const type = findNodeAtLocation(h, ["type"]);
      const cmd = findNodeAtLocation(h, ["command"]);
      if (type?.value === "command" && typeof cmd?.value === "string" && match(cmd.value)) {
        out.push([g, k]);
      }
    });
  });
  return out;
}

/** Our handler running exactly `command`. */
function findOurs(root: Node | undefined, command: string): [number, number][] {
  return findHandlers(root, (c) => c === command);
}

/** An earlier installer's handlers (never one running exactly `command`). */
function findLegacy(root: Node | undefined, command: string): [number, number][] {
  return findHandlers(root, (c) => c !== command && isLegacyGuardCommand(c));
}

/** The file's indentation unit, and the line break it uses. */
function style(text: string): { unit: string; eol: string; options: FormattingOptions } {
  const m = /\n([ \t]+)\S/.exec(text);
  const unit = m ? (m[1].startsWith("\t") ? "\t" : m[1].length >= 4 ? "    " : "  ") : "  ";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  return {
    unit,
    eol,
    options: { insertSpaces: unit !== "\t", tabSize: unit === "\t" ? 1 : unit.length, eol },
  };
}

function entry(command: string) {
  return {
    matcher: "*",
    hooks: [{ type: "command", command, timeout: GUARD_HOOK_TIMEOUT }],
  };
}

/**
 * Adds the guard hook running exactly `command`; nothing changes when it is there already. An
 * earlier installer's entry (`isLegacyGuardCommand`) is upgraded in place to run `command`
 * (only its command string changes), and any further ones are removed.
 */
export function planInstall(
  text: string | null,
  command: string,
  path = "settings.json",
): HookPlan {
  const current = text ?? "";
  const root = parseSettings(current, path);
  const legacy = findLegacy(root, command);
  if (legacy.length) {
    let upgraded = current;
    let rest = legacy;
    if (!findOurs(root, command).length) {
      const [g, k] = legacy[0];
      upgraded = applyEdits(
        current,
        modify(current, ["hooks", "PreToolUse", g, "hooks", k, "command"], command, {}),
      );
      rest = findLegacy(parseSettings(upgraded, path), command);
    }
    if (rest.length) upgraded = removeAll(upgraded, path, (r) => findLegacy(r, command));
    return {
      changed: true,
      text: upgraded,
      summary: `Upgrade the guard hook an earlier install wrote in ${path}`,
    };
  }
  if (findOurs(root, command).length) {
    return { changed: false, text: current, summary: `The guard hook is already in ${path}` };
  }
  const { unit, eol, options } = style(current);
  const pre = root && findNodeAtLocation(root, ["hooks", "PreToolUse"]);
  let edits: Edit[];
  const last = pre?.children?.[pre.children.length - 1];
  const lineStart = last ? current.lastIndexOf("\n", last.offset) + 1 : -1;
  const indent = last ? current.slice(lineStart, last.offset) : "";
  if (last && /^[ \t]*$/.test(indent)) {
    // after the last group, on its own line, indented like it
    const body = JSON.stringify(entry(command), null, unit).replace(/\n/g, eol + indent);
    edits = [{ offset: last.offset + last.length, length: 0, content: `,${eol}${indent}${body}` }];
  } else if (root) {
    edits = modify(current, ["hooks", "PreToolUse", pre?.children?.length ?? 0], entry(command), {
      isArrayInsertion: true,
      formattingOptions: options,
    });
  } else {
    return {
      changed: true,
      text: JSON.stringify({ hooks: { PreToolUse: [entry(command)] } }, null, 2) + "\n",
      summary: `Add the guard hook to ${path}`,
    };
  }
  return {
    changed: true,
    text: applyEdits(current, edits),
    summary: `Add the guard hook to ${path}`,
  };
}

/**
 * The text without element `i` of `array`: from the end of the one before it (its comma and
 * line break go too), else up to the one after it; what `planInstall` added comes out exactly.
 */
function removeElement(text: string, array: Node, i: number): string {
  const items = array.children!;
  const item = items[i];
  if (items.length === 1) {
    // the only element: keep the brackets, drop what is between them
    return text.slice(0, array.offset + 1) + text.slice(array.offset + array.length - 1);
  }
  if (i > 0) {
    const prev = items[i - 1];
    return text.slice(0, prev.offset + prev.length) + text.slice(item.offset + item.length);
  }
  return text.slice(0, item.offset) + text.slice(items[1].offset);
}

/**
 * The text with every handler `find` locates removed; a group it empties goes too, and so do
 * `hooks.PreToolUse` and `hooks` when they end up empty.
 */
function removeAll(
  text: string,
  path: string,
  find: (root: Node | undefined) => [number, number][],
): string {
  let current = text;
  let root = parseSettings(current, path);
  let found = find(root);
  while (found.length) {
    const [g, k] = found[found.length - 1];
    const groups = findNodeAtLocation(root!, ["hooks", "PreToolUse"])!;
    const handlers = findNodeAtLocation(groups.children![g], ["hooks"])!;
    current = handlers.children!.length === 1
      ? removeElement(current, groups, g)
      : removeElement(current, handlers, k);
    root = parseSettings(current, path);
    found = find(root);
  }
  const pre = findNodeAtLocation(root!, ["hooks", "PreToolUse"]);
  if (pre && !pre.children?.length) {
    current = dropProperty(current, pre.parent!);
    root = parseSettings(current, path);
  }
  const hooks = findNodeAtLocation(root!, ["hooks"]);
  if (hooks && !hooks.children?.length) current = dropProperty(current, hooks.parent!);
  return current;
}

/**
 * The text without the object property `prop` (its key, value and one comma), taking its line
 * with it when it stands alone there; comments around it stay (jsonc-parser's own removal eats
 * a comment before the property).
 */
function dropProperty(text: string, prop: Node): string {
  const siblings = prop.parent!.children!;
  const i = siblings.indexOf(prop);
  let start = prop.offset;
  let end = prop.offset + prop.length;
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (/^[ \t]*$/.test(text.slice(lineStart, start))) start = lineStart;
  let after = end;
  while (text[after] === " " || text[after] === "\t") after++;
  if (text[after] === ",") end = after + 1;
  let eol = end;
  while (text[eol] === " " || text[eol] === "\t" || text[eol] === "\r") eol++;
  if (start === lineStart && text[eol] === "\n") end = eol + 1;
  let out = text.slice(0, start) + text.slice(end);
  if (i === siblings.length - 1 && i > 0) {
    // the last one went: the comma after the one before it goes too
    const prev = siblings[i - 1];
    let k = prev.offset + prev.length;
    while (k < start && /\s/.test(out[k])) k++;
    if (out[k] === ",") out = out.slice(0, k) + out.slice(k + 1);
  }
  return out;
}

/**
 * Removes exactly the guard hook running `command`, and any an earlier installer wrote
 * (`isLegacyGuardCommand`); a group, list or object that empties goes too.
 */
export function planUninstall(
  text: string | null,
  command: string,
  path = "settings.json",
): HookPlan {
  const current = text ?? "";
  const unchanged = { changed: false, text: current, summary: `No guard hook in ${path}` };
  if (text === null) return unchanged;
  const find = (root: Node | undefined) =>
    findHandlers(root, (c) => c === command || isLegacyGuardCommand(c));
  if (!find(parseSettings(current, path)).length) return unchanged;
  return {
    changed: true,
    text: removeAll(current, path, find),
    summary: `Remove the guard hook from ${path}`,
  };
}

/** True when the guard hook running exactly `command` is in the settings. */
export function hasGuardHook(
  text: string | null,
  command: string,
  path = "settings.json",
): boolean {
  return findOurs(parseSettings(text ?? "", path), command).length > 0;
}

/** The commands of an earlier installer's guard hooks still in the settings (to upgrade). */
export function legacyGuardHooks(
  text: string | null,
  command: string,
  path = "settings.json",
): string[] {
  const root = parseSettings(text ?? "", path);
  return findLegacy(root, command).map(([g, k]) =>
    findNodeAtLocation(root!, ["hooks", "PreToolUse", g, "hooks", k, "command"])!.value as string
  );
}

/** The commands of every PreToolUse command hook (to tell a user what is there). */
export function preToolUseCommands(text: string | null, path = "settings.json"): string[] {
  const root = parseSettings(text ?? "", path);
  const pre = root && findNodeAtLocation(root, ["hooks", "PreToolUse"]);
  const out: string[] = [];
  for (const group of pre?.children ?? []) {
    for (const h of findNodeAtLocation(group, ["hooks"])?.children ?? []) {
      const cmd = findNodeAtLocation(h, ["command"])?.value;
      if (typeof cmd === "string") out.push(cmd);
    }
  }
  return out;
}
