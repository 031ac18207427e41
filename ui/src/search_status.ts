/**
 * The search palette's status line: how many steps matched, how long the search took, and the
 * hint that fits what was typed (quotes for a phrase; when nothing matched, why that may be).
 * Pure, so a test reads every case. The query is read by the server's own rule
 * (core/store/search_query.ts), so a hint never tells a query apart differently from the search.
 */
import { queryParts } from "../../core/store/search_query.ts";

export interface SearchStatus {
  /** The matches counted, null before any answer. */
  total: number | null;
  /** The count is a floor ("at least"). */
  capped: boolean;
  ms: number | null;
  /** The query the count answers. */
  query: string;
  /** The search looks in an agent, a project or days, not every session. */
  narrowed: boolean;
  /** The index is still being built: steps not yet in it match nothing for now. */
  indexing?: boolean;
}

export const STATUS_IDLE =
  "Type to search prompts, replies, commands and outputs. ↑↓ to move, Enter to open, Esc to close.";

export function searchStatus(s: SearchStatus): string {
  if (s.total === null) return STATUS_IDLE;
  const parts = queryParts(s.query);
  const took = ` · ${s.ms} ms`;
  if (!parts.length) return `No words to search for: a word is letters or digits${took}`;
  const last = parts[parts.length - 1];
  // (the word being typed is a prefix from MIN_PREFIX characters: a shorter one is matched whole)
  const oneLetter = last.typed && !last.prefix ? " · a one-letter word is matched whole" : "";
  if (s.indexing && s.total === 0 && !s.capped) return `No matches yet${took}${oneLetter}`;
  if (s.total === 0 && !s.capped) {
    // (the search looks for every part typed in one step: words, identifiers, phrases)
    const why = s.narrowed
      ? " · All sessions searches everywhere"
      : parts.length > 1
      ? " · every word must be in the same step"
      : ' · "quotes" for a phrase';
    return `No matches${s.narrowed ? " in these sessions" : ""}${took}${oneLetter}${why}`;
  }
  const count = `${s.capped ? "at least " : ""}${s.total.toLocaleString("en-US")} ${
    s.total === 1 && !s.capped ? "match" : "matches"
  }${s.indexing && !s.capped ? " so far" : ""}`;
  return `${count}, newest first${took}${oneLetter} · "quotes" for a phrase`;
}

/** How far the search index is, as GET /api/search says while it is being built. */
export interface Indexing {
  phase: "discovering" | "importing" | "indexing";
  percent: number | null;
  /** Stored steps not in the index yet. */
  unindexed: number;
}

/** Some steps may still be missing from the hits: a count is "so far". */
export function stillIndexing(i: Indexing | null): boolean {
  return i !== null && (i.phase !== "indexing" || i.unindexed > 0);
}

/** The note under the status while a first import runs: what is not searchable yet. */
export function indexingNote(i: Indexing): string {
  if (i.phase !== "indexing") {
    return `The index is still being built (${i.percent}% imported): some sessions are not searchable yet.`;
  }
  const pct = i.percent === null ? "" : ` (${i.percent}%)`;
  // (the backlog is empty before the pass ends: its payloads are compressed after)
  if (!i.unindexed) return `Every step is searchable; the import is finishing${pct}.`;
  return `Sessions are all stored; search is still indexing${pct}: ${
    i.unindexed.toLocaleString("en-US")
  } step${i.unindexed === 1 ? " is" : "s are"} not searchable yet.`;
}
