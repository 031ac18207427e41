/**
 * A file as it was after any step of a session: the text of the commit nearest before the
 * step (or the session's start), then every change the session recorded for that file since
 * the last commit that holds them, each line marked with the step that wrote it. Pure: the
 * commit texts come through an injected loader.
 */
import { diffArrays } from "diff";
import { applyEdit, type ApplyStatus, type StepEdit } from "./edits.ts";
import { type Observation, sameText } from "./observed.ts";

/** A commit placed on the session's timeline: it exists for every state after step `after`. */
export interface CommitMark {
  sha: string;
  subject: string;
  committed_ms: number;
  /** The step after which the commit exists; -1 for the commit the session started from. */
  after: number;
  /** How its place was found: the session's start, the session's own git command, or time. */
  matched: "start" | "command" | "time";
  /** Files it changed (normalised absolute paths); absent for the start commit. */
  files?: string[];
}

/** The text of a file at a commit: null when the commit has no such file, undefined when unknowable. */
export type CommitText = (sha: string, path: string) => Promise<string | null | undefined>;

/** Where a run of lines comes from: the base (the commit, or what was known) or a step. */
export interface LineRun {
  /** First line (0-based) and one past the last. */
  start: number;
  end: number;
  /** The step that wrote these lines; null for the base. */
  seq: number | null;
}

export type FileStatus =
  /** Every change of the session was applied as recorded. */
  | "exact"
  /** A recorded change could not be applied to the text Chronicle had (see notes). */
  | "diverged"
  /** A change does not say what it wrote (a script, sed -i, ...): the text is the last known one. */
  | "unknown";

export interface FileState {
  path: string;
  /** Whether the file exists after the step; null when that is not known. */
  exists: boolean | null;
  text: string | null;
  /** Where the text started from. */
  base: {
    /** `recorded`: the log showed the whole file at step `seq` (a read, an edit's original). */
    kind: "commit" | "absent" | "recorded" | "unknown";
    commit?: string;
    /** For a base read from the log: the step whose record said what the file was before it. */
    seq?: number;
  };
  /** The session's steps applied on top of the base, in order. */
  steps: { seq: number; status: ApplyStatus; detail?: string }[];
  status: FileStatus;
  notes: string[];
  lines: LineRun[];
}

/** Everything the history needs about a session, prepared once by {@link createHistory}. */
export interface History {
  /** Commits in timeline order, the start commit first (when there is one). */
  commits: CommitMark[];
  /** Every file edit of the session, in timeline order. */
  edits: StepEdit[];
  /** The edits of each file, in timeline order. */
  byPath: Map<string, StepEdit[]>;
  /** What whole-file reads showed of each file, in timeline order. */
  observed: Map<string, Observation[]>;
  /** Loads a file's text at a commit. */
  commitText: CommitText;
}

/** Builds a history from the placed commits and the session's file edits. */
export function createHistory(
  commits: CommitMark[],
  edits: StepEdit[],
  commitText: CommitText,
  observations: Observation[] = [],
): History {
  const sorted = [...commits].sort((a, b) => a.after - b.after || a.committed_ms - b.committed_ms);
  const byPath = new Map<string, StepEdit[]>();
  for (const e of edits) {
    const list = byPath.get(e.path);
    if (list) list.push(e);
    else byPath.set(e.path, [e]);
  }
  const observed = new Map<string, Observation[]>();
  for (const o of observations) {
    const list = observed.get(o.path);
    if (list) list.push(o);
    else observed.set(o.path, [o]);
  }
  return { commits: sorted, edits, byPath, observed, commitText };
}

