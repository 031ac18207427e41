/**
 * Across changes: a change whose source read a file that an earlier change had written builds
 * on that change (A read -> B changed -> B read -> C changed). And per session, every file
 * touched with its reads, changes and searches in order, and the steps between them.
 */
import { countBelow } from "./_sorted.ts";
import type { OpFacts, SourceKind } from "./facts.ts";
import { displayPath } from "./paths.ts";
import type { ChangeLinks, Tier } from "./score.ts";

/** `to` used something `from` had changed: `via` (a source of `to`) saw `file` after `from`. */
export interface ChainEdge {
  from: string;
  from_seq: number;
  to: string;
  to_seq: number;
  via: string;
  via_seq: number;
  /** The file that carries the link (as displayed). */
  file: string;
  tier: Tier;
  score: number;
}

export type TouchRole = SourceKind | "change";

export interface FileEvent {
  seq: number;
  op: string;
  connection: string;
  role: TouchRole;
  /** For changes: what happened to the file. */
  action?: "write" | "edit" | "delete";
  tool?: string;
  failed: boolean;
  /** Steps of the session since this file's previous event (0 when adjacent). */
  gap: number;
}

export interface FileTouch {
  /** As displayed (relative to the project when inside it). */
  path: string;
  /** One normalised key for the file. */
  key: string;
  /** Whether the file lies in the session's project. */
  in_project: boolean;
  reads: number;
  changes: number;
  /** Searches and listings whose results named the file. */
  mentions: number;
  first_seq: number;
  last_seq: number;
  events: FileEvent[];
}

/**
 * The edges between changes: for every source of a change that saw a file (read it, or found
 * it in its results), the latest successful change of that file before the source.
 */
export function chainEdges(
  facts: OpFacts[],
  links: ChangeLinks[],
  options: { project?: string } = {},
): ChainEdge[] {
  const bySeq = new Map<number, number>();
  facts.forEach((f, i) => bySeq.set(f.seq, i));
  const changesOf = new Map<string, number[]>();
  facts.forEach((f, i) => {
    if (!f.change || f.change.failed) return;
    for (const p of f.change.files) {
      const list = changesOf.get(p);
      if (list) list.push(i);
      else changesOf.set(p, [i]);
    }
  });
  const edges: ChainEdge[] = [];
  for (const link of links) {
    const best = new Map<string, ChainEdge>();
    for (const s of link.sources) {
      const key = s.evidence.key;
      if (!key || s.evidence.via === "pattern") continue;
      const list = changesOf.get(key);
      if (!list) continue;
      const k = countBelow(list, bySeq.get(s.seq) ?? -1) - 1;
      if (k < 0) continue;
      const from = facts[list[k]];
      const edge: ChainEdge = {
        from: from.op,
        from_seq: from.seq,
        to: link.op,
        to_seq: link.seq,
        via: s.op,
        via_seq: s.seq,
        file: displayPath(key, options.project),
        tier: s.tier,
        score: s.score,
      };
      const had = best.get(from.op);
      if (!had || had.score < edge.score || (had.score === edge.score && had.via_seq < s.seq)) {
        best.set(from.op, edge);
      }
    }
    edges.push(...[...best.values()].sort((a, b) => b.score - a.score || b.from_seq - a.from_seq));
  }
  return edges;
}

/**
 * The chain that leads to a change: from the change back through the strongest edge at each
 * step, oldest first. Ends where no earlier change fed in.
 */
export function chainTo(
  edges: ChainEdge[],
  op: string,
  options: { max?: number } = {},
): ChainEdge[] {
  const into = new Map<string, ChainEdge>();
  for (const e of edges) {
    const had = into.get(e.to);
    if (!had || had.score < e.score || (had.score === e.score && had.from_seq < e.from_seq)) {
      into.set(e.to, e);
    }
  }
  const out: ChainEdge[] = [];
  const seen = new Set<string>([op]);
  let at = into.get(op);
  while (at && out.length < (options.max ?? 50) && !seen.has(at.from)) {
    out.push(at);
    seen.add(at.from);
    at = into.get(at.from);
  }
  return out.reverse();
}

/** Every file the session read or changed, with its events in order. */
export function filesTouched(facts: OpFacts[], options: { project?: string } = {}): FileTouch[] {
  const events = new Map<string, FileEvent[]>();
  const add = (
    key: string,
    f: OpFacts,
    e: Omit<FileEvent, "seq" | "op" | "connection" | "gap">,
  ) => {
    const list = events.get(key) ?? [];
    if (!events.has(key)) events.set(key, list);
    const last = list[list.length - 1];
    if (last && last.op === f.op && last.role === e.role) return;
    list.push({ seq: f.seq, op: f.op, connection: f.connection, ...e, gap: 0 });
  };
  for (const f of facts) {
    const s = f.source;
    if (s) {
      for (const p of s.files) add(p, f, { role: "read", failed: s.failed, tool: f.tool });
    }
    const c = f.change;
    if (c) {
      for (const p of c.files) {
        if (/[*?[]/.test(p)) continue;
        add(p, f, { role: "change", action: c.actions.get(p), failed: c.failed, tool: f.tool });
      }
    }
  }
  // Searches and listings count only for files that were read or changed.
  for (const f of facts) {
    const s = f.source;
    if (!s || !s.named.size) continue;
    for (const p of s.named.keys()) {
      if (events.has(p)) add(p, f, { role: s.kind, failed: false, tool: f.tool });
    }
  }
  const root = options.project ? displayPath(options.project) : undefined;
  const out: FileTouch[] = [];
  for (const [key, list] of events) {
    list.sort((a, b) => a.seq - b.seq || (a.role === "change" ? 1 : -1));
    for (let i = 1; i < list.length; i++) {
      list[i].gap = Math.max(0, list[i].seq - list[i - 1].seq - 1);
    }
    const path = displayPath(key, options.project);
    out.push({
      path,
      key,
      in_project: root !== undefined && path !== key,
      reads: list.filter((e) => e.role === "read").length,
      changes: list.filter((e) => e.role === "change").length,
      mentions: list.filter((e) => e.role === "search" || e.role === "list").length,
      first_seq: list[0].seq,
      last_seq: list[list.length - 1].seq,
      events: list,
    });
  }
  return out.sort((a, b) => b.changes - a.changes || a.path.localeCompare(b.path));
}
