/**
 * The git engine: commit at a time, tree and file at a commit, commits between two times,
 * changed files, and a commit's tree streamed out for archiving. Every call is an argument
 * vector `git -C <repo> <subcommand> ... --`; revisions are checked before they are passed and
 * paths must stay inside the repository.
 */
import { ChronicleError } from "../model/mod.ts";
import { normalizePath, relativeInside } from "./paths.ts";
import type { ProcessRunner, RunResult } from "./runner.ts";

export interface GitEngineOptions {
  /** The git program. Default "git". */
  program?: string;
  /** The environment git runs with (whole; nothing else is inherited). See {@link gitEnv}. */
  env?: Record<string, string>;
}

export interface RepoInfo {
  /** The top of the working tree (absolute). */
  root: string;
  /** The repository's own git folder (for a linked worktree, its folder under the main one). */
  gitDir: string;
  /** The folder shared by all worktrees (objects, refs). Equals gitDir except in worktrees. */
  commonDir: string;
  /** The commit HEAD points at; null in a repository with no commits yet. */
  head: string | null;
  /** The checked-out branch; null when HEAD is detached. */
  branch: string | null;
  detached: boolean;
  /** A shallow clone: history before its shallow boundary is missing. */
  shallow: boolean;
  /** A linked worktree (`git worktree add`) rather than the main working tree. */
  worktree: boolean;
}

export interface CommitInfo {
  sha: string;
  parents: string[];
  /** Committer time, ms since the epoch. */
  committedMs: number;
  /** Author time, ms since the epoch. */
  authoredMs: number;
  author: string;
  subject: string;
}

export interface TreeEntry {
  /** Octal mode as git prints it: 100644, 100755, 120000 (symlink), 160000 (submodule). */
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  /** Size in bytes for blobs; null for submodules. */
  size: number | null;
  /** Path relative to the repository root, exactly as stored (may hold any byte but NUL). */
  path: string;
}

export interface ChangedFile {
  /** git's status letter: A added, M modified, D deleted, R renamed, T type changed, ? untracked. */
  status: string;
  path: string;
  /** The old path of a rename. */
  from?: string;
}

export interface ArchiveOptions {
  /** Files bigger than this are passed to `skip` instead of being read. Default 64 MiB. */
  maxFileBytes?: number;
  /** Called for entries not handed over: submodules and oversized files. */
  skip?: (entry: TreeEntry, reason: string) => void | Promise<void>;
}

export interface GitEngine {
  /** What the repository around `path` is. Throws not_found / not_a_repo. */
  repo(path: string): Promise<RepoInfo>;
  /** A revision (sha, branch, tag, `HEAD~2`) as a commit; null when it names none. */
  commit(repo: string, rev: string): Promise<CommitInfo | null>;
  /** The last commit on `ref` (default HEAD) committed at or before `at`; null when none. */
  commitAt(repo: string, at: Date | number, options?: { ref?: string }): Promise<CommitInfo | null>;
  /** Commits on `ref` committed in [from, to], newest first. */
  commitsBetween(
    repo: string,
    from: Date | number,
    to: Date | number,
    options?: { ref?: string; limit?: number },
  ): Promise<CommitInfo[]>;
  /** Every entry of a commit's tree (recursively), or only those under `path`. */
  tree(repo: string, commit: string, options?: { path?: string }): Promise<TreeEntry[]>;
  /** A file's bytes at a commit; null when the commit has no such file. */
  fileAt(repo: string, commit: string, path: string): Promise<Uint8Array | null>;
  /** A file as it was at a moment: the commit then and its bytes (null when absent). */
  fileAtTime(
    repo: string,
    at: Date | number,
    path: string,
    options?: { ref?: string },
  ): Promise<{ commit: CommitInfo; bytes: Uint8Array | null } | null>;
  /** Files changed from `from` to `to`; without `to`, to the working tree (untracked included). */
  changedFiles(repo: string, from: string, to?: string): Promise<ChangedFile[]>;
  /**
   * Makes `dir` (which exists and holds the commit's files) a repository at `commit` of
   * `source`: the commit and its history are fetched in, the branch points at it and the index
   * matches it, so `git status` there starts clean. Nothing is written to `source`.
   */
  initAt(dir: string, source: string, commit: string, options?: { branch?: string }): Promise<void>;
  /** Streams every file of a commit's tree to `sink`, in tree order (symlinks: their target). */
  archive(
    repo: string,
    commit: string,
    sink: (entry: TreeEntry, bytes: Uint8Array) => void | Promise<void>,
    options?: ArchiveOptions,
  ): Promise<{ files: number; bytes: number; skipped: number }>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const FIELD = "\x1f";
const LOG_FORMAT = ["%H", "%P", "%ct", "%at", "%an", "%s"].join("%x1f");
/** How much `cat-file --batch` output one call may return before the next batch starts. */
const BATCH_BYTES = 16 << 20;

/**
 * A clean environment for git: no GIT_DIR or GIT_WORK_TREE leaking in from the caller, no
 * prompts, no optional lock files, untranslated messages (the engine reads a few of them).
 */
export function gitEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    LC_ALL: "C",
    LANG: "C",
  };
  for (const k of ["PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR", "SYSTEMROOT"]) {
    if (env[k]) out[k] = env[k]!;
  }
  return out;
}

