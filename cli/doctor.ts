/**
 * `chronicle doctor`: what Chronicle found (each agent's logs, the data folder and its modes,
 * the store's size and integrity, the guard, git and bubblewrap, the server) and what needs a
 * fix. core/doctor judges; this file holds the real probes, shared with `GET /api/doctor`.
 */
import { buildDoctorReport, type DoctorProbes, type DoctorReport } from "../core/doctor/mod.ts";
import type { AgentProbe, DataFolderProbe, ServerProbe, ToolProbe } from "../core/doctor/mod.ts";
import { TOKEN_HEADER } from "../core/security/local_access.ts";
import { termSafe } from "../core/security/terminal.ts";
import type { DirEntry, FileStat, SourceFs } from "../core/sources/types.ts";
import { IMPORTERS } from "../core/sources/registry.ts";
import { ChronicleStore } from "../core/store/mod.ts";
import { dataDir, storePath } from "../runtime/data_dir.ts";
import { createDenoFs } from "../runtime/deno_fs.ts";
import { createPackFiles, packDir } from "../runtime/pack_files.ts";
import { denoProcessRunner } from "../runtime/process_runner.ts";
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import { expectedGuardCommand, guardHookStatus } from "./guard.ts";
import { discoverEnv } from "./import.ts";
import type { CliIo, Command } from "./io.ts";

export const DOCTOR_HELP = `Usage: chronicle doctor [--json] [--no-verify]

Says what Chronicle found and what needs fixing: each agent's logs (where it looked, how many
files, the newest one's age), the data folder and its modes, the store's size and integrity
(SQLite's quick_check, every pack payload checked against its SHA-256), whether the guard is
installed and really blocks, git and bubblewrap, and the running server's port. Each line
that needs attention comes with its fix.

Options:
  --json        print the report as JSON (what GET /api/doctor answers)
  --no-verify   do not read back the pack payloads (quicker on a big store)
  -h, --help    show this help

Exit codes: 0 nothing needs attention, 1 something does, 2 usage error.
`;

/**
 * A SourceFs that remembers the paths discovery asked about: the shortest of them are the
 * roots it looked in (whatever the agent; the importers need not list them).
 */
function recordingFs(
  inner: SourceFs,
): { fs: SourceFs; roots(): { path: string; found: boolean }[] } {
  const seen = new Map<string, boolean>();
  const note = (path: string, found: boolean) => {
    if (!seen.has(path) || found) seen.set(path, found);
  };
  const fs: SourceFs = {
    ...inner,
    async stat(path: string): Promise<FileStat | null> {
      const s = await inner.stat(path);
      note(path, s !== null);
      return s;
    },
    async readDir(path: string): Promise<DirEntry[]> {
      const entries = await inner.readDir(path);
      note(path, entries.length > 0 || (await inner.stat(path)) !== null);
      return entries;
    },
  };
  return {
    fs,
    roots() {
      const paths = [...seen.keys()].sort();
      const roots = paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(q + "/")));
      return roots.map((path) => ({ path, found: seen.get(path) === true }));
    },
  };
}

async function agentProbes(io: CliIo): Promise<AgentProbe[]> {
  const env = discoverEnv(io);
  const base = createDenoFs();
  const out: AgentProbe[] = [];
  for (const importer of IMPORTERS) {
    const rec = recordingFs(base);
    const probe: AgentProbe = {
      id: importer.id,
      name: importer.displayName,
      looked: [],
      files: 0,
      newest_ms: null,
    };
    try {
      const units = await importer.discover(env, rec.fs);
      probe.files = units.length;
      for (const u of units) {
        const s = await base.stat(u.path);
        if (s?.mtimeMs != null && (probe.newest_ms === null || s.mtimeMs > probe.newest_ms)) {
          probe.newest_ms = s.mtimeMs;
        }
      }
    } catch (e) {
      probe.error = (e as Error).message;
    }
    probe.looked = rec.roots();
    out.push(probe);
  }
  return out;
}

function modeOf(info: Deno.FileInfo): number | null {
  return Deno.build.os === "windows" || info.mode === null ? null : info.mode & 0o777;
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return null;
    throw e;
  }
}

async function dataFolderProbe(io: CliIo): Promise<DataFolderProbe | null> {
  let dir: string;
  try {
    dir = dataDir(io.env);
  } catch {
    return null;
  }
  const info = await statOrNull(dir);
  const probe: DataFolderProbe = {
    path: dir,
    exists: info !== null,
    is_dir: info?.isDirectory ?? false,
    mode: info ? modeOf(info) : null,
    entries: [],
  };
  if (!probe.is_dir) return probe;
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isFile) names.push(e.name);
  for (const sub of ["payloads", "guard", "backups"]) {
    const s = await statOrNull(`${dir}/${sub}`);
    if (!s?.isDirectory) continue;
    for await (const e of Deno.readDir(`${dir}/${sub}`)) {
      if (e.isFile) names.push(`${sub}/${e.name}`);
    }
  }
  for (const name of names.sort()) {
    const s = await statOrNull(`${dir}/${name}`);
    if (!s) continue;
    // the guard's launcher is a program: 0700 is its owner-only mode
    probe.entries.push({ name, mode: modeOf(s) });
  }
  return probe;
}

