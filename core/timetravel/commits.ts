/**
 * The commits around a session, placed on its timeline: the one it started from (recorded by
 * the agent, or the last before its first step) and the ones made while it ran, each matched
 * to the session's own git command that made it (by the hash the command printed) or else by
 * time. Uses the git engine; never runs git itself.
 */
import { commandLine, normalizePath, type PayloadReader } from "../causality/mod.ts";
import type { CommitInfo, GitEngine } from "../git/mod.ts";
import { parseToolInput, toolResultText } from "../model/mod.ts";
import type { CodeSession } from "./code_session.ts";
import type { CommitMark } from "./history.ts";

/** Git commands that make a commit. */
const COMMITTING =
  /\bgit\s+(?:-[Cc]\s+\S+\s+)*(?:commit|merge|cherry-pick|revert|am|rebase|pull|stash)\b/;
/** What `git commit` prints: `[main 1a2b3c4] subject`, `[main (root-commit) 1a2b3c4] subject`. */
const PRINTED = /^\[[^\]\n]*?\b([0-9a-f]{7,40})\]/gm;

/** A session step that ran a committing git command, with the hashes it printed. */
export interface GitStep {
  seq: number;
  op: string;
  ts_ms: number | null;
  command: string;
  printed: string[];
}

/** The session's steps that ran committing git commands. */
export function gitSteps(session: CodeSession, read: PayloadReader): GitStep[] {
  const out: GitStep[] = [];
  for (const t of session.timeline) {
    const op = session.operations[t.op];
    if (op.kind !== "exec") continue;
    const command = commandLine(parseToolInput(read(op.request, 64 * 1024)));
    if (!command || !COMMITTING.test(command)) continue;
    const text = toolResultText(read(op.response, 64 * 1024));
    out.push({
      seq: t.seq,
      op: t.op,
      ts_ms: op.ts_ms ?? null,
      command,
      printed: [...text.matchAll(PRINTED)].map((m) => m[1]),
    });
  }
  return out;
}

export interface SessionCommits {
  /** The commit the session started from; null when the repository had none. */
  start: CommitInfo | null;
  /** How the start was found: the agent recorded it, or the last commit before the session. */
  start_matched?: "recorded" | "time";
  /** Commits made while the session ran, oldest first, placed on the timeline. */
  during: CommitMark[];
}

/** Times of the session's first and last steps (ms); null without any time. */
export function sessionSpan(session: CodeSession): { start: number; end: number } | null {
  let start = Infinity, end = -Infinity;
  for (const op of Object.values(session.operations)) {
    if (op.ts_ms === undefined) continue;
    start = Math.min(start, op.ts_ms);
    end = Math.max(end, op.ts_ms);
  }
  const s = session.session;
  if (start === Infinity && s.started_at) start = Date.parse(s.started_at);
  if (end === -Infinity && s.ended_at) end = Date.parse(s.ended_at);
  if (!Number.isFinite(start)) return null;
  return { start, end: Number.isFinite(end) ? end : start };
}

/**
 * Finds and places the commits. `repoRoot` is the repository's top folder (paths of changed
 * files are made absolute against it).
 */
export async function findCommits(
  git: GitEngine,
  repoRoot: string,
  session: CodeSession,
  read: PayloadReader,
): Promise<SessionCommits> {
  const span = sessionSpan(session);
  const recorded = session.session.project.git?.commit;
  let start: CommitInfo | null = null;
  let startMatched: SessionCommits["start_matched"];
  if (recorded && /^[0-9a-f]{7,40}$/.test(recorded)) {
    start = await git.commit(repoRoot, recorded);
    if (start) startMatched = "recorded";
  }
  if (!start && span) {
    start = await git.commitAt(repoRoot, span.start);
    if (start) startMatched = "time";
  }
  if (!span) return { start, ...(startMatched ? { start_matched: startMatched } : {}), during: [] };
  // git keeps seconds; a commit in the session's last second is still the session's.
  const found = await git.commitsBetween(repoRoot, span.start, span.end + 1999, { limit: 500 });
  const during = found.filter((c) =>
    c.sha !== start?.sha && c.committedMs >= (start?.committedMs ?? -Infinity)
  )
    .reverse();
  const steps = gitSteps(session, read);
  const times = session.timeline.map((t) => session.operations[t.op].ts_ms ?? null);
  const marks: CommitMark[] = [];
  const claimed = new Set<number>();
  for (const c of during) {
    let after: number | undefined;
    let matched: CommitMark["matched"] = "time";
    const printed = steps.find((s) => s.printed.some((p) => c.sha.startsWith(p)));
    if (printed) {
      after = printed.seq;
      matched = "command";
    } else {
      // A committing step with no hash printed, in the seconds around the commit.
      const near = steps.find((s) =>
        !s.printed.length && !claimed.has(s.seq) && s.ts_ms !== null &&
        c.committedMs >= Math.floor(s.ts_ms / 1000) * 1000 - 1000 &&
        c.committedMs <= s.ts_ms + 120_000
      );
      if (near) {
        after = near.seq;
        matched = "command";
        claimed.add(near.seq);
      }
    }
    if (after === undefined) {
      // By time alone: after the last step at or before the commit's second.
      after = -1;
      for (let i = 0; i < times.length; i++) {
        const ts = times[i];
        if (ts !== null && ts < c.committedMs + 1000) after = i;
      }
    }
    const parent = c.parents[0];
    const changed: { path: string; from?: string }[] = parent
      ? await git.changedFiles(repoRoot, parent, c.sha)
      : await git.tree(repoRoot, c.sha);
    const files = new Set<string>();
    for (const f of changed) {
      files.add(normalizePath(f.path, repoRoot));
      if (f.from) files.add(normalizePath(f.from, repoRoot));
    }
    marks.push({
      sha: c.sha,
      subject: c.subject,
      committed_ms: c.committedMs,
      after,
      matched,
      files: [...files],
    });
  }
  marks.sort((a, b) => a.after - b.after || a.committed_ms - b.committed_ms);
  return { start, ...(startMatched ? { start_matched: startMatched } : {}), during: marks };
}
