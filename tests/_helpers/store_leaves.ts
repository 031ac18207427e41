/**
 * A store's sessions as sorted leaves (`path = value`), to compare what two imports stored:
 * one pass over a log against slices of it, a worker's read against this thread's.
 */
import { FIXTURES } from "./fixtures.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";

/** The real agent CLIs' recordings. */
export const REAL = `${FIXTURES}/realclients`;

/** Every real agent CLI's recording that has a native home (each `native` folder under `REAL`). */
export async function realHomes(): Promise<string[]> {
  const out: string[] = [];
  for await (const agent of Deno.readDir(REAL)) {
    if (!agent.isDirectory) continue;
    for await (const s of Deno.readDir(`${REAL}/${agent.name}`)) {
      const native = `${REAL}/${agent.name}/${s.name}/native`;
      if (s.isDirectory && (await Deno.stat(native).catch(() => null))?.isDirectory) {
        out.push(native);
      }
    }
  }
  return out.sort();
}

/** The leaves of a value (`path = value`, keys sorted: the order a merge writes keys in is not what it holds). */
export function leaves(v: unknown, path: string, out: string[] = []): string[] {
  if (v && typeof v === "object") {
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [k, x] of entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      leaves(x, `${path}.${k}`, out);
    }
  } else out.push(`${path} = ${JSON.stringify(v)}`);
  return out;
}

/**
 * What a slice leaves to the log's last: each session's row in the session list (counts, first
 * prompt) and the analytics' statistics.
 */
export function settled(store: ChronicleStore): string[] {
  const out = store.listSessions({ limit: 1000 }).items.flatMap((s) => leaves(s, `${s.id}.list`));
  return leaves(store.stats(), "stats", out);
}

/**
 * Every session as the store holds it, as leaves, without its recording's id and import times
 * (the import's own), and what {@link settled} reads.
 */
export function sessions(store: ChronicleStore): string[] {
  const out: string[] = [];
  for (const s of store.listSessions({ limit: 1000 }).items) {
    const session = store.loadSession(s.id) as unknown as { recording: { id?: string } };
    delete session.recording.id;
    for (
      const e of (session as unknown as { provenance: { epochs: { imported_at?: string }[] } })
        .provenance.epochs
    ) delete e.imported_at; // when it ran
    leaves(session, s.id, out);
  }
  return [...out, ...settled(store)];
}

/** The leaves of `b` that are not leaves of `a`, and the other way round. */
export const difference = (a: string[], b: string[]) => {
  const sa = new Set(a), sb = new Set(b);
  return { only_whole: a.filter((x) => !sb.has(x)), only_sliced: b.filter((x) => !sa.has(x)) };
};
