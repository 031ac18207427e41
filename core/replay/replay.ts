/**
 * Running a plan: seed the sandbox from the commit before the session, preview a step (the
 * diff it would make now), execute it (file steps through the sandbox adapter, shell steps
 * only when confirmed, through the jail), compare each with its recording, and at the end
 * compare the sandbox with the project's final state.
 */
import { createTwoFilesPatch } from "diff";
import type { CommitInfo, GitEngine } from "../git/mod.ts";
import { type CanonicalSession, ChronicleError, type PayloadRef } from "../model/mod.ts";
import { applyPatchSection, applyReplacements, type ChangeResult } from "./edits.ts";
import { compareOutput, recordedRun } from "./fidelity.ts";
import {
  fileAction,
  mapPath,
  type PlanStep,
  type ReasoningText,
  reasoningTexts,
  type ReplayPlan,
} from "./plan.ts";
import type { SandboxFiles, ShellRunner, StepResult } from "./types.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });
const DIFF_CHARS = 200_000;
const OUTPUT_CHARS = 20_000;

export interface SeedResult {
  /** The commit the sandbox was seeded from; null when it starts empty. */
  seeded_from: string | null;
  /** The repository it came from. */
  repo: string | null;
  files: number;
  /** What the reader should know: why the sandbox is empty, what was left out. */
  notices: string[];
}

export interface SeedOptions {
  /** The project's repository, when it is no longer at the recorded path. */
  repo?: string;
}

/**
 * Seeds the sandbox with the project's tree at the last commit before the session began
 * (the commit the session recorded, when the repository has it). Without a repository the
 * sandbox stays empty and a notice says why. Symlinks leading out of the sandbox and paths
 * that would leave it are not created.
 */
export async function seedSandbox(
  session: CanonicalSession,
  deps: { files: SandboxFiles; git?: GitEngine },
  options: SeedOptions = {},
): Promise<SeedResult> {
  const repo = options.repo ?? session.session.project.path ?? null;
  const result: SeedResult = { seeded_from: null, repo: null, files: 0, notices: [] };
  if (!repo) {
    result.notices.push("The session recorded no project folder: the sandbox starts empty.");
    return result;
  }
  if (!deps.git) {
    result.notices.push("No git engine: the sandbox starts empty.");
    return result;
  }
  const git = deps.git;
  let info;
  try {
    info = await git.repo(repo);
  } catch (e) {
    if (e instanceof ChronicleError && (e.code === "not_found" || e.code === "not_a_repo")) {
      result.notices.push(`${e.message}: the sandbox starts empty.`);
      return result;
    }
    throw e;
  }
  result.repo = info.root;
  const commit = await seedCommit(git, info.root, session);
  if (!commit) {
    const started = session.session.started_at ?? "the session's start";
    result.notices.push(
      `${info.root} has no commit before ${started}` +
        (info.shallow ? " (it is a shallow clone: older history is missing)" : "") +
        ": the sandbox starts empty.",
    );
    return result;
  }
  result.seeded_from = commit.sha;
  const files = deps.files;
  await git.archive(info.root, commit.sha, async (entry, bytes) => {
    const mapped = mapPath(null, entry.path);
    if (!mapped.path) {
      result.notices.push(`Not seeded: ${JSON.stringify(entry.path)} (${mapped.outside}).`);
      return;
    }
    if (entry.mode === "120000") {
      const target = decoder.decode(bytes);
      if (await files.symlink(mapped.path, target) === "refused") {
        result.notices.push(
          `Not seeded: the symlink ${mapped.path} -> ${target} leads out of the sandbox.`,
        );
      } else result.files++;
      return;
    }
    await files.write(mapped.path, bytes, { executable: entry.mode === "100755" });
    result.files++;
  }, {
    skip: (entry, reason) => void result.notices.push(`Not seeded: ${entry.path} (${reason}).`),
  });
  try {
    await git.initAt(files.root, info.root, commit.sha, {
      branch: info.branch ?? session.session.project.git?.branch,
    });
  } catch (e) {
    result.notices.push(`The sandbox is not a git repository (${(e as Error).message}).`);
  }
  return result;
}

async function seedCommit(
  git: GitEngine,
  root: string,
  session: CanonicalSession,
): Promise<CommitInfo | null> {
  const recorded = session.session.project.git?.commit;
  if (recorded && /^[0-9a-f]{7,64}$/.test(recorded)) {
    const c = await git.commit(root, recorded);
    if (c) return c;
  }
  const started = session.session.started_at ? Date.parse(session.session.started_at) : NaN;
  if (Number.isNaN(started)) return await git.commit(root, "HEAD");
  const branch = session.session.project.git?.branch;
  if (branch) {
    try {
      const c = await git.commitAt(root, started, { ref: branch });
      if (c) return c;
    } catch { /* the branch is gone: fall back to HEAD */ }
  }
  return await git.commitAt(root, started);
}

