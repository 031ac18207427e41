/**
 * The guard's entry in Claude Code's `settings.json`, as pure text-in / text-out plans: add one
 * PreToolUse hook (idempotently), remove exactly that one, report whether it is there. The file
 * is edited in place and minimally (npm `jsonc-parser` locates the nodes; only the entry's own
 * text changes), so comments, formatting, key order and numbers too big for a double survive.
 * Our entry is recognised exactly: a `command` hook whose command is the one we install, never
 * by a substring a user's own hook could contain.
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

/** Where our handler is: `[group, handler]` indexes in hooks.PreToolUse, every one of them. */
function findOurs(root: Node | undefined, command: string): [number, number][] {
  const pre = root && findNodeAtLocation(root, ["hooks", "PreToolUse"]);
  const out: [number, number][] = [];
  (pre?.children ?? []).forEach((group, g) => {
    const handlers = findNodeAtLocation(group, ["hooks"]);
    if (handlers?.type !== "array") return;
    handlers.children?.forEach((h, k) => {
      const type = findNodeAtLocation(h, ["type"]);
      const cmd = findNodeAtLocation(h, ["command"]);
      if (type?.value === "command" && cmd?.value === command) out.push([g, k]);
    });
  });
  return out;
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

/** Adds the guard hook running exactly `command`; nothing changes when it is there already. */
export function planInstall(
  text: string | null,
  command: string,
  path = "settings.json",
): HookPlan {
  const current = text ?? "";
  const root = parseSettings(current, path);
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

/** Removes exactly the guard hook running `command`; a group, list or object it empties goes too. */
export function planUninstall(
  text: string | null,
  command: string,
  path = "settings.json",
): HookPlan {
  let current = text ?? "";
  const unchanged = { changed: false, text: current, summary: `No guard hook in ${path}` };
  if (text === null) return unchanged;
  let root = parseSettings(current, path);
  let ours = findOurs(root, command);
  if (!ours.length) return unchanged;
  while (ours.length) {
    const [g, k] = ours[ours.length - 1];
    const groups = findNodeAtLocation(root!, ["hooks", "PreToolUse"])!;
    const handlers = findNodeAtLocation(groups.children![g], ["hooks"])!;
    current = handlers.children!.length === 1
      ? removeElement(current, groups, g)
      : removeElement(current, handlers, k);
    root = parseSettings(current, path);
    ours = findOurs(root, command);
  }
  const pre = findNodeAtLocation(root!, ["hooks", "PreToolUse"]);
  if (pre && !pre.children?.length) {
    current = applyEdits(current, modify(current, ["hooks", "PreToolUse"], undefined, {}));
    root = parseSettings(current, path);
  }
  const hooks = findNodeAtLocation(root!, ["hooks"]);
  if (hooks && !hooks.children?.length) {
    current = applyEdits(current, modify(current, ["hooks"], undefined, {}));
  }
  return { changed: true, text: current, summary: `Remove the guard hook from ${path}` };
}

/** True when the guard hook running exactly `command` is in the settings. */
export function hasGuardHook(
  text: string | null,
  command: string,
  path = "settings.json",
): boolean {
  return findOurs(parseSettings(text ?? "", path), command).length > 0;
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
