/**
 * Snapshot testing for canonical output: values are normalised (fixture roots, import times,
 * inode and mtime) and compared with a JSON file under __snapshots__/. Regenerate with
 * UPDATE_SNAPSHOTS=1; a missing snapshot fails, so CI never passes by writing one.
 */
import { assertEquals } from "../../_helpers/assert.ts";

const DIR = new URL("./__snapshots__/", import.meta.url);
const VOLATILE = new Set([
  "inode",
  "mtime_ms",
  "db_mtime_ms",
  "wal_mtime_ms",
  "imported_at",
  "exported_at",
  "tail_sha256",
]);

/** Replaces machine-specific values so a snapshot is the same on every checkout. */
export function normalize(value: unknown, roots: Record<string, string> = {}): unknown {
  const replaceRoots = (s: string) => {
    for (const [root, name] of Object.entries(roots)) s = s.split(root).join(name);
    return s.replace(/^rec_[0-9a-f-]{36}$/, "rec_<uuid>");
  };
  const walk = (v: unknown, key?: string): unknown => {
    if (key && VOLATILE.has(key) && v !== null && v !== undefined) return `<${key}>`;
    if (typeof v === "string") return replaceRoots(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[replaceRoots(k)] = walk(x, k);
      return out;
    }
    return v;
  };
  return walk(value);
}

export async function assertSnapshot(name: string, value: unknown): Promise<void> {
  const file = new URL(`${name.replace(/[^A-Za-z0-9._-]/g, "_")}.json`, DIR);
  const actual = JSON.parse(JSON.stringify(value));
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") {
    await Deno.mkdir(DIR, { recursive: true });
    await Deno.writeTextFile(file, JSON.stringify(actual, null, 1) + "\n");
    return;
  }
  let expected: unknown;
  try {
    expected = JSON.parse(await Deno.readTextFile(file));
  } catch {
    throw new Error(`Snapshot ${name} is missing: run the tests with UPDATE_SNAPSHOTS=1`);
  }
  assertEquals(actual, expected, `snapshot ${name} differs (UPDATE_SNAPSHOTS=1 to accept)`);
}
