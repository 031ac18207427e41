/**
 * @module
 * `chronicle doctor`: what Chronicle found on this machine and what needs fixing, for the CLI
 * and the UI's panel (`GET /api/doctor`) alike. Pure: every fact comes from an injected probe
 * (discovery, the data folder, the store's own check, the guard's self-test, `git`/`bwrap`,
 * `server.json`); this module only judges them, one line each with a one-line fix. A probe
 * that throws becomes a line needing attention, never a crash.
 */
import type {
  AgentFinding,
  AgentProbe,
  DataFolderProbe,
  DoctorCheck,
  DoctorReport,
  GuardProbe,
  ServerProbe,
  StoreProbe,
  ToolProbe,
} from "./types.ts";
import { textLine } from "../model/text_line.ts";

export type * from "./types.ts";

/** Where each fact comes from. Every probe may throw; the report says so. */
export interface DoctorProbes {
  agents(): Promise<AgentProbe[]>;
  /** Null when the data folder's location itself is unknown (no HOME). */
  dataFolder(): Promise<DataFolderProbe | null>;
  /** Null when there is no store yet (nothing imported). */
  store(): Promise<StoreProbe | null>;
  guard(): Promise<GuardProbe | null>;
  tools(): Promise<ToolProbe[]>;
  /** Null when `server.json` names no server. */
  server(): Promise<ServerProbe | null>;
}

export interface DoctorOptions {
  /** Clock (ms). Default `Date.now`. */
  now?: () => number;
}

/** Chronicle's files must be its owner's only: any group or other bit needs attention. */
const OPEN_BITS = 0o077;

/** Runs every probe and judges what they found. */
export async function buildDoctorReport(
  probes: DoctorProbes,
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const now = (options.now ?? Date.now)();
  const checks: DoctorCheck[] = [];
  const attempt = async <T>(
    area: DoctorCheck["area"],
    what: string,
    probe: () => Promise<T>,
  ): Promise<T | undefined> => {
    try {
      return await probe();
    } catch (e) {
      checks.push({
        area,
        subject: what,
        level: "attention",
        message: `Could not check ${what}: ${oneLine((e as Error)?.message ?? String(e))}`,
        fix: "Run `chronicle doctor` again; if it persists, report it with this line",
      });
      return undefined;
    }
  };

  const agents = (await attempt("agents", "the agents' logs", probes.agents)) ?? [];
  const findings = agents.map((a): AgentFinding => ({
    ...a,
    newest_age_s: a.newest_ms === null ? null : Math.max(0, Math.round((now - a.newest_ms) / 1000)),
  }));
  checks.push(...agentChecks(findings));

  const data = await attempt("data", "the data folder", probes.dataFolder);
  if (data !== undefined) checks.push(...dataChecks(data));

  const store = await attempt("store", "the store", probes.store);
  if (store !== undefined) checks.push(...storeChecks(store));

  const guard = await attempt("guard", "the guard", probes.guard);
  if (guard !== undefined) checks.push(guardCheck(guard));

  const tools = (await attempt("tools", "git and bubblewrap", probes.tools)) ?? [];
  checks.push(...tools.map(toolCheck));

  const server = await attempt("server", "the server", probes.server);
  if (server !== undefined) checks.push(serverCheck(server));

  const attention = checks.filter((c) => c.level === "attention").length;
  return {
    ok: attention === 0,
    attention,
    checked_at: new Date(now).toISOString(),
    checks,
    agents: findings,
    data_folder: data ?? null,
    store: store ?? null,
    guard: guard ?? null,
    tools,
    server: server ?? null,
  };
}