/** The commit in force after step `seq`: the last one placed at or before it. */
export function commitAt(commits: CommitMark[], seq: number): CommitMark | undefined {
  let out: CommitMark | undefined;
  for (const c of commits) if (c.after <= seq) out = c;
  return out;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The origins of `after`'s lines, given `before`'s lines and origins: new lines get `seq`. */
function carryOrigins(
  before: string[],
  origins: (number | null)[],
  after: string[],
  seq: number,
): (number | null)[] {
  const out: (number | null)[] = [];
  let i = 0;
  for (const part of diffArrays(before, after)) {
    const n = part.value.length;
    if (part.removed) i += n;
    else if (part.added) { for (let k = 0; k < n; k++) out.push(seq); }
    else {
      for (let k = 0; k < n; k++) out.push(origins[i + k] ?? null);
      i += n;
    }
  }
  return out;
}

function runsOf(origins: (number | null)[]): LineRun[] {
  const runs: LineRun[] = [];
  for (let i = 0; i < origins.length; i++) {
    const last = runs[runs.length - 1];
    if (last && last.seq === origins[i] && last.end === i) last.end = i + 1;
    else runs.push({ start: i, end: i + 1, seq: origins[i] });
  }
  return runs;
}

/** Options of {@link fileState}. */
export interface FileStateOptions {
  /** Line origins cost a diff per step; leave them out for big or many files. Default true. */
  lines?: boolean;
}

type Event = { seq: number; edit: StepEdit } | { seq: number; seen: Observation };

/**
 * The file at `path` (normalised, absolute) as it was after step `seq`. Steps run from the
 * last commit at or before `seq` that changed the file (or the session's start). What the log
 * shows of the file itself (a whole-file read, the text an edit started from) is the truth at
 * its step: where the rebuilt text differs, the recorded one wins and a note says so.
 */
export async function fileState(
  h: History,
  path: string,
  seq: number,
  options: FileStateOptions = {},
  depth = 0,
): Promise<FileState> {
  const withLines = options.lines !== false;
  const commit = commitAt(h.commits, seq);
  // The last commit up to `seq` that changed the file holds the session's changes before it.
  let since = -1;
  for (const c of h.commits) {
    if (c.after <= seq && c.after >= 0 && c.files?.includes(path)) since = c.after;
  }
  const state: FileState = {
    path,
    exists: null,
    text: null,
    base: { kind: "unknown" },
    steps: [],
    status: "exact",
    notes: [],
    lines: [],
  };
  let text: string | null | undefined = undefined;
  if (commit) {
    text = await h.commitText(commit.sha, path);
    if (text !== undefined) {
      state.base = text === null
        ? { kind: "absent", commit: commit.sha }
        : { kind: "commit", commit: commit.sha };
    }
  }
  const events: Event[] = [
    ...(h.byPath.get(path) ?? []).map((edit) => ({ seq: edit.seq, edit })),
    ...(h.observed.get(path) ?? []).map((seen) => ({ seq: seen.seq, seen })),
  ].filter((e) => e.seq > since).sort((a, b) => a.seq - b.seq);
  if (text === undefined) {
    // No commit to start from: the log may say what the file was before its first change.
    const first = events.find((e) => !("edit" in e) || !e.edit.failed);
    if (first && "edit" in first && first.edit.created) {
      text = null;
      state.base = { kind: "absent", seq: first.seq };
    }
  }
  let lines = text ? splitLines(text) : [];
  let origins: (number | null)[] = lines.map(() => null);

  /** Takes the text the log shows at a step as the truth from there. */
  const adopt = (shown: string, at: number, eolUnknown: boolean, what: string) => {
    if (text === undefined) state.base = { kind: "recorded", seq: at };
    else if (text !== null && sameText(text, shown, eolUnknown)) return;
    else {
      state.notes.push(
        `${what} at step ${
          at + 1
        } differs from what Chronicle rebuilt (uncommitted work, or a change outside the session or one the log does not spell out); the recorded text is used from there`,
      );
    }
    if (eolUnknown && text && !text.endsWith("\n") && shown.endsWith("\n")) {
      shown = shown.slice(0, -1);
    }
    const next = splitLines(shown);
    origins = withLines && text
      ? carryOrigins(lines, origins, next, -1).map((o) => (o === -1 ? null : o))
      : next.map(() => null);
    text = shown;
    lines = next;
    state.status = "exact";
  };

  for (const ev of events) {
    if (ev.seq > seq) break;
    if ("seen" in ev) {
      adopt(ev.seen.text, ev.seq, ev.seen.eolUnknown, "The file as the agent read it");
      continue;
    }
    const e = ev.edit;
    if (e.before !== undefined && !e.failed) {
      adopt(e.before, e.seq, false, "The file as the agent's edit found it");
    }
    let source: string | null | undefined;
    if (e.edit.kind === "copy" && depth < 8) {
      const from = await fileState(h, e.edit.from, e.seq - 1, { lines: false }, depth + 1);
      source = from.exists === false ? null : from.status === "unknown" ? undefined : from.text;
    }
    const settles = e.edit.kind === "write" || e.edit.kind === "delete" ||
      (e.edit.kind === "copy" && source !== undefined);
    if (text === undefined && !settles) {
      state.steps.push({
        seq: e.seq,
        status: "unknown",
        detail: "the text before it is not known",
      });
      state.status = "unknown";
      continue;
    }
    const r = applyEdit(text ?? null, e, source);
    state.steps.push({ seq: e.seq, status: r.status, ...(r.detail ? { detail: r.detail } : {}) });
    if (r.status === "unknown") {
      state.status = "unknown";
      state.notes.push(
        `Step ${e.seq + 1} changed the file in a way the log does not show (${r.detail})`,
      );
      continue;
    }
    if (r.status === "not_applied") {
      if (!e.failed) {
        state.status = state.status === "unknown" ? "unknown" : "diverged";
        state.notes.push(`Step ${e.seq + 1} did not apply to the rebuilt text: ${r.detail}`);
      }
      continue;
    }
    const next = r.after === null ? [] : splitLines(r.after);
    origins = withLines ? carryOrigins(lines, origins, next, e.seq) : next.map(() => e.seq);
    // A whole new text (or a delete) settles the file, whatever was known before.
    if (settles) state.status = "exact";
    text = r.after;
    lines = next;
  }
  if (text === undefined || state.status === "unknown") {
    // Not known here, but the log shows the file at its next event: nothing the session did
    // touched it in between.
    const next = events.find((e) => e.seq > seq && (!("edit" in e) || !e.edit.failed));
    const shown = next &&
      ("seen" in next ? next.seen.text : next.edit.created ? null : next.edit.before);
    if (next && shown !== undefined) {
      if (text === undefined) {
        state.base = { kind: shown === null ? "absent" : "recorded", seq: next.seq };
      } else state.notes.push(`The text is the one the log shows at step ${next.seq + 1}`);
      text = shown;
      lines = shown === null ? [] : splitLines(shown);
      origins = lines.map(() => null);
      state.status = "exact";
    }
  }
  state.text = text ?? null;
  state.exists = text === undefined ? null : text !== null;
  if (text === undefined) state.status = "unknown";
  state.lines = withLines && text ? runsOf(origins) : [];
  return state;
}

/** Every file the session's edits touch, in the order first touched. */
export function editedPaths(h: History): string[] {
  return [...h.byPath.keys()];
}
