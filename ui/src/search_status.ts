/**
 * The search palette's status line: how many steps matched, how long the search took, and the
 * hint that fits what was typed (quotes for a phrase; when nothing matched, why that may be).
 * Pure, so a test reads every case.
 */

export interface SearchStatus {
  /** The matches counted, null before any answer. */
  total: number | null;
  /** The count is a floor ("at least"). */
  capped: boolean;
  ms: number | null;
  /** The query as typed. */
  query: string;
  /** The search looks in an agent, a project or days, not every session. */
  narrowed: boolean;
}

export const STATUS_IDLE =
  "Type to search prompts, replies, commands and outputs. ↑↓ to move, Enter to open, Esc to close.";

export function searchStatus(s: SearchStatus): string {
  if (s.total === null) return STATUS_IDLE;
  const took = ` · ${s.ms} ms`;
  const oneLetter = shortLastWord(s.query) ? " · a one-letter word is matched whole" : "";
  if (s.total === 0 && !s.capped) {
    // (the server looks for every chunk typed in one step: words, identifiers, phrases)
    const why = s.narrowed
      ? " · All sessions searches everywhere"
      : chunks(s.query) > 1
      ? " · every word must be in the same step"
      : ' · "quotes" for a phrase';
    return `No matches${s.narrowed ? " in these sessions" : ""}${took}${oneLetter}${why}`;
  }
  const count = `${s.capped ? "at least " : ""}${s.total.toLocaleString("en-US")} ${
    s.total === 1 && !s.capped ? "match" : "matches"
  }`;
  return `${count}, newest first${took}${oneLetter} · "quotes" for a phrase`;
}

/** The server matches a last word of one character whole, not as a beginning. */
export function shortLastWord(text: string): boolean {
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  const last = words[words.length - 1] ?? "";
  return last.length === 1 && /[\p{L}\p{N}]$/u.test(text);
}

/** How many parts a query has as the server splits it: quoted phrases and other chunks. */
function chunks(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/"([^"]*)"?|[^\s"]+/gu)) {
    if (/[\p{L}\p{N}]/u.test(m[1] ?? m[0])) n++;
  }
  return n;
}