/** A revision as given by a caller: never an option, never a path separator trick. */
export function checkRev(rev: string): string {
  if (!/^[A-Za-z0-9_][A-Za-z0-9._/@{}^~+-]{0,254}$/.test(rev) || rev.includes("..")) {
    throw new RangeError(`Not a git revision: ${JSON.stringify(rev.slice(0, 80))}`);
  }
  return rev;
}

function isoOf(at: Date | number): string {
  const d = typeof at === "number" ? new Date(at) : at;
  if (Number.isNaN(d.getTime())) throw new RangeError("Invalid time");
  return d.toISOString();
}

function parseLog(text: string): CommitInfo[] {
  return text.split("\0").filter((r) => r.trim()).map((record) => {
    const [sha, parents, ct, at, author, ...subject] = record.replace(/^\n/, "").split(FIELD);
    return {
      sha,
      parents: parents ? parents.split(" ") : [],
      committedMs: Number(ct) * 1000,
      authoredMs: Number(at) * 1000,
      author,
      subject: subject.join(FIELD),
    };
  });
}

/** Parses `ls-tree -r -z -l`: `<mode> SP <type> SP <sha> SP+ <size> TAB <path> NUL`. */
export function parseLsTree(text: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const rec of text.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    const [mode, type, sha, size] = rec.slice(0, tab).split(/ +/);
    out.push({
      mode,
      type: type as TreeEntry["type"],
      sha,
      size: size === "-" ? null : Number(size),
      path: rec.slice(tab + 1),
    });
  }
  return out;
}

/** Parses `diff --name-status -z` / `status --porcelain -z` style records. */
function parseNameStatus(text: string): ChangedFile[] {
  const parts = text.split("\0");
  const out: ChangedFile[] = [];
  for (let i = 0; i < parts.length; i++) {
    const status = parts[i];
    if (!status) continue;
    const letter = status[0];
    if (letter === "R" || letter === "C") {
      out.push({ status: letter, from: parts[i + 1], path: parts[i + 2] });
      i += 2;
    } else {
      out.push({ status: letter, path: parts[++i] });
    }
  }
  return out;
}

