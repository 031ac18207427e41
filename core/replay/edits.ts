/**
 * File changes as pure functions of a file's current text: string replacements (Claude Code's
 * Edit and MultiEdit, Gemini's replace, OpenCode's edit, Cursor's search_replace) and one
 * file's section of a Codex apply_patch. Each says whether it applies and where.
 */

export interface Replacement {
  old: string;
  new: string;
  /** Replace every occurrence (Claude Code `replace_all`, OpenCode `replaceAll`). */
  all?: boolean;
}

/** What a change would do to a file. `text` is null for a deletion. */
export type ChangeResult =
  | { ok: true; text: string | null; lines: number[]; note?: string }
  | { ok: false; reason: string };

/** 1-based line number of a character offset. */
function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function count(text: string, part: string): number {
  let n = 0;
  for (let i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length)) n++;
  return n;
}

/**
 * Applies replacements in order, each to the result of the one before. An empty `old` on a
 * missing file creates it. An `old` found nowhere, or found several times without `all`,
 * does not apply: the file is left as it was, as the agents do.
 */
export function applyReplacements(current: string | null, edits: Replacement[]): ChangeResult {
  let text = current;
  const lines: number[] = [];
  for (const [i, e] of edits.entries()) {
    const which = edits.length > 1 ? `edit ${i + 1} of ${edits.length}: ` : "";
    if (text === null) {
      if (e.old === "") {
        text = e.new;
        lines.push(1);
        continue;
      }
      return { ok: false, reason: `${which}the file does not exist` };
    }
    if (e.old === "") {
      if (text !== "") return { ok: false, reason: `${which}the file already exists` };
      text = e.new;
      lines.push(1);
      continue;
    }
    if (e.old === e.new) return { ok: false, reason: `${which}old and new text are the same` };
    const n = count(text, e.old);
    if (n === 0) return { ok: false, reason: `${which}the old text is not in the file` };
    if (n > 1 && !e.all) {
      return { ok: false, reason: `${which}the old text is in the file ${n} times` };
    }
    lines.push(lineAt(text, text.indexOf(e.old)));
    text = e.all ? text.split(e.old).join(e.new) : text.replace(e.old, () => e.new);
  }
  return { ok: true, text, lines };
}

/** One file's part of an apply_patch envelope. */
export interface PatchSection {
  action: "add" | "update" | "delete";
  path: string;
  moveTo?: string;
  /** Add: the new file's lines. */
  added: string[];
  chunks: PatchChunk[];
}

export interface PatchChunk {
  /** The `@@ <context>` line's text, when given: the chunk starts after it. */
  context?: string;
  old: string[];
  new: string[];
  /** `*** End of File`: the old lines end the file. */
  eof: boolean;
}

/** Parses an apply_patch envelope (`*** Begin Patch` ... `*** End Patch`) into sections. */
export function parsePatch(patch: string): PatchSection[] {
  const lines = patch.replace(/\r\n/g, "\n").split("\n");
  const out: PatchSection[] = [];
  let cur: PatchSection | null = null;
  let chunk: PatchChunk | null = null;
  const header = /^\*\*\* (Add|Update|Delete) File: (.+)$/;
  for (const line of lines) {
    const h = header.exec(line);
    if (h) {
      cur = {
        action: h[1].toLowerCase() as PatchSection["action"],
        path: h[2].trim(),
        added: [],
        chunks: [],
      };
      chunk = null;
      out.push(cur);
      continue;
    }
    if (!cur || line === "*** Begin Patch") continue;
    if (line === "*** End Patch") {
      cur = null;
      continue;
    }
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move) {
      cur.moveTo = move[1].trim();
      continue;
    }
    if (cur.action === "add") {
      if (line.startsWith("+")) cur.added.push(line.slice(1));
      continue;
    }
    if (cur.action !== "update") continue;
    if (line === "*** End of File") {
      if (chunk) chunk.eof = true;
      continue;
    }
    if (line.startsWith("@@")) {
      const ctx = line.slice(2).trim();
      chunk = { context: ctx || undefined, old: [], new: [], eof: false };
      cur.chunks.push(chunk);
      continue;
    }
    if (!chunk) {
      chunk = { old: [], new: [], eof: false };
      cur.chunks.push(chunk);
    }
    const mark = line[0];
    const body = line.slice(1);
    if (mark === "-") chunk.old.push(body);
    else if (mark === "+") chunk.new.push(body);
    else if (mark === " " || line === "") {
      chunk.old.push(body);
      chunk.new.push(body);
    }
  }
  return out;
}

/** Finds `want` in `lines` from `start`: exactly, then ignoring trailing, then all outer space. */
function seek(lines: string[], want: string[], start: number, eof: boolean): number {
  if (!want.length) return start;
  const norms = [(s: string) => s, (s: string) => s.trimEnd(), (s: string) => s.trim()];
  for (const norm of norms) {
    const from = eof ? Math.max(start, lines.length - want.length) : start;
    for (let i = from; i + want.length <= lines.length; i++) {
      let hit = true;
      for (let k = 0; k < want.length && hit; k++) hit = norm(lines[i + k]) === norm(want[k]);
      if (hit) return i;
    }
  }
  return -1;
}

/**
 * Applies one file's section of an apply_patch to its current text, the way Codex does: each
 * chunk's old lines are found in order after the previous chunk (after its `@@` context line
 * when given) and replaced by its new lines; the result ends with a newline.
 */
export function applyPatchSection(current: string | null, section: PatchSection): ChangeResult {
  if (section.action === "add") {
    const note = current !== null ? "replaces an existing file" : undefined;
    return { ok: true, text: section.added.join("\n") + "\n", lines: [1], note };
  }
  if (current === null) return { ok: false, reason: `${section.path} does not exist` };
  if (section.action === "delete") return { ok: true, text: null, lines: [] };
  const lines = current.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const replaced: { at: number; len: number; with: string[] }[] = [];
  let cursor = 0;
  for (const c of section.chunks) {
    if (c.context !== undefined) {
      const at = seek(lines, [c.context], cursor, false);
      if (at < 0) {
        return { ok: false, reason: `the context line "${c.context}" is not in the file` };
      }
      cursor = at + 1;
    }
    if (!c.old.length) {
      replaced.push({ at: c.context !== undefined ? cursor : lines.length, len: 0, with: c.new });
      continue;
    }
    let old = c.old;
    let nw = c.new;
    let at = seek(lines, old, cursor, c.eof);
    if (at < 0 && old.at(-1) === "") {
      old = old.slice(0, -1);
      nw = nw.at(-1) === "" ? nw.slice(0, -1) : nw;
      at = seek(lines, old, cursor, c.eof);
    }
    if (at < 0) {
      return { ok: false, reason: `the expected lines are not in the file:\n${c.old.join("\n")}` };
    }
    replaced.push({ at, len: old.length, with: nw });
    cursor = at + old.length;
  }
  const out = lines.slice();
  for (const r of [...replaced].sort((a, b) => b.at - a.at)) out.splice(r.at, r.len, ...r.with);
  return { ok: true, text: out.join("\n") + "\n", lines: replaced.map((r) => r.at + 1) };
}
