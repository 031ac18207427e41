/**
 * What an import may write: a unit's deltas without those of forgotten sessions (forget.ts)
 * and of sessions in excluded projects (the exclude list), and the notes that let a unit be
 * read again once its project is no longer excluded. Run by `applyUnit` on every unit.
 */
import type { SessionIssue } from "../model/mod.ts";
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
  /** The unit's path: what earlier passes of it left out is carried over (see `EXCLUDED`). */
  path?: string;
}

/**
 * The code of a unit's note that a pass left out sessions of an excluded project. The note
 * names the project; while it stays excluded the note is carried over, and once it is not, the
 * next import reads the unit from its start (`excludedMarks`), so what was left out comes in.
 */
export const EXCLUDED = "excluded_project";

/** A unit's note of a project it holds sessions of that were left out. */
export interface ExcludedNote extends SessionIssue {
  code: typeof EXCLUDED;
  project: string;
}

const note = (project: string, file?: string): ExcludedNote => ({
  code: EXCLUDED,
  severity: "info",
  message: `Sessions of ${project} were not imported: it is on the exclude list`,
  ...(file ? { file } : {}),
  project,
});

/** The projects a unit's earlier passes left sessions of out (its notes), by unit path. */
export function excludedMarks(sql: Sql): Map<string, string[]> {
  const rows = sql.stmt(
    `SELECT path, issues FROM sources WHERE instr(issues, '"${EXCLUDED}"') > 0`,
  ).all() as { path: string; issues: string }[];
  return new Map(rows.map((r) => [
    r.path,
    (JSON.parse(r.issues) as ExcludedNote[]).filter((i) => i.code === EXCLUDED).map((i) =>
      i.project
    ),
  ]));
}

/**
 * A unit's result without the deltas the store must not take: those of forgotten sessions, and
 * those of sessions in an excluded project. `held` names the stored sessions of excluded
 * projects among them: they stay as they are (a full re-read of their file must not remove
 * what they have). The unit's issues get a note per excluded project left out, now or by an
 * earlier pass while it is still excluded. `result` is the unit's own when nothing changes.
 */
export function admitted(
  sql: Sql,
  unit: PreparedUnit,
  options: AdmitOptions = {},
): { result: PreparedUnit; held: Set<string> } {
  const held = new Set<string>();
  const excluded = options.excludedProject;
  const left = new Set<string>();
  if (excluded && options.path !== undefined) {
    const prev = sql.stmt("SELECT issues FROM sources WHERE path = ?").get(options.path) as
      | { issues: string }
      | undefined;
    if (prev?.issues.includes(`"${EXCLUDED}"`)) {
      for (const i of JSON.parse(prev.issues) as ExcludedNote[]) {
        if (i.code === EXCLUDED && excluded(i.project)) left.add(i.project);
      }
    }
  }
  const keep = unit.deltas.filter((d) => {
    if (isForgotten(sql, d.session_id)) return false;
    if (!excluded) return true;
    const stored = sql.stmt("SELECT project_path FROM sessions WHERE id = ?").get(d.session_id) as
      | { project_path: string | null }
      | undefined;
    const project = d.info.project?.path ?? stored?.project_path ?? null;
    if (project === null || !excluded(project)) return true;
    if (stored) held.add(d.session_id);
    left.add(project);
    return false;
  });
  if (keep.length === unit.deltas.length && !left.size) return { result: unit, held };
  const issues = [
    ...unit.issues.filter((i) => i.code !== EXCLUDED),
    ...[...left].sort().map((p) => note(p, options.path)),
  ];
  return { result: { ...unit, deltas: keep, issues }, held };
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
