/**
 * @module
 * The data folder (`~/.chronicle`, or `CHRONICLE_HOME`): 0700, files 0600. Holds the store,
 * the per-install token, backups and scratch space.
 */

import { ChronicleError } from "../core/model/mod.ts";

export function dataDir(env: Record<string, string | undefined>): string {
  if (env.CHRONICLE_HOME) return env.CHRONICLE_HOME.replace(/\/+$/, "");
  if (!env.HOME) {
    throw new Error("Cannot find the data folder: neither CHRONICLE_HOME nor HOME is set");
  }
  return `${env.HOME.replace(/\/+$/, "")}/.chronicle`;
}

/** Creates the folder if needed and makes sure only its owner can enter it. */
export async function ensureDataDir(dir: string): Promise<string> {
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  } catch (e) {
    const why = e instanceof Deno.errors.AlreadyExists || e instanceof Deno.errors.NotADirectory
      ? "it (or a folder above it) is a file; point CHRONICLE_HOME at a folder"
      : e instanceof Deno.errors.PermissionDenied
      ? "permission denied; point CHRONICLE_HOME at a folder you own"
      : (e as Error).message.replace(/\s*\(os error \d+\).*$/s, "");
    throw new ChronicleError("io", `Cannot use the data folder "${dir}": ${why}`, { cause: e });
  }
  return dir;
}

export function storePath(dir: string): string {
  return `${dir}/chronicle.db`;
}

/** Restricts the store and its WAL files to the owner (SQLite creates them with the umask). */
export async function lockDownFiles(paths: string[]): Promise<void> {
  if (Deno.build.os === "windows") return;
  for (const p of paths) {
    try {
      await Deno.chmod(p, 0o600);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
}

/** The per-install token (0600 file `token`), created on first use. */
export async function readOrCreateToken(dir: string): Promise<string> {
  const path = `${dir}/token`;
  try {
    const t = (await Deno.readTextFile(path)).trim();
    if (t.length >= 32) return t;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const token = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  await Deno.writeTextFile(path, token + "\n", { mode: 0o600 });
  if (Deno.build.os !== "windows") await Deno.chmod(path, 0o600);
  return token;
}
