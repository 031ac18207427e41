/**
 * `--update-fixtures`: writes what a run produced into the project's own real-client
 * fixtures, `fixtures/realclients/<agent>/<scenario>/`, in the layout of the shared ones:
 * `native/` (the agent's files relative to HOME), `native-checkpointed/` (OpenCode, the
 * database after a WAL checkpoint), `scenario.json` (the truth) and `mock/` (the script and
 * the request log).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { AgentSpec } from "./agents.ts";
import type { ExportedSession } from "./chronicle.ts";
import { REPO_ROOT } from "./chronicle.ts";
import type { DriveResult } from "./drive.ts";
import type { Scenario } from "./scenarios.ts";
import { servedOrder } from "./check.ts";

export const FIXTURES_DIR = `${REPO_ROOT}/fixtures/realclients`;

export interface FixtureInput {
  agent: AgentSpec;
  scenario: Scenario;
  version: string;
  run: DriveResult;
  imported?: ExportedSession;
}

export async function writeFixture(f: FixtureInput): Promise<void> {
  const { agent, scenario, run } = f;
  const dir = `${FIXTURES_DIR}/${agent.id}/${scenario.id}`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${dir}/mock`, { recursive: true });
  const nativeFiles: string[] = [];
  for (const rel of agent.logRoots) {
    for (const file of await filesUnder(`${run.ctx.home}/${rel}`)) {
      const relFile = file.slice(run.ctx.home.length + 1);
      await copy(file, `${dir}/native/${relFile}`);
      nativeFiles.push(relFile);
    }
  }
  if (agent.id === "opencode") await checkpointCopy(`${dir}/native`, `${dir}/native-checkpointed`);
  await Deno.writeTextFile(
    `${dir}/mock/native-script.json`,
    JSON.stringify({ ...run.script, title: scenario.title }, null, 1) + "\n",
  );
  const seenResults = new Map<string, number>();
  const firstOfKind = new Set(
    ["main", "sub", "side", "other"].map((k) => run.requests.find((r) => r.kind === k)?.n),
  );
  await Deno.writeTextFile(
    `${dir}/mock/requests.jsonl`,
    (await Promise.all(run.requests.map(async (full) => {
      // Each request resends every earlier tool result: keep only the new ones.
      const thread = `${full.kind}:${full.segment}`;
      const before = seenResults.get(thread) ?? 0;
      seenResults.set(thread, full.results?.length ?? 0);
      const r = full.results ? { ...full, results: full.results.slice(before) } : full;
      // The first request of each kind shows the wire format; later ones only repeat it with a
      // longer history, so they keep the summary and the body's size and hash.
      if (firstOfKind.has(r.n) || !r.body) {
        let body: unknown = r.body;
        try {
          body = r.body ? JSON.parse(r.body) : "";
        } catch {
          // Kept as text.
        }
        return JSON.stringify({ ...r, body: compact(body) });
      }
      const bytes = new TextEncoder().encode(r.body);
      const { body: _, ...rest } = r;
      return JSON.stringify({
        ...rest,
        body_bytes: bytes.length,
        body_sha256: await sha256(bytes),
      });
    }))).join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${dir}/scenario.json`,
    JSON.stringify(await truth(f, nativeFiles), null, 1) + "\n",
  );
}

async function truth(f: FixtureInput, nativeFiles: string[]) {
  const { agent, scenario, run, version } = f;
  const served = servedOrder(run.calls, run.requests);
  const s = f.imported?.session;
  const toolOps = s
    ? (s.timeline ?? []).map((t: { op: string }) => s.operations[t.op]).filter((
      op: { kind: string },
    ) => !["prompt", "reply", "thinking", "event"].includes(op.kind))
    : [];
  const dec = new TextDecoder();
  const calls = [];
  for (const [i, c] of served.entries()) {
    const op = toolOps[i];
    let resultHead: string | undefined;
    if (op?.response?.sha256 && f.imported) {
      const b = await f.imported.payload(op.response.sha256);
      if (b) resultHead = dec.decode(b).slice(0, 300);
    }
    calls.push({
      run: c.segment,
      agent: c.thread === "sub" ? "subagent" : "main",
      op: c.step.op,
      native_tool: c.tool,
      input: c.input,
      path: "path" in c.step ? c.step.path : null,
      expected_error: c.error,
      ...(op
        ? {
          observed_by_chronicle: { kind: op.kind, is_error: op.is_error, result_head: resultHead },
        }
        : {}),
      seq: i + 1,
    });
  }
  return {
    scenario: scenario.id,
    tool: agent.id,
    cli_version: version,
    description: scenario.description,
    root: run.ctx.project.slice(0, run.ctx.project.indexOf("/projects/")),
    home: run.ctx.home,
    project: run.ctx.project,
    cwd: run.ctx.project,
    runs: [
      {
        prompt: run.prompt,
        argv: run.argv,
        exit_code: run.exitCode,
        duration_s: Math.round(run.durationMs / 100) / 10,
        session_id: s?.session?.native_id ?? run.ctx.sessionId,
      },
      ...(scenario.resume
        ? [{
          prompt: scenario.resume.prompt,
          argv: agent.resumeArgv(run.ctx, scenario.resume.prompt),
        }]
        : []),
    ],
    session_id: s?.session?.native_id ?? null,
    n_tool_calls: calls.length,
    tool_calls: calls,
    expected_tool_errors: calls.filter((c) => c.expected_error).map((c) => c.seq),
    final_texts: [scenario.main.final, ...(scenario.resume ? [scenario.resume.final] : [])],
    native_files: nativeFiles.sort(),
    setup_files: Object.keys(scenario.files).sort(),
  };
}

/**
 * Updates the CLI versions table of `fixtures/realclients/README.md` (versions of agents not
 * run are kept; the rest of the file, written by hand, is left as it is).
 */
