/**
 * @module
 * The store's pack files on disk (`<data folder>/payloads/0001.pack`, ...): the folder 0700,
 * every pack 0600. Files stay open until the store closes, except a pack another process
 * removed (compacted after a forget): its handle is closed when noticed (`size` before every
 * append checks the file at its path; reads look for removed packs every few seconds), so the
 * space goes back to the disk.
 */
import type { PackFiles } from "../core/store/mod.ts";
import { writeAllSync } from "../core/write_all.ts";

export function packDir(dataDir: string): string {
  return `${dataDir}/payloads`;
}

/** How often reads look for packs removed under them, at most. */
const SWEEP_MS = 5_000;

const PACK_NAME = /^(\d{4,})\.pack$/;

export function createPackFiles(dir: string): PackFiles {
  const open = new Map<number, { f: Deno.FsFile; ino: number | null }>();
  const path = (n: number) => `${dir}/${String(n).padStart(4, "0")}.pack`;
  let swept = 0;

  function list(): number[] {
    const out: number[] = [];
    try {
      for (const e of Deno.readDirSync(dir)) {
        const m = e.isFile ? PACK_NAME.exec(e.name) : null;
        if (m) out.push(Number(m[1]));
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return out.sort((a, b) => a - b);
  }

  function drop(n: number): void {
    open.get(n)?.f.close();
    open.delete(n);
  }

  /** Closes the handles of packs that are no longer at their path (every few seconds). */
  function sweep(): void {
    const now = Date.now();
    if (now - swept < SWEEP_MS || !open.size) return;
    swept = now;
    const present = new Set(list());
    for (const n of [...open.keys()]) if (!present.has(n)) drop(n);
  }

  function file(n: number, create: boolean): Deno.FsFile | null {
    const known = open.get(n);
    if (known) return known.f;
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`Bad pack number ${n}`);
    try {
      if (create) Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const f = Deno.openSync(
        path(n),
        create
          ? { read: true, write: true, create: true, mode: 0o600 }
          : { read: true, write: true },
      );
      open.set(n, { f, ino: f.statSync().ino });
      return f;
    } catch (e) {
      if (!create && e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }

  return {
    size(n) {
      // Before an append: the file at the path, not a handle on a file removed meanwhile.
      const known = open.get(n);
      if (known) {
        let st: Deno.FileInfo | null = null;
        try {
          st = Deno.statSync(path(n));
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        }
        if (!st || (st.ino !== null && known.ino !== null && st.ino !== known.ino)) drop(n);
      }
      return file(n, false)?.statSync().size ?? 0;
    },
    write(n, offset, bytes) {
      const f = file(n, true)!;
      f.seekSync(offset, Deno.SeekMode.Start);
      writeAllSync(f, bytes);
    },
    read(n, offset, length) {
      sweep();
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
    list,
    remove(n) {
      drop(n);
      try {
        Deno.removeSync(path(n));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    },
    close() {
      for (const n of [...open.keys()]) drop(n);
    },
  };
}
