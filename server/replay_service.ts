/**
 * Replays the server keeps open for the UI's replay mode: one sandbox per replay under the data
 * folder's `replay/` (Chronicle names it; no request ever does), its plan, and the results of
 * the steps run so far. The oldest replays are closed when too many are open.
 */
import { createGitEngine, gitEnv } from "../core/git/mod.ts";
import { type CanonicalSession, ChronicleError } from "../core/model/mod.ts";
import { pagedTurns } from "../core/paged.ts";
import { makeRoom, oneAtATime, type SessionWork } from "./session_work.ts";
import {
  type FinalComparison,
  finalStateOf,
  PLAN_TEXT_CHARS,
  planInParts,
  type Preview,
  ReplayRun,
  type SandboxEntry,
  type SandboxFiles,
  seedSandbox,
  type StepResult,
} from "../core/replay/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { createBwrapShell } from "../runtime/bwrap.ts";
import { denoProcessRunner } from "../runtime/process_runner.ts";
import { lastToTouch, readProjectFile } from "../runtime/replay_support.ts";
import { createSandboxDir, openSandboxFiles } from "../runtime/sandbox_files.ts";

export interface ReplayStepView extends StepResult {
  op: string;
  tool?: string;
  replayable: boolean;
  needs_confirmation: boolean;
  blockers: string[];
}

export interface ReplayView {
  id: string;
  session_id: string;
  sandbox: string;
  seeded_from: string | null;
  notices: string[];
  /** Whether shell steps can run here, and how; else how to get bubblewrap. */
  shell: { ok: boolean; detail: string };
  steps: ReplayStepView[];
  divergences: number;
  final: FinalComparison | null;
}

/** The replay engine as the API sees it. */
export interface ReplayService {
  start(sessionId: string): Promise<ReplayView>;
  view(id: string): Promise<ReplayView>;
  preview(id: string, seq: number): Promise<Preview>;
  step(id: string, seq: number, options: { confirm: boolean }): Promise<StepResult>;
  files(id: string): Promise<SandboxEntry[]>;
  /** A sandbox file's text (at most 1 MiB), or null when it does not exist. */
  file(
    id: string,
    path: string,
  ): Promise<{ text: string; size: number; truncated: boolean } | null>;
  compare(id: string): Promise<FinalComparison | null>;
  /** Stops every replay's worker (the sandboxes stay on disk). */
  close(): void;
}

interface Open {
  id: string;
  /** The session's own fields (no operations: its steps are in the run's plan). */
  head: CanonicalSession;
  run: ReplayRun;
  files: SandboxFiles;
  shell: { ok: boolean; detail: string };
  final: FinalComparison | null;
}

/**
 * The replays kept open: at most this many, and at most this many planned steps in all, however
 * few replays that is (the newest is kept whatever its size); the oldest are closed first. A
 * plan names what its steps read (a command's recorded output is read as it runs, a file
 * step's change as it is previewed or applied, the reasoning before a step as it is previewed):
 * the bench's 35,342-step session plans 7,861 steps in 7.6 MiB of heap (26 with those texts),
 * and three replays of it open took the server to 490 MiB before they were bounded.
 */
export const REPLAYS_KEPT = { replays: 8, steps: 10_000 };
const FILE_BYTES = 1 << 20;

