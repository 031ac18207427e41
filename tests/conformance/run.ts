/**
 * `deno task conformance [--agent NAME] [--scenario ID] [--latest] [--update-fixtures] [--keep]`
 *
 * Installs the pinned agent CLIs from npm (the only step that needs the network), then
 * re-runs itself inside a network namespace that has only loopback (`unshare -n`, as root)
 * and, per agent and scenario: runs the real CLI against a scripted model server in a
 * scratch project and HOME, imports the logs it wrote with Chronicle's CLI, exports the
 * session as canonical files and checks it call by call. Ends with `N passed, N failed` and
 * exits 1 on any failure. `--latest` also runs the scenarios against each CLI's latest npm
 * version and reports, per agent and version, every record type its logs hold and what the
 * import made of it (`inventory.ts`); the latest's failures are reported, not counted.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { AGENTS, type AgentSpec } from "./agents.ts";
import { checkConversation, checkSession, scriptProblems, servedOrder } from "./check.ts";
import {
  chronicle,
  type ExportedSession,
  importAndExport,
  REPO_ROOT,
  type SessionRow,
} from "./chronicle.ts";
import { drive, type DriveResult } from "./drive.ts";
import { writeFixture, writeFixturesReadme } from "./fixtures.ts";
import { runGuardChecks } from "./guard.ts";
import { runLiveCheck } from "./live.ts";
import { binPath, CACHE_DIR, cliVersion, ensureInstalled, latestVersion } from "./install.ts";
import { dispositions, inventory, latestReport, VersionInventory } from "./inventory.ts";
import { type Scenario, SCENARIOS } from "./scenarios.ts";

const HELP = `Usage: deno task conformance [options]

Runs the real agent CLIs offline against scripted model servers and checks that Chronicle
imports exactly what they did. Needs root (for unshare -n), npm and git.

Options:
  --agent NAME        claude, codex, opencode, gemini, qwen or copilot (repeatable; default all)
  --scenario ID       s1-basic, s2-errors, s4-long, s6-subagent, s7-resume, s8-spawn,
                      s9-secrets, guard, live
                      (repeatable)
  --cli-version A=V   test agent A at npm version V instead of its pin (e.g. claude=2.1.332)
  --latest            also run each CLI's latest npm version (reported, not counted) and
                      write the record-type report (.cache/conformance/latest_report.md)
  --report PATH       write the record-type report there (also without --latest)
  --update-fixtures   refresh fixtures/realclients/ from the runs
  --keep              keep the scratch folder and print where it is
  -h, --help          show this help
`;

interface RunReport {
  name: string;
  ok: boolean;
  lines: string[];
  seconds: number;
  /** The native types the run's logs hold, and what the import made of them. */
  types?: { counts: Map<string, number>; disp: ReturnType<typeof dispositions> };
  /** It failed once and passed when run again (both printed). */
  retried?: boolean;
}

/**
 * Runs a check, and once more in a fresh folder when it fails: a real CLI is not deterministic
 * (Qwen Code's shell once gave `ls -R` without the files it lists, one full suite in three), and
 * a failure that is Chronicle's or the format's fails both times. What the first try said is kept.
 */
async function twice(root: string, run: (root: string) => Promise<RunReport>): Promise<RunReport> {
  const first = await run(root);
  if (first.ok) return first;
  await Deno.mkdir(`${root}/again`, { recursive: true });
  const again = await run(`${root}/again`);
  const said = first.lines.map((l) => `  ${l}`);
  return again.ok
    ? {
      ...again,
      retried: true,
      lines: ["failed once, then passed; the first try:", ...said, ...again.lines],
    }
    : { ...again, lines: ["failed twice; the first try:", ...said, ...again.lines] };
}

