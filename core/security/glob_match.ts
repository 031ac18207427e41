/**
 * Glob matching in linear time: a glob is compiled to a list of items and run as a Thompson
 * NFA (every state advanced together, one pass over the text), never as a backtracking regex.
 * A rule like `*a*a*a*b` over a 300 KB base64 blob costs O(text x pattern) steps, and every
 * 4096 characters the caller's deadline is checked.
 *
 * Two dialects:
 * - text rules (custom redact/allow rules over transcript text): `*` is a run of
 *   non-whitespace characters, `?` one character that is not a line break;
 * - path rules (`path:` rules and the built-in sensitive paths, over file paths): `*` is a run
 *   of characters other than `/`, `**` any run (slashes included), `?` one character other
 *   than `/`.
 */
import { type Deadline, NO_DEADLINE } from "./budget.ts";

const LIT = 0;
const ANY = 1;
const STAR = 2;
const GLOBSTAR = 3;

/** A compiled glob: items, and its longest literal (every match contains it). */
export interface CompiledGlob {
  readonly kinds: Uint8Array;
  readonly codes: Uint16Array;
  readonly required: string;
  readonly dialect: "text" | "path";
}

/** Compiles a glob (validation is the caller's: see glob_rule.ts). */
export function compileGlobMatcher(pattern: string, dialect: "text" | "path"): CompiledGlob {
  const kinds: number[] = [];
  const codes: number[] = [];
  let run = "";
  let required = "";
  const endRun = () => {
    if (run.length > required.length) required = run;
    run = "";
  };
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "*") {
      endRun();
      const globstar = dialect === "path" && pattern[i + 1] === "*";
      if (globstar) i++;
      const kind = globstar ? GLOBSTAR : STAR;
      const last = kinds.length - 1;
      // `**` absorbs a neighbouring `*`; two `*` in a row are one
      if (last >= 0 && (kinds[last] === GLOBSTAR || kinds[last] === STAR)) {
        kinds[last] = Math.max(kinds[last], kind);
        continue;
      }
      kinds.push(kind);
      codes.push(0);
    } else if (ch === "?") {
      endRun();
      kinds.push(ANY);
      codes.push(0);
    } else {
      run += ch;
      kinds.push(LIT);
      codes.push(pattern.charCodeAt(i));
    }
  }
  endRun();
  return {
    kinds: Uint8Array.from(kinds),
    codes: Uint16Array.from(codes),
    required,
    dialect,
  };
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
    c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Adds state `j` with start `s` to `set`, and the states a star or globstar may skip to. */
function add(g: CompiledGlob, set: Int32Array, j: number, s: number): void {
  const m = g.kinds.length;
  for (;;) {
    if (set[j] !== -1 && set[j] <= s) return;
    set[j] = s;
    if (j < m && g.kinds[j] >= STAR) {
      j++;
      continue;
    }
    return;
  }
}

/** Advances every live state of `cur` over the character `c` into `next` (cleared first). */
function step(g: CompiledGlob, cur: Int32Array, next: Int32Array, c: number, limit: number) {
  next.fill(-1);
  let alive = false;
  const m = g.kinds.length;
  const text = g.dialect === "text";
  for (let j = 0; j < m; j++) {
    const s = cur[j];
    if (s === -1 || (limit >= 0 && s > limit)) continue;
    switch (g.kinds[j]) {
      case LIT:
        if (g.codes[j] === c) {
          add(g, next, j + 1, s);
          alive = true;
        }
        break;
      case ANY:
        if (text ? c !== 10 && c !== 13 : c !== 47) {
          add(g, next, j + 1, s);
          alive = true;
        }
        break;
      case STAR:
        if (text ? !isSpace(c) : c !== 47) {
          add(g, next, j, s);
          alive = true;
        }
        break;
      case GLOBSTAR:
        add(g, next, j, s);
        alive = true;
        break;
    }
  }
  return alive;
}

/** True when the whole of `s` matches (path rules). */
export function globMatches(g: CompiledGlob, s: string): boolean {
  if (g.required && !s.includes(g.required)) return false;
  const m = g.kinds.length;
  let cur = new Int32Array(m + 1).fill(-1);
  let next = new Int32Array(m + 1);
  add(g, cur, 0, 0);
  for (let i = 0; i < s.length; i++) {
    if (!step(g, cur, next, s.charCodeAt(i), -1)) return false;
    [cur, next] = [next, cur];
  }
  return cur[m] !== -1;
}

/**
 * Calls `visit(start, end)` for the leftmost-longest, non-overlapping, non-empty matches of a
 * text glob, in order. Linear in the text for a given pattern; checks `deadline` as it goes.
 */
export function forEachMatch(
  g: CompiledGlob,
  text: string,
  visit: (start: number, end: number) => void,
  deadline: Deadline = NO_DEADLINE,
): void {
  let from = g.required ? text.indexOf(g.required) : 0;
  if (from < 0) return;
  const m = g.kinds.length;
  let cur = new Int32Array(m + 1);
  let next = new Int32Array(m + 1);
  // a match cannot start earlier than the run of non-whitespace before the required literal
  // when the glob begins with a star; before that, nothing to find
  from = g.kinds[0] === STAR ? Math.max(0, lastSpaceBefore(text, from) + 1) : 0;
  let i = from;
  while (i <= text.length) {
    cur.fill(-1);
    let bestS = -1;
    let bestE = -1;
    for (; i <= text.length; i++) {
      if ((i & 4095) === 0) deadline.check();
      if (bestS < 0) add(g, cur, 0, i);
      const s = cur[m];
      if (s !== -1 && i > s && (bestS < 0 || s < bestS || (s === bestS && i > bestE))) {
        bestS = s;
        bestE = i;
      }
      if (i === text.length) break;
      const alive = step(g, cur, next, text.charCodeAt(i), bestS);
      [cur, next] = [next, cur];
      if (bestS >= 0 && !alive) break;
    }
    if (bestS < 0) return;
    visit(bestS, bestE);
    i = bestE;
    if (g.required && text.indexOf(g.required, i) < 0) return;
  }
}

function lastSpaceBefore(text: string, at: number): number {
  for (let i = at - 1; i >= 0; i--) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}