export function createReplayService(
  store: ChronicleStore,
  options: {
    dataDir: string;
    env: Record<string, string | undefined>;
    /** Where planning a replay waits its turn (server/session_work.ts). Default: its own. */
    sessionWork?: SessionWork;
    /** The replays kept open (default {@link REPLAYS_KEPT}). */
    kept?: typeof REPLAYS_KEPT;
  },
): ReplayService {
  const work = options.sessionWork ?? oneAtATime();
  const kept = options.kept ?? REPLAYS_KEPT;
  const open = new Map<string, Open>();
  const git = createGitEngine(denoProcessRunner, { env: gitEnv(options.env) });
  const shell = createBwrapShell(denoProcessRunner, {
    home: options.env.HOME,
    dataDir: options.dataDir,
  });

  function get(id: string): Open {
    const o = open.get(id);
    if (!o) throw new ChronicleError("not_found", `No open replay "${id.slice(0, 100)}"`);
    return o;
  }

  function view(o: Open): ReplayView {
    const report = o.run.report(o.final);
    return {
      id: o.id,
      session_id: o.head.session.id,
      sandbox: o.run.sandbox,
      seeded_from: o.run.seed.seeded_from,
      notices: o.run.notices,
      shell: o.shell,
      steps: o.run.plan.steps.map((s) => {
        const r = o.run.results.get(s.seq)!;
        return {
          ...r,
          op: s.op,
          tool: s.tool,
          replayable: s.replayable,
          needs_confirmation: s.kind === "exec",
          blockers: s.blockers,
        };
      }),
      divergences: report.divergences,
      final: o.final,
    };
  }

  // the open replays, bounded as REPLAYS_KEPT says: the oldest closed first
  const bound = { count: kept.replays, steps: kept.steps };
  const planSteps = (r: Open) => r.run.plan.steps.length;
  const close = (r: Open) => r.files.close();

  return {
    async start(sessionId) {
      // room for its plan first, each of its steps counted (two plans of a big session were
      // held at once while the second was made), and the caches of session work let go (the
      // big session's causality kept, 44 MiB, and its plan, 42, took the server over 300 MB)
      makeRoom(open, bound, planSteps, {
        room: store.getSession(sessionId)?.op_count ?? 0,
        adding: 1,
        drop: close,
      });
      work.dropKept();
      // a page at a time (of a reasoning text a plan needs to know only that it is not blank),
      // other requests answered between pages
      const parts = store.sessionParts(sessionId, { textChars: PLAN_TEXT_CHARS });
      const planned = await work.run(() =>
        planInParts(parts, (ref) => store.payloadText(ref), pagedTurns())
      );
      if (!planned) {
        throw new ChronicleError("not_found", `No session "${sessionId.slice(0, 200)}"`);
      }
      const { head: session, plan } = planned;
      const dir = await createSandboxDir(options.dataDir, session.session.id);
      const files = await openSandboxFiles(dir);
      try {
        const seed = await seedSandbox(session, { files, git });
        const run = new ReplayRun(plan, seed, {
          files,
          shell,
          payload: (ref) => store.payloadText(ref),
          reasoning: (op, maxChars) => store.operationText(session.session.id, op, maxChars),
        });
        const avail = await shell.available();
        const id = dir.slice(dir.lastIndexOf("/") + 1);
        const o: Open = {
          id,
          head: session,
          run,
          files,
          shell: { ok: avail.ok, detail: avail.ok ? avail.description : avail.reason },
          final: null,
        };
        open.set(id, o);
        // the oldest go first, never the one just opened
        makeRoom(open, bound, planSteps, { keep: 1, drop: close });
        return view(o);
      } catch (e) {
        files.close();
        throw e;
      }
    },
    view: (id) => Promise.resolve(view(get(id))),
    close() {
      for (const o of open.values()) o.files.close();
      open.clear();
    },
    preview: (id, seq) => get(id).run.preview(seq),
    step: (id, seq, o) => get(id).run.execute(seq, { confirm: o.confirm }),
    files: (id) => get(id).files.list(),
    async file(id, path) {
      const o = get(id);
      const bytes = await o.files.read(path);
      if (bytes === null) return null;
      const truncated = bytes.byteLength > FILE_BYTES;
      return {
        text: new TextDecoder().decode(truncated ? bytes.subarray(0, FILE_BYTES) : bytes),
        size: bytes.byteLength,
        truncated,
      };
    },
    async compare(id) {
      const o = get(id);
      const final = await finalStateOf(git, o.run.seed, o.head, {
        lastToTouch: lastToTouch(store, o.head),
        readWorkingFile: readProjectFile,
      });
      o.final = final ? await o.run.compareFinal(final) : null;
      return o.final;
    },
  };
}