const INSIDE = "CONFORMANCE_INSIDE_NETNS";
/** `agent=version` pairs of the latest versions, handed from outside the namespace to inside. */
const LATEST = "CONFORMANCE_LATEST_VERSIONS";
const DEFAULT_REPORT = `${CACHE_DIR}/latest_report.md`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      agent: { type: "string", multiple: true },
      scenario: { type: "string", multiple: true },
      "update-fixtures": { type: "boolean" },
      "cli-version": { type: "string", multiple: true },
      latest: { type: "boolean" },
      report: { type: "string" },
      keep: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const agents = withVersions(selectAgents(values.agent), values["cli-version"] ?? []);
  const scenarioIds = values.scenario;
  if (scenarioIds) {
    for (const id of scenarioIds) {
      if (id !== "guard" && id !== "live" && !SCENARIOS.some((s) => s.id === id)) {
        console.error(`conformance: unknown scenario "${id}"`);
        return 2;
      }
    }
  }
  if (Deno.env.get(INSIDE) !== "1") return await outside(agents, !!values.latest);
  const report = values.report ?? (values.latest ? DEFAULT_REPORT : undefined);
  return await inside(agents, scenarioIds, {
    updateFixtures: !!values["update-fixtures"],
    keep: !!values.keep,
    latest: parseLatest(Deno.env.get(LATEST) ?? ""),
    report,
  });
}

function parseLatest(pairs: string): Map<string, string> {
  return new Map(
    pairs.split(",").filter(Boolean).map((p) => p.split("=", 2) as [string, string]),
  );
}

function selectAgents(names: string[] | undefined): AgentSpec[] {
  if (!names?.length) return [...AGENTS];
  return names.flatMap((n) => n.split(",")).map((n) => {
    const a = AGENTS.find((x) => x.id === n || x.source === n);
    if (!a) {
      console.error(
        `conformance: unknown agent "${n}" (known: ${AGENTS.map((x) => x.id).join(", ")})`,
      );
      Deno.exit(2);
    }
    return a;
  });
}

/** Override pinned versions from `agent=version` pairs. */
function withVersions(agents: AgentSpec[], pairs: string[]): AgentSpec[] {
  const wanted = new Map(pairs.map((p) => p.split("=", 2) as [string, string]));
  for (const [id, v] of wanted) {
    if (!v || !/^[\w.-]+$/.test(v) || !AGENTS.some((a) => a.id === id)) {
      console.error(`conformance: --cli-version wants AGENT=VERSION, got "${id}=${v ?? ""}"`);
      Deno.exit(2);
    }
  }
  return agents.map((a) => wanted.has(a.id) ? { ...a, version: wanted.get(a.id)! } : a);
}