function agentChecks(agents: AgentFinding[]): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  for (const a of agents) {
    const found = a.looked.filter((l) => l.found).map((l) => l.path);
    const where = (found.length ? found : a.looked.map((l) => l.path)).join(", ") || "nowhere";
    if (a.error) {
      out.push({
        area: "agents",
        subject: a.id,
        level: "attention",
        message: `${a.name}: discovery failed in ${where}: ${oneLine(a.error)}`,
        fix: "Make the folder readable by you, or point the agent's variable elsewhere",
      });
    } else if (a.files === 0) {
      out.push({
        area: "agents",
        subject: a.id,
        level: "info",
        message: `${a.name}: no logs (looked in ${where})`,
      });
    } else {
      out.push({
        area: "agents",
        subject: a.id,
        level: "ok",
        message: `${a.name}: ${plural(a.files, "file")} in ${where}, newest ${
          formatAge(a.newest_age_s)
        }`,
      });
    }
  }
  if (agents.length && agents.every((a) => a.files === 0 && !a.error)) {
    out.push({
      area: "agents",
      subject: "all",
      level: "attention",
      message: "No agent logs found anywhere Chronicle looks",
      fix:
        "If your agents keep logs elsewhere, set CLAUDE_CONFIG_DIR, CODEX_HOME, CURSOR_USER_DIR, OPENCODE_DATA_DIR or GEMINI_CLI_HOME",
    });
  }
  return out;
}

function dataChecks(d: DataFolderProbe | null): DoctorCheck[] {
  if (d === null) {
    return [{
      area: "data",
      subject: "folder",
      level: "attention",
      message: "No data folder: neither CHRONICLE_HOME nor HOME is set",
      fix: "Set HOME, or CHRONICLE_HOME to the folder Chronicle should keep its data in",
    }];
  }
  if (!d.exists) {
    return [{
      area: "data",
      subject: "folder",
      level: "info",
      message: `Data folder ${d.path} does not exist yet`,
      fix: "`chronicle import` creates it (mode 0700)",
    }];
  }
  if (!d.is_dir) {
    return [{
      area: "data",
      subject: "folder",
      level: "attention",
      message: `Data folder ${d.path} is not a folder`,
      fix: "Point CHRONICLE_HOME at a folder (or move that file away)",
    }];
  }
  const out: DoctorCheck[] = [];
  if (d.mode !== null && (d.mode & OPEN_BITS) !== 0) {
    out.push({
      area: "data",
      subject: "folder",
      level: "attention",
      message: `Data folder ${d.path} is mode ${octal(d.mode)}: others may enter it`,
      fix: `chmod 700 ${shellWord(d.path)}`,
    });
  } else {
    out.push({
      area: "data",
      subject: "folder",
      level: "ok",
      message: `Data folder ${d.path}${d.mode === null ? "" : ` (mode ${octal(d.mode)})`}`,
    });
  }
  const open = d.entries.filter((e) => e.mode !== null && (e.mode & OPEN_BITS) !== 0);
  if (open.length) {
    out.push({
      area: "data",
      subject: "modes",
      level: "attention",
      message: `${plural(open.length, "file")} readable by others: ${
        open.map((e) => `${e.name} (${octal(e.mode!)})`).join(", ")
      }`,
      fix: `chmod 600 ${open.map((e) => shellWord(`${d.path}/${e.name}`)).join(" ")}`,
    });
  } else if (d.entries.length) {
    out.push({
      area: "data",
      subject: "modes",
      level: "ok",
      message: `${plural(d.entries.length, "file")} in it, all owner-only`,
    });
  }
  return out;
}

function storeChecks(s: StoreProbe | null): DoctorCheck[] {
  if (s === null) {
    return [{
      area: "store",
      subject: "store",
      level: "info",
      message: "No store yet: nothing has been imported",
      fix: "`chronicle import` (or `chronicle serve`) imports your agents' logs",
    }];
  }
  const h = s.health;
  const out: DoctorCheck[] = [{
    area: "store",
    subject: "size",
    level: "ok",
    message: `Store ${s.path}: ${plural(h.sessions, "session")}, ${
      plural(h.operations, "operation")
    }, ${formatBytes(s.bytes.total)} (database ${formatBytes(s.bytes.db)}, WAL ${
      formatBytes(s.bytes.wal)
    }, packs ${formatBytes(s.bytes.packs)})`,
  }];
  if (h.quick_check.length) {
    out.push({
      area: "store",
      subject: "integrity",
      level: "attention",
      message: `SQLite's quick_check found ${plural(h.quick_check.length, "problem")}: ${
        oneLine(h.quick_check.slice(0, 3).join("; "))
      }`,
      fix:
        "Stop Chronicle, move chronicle.db (and its -wal, -shm) aside, then run `chronicle import` to rebuild it from your logs",
    });
  } else {
    out.push({
      area: "store",
      subject: "integrity",
      level: "ok",
      message: "SQLite's quick_check: ok",
    });
  }
  const p = h.payloads;
  if (p.bad) {
    out.push({
      area: "store",
      subject: "packs",
      level: "attention",
      message: `${plural(p.bad, "pack payload")} of ${p.checked} missing or changed (first: ${
        p.bad_sha256[0]?.slice(0, 12) ?? "?"
      })`,
      fix:
        "A pack file in payloads/ was cut short or changed: restore the data folder from a backup, or move chronicle.db and payloads/ aside and run `chronicle import`",
    });
  } else {
    out.push({
      area: "store",
      subject: "packs",
      level: "ok",
      message: p.checked
        ? `Pack payloads verified against their SHA-256: ${p.checked}`
        : `${plural(p.packed, "pack payload")} (not verified)`,
    });
  }
  if (s.issues || s.loss_windows) {
    out.push({
      area: "store",
      subject: "issues",
      level: "info",
      message: `Imports recorded ${plural(s.issues, "issue")} and ${
        plural(s.loss_windows, "loss window")
      }`,
      fix: "`chronicle issues` lists them",
    });
  }
  return out;
}

