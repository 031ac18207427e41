/** Where OpenCode keeps its data: its database and the older storage tree. */
import type { DiscoverEnv, SourceFs, SourceUnit } from "../types.ts";
import { basename, dirname } from "../_import_kit.ts";

const SOURCE = "opencode" as const;

/** `opencode.db`, and channel builds' `opencode-<name>.db`. */
export const DB_NAME = /^opencode(-[A-Za-z0-9._-]+)?\.db$/;

/** OpenCode's data folders, most specific first. */
export function opencodeDataDirs(env: DiscoverEnv): string[] {
  const dirs: string[] = [];
  const explicit = env.env.OPENCODE_DATA_DIR;
  if (explicit) dirs.push(explicit);
  const xdg = env.env.XDG_DATA_HOME;
  if (xdg) dirs.push(`${xdg}/opencode`);
  dirs.push(`${env.home}/.local/share/opencode`);
  return [...new Set(dirs.map((d) => d.replace(/\/+$/, "")))];
}

export async function discover(env: DiscoverEnv, fs: SourceFs): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  for (const dir of opencodeDataDirs(env)) {
    for (const e of await fs.readDir(dir)) {
      if (e.isFile && DB_NAME.test(e.name)) {
        units.push({ source: SOURCE, path: `${dir}/${e.name}`, kind: "sqlite", rank: 0 });
      } else if (e.isDirectory && e.name === "storage") {
        // Listings only: discovery costs no stat.
        const inner = await fs.readDir(`${dir}/storage`);
        if (inner.some((x) => x.isDirectory && x.name === "session")) {
          units.push({ source: SOURCE, path: `${dir}/storage`, kind: "tree", rank: 0 });
        }
      }
    }
  }
  return units;
}

export function detect(path: string): boolean {
  if (DB_NAME.test(basename(path))) return true;
  return basename(path) === "storage" && basename(dirname(path)) === "opencode";
}