/** What a step would do to the sandbox now. */
export interface Preview {
  seq: number;
  kind: string;
  /** File steps: whether the change applies now, where (1-based lines), and the diff. */
  applies?: boolean;
  reason?: string;
  lines?: number[];
  diff?: string;
  /** Shell steps: the command, its folder and how it would be isolated. */
  command?: string;
  workdir?: string;
  isolation?: string;
  blocked?: string;
  /** The thinking and replies before the step (each text's opening), oldest first. */
  reasoning: ReasoningText[];
}

export interface RunOptions {
  /** Run steps up to and including this timeline seq. Default: all. */
  to?: number;
  /** Stop at the first error or divergence; the rest stay skipped. */
  pauseOnDivergence?: boolean;
  /** Shell steps run only when this is true. */
  confirmCommands?: boolean;
  onStep?: (r: StepResult) => void;
}

/** The project's state after the session, when Chronicle can know it. */
export interface FinalState {
  /** "the working tree" or "commit <sha>". */
  label: string;
  /** Files changed in the project since the seed commit (relative paths). */
  changed: string[];
  read(path: string): Promise<Uint8Array | null>;
}

export interface FinalComparison {
  compared_with: string;
  files: number;
  equal: number;
  differing: { path: string; detail: string }[];
}

export interface ReplayReport {
  sandbox: string;
  seeded_from: string | null;
  steps: StepResult[];
  divergences: number;
  final: FinalComparison | null;
  notices: string[];
}

