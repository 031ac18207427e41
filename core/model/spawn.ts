/**
 * Which call spawned each sub-agent thread: the ONE rule, read by the store (the session view's
 * connections, deep links) and by export (sub-agents nested under their call). The log's own
 * word first; else the latest task call of a main thread, not already claimed, at or before
 * the thread's first step (threads placed earliest first); a parent that would make a cycle
 * (a call inside the thread itself or one of its descendants) is dropped.
 */
import type { Connection } from "./types.ts";

/** What the rule reads of a session; times are in one unit of the caller's choosing. */
export interface SpawnFacts {
  connections: readonly Pick<Connection, "id" | "kind" | "parent_op">[];
  /**
   * The task calls of main threads, in canonical order, with when each ran (null: unknown).
   * Asked only when some thread's parent is not named.
   */
  tasks(): readonly { op: string; at: number | null }[];
  /** When a sub-agent thread's first step ran; null when it has none or its time is unknown. */
  firstAt(connection: string): number | null;
  /** The thread an operation belongs to; undefined when the session has no such operation. */
  connectionOf(op: string): string | undefined;
}

/** A sub-agent thread's parent call; `guessed` when the log did not name it. */
export interface SpawnParent {
  op: string;
  guessed: boolean;
}

/** The parent call of each sub-agent thread that has one, by connection id. */
export function spawnParents(facts: SpawnFacts): Map<string, SpawnParent> {
  const out = new Map<string, SpawnParent>();
  const subagents = facts.connections.filter((c) => c.kind === "subagent");
  for (const c of subagents) {
    if (c.parent_op && facts.connectionOf(c.parent_op) !== undefined) {
      out.set(c.id, { op: c.parent_op, guessed: false });
    }
  }
  const claimed = new Set([...out.values()].map((p) => p.op));
  const orphans = subagents
    .filter((c) => !out.has(c.id))
    .map((c) => ({ id: c.id, first: facts.firstAt(c.id) ?? Infinity }))
    .sort((a, b) => a.first - b.first);
  const tasks = orphans.length ? facts.tasks() : [];
  for (const { id, first } of orphans) {
    let parent: string | undefined;
    for (const t of tasks) {
      if (!claimed.has(t.op) && (t.at ?? -Infinity) <= first) parent = t.op;
    }
    if (!parent) continue;
    claimed.add(parent);
    out.set(id, { op: parent, guessed: true });
  }
  // Drop a parent that lies inside the thread itself or one of its descendants.
  for (const [id] of out) {
    const seen = new Set<string>([id]);
    let at = facts.connectionOf(out.get(id)!.op);
    while (at && out.has(at) && !seen.has(at)) {
      seen.add(at);
      at = facts.connectionOf(out.get(at)!.op);
    }
    if (at && seen.has(at)) out.delete(id);
  }
  return out;
}