function guardCheck(g: GuardProbe | null): DoctorCheck {
  if (g === null || !g.installed) {
    return {
      area: "guard",
      subject: "guard",
      level: "info",
      message: `The PreToolUse guard is not installed${g ? ` in ${g.settings_path}` : ""}`,
      fix:
        "Optional: `chronicle guard install` blocks Claude Code tool calls that would read a secret",
    };
  }
  if (g.working) {
    return {
      area: "guard",
      subject: "guard",
      level: "ok",
      message: `The guard is installed and blocks: ${g.settings_path}`,
    };
  }
  return {
    area: "guard",
    subject: "guard",
    level: "attention",
    message: `The guard is installed but does not block (${oneLine(g.detail)})`,
    fix: "`chronicle guard install` again (or `chronicle guard uninstall`)",
  };
}

const TOOL_USE: Record<ToolProbe["name"], string> = {
  git: "code at a step, diffs and replay's seeding",
  bwrap: "replay's shell steps",
};

function toolCheck(t: ToolProbe): DoctorCheck {
  if (t.version !== null) {
    return { area: "tools", subject: t.name, level: "ok", message: oneLine(t.version) };
  }
  return {
    area: "tools",
    subject: t.name,
    // Without git whole features go quiet; without bubblewrap only replay's shell steps do.
    level: t.name === "git" ? "attention" : "info",
    message: `${t.name} not found: needed for ${TOOL_USE[t.name]}`,
    fix: t.name === "git"
      ? "Install git (e.g. `apt install git`, `brew install git`)"
      : "Install bubblewrap (e.g. `apt install bubblewrap`); Linux only",
  };
}

function serverCheck(s: ServerProbe | null): DoctorCheck {
  if (s === null) {
    return {
      area: "server",
      subject: "server",
      level: "info",
      message: "No server is running",
      fix: "`chronicle serve` starts one (port 4173 by default)",
    };
  }
  if (s.answering) {
    return {
      area: "server",
      subject: "server",
      level: "ok",
      message: `Serving ${s.url} (port ${s.port}, pid ${s.pid})`,
    };
  }
  return {
    area: "server",
    subject: "server",
    level: "attention",
    message: `server.json names ${s.url} (pid ${s.pid}), but nothing answers there`,
    fix: "`chronicle serve` starts it again (and replaces server.json)",
  };
}

/** "3 h ago", "2 days ago", "just now". */
export function formatAge(seconds: number | null): string {
  if (seconds === null) return "never";
  if (seconds < 60) return "just now";
  const units: [number, string][] = [[86400, "day"], [3600, "h"], [60, "min"]];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return name === "day" ? `${plural(n, "day")} ago` : `${n} ${name} ago`;
    }
  }
  return "just now";
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function octal(mode: number): string {
  return "0" + (mode & 0o777).toString(8).padStart(3, "0");
}

/** A message on one line, at most 300 characters. */
const oneLine = (s: string) => textLine(s, 300);

/** A path as one shell word, for a fix the user may paste. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
