/**
 * @module
 * The store's pack files on disk (`<data folder>/payloads/0001.pack`, ...): the folder 0700,
 * every pack 0600. Files stay open until the store closes.
 */
import type { PackFiles } from "../core/store/mod.ts";

export function packDir(dataDir: string): string {
  return `${dataDir}/payloads`;
}

export function createPackFiles(dir: string): PackFiles {
  const open = new Map<number, Deno.FsFile>();
  const path = (n: number) => `${dir}/${String(n).padStart(4, "0")}.pack`;

  function file(n: number, create: boolean): Deno.FsFile | null {
    const known = open.get(n);
    if (known) return known;
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`Bad pack number ${n}`);
    try {
      if (create) {
        Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const f = Deno.openSync(path(n), { read: true, write: true, create: true, mode: 0o600 });
        open.set(n, f);
        return f;
      }
      const f = Deno.openSync(path(n), { read: true, write: true });
      open.set(n, f);
      return f;
    } catch (e) {
      if (!create && e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }

  return {
    size(n) {
      return file(n, false)?.statSync().size ?? 0;
    },
    write(n, offset, bytes) {
      const f = file(n, true)!;
      f.seekSync(offset, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.byteLength;) done += f.writeSync(bytes.subarray(done));
    },
    read(n, offset, length) {
      const f = file(n, false);
      if (!f || length <= 0) return new Uint8Array(0);
      const out = new Uint8Array(length);
      f.seekSync(offset, Deno.SeekMode.Start);
      let got = 0;
      while (got < length) {
        const r = f.readSync(out.subarray(got));
        if (r === null || r === 0) break;
        got += r;
      }
      return got === length ? out : out.subarray(0, got);
    },
    sync(n) {
      file(n, false)?.syncDataSync();
    },
    close() {
      for (const f of open.values()) f.close();
      open.clear();
    },
  };
}
