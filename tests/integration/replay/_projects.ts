/**
 * The projects the real-client sessions ran in, rebuilt for replay tests: a git repository with
 * the scenario's files committed before the session, and the state the agent left it in.
 *
 * The files come from the conformance scenarios (tests/conformance/scenarios.ts), which wrote
 * them. One file changed after the fixtures were recorded: s2's tests/test_calc.py asserted
 * `sub(5, 3) == 2` on line 6 when the agents ran it (every agent's recorded traceback shows that
 * line), so that version is used here.
 */
import { SCENARIOS, type Step } from "../../conformance/scenarios.ts";
import { git } from "../../_helpers/git.ts";

export { git };

const S2_TEST_AT_RECORDING =
  'import sys\n\nsys.path.insert(0, "src")\nfrom calc import add, sub\n' +
  'assert add(2, 2) == 4\nassert sub(5, 3) == 2, "sub(5, 3) should be 2"\n';

export function initialFiles(scenario: string): Record<string, string> {
  const s = SCENARIOS.find((x) => x.id === scenario);
  if (!s) throw new Error(`No scenario ${scenario}`);
  const files = { ...s.files };
  if (scenario === "s2-errors") files["tests/test_calc.py"] = S2_TEST_AT_RECORDING;
  return files;
}

/**
 * The project as the agent left it: the initial files with every write and every edit that
 * did not fail applied, in order (the scenario's neutral steps, not any agent's log).
 */
export function finalFiles(scenario: string): Record<string, string> {
  const s = SCENARIOS.find((x) => x.id === scenario)!;
  const files = initialFiles(scenario);
  const threads = [s.main, ...(s.subagent ? [s.subagent] : [])];
  for (const t of threads) {
    for (const turn of t.turns) {
      for (const step of turn.steps as (Step & { error?: boolean })[]) {
        if (step.error) continue;
        if (step.op === "write") files[step.path] = step.content;
        if (step.op === "edit") {
          const before = files[step.path];
          if (!before?.includes(step.old)) throw new Error(`edit of ${step.path} does not apply`);
          files[step.path] = before.replace(step.old, step.new);
        }
      }
    }
  }
  return files;
}

export async function writeFiles(dir: string, files: Record<string, string>) {
  for (const [rel, text] of Object.entries(files)) {
    const p = `${dir}/${rel}`;
    await Deno.mkdir(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(p, text);
  }
}

/**
 * A repository holding the scenario's initial files, committed at 09:00 on the day the
 * fixtures were recorded (before every session); with `final`, its working tree is then left
 * as the agent left it.
 */
export async function projectRepo(
  scenario: string,
  options: { final?: boolean } = {},
): Promise<{ dir: string; commit: string }> {
  const dir = await Deno.makeTempDir({ prefix: `chronicle-replay-${scenario}-` });
  await writeFiles(dir, initialFiles(scenario));
  await git(dir, ["init", "-q", "-b", "main"]);
  await git(dir, ["add", "-A"]);
  await git(dir, ["commit", "-q", "-m", "initial"]);
  const commit = await git(dir, ["rev-parse", "HEAD"]);
  if (options.final) await writeFiles(dir, finalFiles(scenario));
  return { dir, commit };
}