/** Builds the engine over an injected process runner. */
export function createGitEngine(run: ProcessRunner, options: GitEngineOptions = {}): GitEngine {
  const program = options.program ?? "git";
  const roots = new Map<string, string>();

  /** The working-tree root of `repo`, asked once per folder. */
  async function rootOf(repo: string): Promise<string> {
    const known = roots.get(repo);
    if (known) return known;
    const r = await ok(repo, ["rev-parse", "--path-format=absolute", "--show-toplevel"]);
    const root = decoder.decode(r.stdout).split("\n")[0];
    roots.set(repo, root);
    return root;
  }

  /** A caller's path as a path from the repository root: relative ones are from the root. */
  async function repoPath(repo: string, path: string): Promise<{ root: string; rel: string }> {
    const root = path.startsWith("/") ? await rootOf(repo) : repo;
    return { root, rel: relativeInside(root, path, "repository") };
  }

  async function git(
    repo: string,
    args: string[],
    extra: { stdin?: Uint8Array; maxOutputBytes?: number } = {},
  ): Promise<RunResult> {
    const argv = [
      "-C",
      repo,
      "--no-optional-locks",
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.quotePath=false",
      ...args,
    ];
    return await run(program, argv, { env: options.env, ...extra });
  }

  /** Runs git and throws a ChronicleError saying what failed when it exits non-zero. */
  async function ok(repo: string, args: string[], extra = {}): Promise<RunResult> {
    const r = await git(repo, args, extra);
    if (r.code !== 0) throw failure(repo, args, r);
    return r;
  }

  function failure(repo: string, args: string[], r: RunResult): ChronicleError {
    const err = decoder.decode(r.stderr).trim();
    if (/cannot change to/i.test(err)) {
      return new ChronicleError("not_found", `The project folder ${repo} no longer exists`);
    }
    if (/not a git repository/i.test(err)) {
      return new ChronicleError("not_a_repo", `${repo} is not inside a git repository`);
    }
    return new ChronicleError(
      "io",
      `git ${args[0]} failed in ${repo}: ${err.split("\n")[0] || `exit ${r.code}`}`,
    );
  }

  const engine: GitEngine = {
    async repo(path) {
      const r = await ok(path, [
        "rev-parse",
        "--path-format=absolute",
        "--show-toplevel",
        "--git-dir",
        "--git-common-dir",
        "--is-shallow-repository",
      ]);
      const [root, gitDir, commonDir, shallow] = decoder.decode(r.stdout).split("\n");
      const head = await git(root, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
      const branch = await git(root, ["symbolic-ref", "-q", "--short", "HEAD"]);
      const headSha = head.code === 0 ? decoder.decode(head.stdout).trim() : null;
      const branchName = branch.code === 0 ? decoder.decode(branch.stdout).trim() : null;
      return {
        root,
        gitDir: normalizePath(gitDir),
        commonDir: normalizePath(commonDir),
        head: headSha,
        branch: branchName,
        detached: branchName === null,
        shallow: shallow.trim() === "true",
        worktree: normalizePath(gitDir) !== normalizePath(commonDir),
      };
    },

    async commit(repo, rev) {
      const r = await git(repo, [
        "log",
        "-1",
        "-z",
        `--format=${LOG_FORMAT}`,
        "--end-of-options",
        checkRev(rev),
        "--",
      ]);
      if (r.code !== 0) {
        const err = decoder.decode(r.stderr);
        if (/unknown revision|bad revision|does not have any commits|bad object/i.test(err)) {
          return null;
        }
        throw failure(repo, ["log"], r);
      }
      return parseLog(decoder.decode(r.stdout))[0] ?? null;
    },

    async commitAt(repo, at, opts = {}) {
      const list = await logRange(repo, ["-1", `--before=${isoOf(at)}`], opts.ref);
      return list[0] ?? null;
    },

    async commitsBetween(repo, from, to, opts = {}) {
      const limit = opts.limit ?? 1000;
      return await logRange(
        repo,
        [`--max-count=${limit}`, `--since=${isoOf(from)}`, `--until=${isoOf(to)}`],
        opts.ref,
      );
    },

    async tree(repo, commit, opts = {}) {
      const args = [
        "ls-tree",
        "-r",
        "-z",
        "-l",
        "--full-tree",
        // ls-tree takes no --end-of-options (git 2.39 reads it as a tree); checkRev keeps "-" out.
        checkRev(commit),
      ];
      args.push("--");
      if (opts.path !== undefined) {
        const { rel } = await repoPath(repo, opts.path);
        if (rel) args.push(rel);
      }
      const r = await ok(repo, args);
      return parseLsTree(decoder.decode(r.stdout));
    },

    async fileAt(repo, commit, path) {
      const { rel } = await repoPath(repo, path);
      if (!rel) throw new ChronicleError("outside", "The repository root is a folder, not a file");
      const r = await git(repo, ["cat-file", "blob", `${checkRev(commit)}:${rel}`]);
      if (r.code !== 0) {
        const err = decoder.decode(r.stderr);
        if (
          /does not exist|exists on disk, but not in|not a valid object|bad file|Not a valid/i.test(
            err,
          )
        ) {
          return null;
        }
        throw failure(repo, ["cat-file"], r);
      }
      return r.stdout;
    },

    async fileAtTime(repo, at, path, opts = {}) {
      const commit = await engine.commitAt(repo, at, opts);
      if (!commit) return null;
      return { commit, bytes: await engine.fileAt(repo, commit.sha, path) };
    },

    async changedFiles(repo, from, to) {
      if (to !== undefined) {
        const r = await ok(repo, [
          "diff",
          "--name-status",
          "-z",
          "-M",
          "--end-of-options",
          checkRev(from),
          checkRev(to),
          "--",
        ]);
        return parseNameStatus(decoder.decode(r.stdout));
      }
      const tracked = await ok(repo, [
        "diff",
        "--name-status",
        "-z",
        "-M",
        "--end-of-options",
        checkRev(from),
        "--",
      ]);
      // From the root: run in a subfolder, ls-files would list only that folder.
      const untracked = await ok(await rootOf(repo), [
        "ls-files",
        "--others",
        "--exclude-standard",
        "-z",
      ]);
      const out = parseNameStatus(decoder.decode(tracked.stdout));
      for (const path of decoder.decode(untracked.stdout).split("\0")) {
        if (path) out.push({ status: "?", path });
      }
      return out;
    },

    async initAt(dir, source, commit, opts = {}) {
      const branch = opts.branch && /^[A-Za-z0-9._\/-]{1,200}$/.test(opts.branch) &&
          !opts.branch.startsWith("-") && !opts.branch.includes("..")
        ? opts.branch
        : "main";
      await ok(dir, ["init", "-q", `--initial-branch=${branch}`]);
      await ok(dir, [
        "fetch",
        "-q",
        "--no-tags",
        "--no-recurse-submodules",
        "--",
        source,
        checkRev(commit),
      ]);
      await ok(dir, ["update-ref", `refs/heads/${branch}`, "FETCH_HEAD"]);
      await ok(dir, ["read-tree", checkRev(commit)]);
      // Stat information for the index, so status compares by stat first.
      await git(dir, ["update-index", "-q", "--refresh"]);
    },

    async archive(repo, commit, sink, opts = {}) {
      const maxFile = opts.maxFileBytes ?? 64 << 20;
      const entries = await engine.tree(repo, commit);
      const wanted: TreeEntry[] = [];
      let skipped = 0;
      for (const e of entries) {
        if (e.type !== "blob") {
          skipped++;
          await opts.skip?.(e, e.type === "commit" ? "a submodule" : "not a file");
        } else if ((e.size ?? 0) > maxFile) {
          skipped++;
          await opts.skip?.(e, `over ${maxFile} bytes`);
        } else wanted.push(e);
      }
      let files = 0;
      let bytes = 0;
      for (let i = 0; i < wanted.length;) {
        const batch: TreeEntry[] = [];
        let budget = 0;
        while (
          i < wanted.length && (batch.length === 0 || budget + wanted[i].size! <= BATCH_BYTES)
        ) {
          budget += wanted[i].size ?? 0;
          batch.push(wanted[i++]);
        }
        const input = encoder.encode(batch.map((e) => e.sha + "\n").join(""));
        const r = await ok(repo, ["cat-file", "--batch"], {
          stdin: input,
          maxOutputBytes: budget + batch.length * 128 + 1024,
        });
        const blobs = splitBatch(r.stdout);
        if (blobs.length !== batch.length) {
          throw new ChronicleError(
            "io",
            `git cat-file returned ${blobs.length} of ${batch.length} objects`,
          );
        }
        for (let k = 0; k < batch.length; k++) {
          await sink(batch[k], blobs[k]);
          files++;
          bytes += blobs[k].byteLength;
        }
      }
      return { files, bytes, skipped };
    },
  };

  async function logRange(repo: string, args: string[], ref?: string): Promise<CommitInfo[]> {
    const r = await git(repo, [
      "log",
      "-z",
      `--format=${LOG_FORMAT}`,
      ...args,
      "--end-of-options",
      checkRev(ref ?? "HEAD"),
      "--",
    ]);
    if (r.code !== 0) {
      const err = decoder.decode(r.stderr);
      // A repository without commits has nothing before any time.
      if (!ref && /does not have any commits|bad (default )?revision 'HEAD'/i.test(err)) return [];
      if (/unknown revision|bad revision|does not have any commits/i.test(err)) {
        throw new ChronicleError("not_found", `No revision "${ref}" in ${repo}`);
      }
      throw failure(repo, ["log"], r);
    }
    return parseLog(decoder.decode(r.stdout));
  }

  return engine;
}

/** Splits `cat-file --batch` output: `<sha> <type> <size>\n<bytes>\n` per object. */
export function splitBatch(out: Uint8Array): Uint8Array[] {
  const blobs: Uint8Array[] = [];
  let at = 0;
  while (at < out.byteLength) {
    const nl = out.indexOf(10, at);
    if (nl < 0) break;
    const header = decoder.decode(out.subarray(at, nl));
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (!m) {
      throw new ChronicleError("io", `Unexpected git cat-file output: ${header.slice(0, 120)}`);
    }
    const size = Number(m[2]);
    blobs.push(out.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
  }
  return blobs;
}
