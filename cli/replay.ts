/** `chronicle replay`: play a session's edits and commands again in a sandbox and compare. */
import { createGitEngine, gitEnv } from "../core/git/mod.ts";
import { type CanonicalSession, ChronicleError } from "../core/model/mod.ts";
import {
  finalStateOf,
  loadArtifactSession,
  PLAN_TEXT_CHARS,
  planInParts,
  type ReplayDeps,
  type ReplayPlan,
  type ReplayReport,
  ReplayRun,
  seedSandbox,
  type StepResult,
} from "../core/replay/mod.ts";
import { pagedTurns } from "../core/paged.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { denoArtifactReader } from "../runtime/artifact_fs.ts";
import { createBwrapShell } from "../runtime/bwrap.ts";
import { dataDir as dataDirOf, ensureDataDir } from "../runtime/data_dir.ts";
import { denoProcessRunner } from "../runtime/process_runner.ts";
import { lastToTouch, readProjectFile } from "../runtime/replay_support.ts";
import { createSandboxDir, openSandboxFiles } from "../runtime/sandbox_files.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import type { Command } from "./io.ts";

export const REPLAY_HELP =
  `Usage: chronicle replay ID [--to N] [--auto] [--yes-commands] [--from DIR] [--repo DIR] [--json]

Plays the session's file writes, edits, deletes and (when confirmed) shell commands again in a
new sandbox folder under the data folder (replay/<id>/), seeded with the project's files at the
last commit before the session began, and compares every step with the recording. At the end
the sandbox is compared with the project's final state when Chronicle can know it (the working
tree if the session was the last to touch the project, else the first commit after it).

File steps are applied by a worker that may read and write only the sandbox. Shell steps run
only with --yes-commands, under bubblewrap (no network, host read-only, sandbox writable at the
project's path, private home and /tmp, clean environment, 60 s timeout, output capped).

Step status: applied (its outcome matches the recording, a recorded failure included),
diverged (it differs), failed (it could not run: refused path, timeout), blocked (not
replayable: incomplete, out of the project, missing input), skipped (not run: a command without
--yes-commands, after --to, or after an --auto pause).

Options:
  --to N          run steps up to timeline position N (inclusive)
  --auto          stop at the first divergence or failure
  --yes-commands  run shell steps (under bubblewrap)
  --from DIR      replay from exported canonical files (chronicle export), checking every
                  payload's SHA-256, instead of the store
  --repo DIR      the project's git repository, when it is no longer at the recorded path
  --json          print one JSON document: sandbox, seeded_from, steps, divergences
  -h, --help      show this help

Exit codes: 0 every replayable step applied without divergence, 1 otherwise, 2 usage error.
`;

function absolute(path: string, cwd: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
}

function line(r: StepResult): string {
  const target = (r.target ?? "").replace(/\s+/g, " ");
  return `${String(r.seq).padStart(5)}  ${r.kind.padEnd(6)} ${r.status.padEnd(8)} ${
    target.length > 60 ? target.slice(0, 59) + "…" : target
  }${r.detail ? `\n         ${r.detail.split("\n")[0]}` : ""}\n`;
}

