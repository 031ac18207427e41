/** Replays a session the way the CLI does, with the real worker, git engine and bwrap jail. */
import { createGitEngine, gitEnv } from "../../../core/git/mod.ts";
import type { CanonicalSession } from "../../../core/model/mod.ts";
import {
  buildPlan,
  finalStateOf,
  type PayloadText,
  ReplayRun,
  seedSandbox,
} from "../../../core/replay/mod.ts";
import { createBwrapShell } from "../../../runtime/bwrap.ts";
import { denoProcessRunner } from "../../../runtime/process_runner.ts";
import { openSandboxFiles } from "../../../runtime/sandbox_files.ts";

export const git = createGitEngine(denoProcessRunner, { env: gitEnv(Deno.env.toObject()) });

export async function readWorking(root: string, path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(`${root}/${path}`);
  } catch {
    return null;
  }
}

export interface ReplayOptions {
  repo?: string;
  confirmCommands?: boolean;
  /** The HOME the jail hides (a scratch folder in the attack tests). */
  home?: string;
  lastToTouch?: boolean;
}

/** Seeds a fresh sandbox, runs every step and compares the end state. */
export async function replay(session: CanonicalSession, text: PayloadText, o: ReplayOptions = {}) {
  const sandbox = await Deno.makeTempDir({ prefix: "chronicle-sandbox-" });
  const files = await openSandboxFiles(sandbox);
  try {
    const plan = buildPlan(session, text);
    const seed = await seedSandbox(session, { files, git }, { repo: o.repo });
    const shell = createBwrapShell(denoProcessRunner, { home: o.home ?? Deno.env.get("HOME") });
    const run = new ReplayRun(plan, seed, { files, shell, payload: text });
    const steps = await run.runAll({ confirmCommands: o.confirmCommands ?? true });
    const final = await finalStateOf(git, seed, session, {
      lastToTouch: o.lastToTouch ?? true,
      readWorkingFile: readWorking,
    });
    const comparison = final ? await run.compareFinal(final) : null;
    return { plan, seed, steps, run, report: run.report(comparison), sandbox: files.root, files };
  } catch (e) {
    files.close();
    throw e;
  }
}

/** Every regular file under `dir` (relative paths), `.git` and `__pycache__` left out. */
export async function treeOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string) => {
    for await (const e of Deno.readDir(d)) {
      if (e.name === ".git" || e.name === "__pycache__") continue;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory) await walk(`${d}/${e.name}`, p);
      else if (e.isFile) out[p] = await Deno.readTextFile(`${d}/${e.name}`);
    }
  };
  await walk(dir, "");
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
