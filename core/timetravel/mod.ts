/**
 * @module
 * Time travel: the code as it was at any step of a session. A file after step N is the commit
 * nearest before N plus the session's own recorded changes up to N (so uncommitted work shows
 * too), every part marked by where it comes from; the project's tree likewise; the diff of a
 * change against the file just before it; and per session "what changed": every file it
 * changed with its net diff, and the commits made while it ran. Git is reached only through
 * the git engine (core/git); without a repository (none, or the project is gone) only the
 * recorded changes are shown, and marked so.
 */
import { createTwoFilesPatch } from "diff";
import {
  displayPath,
  normalizePath,
  type OpFacts,
  type PayloadReader,
  sessionFacts,
} from "../causality/mod.ts";
import type { GitEngine, TreeEntry } from "../git/mod.ts";
import { type CanonicalSession, ChronicleError } from "../model/mod.ts";
import { findCommits } from "./commits.ts";
import { type CodeInputs, codeInputs } from "./code_session.ts";
import { PAGE_STEPS } from "../paged.ts";
import { type Observation, observe } from "./observed.ts";
import { type StepEdit, stepEdits } from "./edits.ts";
import {
  commitAt,
  type CommitMark,
  createHistory,
  editedPaths,
  type FileState,
  fileState,
  type History,
} from "./history.ts";

export * from "./edits.ts";
export * from "./history.ts";
export * from "./commits.ts";
export * from "./observed.ts";
export * from "./code_session.ts";

/** What Chronicle knows of the session's project folder. */
export type RepoState =
  | { kind: "git"; root: string; head: string | null; branch: string | null; shallow: boolean }
  | { kind: "not_a_repo"; message: string }
  | { kind: "gone"; message: string }
  | { kind: "no_project"; message: string }
  | { kind: "no_git"; message: string };

export interface CommitView {
  sha: string;
  subject: string;
  committed_at: string;
  /** The step after which it exists (-1: before the session). */
  after: number;
  matched: "start" | "recorded" | "command" | "time";
}

export interface TreeEntryView {
  /** Relative to the project when inside it. */
  path: string;
  /** Where the file's presence and text come from. */
  origin: "commit" | "session" | "recorded";
  /** Against the commit in force. */
  state: "unchanged" | "added" | "modified" | "deleted";
  /** The session changed this file at or before the step (committed or not). */
  touched: boolean;
  /** The last step at or before this one that changed it. */
  last_seq?: number;
}

export interface TreeView {
  seq: number;
  repo: RepoState;
  commit: CommitView | null;
  entries: TreeEntryView[];
  /** Entries left out past the limit. */
  omitted: number;
}

export interface FileView extends Omit<FileState, "path"> {
  path: string;
  seq: number;
  repo: RepoState;
  commit: CommitView | null;
  /** The commit's blob is binary: no text is shown. */
  binary: boolean;
  /** The text was cut at the limit. */
  truncated: boolean;
}

export interface FileDiff {
  path: string;
  /** Unified diff (empty when the texts are equal or unknown). */
  patch: string;
  before: { exists: boolean | null; status: FileState["status"] };
  after: { exists: boolean | null; status: FileState["status"] };
  /** How the step's edit went (for a change's own diff). */
  applied?: FileState["steps"][number];
  notes: string[];
  added: number;
  removed: number;
}

export interface ChangeView {
  seq: number;
  op: string;
  files: FileDiff[];
}

export interface SessionChanges {
  repo: RepoState;
  start: CommitView | null;
  commits: CommitView[];
  files: (FileDiff & { state: "added" | "modified" | "deleted" | "unchanged" | "unknown" })[];
}

/** One session's code over time, prepared once and asked many times. */
export interface SessionCode {
  session_id: string;
  project?: string;
  repo: RepoState;
  steps: number;
  start: CommitView | null;
  commits: CommitView[];
  treeAt(seq: number, options?: { limit?: number }): Promise<TreeView>;
  fileAt(path: string, seq: number, options?: { maxChars?: number }): Promise<FileView>;
  /** The diff of the change at `seq` against each file just before it. */
  changeAt(seq: number, options?: { path?: string }): Promise<ChangeView>;
  /** Every file the session changed, start to end, and the commits made meanwhile. */
  whatChanged(options?: { path?: string }): Promise<SessionChanges>;
}

