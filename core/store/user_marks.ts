/**
 * What the user marks on a session: a name of their own (`user_title`) and a star
 * (`starred_at`), migration 12's columns. Only these functions write them; an import never
 * does (the session upsert of apply.ts lists its columns), so a re-import, a full re-read or
 * an appended log keeps them. Each change takes the next change stamp and marks the session
 * with it, so a live view of the session is sent its new summary (core/live/hub.ts).
 */
import { userTitle } from "../model/titles.ts";
import type { ChangeStamps } from "./change_stamps.ts";
import type { SessionMarks } from "./types.ts";
import type { Sql } from "./_sql.ts";

/**
 * Applies `marks` to session `id`; false when there is no such session. A name is kept as
 * `userTitle` (core/model/titles.ts) reads it: a RangeError when too long, before anything is
 * written. Starring a starred session keeps the time it was first starred.
 */
export function markSession(
  w: { sql: Sql; changes: ChangeStamps },
  id: string,
  marks: SessionMarks,
  now: string,
): boolean {
  const title = marks.title === undefined ? undefined : userTitle(marks.title ?? "");
  if (!w.sql.stmt("SELECT 1 FROM sessions WHERE id = ?").get(id)) return false;
  if (title === undefined && marks.starred === undefined) return true;
  const stamp = w.changes.next();
  if (title !== undefined) {
    w.sql.stmt("UPDATE sessions SET user_title = ? WHERE id = ?").run(title, id);
  }
  if (marks.starred === true) {
    w.sql.stmt("UPDATE sessions SET starred_at = coalesce(starred_at, ?) WHERE id = ?").run(
      now,
      id,
    );
  } else if (marks.starred === false) {
    w.sql.stmt("UPDATE sessions SET starred_at = NULL WHERE id = ?").run(id);
  }
  w.changes.settle(stamp, [id]);
  return true;
}
