/**
 * Installs the pinned agent CLIs with npm into `.cache/conformance/<agent>-<version>/`, once:
 * a folder whose CLI already answers `--version` is reused. `--latest` asks npm for each
 * package's latest version and installs it beside the pin.
 *
 * @module
 */
import type { AgentSpec } from "./agents.ts";
import { REPO_ROOT } from "./chronicle.ts";

export const CACHE_DIR = `${REPO_ROOT}/.cache/conformance`;

export interface Installed {
  bin: string;
  /** What `<cli> --version` printed. */
  version: string;
  /** Seconds spent in npm (0 when reused from the cache). */
  seconds: number;
}

export function binPath(agent: AgentSpec, version = agent.version): string {
  return `${CACHE_DIR}/${agent.id}-${version}/node_modules/.bin/${agent.binName}`;
}

/** The CLI's own version string, or undefined when it does not run. */
export async function cliVersion(bin: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(bin, {
      args: ["--version"],
      env: {
        HOME: `${CACHE_DIR}/version-home`,
        PATH: "/usr/local/bin:/usr/bin:/bin",
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!out.success) return undefined;
    // The last line that holds a version (Copilot CLI prints an update hint after it).
    return new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => l.trim())
      .filter((l) => /\d+\.\d+/.test(l)).pop();
  } catch {
    return undefined;
  }
}

/** The version npm's `latest` tag names for the agent's package (one `npm view`). */
export async function latestVersion(agent: AgentSpec): Promise<string> {
  const out = await new Deno.Command("npm", {
    args: ["view", `${agent.npmPackage}@latest`, "version"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop()?.trim() ?? "";
  if (!out.success || !/^[\w.-]+$/.test(text)) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-2).join(" | ");
    throw new Error(`npm view ${agent.npmPackage}@latest failed: ${err || text}`);
  }
  return text;
}

/** Install `agent` at `version` (default: its pin) unless the cache already has it. */
export async function ensureInstalled(
  agent: AgentSpec,
  version = agent.version,
): Promise<Installed> {
  const bin = binPath(agent, version);
  await Deno.mkdir(`${CACHE_DIR}/version-home`, { recursive: true });
  const have = await cliVersion(bin);
  if (have) return { bin, version: have, seconds: 0 };
  const dir = `${CACHE_DIR}/${agent.id}-${version}`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/package.json`, JSON.stringify({ private: true }) + "\n");
  const started = performance.now();
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-save",
      "--loglevel=error",
      `${agent.npmPackage}@${version}`,
    ],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" | ");
    throw new Error(`npm install ${agent.npmPackage}@${version} failed: ${err}`);
  }
  const got = await cliVersion(bin);
  if (!got) {
    throw new Error(`${agent.npmPackage}@${version} installed but "${bin} --version" fails`);
  }
  return { bin, version: got, seconds };
}