export async function writeFixturesReadme(versions: Record<string, string>): Promise<void> {
  const path = `${FIXTURES_DIR}/README.md`;
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch {
    // First run: a file with the table alone.
  }
  const old = Object.fromEntries(
    [...text.matchAll(/^\| (\w+) \| (.+?) \|$/gm)].filter((m) => m[1] !== "agent").map((m) => [
      m[1],
      m[2],
    ]),
  );
  const all = { ...old, ...versions };
  const table = `| agent | CLI version |\n|---|---|\n${
    Object.entries(all).map(([a, v]) => `| ${a} | ${v} |`).join("\n")
  }\n`;
  const at = /^\| agent \| CLI version \|\n(?:\|.*\|\n)*/m;
  const next = at.test(text)
    ? text.replace(at, table)
    : `# Session logs written by the real agent CLIs\n\n${table}${text ? "\n" + text : ""}`;
  await Deno.mkdir(FIXTURES_DIR, { recursive: true });
  await Deno.writeTextFile(path, next);
}

/**
 * A request body small enough to keep in the repository: every string over 2,000 characters
 * (system prompts, tool schemas, the 300 KB output resent with every later request) becomes
 * its head plus its length.
 */
function compact(v: unknown): unknown {
  if (typeof v === "string") {
    return v.length > 2000 ? `${v.slice(0, 500)}…[${v.length} chars]` : v;
  }
  if (Array.isArray(v)) return v.map(compact);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, compact(x)]));
  }
  return v;
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function filesUnder(path: string): Promise<string[]> {
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(path);
  } catch {
    return [];
  }
  if (st.isFile) return [path];
  const out: string[] = [];
  for await (const e of Deno.readDir(path)) out.push(...await filesUnder(`${path}/${e.name}`));
  return out;
}

async function copy(from: string, to: string) {
  await Deno.mkdir(to.slice(0, to.lastIndexOf("/")), { recursive: true });
  await Deno.copyFile(from, to);
}

async function checkpointCopy(nativeDir: string, outDir: string) {
  for (const file of await filesUnder(nativeDir)) {
    await copy(file, `${outDir}/${file.slice(nativeDir.length + 1)}`);
  }
  for (const db of (await filesUnder(outDir)).filter((f) => f.endsWith(".db"))) {
    const conn = new DatabaseSync(db);
    conn.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    conn.close();
  }
}
