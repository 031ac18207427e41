/**
 * Chronicle driven as a black box, through its CLI only: `import --json`, `sessions --json`
 * and `export ID --format canonical --out DIR`, each with HOME pointing at a scratch HOME and
 * CHRONICLE_HOME at a scratch data folder.
 *
 * @module
 */

/** The repository root (where main.ts lives). */
import { sessionDirName } from "../../core/artifacts/mod.ts";

export const REPO_ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

export interface ChronicleEnv {
  home: string;
  dataDir: string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `main.ts` with the given arguments in a clean environment. */
export async function chronicle(env: ChronicleEnv, args: string[]): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO_ROOT}/main.ts`, ...args],
    cwd: REPO_ROOT,
    env: {
      HOME: env.home,
      CHRONICLE_HOME: env.dataDir,
      PATH: "/usr/local/bin:/usr/bin:/bin",
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      // HOME is the scratch one: keep Deno's module cache where it is (no network inside).
      DENO_DIR: DENO_DIR,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

export interface SessionRow {
  id: string;
  source: string;
  native_id: string;
  project_path?: string | null;
  op_count?: number;
}

/** An exported session: its session.json and a reader for its payloads. */
export interface ExportedSession {
  dir: string;
  // deno-lint-ignore no-explicit-any
  session: any;
  payload(sha256: string): Promise<Uint8Array | undefined>;
}

/**
 * Import everything under `env.home`, list the sessions, export `pick`'s choice (one session,
 * or several: the first is `exported`, all of them `all`).
 */
export async function importAndExport(
  env: ChronicleEnv,
  outDir: string,
  pick: (rows: SessionRow[]) => SessionRow | SessionRow[] | string,
): Promise<
  {
    importSummary: unknown;
    rows: SessionRow[];
    exported?: ExportedSession;
    all?: ExportedSession[];
    error?: string;
  }
> {
  const imp = await chronicle(env, ["import", "--json"]);
  let importSummary: unknown;
  try {
    importSummary = JSON.parse(imp.stdout);
  } catch {
    importSummary = undefined;
  }
  if (imp.code !== 0) {
    return {
      importSummary,
      rows: [],
      error: `chronicle import exited ${imp.code}: ${firstLine(imp.stderr || imp.stdout)}`,
    };
  }
  const ls = await chronicle(env, ["sessions", "--json"]);
  if (ls.code !== 0) {
    return {
      importSummary,
      rows: [],
      error: `chronicle sessions exited ${ls.code}: ${firstLine(ls.stderr)}`,
    };
  }
  const parsed = JSON.parse(ls.stdout);
  const rows: SessionRow[] = Array.isArray(parsed) ? parsed : parsed.sessions ?? [];
  const chosen = pick(rows);
  if (typeof chosen === "string") return { importSummary, rows, error: chosen };
  const all: ExportedSession[] = [];
  for (const row of Array.isArray(chosen) ? chosen : [chosen]) {
    const ex = await chronicle(env, ["export", row.id, "--format", "canonical", "--out", outDir]);
    if (ex.code !== 0) {
      return {
        importSummary,
        rows,
        error: `chronicle export exited ${ex.code}: ${firstLine(ex.stderr)}`,
      };
    }
    const dir = `${outDir}/sessions/${sessionDirName(row.id)}`;
    const session = JSON.parse(await Deno.readTextFile(`${dir}/session.json`));
    all.push({
      dir,
      session,
      payload: async (sha) => {
        try {
          return await Deno.readFile(`${dir}/payloads/${sha}`);
        } catch {
          return undefined;
        }
      },
    });
  }
  return { importSummary, rows, exported: all[0], all };
}

function firstLine(s: string): string {
  return s.trim().split("\n")[0] ?? "";
}