async function sizeOf(path: string): Promise<number> {
  return (await statOrNull(path))?.size ?? 0;
}

async function toolProbe(name: ToolProbe["name"]): Promise<ToolProbe> {
  try {
    const r = await denoProcessRunner(name, ["--version"], {
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    });
    const text = new TextDecoder().decode(r.stdout).trim() ||
      new TextDecoder().decode(r.stderr).trim();
    return { name, version: r.code === 0 ? (text.split("\n")[0] || name) : null };
  } catch {
    return { name, version: null };
  }
}

async function serverProbe(io: CliIo): Promise<ServerProbe | null> {
  const dir = dataDir(io.env);
  let info: { url?: unknown; port?: unknown; pid?: unknown };
  try {
    info = JSON.parse(await Deno.readTextFile(`${dir}/server.json`));
  } catch {
    return null;
  }
  const url = typeof info.url === "string" ? info.url : "";
  const probe: ServerProbe = {
    url,
    port: Number(info.port) || 0,
    pid: Number(info.pid) || 0,
    answering: false,
  };
  let token = "";
  try {
    token = (await Deno.readTextFile(`${dir}/token`)).trim();
  } catch { /* no token: it cannot answer us */ }
  try {
    const res = await fetch(new URL("api/health", url), {
      headers: { [TOKEN_HEADER]: token },
      signal: AbortSignal.timeout(3000),
    });
    await res.body?.cancel();
    probe.answering = res.ok;
  } catch {
    probe.answering = false;
  }
  return probe;
}

export interface DoctorProbeOptions {
  /** Read back every pack payload. Default true. */
  verifyPacks?: boolean;
  /** An open store to check (the server's); otherwise the data folder's is opened read-only. */
  store?: ChronicleStore;
  /** Whether the server asking is itself the one server.json names (it answers, by definition). */
  self?: { url: string; port: number; pid: number };
}

/** The real probes, for the CLI and `GET /api/doctor`. */
export function doctorProbes(io: CliIo, options: DoctorProbeOptions = {}): DoctorProbes {
  return {
    agents: () => agentProbes(io),
    dataFolder: () => dataFolderProbe(io),
    store: async () => {
      const dir = dataDir(io.env);
      const path = storePath(dir);
      if (!options.store && !(await statOrNull(path))?.isFile) return null;
      // Doctor never creates a store; opening an existing one migrates it, as every command does.
      const store = options.store ??
        ChronicleStore.open(path, { packs: createPackFiles(packDir(dir)) });
      try {
        let packs = 0;
        const pd = await statOrNull(packDir(dir));
        if (pd?.isDirectory) {
          for await (const e of Deno.readDir(packDir(dir))) {
            if (e.isFile) packs += await sizeOf(`${packDir(dir)}/${e.name}`);
          }
        }
        const db = await sizeOf(path);
        const wal = await sizeOf(`${path}-wal`);
        const totals = store.totals();
        return {
          path,
          bytes: { db, wal, packs, total: db + wal + packs },
          health: store.health({ verifyPacks: options.verifyPacks !== false }),
          issues: totals.issues,
          loss_windows: totals.loss_windows,
        };
      } finally {
        if (!options.store) store.close();
      }
    },
    guard: async () => guardHookStatus(io.env, await expectedGuardCommand(io)),
    tools: () => Promise.all([toolProbe("git"), toolProbe("bwrap")]),
    server: async () => options.self ? { ...options.self, answering: true } : await serverProbe(io),
  };
}

const MARK = { ok: "ok", info: "--", attention: "!!" } as const;

/** The report as the terminal shows it: one line a check, its fix indented below it. */
export function formatDoctorReport(r: DoctorReport): string {
  const lines: string[] = [];
  let area = "";
  for (const c of r.checks) {
    if (c.area !== area) {
      area = c.area;
      lines.push(`${AREA_TITLE[c.area]}:`);
    }
    lines.push(`  [${MARK[c.level]}] ${termSafe(c.message)}`);
    if (c.fix && c.level !== "ok") lines.push(`       fix: ${termSafe(c.fix)}`);
  }
  lines.push(
    r.ok
      ? "\nNothing needs attention."
      : `\n${r.attention} ${r.attention === 1 ? "thing needs" : "things need"} attention.`,
  );
  return lines.join("\n") + "\n";
}

const AREA_TITLE: Record<DoctorReport["checks"][number]["area"], string> = {
  agents: "Agents",
  data: "Data folder",
  store: "Store",
  guard: "Guard",
  tools: "Replay tools",
  server: "Server",
};

export const doctorCommand: Command = async (args, io) => {
  const p = parseArgs(args, { json: { type: "boolean" }, "no-verify": { type: "boolean" } });
  const early = helpOrVersion(p, DOCTOR_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const report = await buildDoctorReport(
    doctorProbes(io, { verifyPacks: p.values["no-verify"] !== true }),
  );
  io.stdout(p.values.json ? JSON.stringify(report, null, 2) + "\n" : formatDoctorReport(report));
  return report.ok ? 0 : 1;
};
