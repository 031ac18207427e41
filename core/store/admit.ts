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