export const replayCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    to: { type: "string" },
    auto: { type: "boolean" },
    "yes-commands": { type: "boolean" },
    from: { type: "string" },
    repo: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, REPLAY_HELP, io);
  if (early !== null) return early;
  const id = p.positionals[0];
  if (!id || p.positionals.length > 1) throw new UsageError("replay takes exactly one session id");
  let to: number | undefined;
  if (p.values.to !== undefined) {
    to = Number(p.values.to);
    if (!Number.isInteger(to) || to < 0) {
      throw new UsageError("--to takes a step number (0 or more)");
    }
  }
  const from = str(p.values.from);
  const repo = str(p.values.repo);
  const json = p.values.json === true;

  let store: ChronicleStore | null = null;
  // the session's own fields: its steps are in the plan
  let session: CanonicalSession;
  let plan: ReplayPlan;
  // a payload's text (a step's recorded result or input), read as the step runs
  let payload: ReplayDeps["payload"];
  const notices: string[] = [];
  let data: string;
  if (from) {
    // the session named, by the manifest before its session.json is read, then by that
    const accept = (s: { id: string; native_id: string }) => {
      if (![s.id, s.native_id].some((known) => known.startsWith(id))) {
        throw new UsageError(`${from} holds session ${s.id}, not "${id}"`);
      }
    };
    const a = await loadArtifactSession(denoArtifactReader, absolute(from, io.cwd), { accept });
    // a page of its timeline at a time, with that page's payloads
    ({ head: session, plan } = (await planInParts(a.parts(), a.text, pagedTurns()))!);
    notices.push(...a.problems.map((p) => `Artifacts: ${p}.`));
    payload = a.payload;
    data = await ensureDataDir(dataDirOf(io.env));
  } else {
    const opened = await openUserStore(io);
    store = opened.store;
    data = opened.dir;
    const s = store;
    let planned: Awaited<ReturnType<typeof planInParts>> = null;
    try {
      // a page at a time (of a reasoning text a plan needs to know only that it is not blank)
      const parts = s.sessionParts(s.requireSessionId(id), { textChars: PLAN_TEXT_CHARS });
      planned = await planInParts(parts, (ref) => s.payloadText(ref), pagedTurns());
    } catch (e) {
      s.close();
      throw e;
    }
    if (!planned) {
      s.close();
      throw new ChronicleError("not_found", `Session "${id}" cannot be read`);
    }
    ({ head: session, plan } = planned);
    payload = (ref) => s.payloadText(ref);
  }

  try {
    const dir = await createSandboxDir(data, session.session.id);
    const files = await openSandboxFiles(dir);
    try {
      const git = createGitEngine(denoProcessRunner, { env: gitEnv(io.env) });
      const seed = await seedSandbox(session, { files, git }, {
        repo: repo ? absolute(repo, io.cwd) : undefined,
      });
      seed.notices.unshift(...notices);
      const shell = createBwrapShell(denoProcessRunner, { home: io.env.HOME, dataDir: data });
      const run = new ReplayRun(plan, seed, { files, shell, payload });
      if (!json) {
        io.stdout(
          `Replaying ${session.session.id}: ${plan.steps.length} steps\nSandbox: ${files.root}\n` +
            `Seeded from: ${seed.seeded_from ?? "nothing (empty sandbox)"}\n`,
        );
        for (const n of seed.notices) io.stdout(`  ! ${n}\n`);
      }
      await run.runAll({
        to,
        pauseOnDivergence: p.values.auto === true,
        confirmCommands: p.values["yes-commands"] === true,
        onStep: json ? undefined : (r) => io.stdout(line(r)),
      });
      const final = await finalStateOf(git, seed, session, {
        lastToTouch: lastToTouch(store, session),
        readWorkingFile: readProjectFile,
      });
      const comparison = final ? await run.compareFinal(final) : null;
      const report: ReplayReport = run.report(comparison);
      const inScope = report.steps.filter((s) =>
        (to === undefined || s.seq <= to) && plan.steps.find((x) => x.seq === s.seq)!.replayable
      );
      const ok = report.divergences === 0 && inScope.every((s) => s.status === "applied");
      if (json) {
        io.stdout(
          JSON.stringify(
            {
              sandbox: report.sandbox,
              seeded_from: report.seeded_from,
              steps: report.steps.map((s) => ({
                seq: s.seq,
                kind: s.kind,
                target: s.target,
                status: s.status,
                detail: s.detail,
              })),
              divergences: report.divergences,
              final: report.final,
              notices: report.notices,
            },
            null,
            2,
          ) + "\n",
        );
      } else {
        if (comparison) {
          io.stdout(
            `Final state: ${comparison.equal} of ${comparison.files} files equal to ${comparison.compared_with}\n`,
          );
          for (const d of comparison.differing) io.stdout(`  ≠ ${d.path}: ${d.detail}\n`);
        } else {io.stdout(
            "Final state: unknown (no later commit, and a later session touched the project)\n",
          );}
        const count = (st: string) => report.steps.filter((s) => s.status === st).length;
        io.stdout(
          `${count("applied")} applied, ${count("diverged")} diverged, ${
            count("failed")
          } failed, ` +
            `${count("blocked")} blocked, ${
              count("skipped")
            } skipped; ${report.divergences} divergences\n` +
            `Sandbox: ${report.sandbox}\n`,
        );
      }
      return ok ? 0 : 1;
    } finally {
      files.close();
    }
  } finally {
    store?.close();
  }
};
