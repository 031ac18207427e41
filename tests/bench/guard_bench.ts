/**
 * The installed guard's latency as Claude Code runs it: a new process per tool call, the
 * launcher `chronicle guard install` writes, run through `sh -c` with the hook payload on
 * stdin. Reports p50 and p95 wall time per call for a blocked `.env` read, an allowed Read and
 * an allowed Bash command, and the same for a `deno run` of an empty program on the same
 * machine in the same rounds (the floor a Deno guard cannot go below), as a ratio.
 * Target (issue 12): p95 at most 60 ms.
 *
 *   deno run -A tests/bench/guard_bench.ts [RUNS]   (default 60)
 */
const RUNS = Number(Deno.args[0] ?? 60);
const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-bench-guard-" }));
const home = `${root}/home`;
const data = `${root}/data`;
const proj = `${root}/proj`;
await Deno.mkdir(`${home}/.claude`, { recursive: true });
await Deno.mkdir(`${proj}/src`, { recursive: true });
await Deno.writeTextFile(
  `${proj}/.env`,
  "GITHUB_TOKEN=" + "gh" + "p_" + "a1B2c3D4".repeat(4) + "e5F6\n",
);
await Deno.writeTextFile(`${proj}/src/app.ts`, "export const x = 1;\n".repeat(200));
const env = { HOME: home, CHRONICLE_HOME: data, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
const install = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", `${ROOT}/main.ts`, "guard", "install"],
  env,
  stdout: "piped",
  stderr: "piped",
}).output();
if (install.code !== 0) throw new Error(new TextDecoder().decode(install.stderr));
const launcher = `${data}/guard/chronicle-guard`;
const empty = `${root}/empty.ts`;
await Deno.writeTextFile(empty, "");

const payload = (tool: string, input: Record<string, unknown>) =>
  JSON.stringify({
    hook_event_name: "PreToolUse",
    session_id: "bench",
    cwd: proj,
    tool_name: tool,
    tool_input: input,
  });
const cases: { name: string; cmd: string[]; stdin: string; want: number }[] = [
  {
    name: "blocked: Bash grep TOKEN .env",
    cmd: ["sh", "-c", launcher],
    stdin: payload("Bash", { command: "grep TOKEN .env" }),
    want: 2,
  },
  {
    name: "allowed: Read src/app.ts",
    cmd: ["sh", "-c", launcher],
    stdin: payload("Read", { file_path: `${proj}/src/app.ts` }),
    want: 0,
  },
  {
    name: "allowed: Bash git diff && npm test",
    cmd: ["sh", "-c", launcher],
    stdin: payload("Bash", { command: "git diff && npm test" }),
    want: 0,
  },
  {
    name: "floor: deno run of an empty file",
    cmd: [Deno.execPath(), "run", "--quiet", empty],
    stdin: "",
    want: 0,
  },
];

async function once(c: (typeof cases)[number]): Promise<number> {
  const start = performance.now();
  const child = new Deno.Command(c.cmd[0], {
    args: c.cmd.slice(1),
    env,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(c.stdin));
  await w.close();
  const { code } = await child.status;
  const ms = performance.now() - start;
  if (code !== c.want) throw new Error(`${c.name}: exit ${code}, expected ${c.want}`);
  return ms;
}

const times = cases.map(() => [] as number[]);
for (const c of cases) await once(c); // warm the caches
for (let r = 0; r < RUNS; r++) {
  for (const [i, c] of cases.entries()) times[i].push(await once(c));
}
const pct = (a: number[], p: number) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
};
console.log(
  `guard latency, a new process per call as Claude Code runs it (${RUNS} rounds, interleaved)`,
);
const floor = times[times.length - 1];
for (const [i, c] of cases.entries()) {
  const t = times[i];
  console.log(
    `  ${c.name.padEnd(40)} p50 ${pct(t, 0.5).toFixed(1)} ms  p95 ${pct(t, 0.95).toFixed(1)} ms` +
      (i < cases.length - 1
        ? `  (p50 ${(pct(t, 0.5) / pct(floor, 0.5)).toFixed(2)}x the floor)`
        : ""),
  );
}
const guard = times.slice(0, -1).flat();
console.log(
  `  all guard calls: p50 ${pct(guard, 0.5).toFixed(1)} ms, p95 ${
    pct(guard, 0.95).toFixed(1)
  } ms (target p95 <= 60 ms)`,
);

try {
  const load = Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  console.log(`  load average at the end: ${load} (on ${navigator.hardwareConcurrency} cores)`);
} catch {
  console.log("  (no load average: run with --allow-sys=loadavg)");
}
await Deno.remove(root, { recursive: true });
