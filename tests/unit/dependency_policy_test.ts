/**
 * Deno downloads every package that `deno.lock` names before a task runs, so the lockfile of the
 * program (deno.lock) names only what the program and its UI build import; test-only packages
 * live in tests/_helpers/test_deps.ts and tests/deno.lock.
 */
import { assertEquals } from "../_helpers/assert.ts";

const ROOT = new URL("../../", import.meta.url);
const TEST_ONLY = /playwright|secretlint|axe-core/;

Deno.test("deno.json and deno.lock name no test-only package, so `deno task start` never downloads one", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const lock = JSON.parse(await Deno.readTextFile(new URL("deno.lock", ROOT)));
  const named = [
    ...Object.values(config.imports as Record<string, string>),
    ...Object.keys(lock.specifiers ?? {}),
    ...Object.keys(lock.npm ?? {}),
  ];
  assertEquals(named.filter((n) => TEST_ONLY.test(n)), []);
});

Deno.test("every task that runs tests, checks or benchmarks uses the tests' own lockfile", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const tasks = config.tasks as Record<string, { command: string }>;
  const offenders = Object.entries(tasks).flatMap(([name, t]) =>
    t.command.split("&&").map((c) => c.trim()).filter((c) =>
      /^deno (test|check)\b|^deno run .*tests\//.test(c) && !c.includes("--lock=tests/deno.lock")
    ).map((c) => `${name}: ${c}`)
  );
  assertEquals(offenders, []);
});

Deno.test("start, chronicle and compile run Chronicle with the same V8 flags", async () => {
  // (deno.json cannot share a string between tasks: the flags are written three times, and the
  // benches measure the chronicle task's)
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const tasks = config.tasks as Record<string, { command: string }>;
  const flags = (name: string) => tasks[name].command.match(/--v8-flags=\S+/g);
  assertEquals(flags("chronicle")?.length, 1);
  assertEquals(flags("start"), flags("chronicle"));
  assertEquals(flags("compile"), flags("chronicle"));
});