/** Install (network), then run the rest inside a loopback-only network namespace. */
async function outside(agents: AgentSpec[], latest: boolean): Promise<number> {
  const started = performance.now();
  if (Deno.uid() !== 0) {
    console.error("conformance: needs root, to run the CLIs inside `unshare -n` (loopback only)");
    return 2;
  }
  let installSeconds = 0;
  for (const a of agents) {
    try {
      const inst = await ensureInstalled(a);
      installSeconds += inst.seconds;
      console.log(
        `installed ${a.npmPackage}@${a.version}: ${inst.version}` +
          (inst.seconds ? ` (npm ${inst.seconds.toFixed(1)} s)` : " (cached)"),
      );
    } catch (e) {
      console.error(`conformance: ${(e as Error).message}`);
      return 1;
    }
  }
  // The latest versions: looked up and installed here (network), run inside like the pins.
  const latestPairs: string[] = [];
  for (const a of latest ? agents : []) {
    try {
      const v = await latestVersion(a);
      latestPairs.push(`${a.id}=${v}`);
      if (v === a.version) {
        console.log(`latest ${a.npmPackage} is the pin (${v})`);
        continue;
      }
      const inst = await ensureInstalled(a, v);
      installSeconds += inst.seconds;
      console.log(
        `installed latest ${a.npmPackage}@${v}: ${inst.version}` +
          (inst.seconds ? ` (npm ${inst.seconds.toFixed(1)} s)` : " (cached)"),
      );
    } catch (e) {
      // Reported, not fatal: the pinned run still decides the exit code.
      console.log(`latest ${a.npmPackage}: ${(e as Error).message}`);
    }
  }
  // A private mount namespace too, so the scratch root can be a tmpfs at /home/dev (the same
  // paths as the shared real-client fixtures) without touching the host's /home.
  const child = new Deno.Command("unshare", {
    args: [
      "--net",
      "--mount",
      "--",
      "sh",
      "-c",
      'ip link set lo up && exec "$@"',
      "sh",
      Deno.execPath(),
      "run",
      "-A",
      new URL(import.meta.url).pathname,
      ...Deno.args,
    ],
    env: { [INSIDE]: "1", [LATEST]: latestPairs.join(",") },
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  const total = (performance.now() - started) / 1000;
  console.log(
    `suite time: ${total.toFixed(1)} s (npm install ${
      installSeconds.toFixed(1)
    } s, runs and checks ${(total - installSeconds).toFixed(1)} s)`,
  );
  return code;
}

interface InsideOptions {
  updateFixtures: boolean;
  keep: boolean;
  /** Agent id -> its latest npm version (installed; the same as the pin or not). */
  latest: Map<string, string>;
  /** Where to write the record-type report; none when undefined. */
  report?: string;
}

async function inside(
  agents: AgentSpec[],
  scenarioIds: string[] | undefined,
  { updateFixtures, keep, latest, report }: InsideOptions,
): Promise<number> {
  const nonLoopback = Deno.networkInterfaces().filter((i) =>
    !i.address.startsWith("127.") && i.address !== "::1"
  );
  if (nonLoopback.length) {
    console.error(`conformance: refusing to run, the namespace has ${nonLoopback[0].name} up`);
    return 2;
  }
  const root = await scratchRoot(keep);
  console.log(`scratch root: ${root}`);
  const reports: RunReport[] = [];
  const latestReports: RunReport[] = [];
  const inventories: VersionInventory[] = [];
  const versions: Record<string, string> = {};
  // Each agent at its pin, then (with --latest) at npm's latest in a scratch folder of its own.
  const runs = agents.flatMap((a) => {
    const v = latest.get(a.id);
    return [
      { agent: a, isLatest: false },
      ...(v && v !== a.version ? [{ agent: { ...a, version: v }, isLatest: true }] : []),
    ];
  });
  for (const { agent, isLatest } of runs) {
    const bin = binPath(agent, agent.version);
    const version = await cliVersion(bin);
    const into = isLatest ? latestReports : reports;
    const tag = isLatest ? `${agent.id}@${agent.version}` : agent.id;
    if (!version) {
      into.push({ name: tag, ok: false, lines: [`${bin} does not run`], seconds: 0 });
      continue;
    }
    if (!isLatest) versions[agent.id] = version;
    console.log(
      `\n== ${agent.displayName} ${version} (${agent.npmPackage}@${agent.version}${
        isLatest ? ", latest: reported, not counted" : ""
      })`,
    );
    const label = isLatest
      ? "npm's latest"
      : latest.get(agent.id) === agent.version
      ? "pinned, also npm's latest"
      : "pinned";
    const inv = new VersionInventory(agent.displayName, version, label);
    inventories.push(inv);
    const scenarios = SCENARIOS.filter((s) =>
      (!s.agents || s.agents.includes(agent.id)) && (!scenarioIds || scenarioIds.includes(s.id))
    );
    const runRoot = isLatest ? `${root}/latest` : root;
    for (const scenario of scenarios) {
      const r = await twice(
        runRoot,
        (at) => runScenario(agent, scenario, bin, at, version, updateFixtures && !isLatest),
      );
      r.name = `${tag}/${scenario.id}`;
      into.push(r);
      printReport(r);
      inv.results.push({ scenario: scenario.id, ok: r.ok });
      if (r.types) inv.add(scenario.id, r.types.counts, r.types.disp);
    }
    // The guard and the live check test Chronicle, not the log format: at the pin only.
    if (isLatest) continue;
    if (agent.id === "claude" && (!scenarioIds || scenarioIds.includes("guard"))) {
      const t0 = performance.now();
      const g = await runGuardChecks(agent, bin, root);
      const report = {
        name: "claude/guard",
        ok: g.ok,
        lines: g.lines,
        seconds: (performance.now() - t0) / 1000,
      };
      reports.push(report);
      printReport(report);
    }
    if (!scenarioIds || scenarioIds.includes("live")) {
      const report = await twice(root, async (at) => {
        const t0 = performance.now();
        const l = await runLiveCheck(agent, bin, at);
        return {
          name: `${agent.id}/live`,
          ok: l.ok,
          lines: l.lines,
          seconds: (performance.now() - t0) / 1000,
        };
      });
      reports.push(report);
      printReport(report);
    }
  }
  if (updateFixtures) {
    await writeFixturesReadme(Object.fromEntries(
      agents.filter((a) => versions[a.id]).map((a) => [
        a.id,
        `${a.displayName} ${a.version} (\`${a.npmPackage}\`)`,
      ]),
    ));
    console.log(
      "\nfixtures/realclients/ refreshed: the importers' snapshot tests now differ; review with " +
        "`UPDATE_SNAPSHOTS=1 deno task test` and `git diff` before committing.",
    );
  }
  if (report) {
    const md = latestReport(inventories, new Date().toISOString().slice(0, 16) + "Z");
    await Deno.mkdir(report.slice(0, report.lastIndexOf("/")) || ".", { recursive: true });
    await Deno.writeTextFile(report, md + "\n");
    console.log(`\n${md}\nrecord-type report written to ${report}`);
  }
  console.log("\nCLI versions tested:");
  for (const a of agents) {
    const v = latest.get(a.id);
    const also = v && v !== a.version ? ` (and latest ${v})` : v ? " (npm's latest)" : "";
    console.log(`  ${a.displayName}: ${versions[a.id] ?? "not run"}${also}`);
  }
  if (latestReports.length) {
    const ok = latestReports.filter((r) => r.ok).length;
    console.log(`latest versions (not counted): ${ok} passed, ${latestReports.length - ok} failed`);
    for (const r of latestReports.filter((r) => !r.ok)) console.log(`  latest FAILED ${r.name}`);
  }
  const passed = reports.filter((r) => r.ok).length;
  const failed = reports.length - passed;
  for (const r of reports.filter((r) => !r.ok)) console.log(`FAILED ${r.name}`);
  for (const r of reports.filter((r) => r.retried)) {
    console.log(`passed on a second try: ${r.name}`);
  }
  if (!keep) await Deno.remove(root, { recursive: true }).catch(() => {});
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

/** /home/dev on a private tmpfs when the mount namespace allows it, else a temp folder. */
async function scratchRoot(keep: boolean): Promise<string> {
  const blocked = [REPO_ROOT, Deno.execPath(), Deno.env.get("DENO_DIR") ?? ""]
    .some((p) => p.startsWith("/home/"));
  if (!keep && !blocked) {
    const ok = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=4g,mode=0755", "conformance", "/home"],
      stdout: "null",
      stderr: "null",
    }).output().then((o) => o.success).catch(() => false);
    if (ok) {
      await Deno.mkdir("/home/dev", { recursive: true });
      return "/home/dev";
    }
  }
  return await Deno.makeTempDir({ prefix: "chronicle-conformance-" });
}

function printReport(r: RunReport) {
  console.log(`${r.ok ? "PASS" : "FAIL"} ${r.name} (${r.seconds.toFixed(1)} s)`);
  for (const l of r.lines) console.log(`    ${l}`);
}

async function runScenario(
  agent: AgentSpec,
  scenario: Scenario,
  bin: string,
  root: string,
  version: string,
  updateFixtures: boolean,
): Promise<RunReport> {
  const name = `${agent.id}/${scenario.id}`;
  const t0 = performance.now();
  const lines: string[] = [];
  const done = (ok: boolean) => ({ name, ok, lines, seconds: (performance.now() - t0) / 1000 });
  let run: DriveResult;
  try {
    run = await drive(agent, scenario, { root, bin });
  } catch (e) {
    lines.push(`harness: ${(e as Error).message}`);
    return done(false);
  }
  lines.push(
    `cli exit ${run.exitCode}${
      run.timedOut ? " (timed out)" : ""
    }, ${run.requests.length} requests, ${(run.durationMs / 1000).toFixed(1)} s`,
  );
  const problems = scriptProblems(run.calls, run.requests);
  if (run.exitCode !== 0) problems.unshift(`the CLI exited ${run.exitCode}: ${tail(run.stderr)}`);
  for (const p of problems) lines.push(`run: ${p}`);
  const expected = servedOrder(run.calls, run.requests);

  const dataDir = `${root}/data-${agent.id}-${scenario.id}`;
  const outDir = `${root}/export-${agent.id}-${scenario.id}`;
  const imported = await importAndExport(
    { home: run.ctx.home, dataDir },
    outDir,
    (rows) => scenario.resume ? agentSessions(rows, agent) : pickSession(rows, agent, run),
  );
  let ok = problems.length === 0;
  let observed: Awaited<ReturnType<typeof checkSession>> | undefined;
  const counts = await inventory(agent, run.ctx.home);
  const types = { counts, disp: dispositions(counts, imported.all ?? []) };
  if (imported.error || !imported.exported) {
    lines.push(`chronicle: ${imported.error}`);
    ok = false;
  } else {
    const links = continuationProblems(imported.all ?? [imported.exported]);
    lines.push(...links.map((l) => `resume: ${l}`));
    const sut = joinContinuations(imported.all ?? [imported.exported]);
    if (scenario.resume) {
      lines.push(`resume: ${(imported.all ?? []).length} session(s) hold the two runs`);
    }
    observed = await checkSession(expected, sut, run.requests);
    lines.push(...observed.lines);
    const conv = await checkConversation(
      sut,
      run.prompt,
      scenario.main.final,
      scenario.subagent?.final,
    );
    if (scenario.resume) {
      conv.push(
        ...(await checkConversation(sut, scenario.resume.prompt, scenario.resume.final)),
      );
    }
    lines.push(...conv.map((c) => `conversation: ${c}`));
    lines.push(...collapseNotes(observed.notes));
    const secrets = scenario.secrets
      ? await checkSecrets(
        { home: run.ctx.home, dataDir },
        imported.exported.session.session.id,
        scenario.secrets,
        agent.id,
      )
      : [];
    lines.push(...secrets.map((l) => `secrets: ${l}`));
    ok = ok && observed.ok && conv.length === 0 && links.length === 0 &&
      secrets.every((l) => l.startsWith("ok"));
  }
  if (updateFixtures) {
    try {
      await writeFixture({ agent, scenario, version, run, imported: imported.exported });
      lines.push(`fixture written: fixtures/realclients/${agent.id}/${scenario.id}`);
    } catch (e) {
      lines.push(`fixture: ${(e as Error).message}`);
      ok = false;
    }
  }
  const unknown = [...types.disp].filter(([, d]) => d === "unknown").map(([k]) => k);
  if (unknown.length) lines.push(`types: unknown to the importer: ${unknown.join(", ")}`);
  return { ...done(ok), types };
}

function pickSession(rows: SessionRow[], agent: AgentSpec, run: DriveResult): SessionRow | string {
  const mine = rows.filter((r) => r.source === agent.source);
  const byId = mine.filter((r) => r.native_id === run.ctx.sessionId);
  if (byId.length === 1) return byId[0];
  const byProject = mine.filter((r) => r.project_path === run.ctx.project);
  if (byProject.length === 1) return byProject[0];
  if (mine.length === 1) return mine[0];
  return `expected one ${agent.source} session, found ${mine.length} (of ${rows.length}): ${
    mine.map((r) => r.id).join(", ")
  }`;
}

/**
 * `chronicle scan --session` on the imported session: every expected rule fires, and no secret
 * value is printed.
 */
async function checkSecrets(
  env: { home: string; dataDir: string },
  sessionId: string,
  want: NonNullable<Scenario["secrets"]>,
  agent: string,
): Promise<string[]> {
  const r = await chronicle(env, ["scan", "--session", sessionId, "--format", "json"]);
  if (r.code !== 1) {
    return [`chronicle scan exited ${r.code}, want 1 (findings): ${tail(r.stderr)}`];
  }
  let histogram: Record<string, number> = {};
  try {
    histogram = JSON.parse(r.stdout).histogram ?? {};
  } catch {
    return ["chronicle scan printed no JSON"];
  }
  const lines = want.rules.map((rule) => {
    if (want.maskedBy?.[rule]?.includes(agent)) {
      return histogram[rule]
        ? `${rule}: ${histogram[rule]} finding(s), but the CLI masks it`
        : `ok ${rule}: masked by the CLI, no finding`;
    }
    return histogram[rule] ? `ok ${rule}: ${histogram[rule]} finding(s)` : `no ${rule} finding`;
  });
  for (const v of want.values) {
    if (r.stdout.includes(v) || r.stderr.includes(v)) lines.push(`the scan printed a secret value`);
  }
  return lines;
}

/** Every session of the agent: a resumed run may have written its continuation apart. */
function agentSessions(rows: SessionRow[], agent: AgentSpec): SessionRow[] | string {
  const mine = rows.filter((r) => r.source === agent.source);
  return mine.length ? mine : `no ${agent.source} session among ${rows.length}`;
}

/**
 * Several sessions hold one resumed conversation only when each after the first says which
 * one it continues (`session.continues`).
 */
function continuationProblems(all: ExportedSession[]): string[] {
  const problems: string[] = [];
  const ids = new Set(all.map((e) => e.session.session.id));
  const roots = all.filter((e) => !ids.has(e.session.session.continues));
  if (roots.length > 1) {
    problems.push(
      `${roots.length} sessions, not linked as a continuation: ${
        roots.map((e) => e.session.session.id).join(", ")
      }`,
    );
  }
  return problems;
}

/**
 * One session for the check: the continuations of a resumed conversation, first to last, as
 * one timeline (connections renamed apart), with a payload reader over all their exports.
 */
function joinContinuations(all: ExportedSession[]): ExportedSession {
  if (all.length === 1) return all[0];
  const byId = new Map(all.map((e) => [e.session.session.id as string, e]));
  const ordered: ExportedSession[] = [];
  let next = all.find((e) => !byId.has(e.session.session.continues));
  while (next && !ordered.includes(next)) {
    ordered.push(next);
    const id = next.session.session.id;
    next = all.find((e) => e.session.session.continues === id);
  }
  for (const e of all) if (!ordered.includes(e)) ordered.push(e);
  // deno-lint-ignore no-explicit-any
  const timeline: any[] = [];
  // deno-lint-ignore no-explicit-any
  const connections: any[] = [];
  // deno-lint-ignore no-explicit-any
  const operations: Record<string, any> = {};
  ordered.forEach((e, i) => {
    const s = e.session;
    for (const c of s.connections) connections.push({ ...c, id: `${i}:${c.id}` });
    for (const t of [...s.timeline].sort((a, b) => a.seq - b.seq)) {
      timeline.push({
        ...t,
        seq: timeline.length,
        op: `${i}:${t.op}`,
        connection: `${i}:${t.connection}`,
      });
      operations[`${i}:${t.op}`] = s.operations[t.op];
    }
  });
  return {
    dir: ordered[0].dir,
    session: { ...ordered[0].session, connections, timeline, operations },
    payload: async (sha) => {
      for (const e of ordered) {
        const b = await e.payload(sha);
        if (b) return b;
      }
      return undefined;
    },
  };
}

/** "#2 Edit (edit): input has extra keys x" repeated per call becomes one line. */
function collapseNotes(notes: string[]): string[] {
  const byText = new Map<string, string[]>();
  for (const n of notes) {
    const i = n.indexOf(": ");
    const [who, what] = i > 0 ? [n.slice(0, i), n.slice(i + 2)] : ["", n];
    byText.set(what, [...(byText.get(what) ?? []), who.split(" ")[0]]);
  }
  return [...byText].map(([what, who]) => `note: ${what} (${who.join(" ")})`);
}

function tail(s: string): string {
  return s.trim().split("\n").slice(-3).join(" | ").slice(0, 400);
}

if (import.meta.main) Deno.exit(await main());