export interface TimeTravelDeps {
  /** The git engine; without it every project is treated as having no repository. */
  git?: GitEngine;
  read: PayloadReader;
  /**
   * Awaited after every {@link PAGE_STEPS} steps read (a server's turn of the event loop: a
   * session of tens of thousands of steps takes a second). Default: none.
   */
  turn?: () => Promise<unknown>;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

function commitView(c: CommitMark, matched?: CommitView["matched"]): CommitView {
  return {
    sha: c.sha,
    subject: c.subject,
    committed_at: new Date(c.committed_ms).toISOString(),
    after: c.after,
    matched: matched ?? c.matched,
  };
}

async function repoState(git: GitEngine | undefined, project?: string): Promise<RepoState> {
  if (!project) return { kind: "no_project", message: "The session names no project folder" };
  if (!git) return { kind: "no_git", message: "git is not available to Chronicle" };
  try {
    const r = await git.repo(project);
    return { kind: "git", root: r.root, head: r.head, branch: r.branch, shallow: r.shallow };
  } catch (e) {
    if (e instanceof ChronicleError && e.code === "not_found") {
      return { kind: "gone", message: `The project folder ${project} no longer exists` };
    }
    if (e instanceof ChronicleError && e.code === "not_a_repo") {
      return { kind: "not_a_repo", message: `${project} is not a git repository` };
    }
    if (e instanceof Error && /ENOENT|NotFound|not found/i.test(e.message)) {
      return { kind: "no_git", message: "git is not installed" };
    }
    throw e;
  }
}

function countLines(patch: string): { added: number; removed: number } {
  let added = 0, removed = 0;
  for (const l of patch.split("\n")) {
    if (l.startsWith("+") && !l.startsWith("+++")) added++;
    else if (l.startsWith("-") && !l.startsWith("---")) removed++;
  }
  return { added, removed };
}

function diffOf(path: string, before: FileState, after: FileState): FileDiff {
  const known = before.exists !== null && after.exists !== null &&
    before.status !== "unknown" && after.status !== "unknown";
  const a = before.text ?? "";
  const b = after.text ?? "";
  const patch = known && (a !== b || before.exists !== after.exists)
    ? createTwoFilesPatch(
      before.exists ? `a/${path}` : "/dev/null",
      after.exists ? `b/${path}` : "/dev/null",
      a,
      b,
      undefined,
      undefined,
      { context: 3 },
    ).split("\n").slice(1).join("\n")
    : "";
  return {
    path,
    patch,
    before: { exists: before.exists, status: before.status },
    after: { exists: after.exists, status: after.status },
    notes: [...new Set([...before.notes, ...after.notes])],
    ...countLines(patch),
  };
}

/**
 * Characters of each prompt's, reply's or thinking's text a session needs for its code over time
 * and its causality: none (what a session read and changed is in its calls' payloads). A
 * session of pasted logs, loaded whole, was hundreds of MB; the bench's 35,342-step session
 * kept with 1,000 characters of each (10.9 Mi characters) for its causality: its causality, code
 * and changes answer the same bytes without them, and three heavy requests at once on it peak
 * 278-319 MiB, not 297-331.
 */
export const ANALYSED_TEXT_CHARS = 0;

/** Prepares a session's code over time: finds its repository and commits, reads its edits. */
export async function prepareSessionCode(
  session: CanonicalSession,
  deps: TimeTravelDeps,
  options: { facts?: OpFacts[] } = {},
): Promise<SessionCode> {
  return await sessionCode(
    codeInputs(session, options.facts ?? sessionFacts(session, deps.read)),
    deps,
  );
}

/** {@link prepareSessionCode} from the code inputs a server kept ({@link codeInputs}). */
export async function sessionCode(
  inputs: CodeInputs,
  deps: TimeTravelDeps,
): Promise<SessionCode> {
  const { session, facts } = inputs;
  const project = session.session.project.path
    ? normalizePath(session.session.project.path)
    : undefined;
  const edits: StepEdit[] = [];
  const observations: Observation[] = [];
  let page = 0;
  for (const f of facts) {
    // a turn every PAGE_STEPS steps of the session, however few of them read or change files
    if (deps.turn && Math.floor(f.seq / PAGE_STEPS) > page) {
      page = Math.floor(f.seq / PAGE_STEPS);
      await deps.turn();
    }
    const op = session.operations[f.op];
    if (f.change) {
      edits.push(...stepEdits(op, f, deps.read(op.request, 4 << 20), deps.read(op.response, 2000)));
    }
    if (f.source?.kind === "read") {
      const seen = observe(
        op,
        f,
        (w) => deps.read(w === "request" ? op.request : op.response, 4 << 20),
      );
      if (seen) observations.push(seen);
    }
  }
  const repo = await repoState(deps.git, project);
  let commits: CommitMark[] = [];
  let start: CommitView | null = null;
  let during: CommitView[] = [];
  const texts = new Map<string, Promise<string | null | undefined>>();
  const binaries = new Set<string>();
  const git = deps.git;
  if (repo.kind === "git" && git) {
    const found = await findCommits(git, repo.root, session, deps.read);
    if (found.start) {
      const mark: CommitMark = {
        sha: found.start.sha,
        subject: found.start.subject,
        committed_ms: found.start.committedMs,
        after: -1,
        matched: "start",
      };
      commits.push(mark);
      start = commitView(mark, found.start_matched === "recorded" ? "recorded" : "start");
    }
    commits = [...commits, ...found.during];
    during = found.during.map((c) => commitView(c));
  }
  const commitText = (sha: string, path: string): Promise<string | null | undefined> => {
    if (repo.kind !== "git" || !git) return Promise.resolve(undefined);
    const key = `${sha}\u0000${path}`;
    let p = texts.get(key);
    if (!p) {
      p = git.fileAt(repo.root, sha, path).then((bytes) => {
        if (bytes === null) return null;
        if (isBinary(bytes)) {
          binaries.add(key);
          return undefined;
        }
        return decoder.decode(bytes);
      }).catch((e) => {
        if (e instanceof ChronicleError && e.code === "outside") return undefined;
        throw e;
      });
      texts.set(key, p);
    }
    return p;
  };
  const history: History = createHistory(commits, edits, commitText, observations);
  const show = (p: string) => displayPath(p, project);
  const abs = (p: string) => normalizePath(p, project);
  const last = session.timeline.length - 1;
  const trees = new Map<string, Promise<TreeEntry[]>>();
  const root = repo.kind === "git" ? repo.root : undefined;
  const treeOf = (sha: string) => {
    let t = trees.get(sha);
    if (!t) {
      t = git!.tree(root!, sha, project && project !== root ? { path: project } : {});
      trees.set(sha, t);
    }
    return t;
  };
  const clampSeq = (seq: number) => Math.max(-1, Math.min(seq, last));
  const commitOf = (seq: number) => {
    const c = commitAt(history.commits, seq);
    return c ? commitView(c, c.after < 0 ? start?.matched : undefined) : null;
  };

  const code: SessionCode = {
    session_id: session.session.id,
    ...(project ? { project } : {}),
    repo,
    steps: session.timeline.length,
    start,
    commits: during,

    async treeAt(rawSeq, opts = {}) {
      const seq = clampSeq(rawSeq);
      const limit = opts.limit ?? 20_000;
      const commit = commitAt(history.commits, seq);
      const entries = new Map<string, TreeEntryView>();
      if (commit && root) {
        for (const e of await treeOf(commit.sha)) {
          if (e.type === "tree") continue;
          const p = normalizePath(e.path, root);
          entries.set(p, { path: show(p), origin: "commit", state: "unchanged", touched: false });
        }
      }
      if (!root) {
        // No repository: the files the session read are all that is known to exist.
        for (const f of facts) {
          if (f.seq > seq) break;
          if (!f.source || f.source.failed) continue;
          for (const p of f.source.files) {
            if (!entries.has(p)) {
              entries.set(p, {
                path: show(p),
                origin: "recorded",
                state: "unchanged",
                touched: false,
              });
            }
          }
        }
      }
      // The session's own changes up to the step, after the commit that holds them.
      for (const [path, list] of history.byPath) {
        const upTo = list.filter((e) => e.seq <= seq && !e.failed);
        if (!upTo.length) continue;
        const since = history.commits.reduce(
          (n, c) => (c.after <= seq && c.after >= 0 && c.files?.includes(path) ? c.after : n),
          -1,
        );
        const lastEdit = upTo[upTo.length - 1];
        const had = entries.get(path);
        const pending = upTo.filter((e) => e.seq > since);
        const base = { path: show(path), touched: true, last_seq: lastEdit.seq };
        if (!pending.length) {
          if (had) entries.set(path, { ...had, ...base });
          continue;
        }
        const gone = pending[pending.length - 1].edit.kind === "delete";
        if (gone) {
          if (had) entries.set(path, { ...base, origin: "session", state: "deleted" });
          else entries.delete(path);
        } else {
          const created = !root && list.find((e) => !e.failed)?.created === true;
          entries.set(path, {
            ...base,
            origin: root ? "session" : "recorded",
            state: had && !created ? "modified" : root || created ? "added" : "modified",
          });
        }
      }
      const list = [...entries.values()].sort((
        a,
        b,
      ) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      return {
        seq,
        repo,
        commit: commitOf(seq),
        entries: list.slice(0, limit),
        omitted: Math.max(0, list.length - limit),
      };
    },

    async fileAt(path, rawSeq, opts = {}) {
      const seq = clampSeq(rawSeq);
      const p = abs(path);
      const state = await fileState(history, p, seq);
      const commit = commitAt(history.commits, seq);
      const binary = commit ? binaries.has(`${commit.sha}\u0000${p}`) : false;
      const max = opts.maxChars ?? 2_000_000;
      const truncated = state.text !== null && state.text.length > max;
      return {
        ...state,
        path: show(p),
        text: truncated ? state.text!.slice(0, max) : state.text,
        seq,
        repo,
        commit: commitOf(seq),
        binary,
        truncated,
      };
    },

    async changeAt(rawSeq, opts = {}) {
      const seq = clampSeq(rawSeq);
      const entry = session.timeline[seq];
      const wanted = opts.path ? abs(opts.path) : undefined;
      const mine = edits.filter((e) => e.seq === seq && (!wanted || e.path === wanted));
      const files: FileDiff[] = [];
      for (const path of [...new Set(mine.map((e) => e.path))]) {
        const before = await fileState(history, path, seq - 1, { lines: false });
        const after = await fileState(history, path, seq, { lines: false });
        const d = diffOf(show(path), before, after);
        const applied = after.steps.find((s) => s.seq === seq);
        files.push({ ...d, ...(applied ? { applied } : {}) });
      }
      return { seq, op: entry?.op ?? "", files };
    },

    async whatChanged(opts = {}) {
      const wanted = opts.path ? abs(opts.path) : undefined;
      const paths = new Set(editedPaths(history));
      // Files the session's own commits changed (a script may have written them).
      for (const c of history.commits) {
        if (c.after >= 0 && c.matched === "command") {
          for (const f of c.files ?? []) paths.add(f);
        }
      }
      const files: SessionChanges["files"] = [];
      for (const path of [...paths].sort()) {
        if (wanted && path !== wanted) continue;
        const before = await fileState(history, path, -1, { lines: false });
        const after = await fileState(history, path, last, { lines: false });
        const d = diffOf(show(path), before, after);
        const state = before.exists === null || after.exists === null ||
            after.status === "unknown"
          ? "unknown"
          : !before.exists && after.exists
          ? "added"
          : before.exists && !after.exists
          ? "deleted"
          : before.text === after.text
          ? "unchanged"
          : "modified";
        files.push({ ...d, state });
      }
      return { repo, start, commits: during, files };
    },
  };
  return code;
}
