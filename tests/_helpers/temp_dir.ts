/**
 * Temporary folders that tests leave nothing of: one a module's tests share, removed when the
 * module is done, and one for the length of a call.
 */

/** A temporary folder the module's tests share; it goes when the module unloads. */
export async function moduleTempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already gone
    }
  });
  return dir;
}

/** Runs `fn` with a temporary folder, removed when it returns or throws. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
