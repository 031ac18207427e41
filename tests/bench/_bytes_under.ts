/** Bytes of every file under `dir` (a store: database, WAL, packs; or a home's logs). */
export function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    n += e.isDirectory ? bytesUnder(p) : Deno.statSync(p).size;
  }
  return n;
}

/**
 * Bytes of the logs at `path`: a folder's files, or one file (a database). A corpus's home
 * may hold more than its logs (a Deno cache, when a process ran with it as HOME): the Cursor
 * database's 114 MiB were counted as 137 with one, and its store as 0.59x the logs, not 0.71x.
 */
export function bytesOf(path: string): number {
  const info = Deno.statSync(path);
  return info.isDirectory ? bytesUnder(path) : info.size;
}
