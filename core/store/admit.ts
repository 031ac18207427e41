/**
 * What an import may write: a unit's deltas without those of forgotten sessions (forget.ts)
 * and of sessions in excluded projects (the exclude list). Run by `applyUnit` on every unit.
 */
import type { PreparedUnit } from "./prepare.ts";
import type { Sql } from "./_sql.ts";

/** True when the session was forgotten. */
export function isForgotten(sql: Sql, id: string): boolean {
  return sql.stmt("SELECT 1 FROM forgotten WHERE session_id = ?").get(id) !== undefined;
}

/** Options of `admitted`. */
export interface AdmitOptions {
  /** True for a project folder whose sessions are not imported (the exclude list). */
  excludedProject?: (path: string) => boolean;
}

/**
 * A unit's result without the deltas the store must not take: those of forgotten sessions, and
 * those of sessions in an excluded project. `held` names the stored sessions of excluded
 * projects among them: they stay as they are (a full re-read of their file must not remove
 * what they have). `result` is the unit's own when nothing is dropped.
 */
export function admitted(
  sql: Sql,
  unit: PreparedUnit,
  options: AdmitOptions = {},
): { result: PreparedUnit; held: Set<string> } {
  const held = new Set<string>();
  if (!unit.deltas.length) return { result: unit, held };
  const excluded = options.excludedProject;
  const keep = unit.deltas.filter((d) => {
    if (isForgotten(sql, d.session_id)) return false;
    if (!excluded) return true;
    const stored = sql.stmt("SELECT project_path FROM sessions WHERE id = ?").get(d.session_id) as
      | { project_path: string | null }
      | undefined;
    const project = d.info.project?.path ?? stored?.project_path ?? null;
    if (project === null || !excluded(project)) return true;
    if (stored) held.add(d.session_id);
    return false;
  });
  return {
    result: keep.length === unit.deltas.length ? unit : { ...unit, deltas: keep },
    held,
  };
}

/**
 * The source units that feed only stored sessions of excluded projects: an import leaves them
 * unread (their sessions stay as they are; their checkpoints too, so what was written meanwhile
 * is read once the project is no longer excluded).
 */
export function heldUnits(sql: Sql, excludedProject: (path: string) => boolean): Set<string> {
  const rows = sql.stmt(
    `SELECT src.path AS path, s.project_path AS project, s.id IS NOT NULL AS stored
     FROM sources src, json_each(src.sessions) j LEFT JOIN sessions s ON s.id = j.value`,
  ).all() as { path: string; project: string | null; stored: number }[];
  const held = new Map<string, boolean>();
  for (const r of rows) {
    const excluded = r.stored === 1 && r.project !== null && excludedProject(r.project);
    held.set(r.path, (held.get(r.path) ?? true) && excluded);
  }
  return new Set([...held].filter(([, h]) => h).map(([p]) => p));
}
