/**
 * @module
 * What the CLI and the server both need around a replay: reading a project file for the final
 * comparison (never outside the repository, symlinks resolved), and whether a session was the
 * last in the store to touch its project.
 */
import { isInside, relativeInside } from "../core/git/mod.ts";
import type { CanonicalSession } from "../core/model/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";

/** A file of the project's working tree; null when absent, not a file, or leading outside. */
export async function readProjectFile(root: string, path: string): Promise<Uint8Array | null> {
  const rel = relativeInside(root, path, "repository");
  try {
    const real = await Deno.realPath(`${root}/${rel}`);
    if (!isInside(await Deno.realPath(root), real)) return null;
    return (await Deno.stat(real)).isFile ? await Deno.readFile(real) : null;
  } catch {
    return null;
  }
}

/** True when no other session in the store started in the same project after this one ended. */
export function lastToTouch(store: ChronicleStore | null, session: CanonicalSession): boolean {
  const project = session.session.project.path;
  if (!store || !project) return true;
  const ended = session.session.ended_at ?? session.session.started_at ?? "";
  return !store.listSessions({ project, from: ended, limit: 50 }).items.some((s) =>
    s.id !== session.session.id && (s.started_at ?? "") > ended &&
    (s.project_path ?? "") === project
  );
}
