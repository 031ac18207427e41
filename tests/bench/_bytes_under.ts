/** Bytes of every file under `dir` (a store: database, WAL, packs; or a home's logs). */
export function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    n += e.isDirectory ? bytesUnder(p) : Deno.statSync(p).size;
  }
  return n;
}
