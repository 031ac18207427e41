/**
 * Full-text search over every operation (FTS5, ranked by BM25, with highlighted snippets).
 */
import type { PayloadStore } from "./payloads.ts";
import { resultExcerpts, withSourceFile } from "./prepare.ts";
import type { Queries } from "./queries.ts";
import {
  ftsQuery,
  PREFIX_INDEXED,
  queryTerms,
  SEARCH_FILTERED_WINDOW,
  SEARCH_WINDOW,
} from "./search_query.ts";
import type { Sql } from "./_sql.ts";
import type { SearchHit, SessionQuery } from "./types.ts";

export class Search {
  constructor(
    private readonly sql: Sql,
    private readonly payloads: PayloadStore,
    private readonly queries: Queries,
  ) {}

  /**
   * Full-text search over every operation. Every word must appear (the last one as a prefix,
   * for search-as-you-type). The newest {@link SEARCH_WINDOW} matches are ranked by BM25, so a
   * common word costs the same as a rare one; `total` counts matches up to that window
   * (`total_capped` says when there are more).
   */
  search(
    q: string,
    f: SessionQuery = {},
  ): { total: number; total_capped: boolean; hits: SearchHit[] } {
    const terms = queryTerms(q);
    if (!terms.length) return { total: 0, total_capped: false, hits: [] };
    const { where, params } = this.queries.sessionWhere({ ...f, text: undefined }, "s");
    const limit = Math.min(Math.max(f.limit ?? 20, 1), 200);
    const offset = Math.max(f.offset ?? 0, 0);
    const filtered = where !== "";
    // Candidates: the newest matches with their BM25 score. A session filter is checked per
    // match, so its window is smaller and doubles as the count.
    const window = filtered ? SEARCH_FILTERED_WINDOW : SEARCH_WINDOW;
    const find = this.sql.stmt(
      filtered
        ? `SELECT f.rowid AS rowid, bm25(operations_fts) AS score FROM operations_fts f
             JOIN operations o ON o.rowid = f.rowid JOIN sessions s ON s.id = o.session_id
             WHERE operations_fts MATCH ? AND ${where.slice(6)}
             ORDER BY f.rowid DESC LIMIT ${window}`
        : `SELECT rowid, bm25(operations_fts) AS score FROM operations_fts
             WHERE operations_fts MATCH ? ORDER BY rowid DESC LIMIT ${window}`,
    );
    const run = (m: string) => find.all(m, ...params) as { rowid: number; score: number }[];
    // A last word of PREFIX_INDEXED characters has its own prefix index, and a shorter one is
    // matched whole; a longer one is tried whole first and expanded only when that finds too
    // little.
    const last = terms[terms.length - 1];
    let candidates: { rowid: number; score: number }[];
    if (last.length <= PREFIX_INDEXED) candidates = run(ftsQuery(q)!);
    else {
      candidates = run(ftsQuery(q, { prefix: false })!);
      if (candidates.length < offset + limit) {
        const seen = new Set(candidates.map((c) => c.rowid));
        // Whole-word hits keep their place ahead of prefix-only hits.
        const worst = Math.max(0, ...candidates.map((c) => c.score));
        for (const c of run(ftsQuery(q)!)) {
          if (!seen.has(c.rowid) && candidates.length < window) {
            candidates.push({ rowid: c.rowid, score: worst + 1 + c.score + 1e3 });
          }
        }
      }
    }
    // The window doubles as the count: past it, "more than" is all a person needs.
    const n = candidates.length;
    const capped = n === window;
    candidates.sort((x, y) => x.score - y.score || y.rowid - x.rowid);
    const detail = this.sql.stmt(
      `SELECT o.session_id, o.op_id, o.kind, o.tool, o.file, o.doc, s.title, s.first_prompt,
         s.source, s.project_path FROM operations o JOIN sessions s ON s.id = o.session_id
       WHERE o.rowid = ?`,
    );
    const rows = candidates.slice(offset, offset + limit).map((c) => ({
      ...(detail.get(c.rowid) as Record<string, string | number | null>),
      score: c.score,
    })) as Record<string, string | number | null>[];
    const hits = rows.map((r) => {
      const op = withSourceFile(String(r.doc), String(r.file));
      const text = [op.text, op.summary, op.target].filter(Boolean).join(" · ") ||
        (this.payloads.text(op.response, 4000) ?? "");
      let snippet = makeSnippet(text, terms);
      if (!snippet.some((s) => s.match)) {
        const bytes = "sha256" in (op.response ?? {})
          ? this.payloads.bytes((op.response as { sha256: string }).sha256)
          : null;
        for (const piece of bytes ? resultExcerpts(bytes) : []) {
          const alt = makeSnippet(piece, terms);
          if (alt.some((s) => s.match)) {
            snippet = alt;
            break;
          }
        }
      }
      return {
        session_id: String(r.session_id),
        op_id: String(r.op_id),
        seq: this.queries.seqOf(String(r.session_id), String(r.op_id)) ?? 0,
        kind: String(r.kind),
        tool: r.tool === null ? null : String(r.tool),
        rank: Number(r.score),
        snippet,
        session: {
          title: r.title === null ? null : String(r.title),
          first_prompt: r.first_prompt === null ? null : String(r.first_prompt),
          source: String(r.source),
          project_path: r.project_path === null ? null : String(r.project_path),
        },
      };
    });
    return { total: n, total_capped: capped, hits };
  }
}

/** A window of text around the first match, split into matched and plain segments. */
export function makeSnippet(
  text: string,
  terms: string[],
  width = 160,
): { text: string; match: boolean }[] {
  const flat = text.replace(/\s+/g, " ");
  if (!terms.length) return [{ text: flat.slice(0, width), match: false }];
  const re = new RegExp(
    terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
    "giu",
  );
  const first = flat.search(re);
  const from = Math.max(0, (first < 0 ? 0 : first) - Math.floor(width / 3));
  const window = flat.slice(from, from + width);
  const out: { text: string; match: boolean }[] = [];
  if (from > 0) out.push({ text: "…", match: false });
  let last = 0;
  for (const m of window.matchAll(re)) {
    if (m.index! > last) out.push({ text: window.slice(last, m.index), match: false });
    out.push({ text: m[0], match: true });
    last = m.index! + m[0].length;
  }
  if (last < window.length) out.push({ text: window.slice(last), match: false });
  if (from + width < flat.length) out.push({ text: "…", match: false });
  return out;
}
