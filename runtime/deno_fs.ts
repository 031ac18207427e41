/**
 * @module
 * The real SourceFs over Deno's file APIs, wired in by main.ts and the import worker. Core
 * engines never call Deno.* themselves.
 */
import type { DirEntry, FileStat, SourceFs } from "../core/sources/types.ts";

const CHUNK = 1 << 20;

export interface DenoFsOptions {
  /** Folder under which scratch copies (foreign SQLite databases) are made. */
  tempRoot?: string;
  /**
   * Stat and read ranges with the blocking calls. For a thread with nothing else to do (the
   * import worker): each asynchronous call is a round trip through Deno's thread pool, and on
   * a busy machine a live import of one line made a dozen of them. Default false.
   */
  blocking?: boolean;
}

function fileStat(s: Deno.FileInfo): FileStat {
  return {
    isFile: s.isFile,
    isDirectory: s.isDirectory,
    size: s.size,
    mtimeMs: s.mtime ? s.mtime.getTime() : null,
    ino: s.ino ?? null,
  };
}

const missing = (e: unknown) =>
  e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;

/** Reads at most `length` bytes at `offset` with the blocking calls. */
function readRangeSync(path: string, offset: number, length: number): Uint8Array {
  const file = Deno.openSync(path, { read: true });
  try {
    file.seekSync(offset, Deno.SeekMode.Start);
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = file.readSync(buf.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    file.close();
  }
}

export function createDenoFs(options: DenoFsOptions = {}): SourceFs {
  const blocking = options.blocking === true;
  /**
   * The read buffer of the last file read, for the next (a read in progress has its own): a
   * buffer a file, most of them a megabyte, left the outside memory to the collector and to the
   * allocator of the import worker's thread, whose memory grew with them.
   */
  let spare: Uint8Array | null = null;
  return {
    async stat(path: string): Promise<FileStat | null> {
      try {
        return fileStat(blocking ? Deno.statSync(path) : await Deno.stat(path));
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    },
    async readDir(path: string): Promise<DirEntry[]> {
      const out: DirEntry[] = [];
      try {
        for await (const e of Deno.readDir(path)) {
          out.push({
            name: e.name,
            isFile: e.isFile,
            isDirectory: e.isDirectory,
            isSymlink: e.isSymlink,
          });
        }
      } catch (e) {
        if (missing(e)) return [];
        throw e;
      }
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async *readFrom(path: string, offset: number): AsyncIterable<Uint8Array> {
      const file = Deno.openSync(path, { read: true });
      let buf: Uint8Array | null = null;
      try {
        if (offset > 0) file.seekSync(offset, Deno.SeekMode.Start);
        // One buffer, read into again for each chunk (SourceFs: a chunk lasts until the next):
        // a fresh megabyte per read cost the import worker a third of a second per 300 MB in
        // page faults and the collections its outside memory set off. No bigger than the file,
        // unless the last file's is free.
        const left = file.statSync().size - offset;
        const want = Math.min(CHUNK, Math.max(4096, left + 4096));
        buf = spare && spare.byteLength >= want ? spare : new Uint8Array(want);
        if (buf === spare) spare = null;
        while (true) {
          // A synchronous read of a local file costs well under a millisecond; awaiting the
          // asynchronous one left the import worker idle for a third of a second per 300 MB.
          const n = file.readSync(buf);
          if (n === null || n === 0) break;
          yield buf.subarray(0, n);
        }
      } finally {
        file.close();
        if (buf && buf.byteLength > (spare?.byteLength ?? 0)) spare = buf;
      }
    },
    async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
      if (length <= 0) return new Uint8Array(0);
      if (blocking) return readRangeSync(path, offset, length);
      const file = await Deno.open(path, { read: true });
      try {
        await file.seek(offset, Deno.SeekMode.Start);
        const buf = new Uint8Array(length);
        let got = 0;
        while (got < length) {
          const n = await file.read(buf.subarray(got));
          if (n === null || n === 0) break;
          got += n;
        }
        return buf.subarray(0, got);
      } finally {
        file.close();
      }
    },
    readTextFile: (path) => Deno.readTextFile(path),
    async copyToTemp(path: string, dir: string, name: string): Promise<string> {
      const target = `${dir}/${name}`;
      await Deno.copyFile(path, target);
      return target;
    },
    async makeTempDir(): Promise<string> {
      if (options.tempRoot) await Deno.mkdir(options.tempRoot, { recursive: true, mode: 0o700 });
      return await Deno.makeTempDir({ dir: options.tempRoot, prefix: "chronicle-" });
    },
    async remove(path: string): Promise<void> {
      try {
        await Deno.remove(path, { recursive: true });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    },
  };
}