function diffOf(path: string, before: string | null, after: string | null): string {
  const d = createTwoFilesPatch(
    before === null ? "/dev/null" : `a/${path}`,
    after === null ? "/dev/null" : `b/${path}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: 3 },
  );
  const body = d.split("\n").slice(2).join("\n"); // drop the "Index:" banner
  return body.length > DIFF_CHARS ? body.slice(0, DIFF_CHARS) + "\n… (diff cut)" : body;
}

function cut(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + "\n… (cut)" : s;
}

/** What a run works with: the sandbox, the jail for shell steps, and the recording's payloads. */
export interface ReplayDeps {
  files: SandboxFiles;
  shell?: ShellRunner | null;
  /**
   * A payload's text: a step's recorded result (`PlanStep.recorded.output`) as the step runs, a
   * file step's input (`PlanStep.input`) as it is previewed or applied (the store's payload, or
   * an export's checked one); null when it cannot be read.
   */
  payload: (ref: PayloadRef) => string | null | Promise<string | null>;
  /**
   * An operation's own text (`PlanStep.reasoning`'s: the store's `operationText`), at most
   * `maxChars` of it, read when a step is previewed; without it a preview shows no reasoning.
   */
  reasoning?: (op: string, maxChars: number) => string | null;
}

/** A seeded sandbox and its plan: preview and execute steps, then compare the end state. */
export class ReplayRun {
  readonly results = new Map<number, StepResult>();
  readonly notices: string[];

  constructor(
    readonly plan: ReplayPlan,
    readonly seed: SeedResult,
    private readonly deps: ReplayDeps,
  ) {
    this.notices = [...seed.notices];
    for (const s of plan.steps) this.results.set(s.seq, this.initial(s));
  }

  get sandbox(): string {
    return this.deps.files.root;
  }

  step(seq: number): PlanStep {
    const s = this.plan.steps.find((p) => p.seq === seq);
    if (!s) throw new ChronicleError("not_found", `No replay step at seq ${seq}`);
    return s;
  }

  private initial(s: PlanStep): StepResult {
    return {
      seq: s.seq,
      kind: s.kind,
      target: s.path ?? s.target,
      status: s.replayable ? "pending" : "blocked",
      detail: s.replayable ? "" : s.detail ?? "not replayable",
    };
  }

  private async change(s: PlanStep): Promise<{ before: string | null; result: ChangeResult }> {
    const bytes = await this.deps.files.read(s.path!);
    const before = bytes === null ? null : decoder.decode(bytes);
    // a delete needs nothing of its recorded input: it is not read, and may have vanished
    const input = s.action === "delete" ? undefined : s.input;
    const a = fileAction(s, input ? await this.deps.payload(input) : null);
    if (!a) {
      throw new ChronicleError(
        "not_found",
        "its recorded input can no longer be read (its payload is missing or changed)",
      );
    }
    const result: ChangeResult = a.type === "write"
      ? { ok: true, text: a.content, lines: [1] }
      : a.type === "delete"
      ? before === null
        ? { ok: false, reason: "the file does not exist" }
        : { ok: true, text: null, lines: [] }
      : a.type === "replace"
      ? applyReplacements(before, a.edits)
      : applyPatchSection(before, a.section);
    return { before, result };
  }

  /** The diff a step would make now, or for a shell step what would run and how. */
  async preview(seq: number): Promise<Preview> {
    const s = this.step(seq);
    const reasoning = this.deps.reasoning ? reasoningTexts(s, this.deps.reasoning) : [];
    const base: Preview = { seq, kind: s.kind, reasoning };
    if (!s.replayable) return { ...base, blocked: s.detail };
    if (s.kind === "exec") {
      const avail = this.deps.shell ? await this.deps.shell.available() : null;
      return {
        ...base,
        command: typeof s.command === "string" ? s.command : s.command!.join(" "),
        workdir: s.workdir || ".",
        isolation: avail === null
          ? "shell steps are not available here"
          : avail.ok
          ? avail.description
          : avail.reason,
      };
    }
    try {
      const { before, result } = await this.change(s);
      if (!result.ok) return { ...base, applies: false, reason: result.reason };
      return {
        ...base,
        applies: true,
        lines: result.lines,
        diff: diffOf(s.path!, before, result.text),
      };
    } catch (e) {
      return { ...base, applies: false, reason: (e as Error).message };
    }
  }

  /** Executes one step and records its result. Shell steps need `confirm`. */
  async execute(seq: number, options: { confirm?: boolean } = {}): Promise<StepResult> {
    const s = this.step(seq);
    const r = this.initial(s);
    if (!s.replayable) return this.done(r);
    try {
      if (s.kind === "exec") return this.done(await this.runShell(s, r, options.confirm === true));
      return this.done(await this.runFile(s, r));
    } catch (e) {
      r.status = "failed";
      r.detail = e instanceof ChronicleError && e.code === "outside"
        ? `refused: ${e.message}`
        : (e as Error).message;
      return this.done(r);
    }
  }

  private done(r: StepResult): StepResult {
    this.results.set(r.seq, r);
    return r;
  }

  private async runFile(s: PlanStep, r: StepResult): Promise<StepResult> {
    const { before, result } = await this.change(s);
    const recordedFailed = s.recorded.is_error;
    if (result.ok) {
      r.diff = diffOf(s.path!, before, result.text);
      if (recordedFailed === true) {
        r.status = "diverged";
        r.detail = "applies now, but the recording says it failed; left unapplied as it was";
        return r;
      }
      if (result.text === null) await this.deps.files.remove(s.path!);
      else if (s.moveTo && s.moveTo !== s.path) {
        await this.deps.files.write(s.moveTo, encoder.encode(result.text));
        await this.deps.files.remove(s.path!);
      } else await this.deps.files.write(s.path!, encoder.encode(result.text));
      r.status = "applied";
      r.detail = s.kind === "delete"
        ? "deleted"
        : before === null
        ? "created"
        : s.moveTo && s.moveTo !== s.path
        ? `moved to ${s.moveTo}, changed at line ${result.lines.join(", ") || "1"}`
        : `changed at line ${result.lines.join(", ") || "1"}` +
          (result.note ? ` (${result.note})` : "");
      return r;
    }
    if (recordedFailed === true) {
      r.status = "applied";
      r.detail = `did not apply, as recorded: ${result.reason}`;
      return r;
    }
    r.status = "diverged";
    r.detail = `does not apply: ${result.reason}` +
      (recordedFailed === false ? "; the recording says it applied" : "");
    return r;
  }

  private async runShell(s: PlanStep, r: StepResult, confirm: boolean): Promise<StepResult> {
    if (!confirm) {
      r.status = "skipped";
      r.detail = "a shell command: not run without confirmation (--yes-commands)";
      return r;
    }
    const shell = this.deps.shell;
    const avail = shell
      ? await shell.available()
      : { ok: false as const, reason: "no shell runner" };
    if (!shell || !avail.ok) {
      r.status = "skipped";
      r.detail = `not run: ${avail.ok ? "no shell runner" : avail.reason}`;
      return r;
    }
    const out = await shell.run(s.command!, {
      sandbox: this.sandbox,
      projectPath: this.plan.project,
      workdir: s.workdir ?? "",
    });
    r.exit_code = out.code;
    r.output = cut(out.output, OUTPUT_CHARS);
    if (out.timedOut) {
      r.status = "failed";
      r.detail = "timed out and was killed";
      return r;
    }
    const text = s.recorded.output ? await this.deps.payload(s.recorded.output) : null;
    const rec = recordedRun(s.recorded.is_error, text);
    const failed = out.code !== 0;
    const problems: string[] = [];
    if (rec.exitCode !== null && rec.exitCode !== out.code) {
      problems.push(`exit code ${out.code}, recorded ${rec.exitCode}`);
    } else if (rec.exitCode === null && rec.failed !== null && rec.failed !== failed) {
      problems.push(
        `${failed ? `failed (exit ${out.code})` : "succeeded"}, recorded ${
          rec.failed ? "failing" : "succeeding"
        }`,
      );
    }
    if (text !== null) {
      const d = compareOutput(out.output, rec);
      if (d) problems.push(d);
    }
    r.status = problems.length ? "diverged" : "applied";
    r.detail = problems.length
      ? problems.join("; ")
      : `exit ${out.code}${failed ? ", failing as recorded" : ""}${
        out.truncated ? " (output capped)" : ""
      }`;
    return r;
  }

  /** Runs steps in order (up to `to`), pausing at the first divergence when asked. */
  async runAll(options: RunOptions = {}): Promise<StepResult[]> {
    let paused: number | null = null;
    for (const s of this.plan.steps) {
      if (options.to !== undefined && s.seq > options.to) break;
      if (paused !== null) {
        if (s.replayable) {
          this.done({
            ...this.initial(s),
            status: "skipped",
            detail: `paused after step ${paused}`,
          });
        }
        continue;
      }
      const done = this.results.get(s.seq);
      if (done && done.status !== "pending") {
        options.onStep?.(done);
        continue;
      }
      const r = await this.execute(s.seq, { confirm: options.confirmCommands });
      options.onStep?.(r);
      if (options.pauseOnDivergence && (r.status === "diverged" || r.status === "failed")) {
        paused = s.seq;
        this.notices.push(`Paused after step ${s.seq}: ${r.status}.`);
      }
    }
    return this.plan.steps.map((s) => this.results.get(s.seq)!);
  }

  /** Compares the sandbox with the project's final state, file by file. */
  async compareFinal(final: FinalState): Promise<FinalComparison> {
    const paths = new Set<string>(final.changed);
    for (const s of this.plan.steps) {
      if (s.path) paths.add(s.path);
      if (s.moveTo) paths.add(s.moveTo);
    }
    const out: FinalComparison = { compared_with: final.label, files: 0, equal: 0, differing: [] };
    for (const path of [...paths].sort()) {
      if (path === ".git" || path.startsWith(".git/")) continue;
      out.files++;
      const [mine, theirs] = await Promise.all([
        this.deps.files.read(path).catch(() => null),
        final.read(path),
      ]);
      if (mine === null && theirs === null) out.equal++;
      else if (mine === null) out.differing.push({ path, detail: "missing from the sandbox" });
      else if (theirs === null) out.differing.push({ path, detail: `not in ${final.label}` });
      else if (!sameBytes(mine, theirs)) {
        out.differing.push({ path, detail: `differs from ${final.label}` });
      } else out.equal++;
    }
    return out;
  }

  /** The report: every step's result, the divergence count and the final comparison. */
  report(final: FinalComparison | null = null): ReplayReport {
    const steps = this.plan.steps.map((s) => {
      const r = this.results.get(s.seq)!;
      return r.status === "pending" ? { ...r, status: "skipped" as const, detail: "not run" } : r;
    });
    const divergences = steps.filter((r) => r.status === "diverged").length +
      (final?.differing.length ?? 0);
    return {
      sandbox: this.sandbox,
      seeded_from: this.seed.seeded_from,
      steps,
      divergences,
      final,
      notices: this.notices,
    };
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The project's final state, when knowable: the working tree if this session was the last to
 * touch the project, else the first commit after the session ended. Null when neither holds.
 */
export async function finalStateOf(
  git: GitEngine,
  seed: SeedResult,
  session: CanonicalSession,
  options: {
    lastToTouch: boolean;
    readWorkingFile: (root: string, path: string) => Promise<Uint8Array | null>;
  },
): Promise<FinalState | null> {
  const repo = seed.repo;
  const from = seed.seeded_from;
  if (!repo || !from) return null;
  if (options.lastToTouch) {
    const changed = (await git.changedFiles(repo, from)).flatMap((c) =>
      c.from ? [c.path, c.from] : [c.path]
    );
    return {
      label: "the working tree",
      changed,
      read: (path) => options.readWorkingFile(repo, path),
    };
  }
  const ended = Date.parse(session.session.ended_at ?? session.session.started_at ?? "");
  if (Number.isNaN(ended)) return null;
  const later = await git.commitsBetween(repo, ended, Date.now() + 86_400_000, { limit: 10_000 });
  const next = later.at(-1);
  if (!next) return null;
  const changed = (await git.changedFiles(repo, from, next.sha)).flatMap((c) =>
    c.from ? [c.path, c.from] : [c.path]
  );
  return {
    label: `commit ${next.sha.slice(0, 12)}`,
    changed,
    read: (path) => git.fileAt(repo, next.sha, path),
  };
}
