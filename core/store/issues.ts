/**
 * What imports recorded as going wrong, for `chronicle issues`: each session's issues (info
 * notes apart), its loss windows (log lines that could not be read), and the problems of whole
 * units (a corrupt or locked database) from their last pass.
 */
import type { LossWindow, SessionIssue } from "../model/mod.ts";
import type { Sql } from "./_sql.ts";
import type { ImportIssues } from "./types.ts";

export function importIssues(
  sql: Sql,
  options: { sessionId?: string; limit?: number; notes?: boolean } = {},
): ImportIssues {
  const limit = Math.min(Math.max(options.limit ?? 200, 1), 10_000);
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (options.sessionId) {
    where.push("session_id = ?");
    params.push(options.sessionId);
  }
  const issueWhere = [...where];
  if (!options.notes) issueWhere.push("json_extract(doc, '$.severity') IS NOT 'info'");
  const w = (c: string[]) => (c.length ? `WHERE ${c.join(" AND ")}` : "");
  const issueRows = sql.stmt(
    `SELECT session_id, doc FROM session_issues ${w(issueWhere)} ORDER BY session_id, file LIMIT ?`,
  ).all(...params, limit) as { session_id: string; doc: string }[];
  const lossRows = sql.stmt(
    `SELECT session_id, doc FROM loss_windows ${w(where)} ORDER BY session_id, file LIMIT ?`,
  ).all(...params, limit) as { session_id: string; doc: string }[];
  const units: ImportIssues["units"] = [];
  if (!options.sessionId) {
    const rows = sql.stmt(
      `SELECT path, source, issues FROM sources WHERE issues IS NOT NULL AND issues <> '[]' ORDER BY path`,
    ).all() as { path: string; source: string; issues: string }[];
    for (const r of rows) {
      const issues = (JSON.parse(r.issues) as SessionIssue[]).filter((i) =>
        options.notes || i.severity !== "info"
      );
      if (issues.length) units.push({ file: r.path, source: r.source, issues });
    }
  }
  return {
    total_issues: sql.count(
      `SELECT count(*) AS n FROM session_issues ${w(issueWhere)}`,
      ...params,
    ),
    total_loss_windows: sql.count(`SELECT count(*) AS n FROM loss_windows ${w(where)}`, ...params),
    units,
    issues: issueRows.map((r) => ({
      session_id: r.session_id,
      ...(JSON.parse(r.doc) as SessionIssue),
    })),
    loss_windows: lossRows.map((r) => ({
      session_id: r.session_id,
      ...(JSON.parse(r.doc) as LossWindow),
    })),
  };
}
