/**
 * @module ArtifactWriter / ArtifactReader over Deno's file APIs (0700 folders, 0600 files).
 * Neither follows a symlink: the reader looks with lstat and reads regular files only (never a
 * FIFO, a device or /dev/zero), sizes checked before reading; the writer creates files that
 * must not exist yet and refuses a folder that is really a symlink.
 *
 * A whole file is read and written with the synchronous calls: an export holds a file for each
 * payload (48,702 for a session of 35,342 steps), and each asynchronous call is a trip to
 * another thread and back, tens of microseconds against a few for the call itself (an import of
 * those files waited on them 9.6 s of its 20). Only the CLI reads and writes exports here, so
 * nothing else waits meanwhile; a `session.json` streams in with asynchronous reads.
 */
import type { ArtifactReader, ArtifactWriter } from "../core/artifacts/mod.ts";

const unix = Deno.build.os !== "windows";

export const denoArtifactWriter: ArtifactWriter = {
  async mkdir(path, mode) {
    try {
      await Deno.mkdir(path, { mode });
      if (unix) await Deno.chmod(path, mode);
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      const info = await Deno.lstat(path);
      if (!info.isDirectory || info.isSymlink) {
        throw new Error(`Cannot write into "${path}": it is not a folder (a symlink or a file)`);
      }
    }
  },
  async writeFile(path, data, mode) {
    if (data instanceof Uint8Array) Deno.writeFileSync(path, data, { mode, createNew: true });
    else await Deno.writeFile(path, data, { mode, createNew: true });
    if (unix) Deno.chmodSync(path, mode);
  },
  rename: (from, to) => Deno.rename(from, to),
  async remove(path) {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  },
  async exists(path) {
    try {
      await Deno.lstat(path);
      return true;
    } catch {
      return false;
    }
  },
};

/**
 * The regular file at `path` (never through a symlink), opened, and its size; null when it is
 * not one (synchronous: see the module's note).
 */
function openRegularSync(
  path: string,
  maxBytes: number,
): { file: Deno.FsFile; size: number } | null {
  let file: Deno.FsFile | undefined;
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size > maxBytes) return null;
    file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    // the same regular file as the one looked at (not swapped for a link or a FIFO meanwhile)
    if (!opened.isFile || opened.ino !== info.ino || opened.size > maxBytes) {
      file.close();
      return null;
    }
    return { file, size: opened.size };
  } catch {
    file?.close();
    return null;
  }
}

/** A regular file's bytes (see {@link openRegularSync}); null when it is not one. */
function readRegularSync(path: string, maxBytes: number): Uint8Array | null {
  const opened = openRegularSync(path, maxBytes);
  if (!opened) return null;
  const { file } = opened;
  try {
    const buf = new Uint8Array(opened.size);
    let n = 0;
    while (n < buf.length) {
      const r = file.readSync(buf.subarray(n));
      if (r === null || r === 0) break;
      n += r;
    }
    return buf.subarray(0, n);
  } catch {
    return null;
  } finally {
    file.close();
  }
}

/** How much `stream` reads at a time. */
const STREAM_CHUNK = 256 << 10;

export const denoArtifactReader: ArtifactReader = {
  readFile: (path, maxBytes = Number.MAX_SAFE_INTEGER) =>
    Promise.resolve(readRegularSync(path, maxBytes)),
  async stream(path, maxBytes = Number.MAX_SAFE_INTEGER) {
    try {
      const info = await Deno.lstat(path);
      if (!info.isFile || info.size > maxBytes) return null;
    } catch {
      return null;
    }
    // opened when read: a stream never read holds no file open
    return (async function* () {
      const opened = openRegularSync(path, maxBytes);
      if (!opened) throw new Deno.errors.NotFound(`${path} is no longer a regular file`);
      const { file } = opened;
      try {
        let total = 0;
        while (true) {
          const buf = new Uint8Array(STREAM_CHUNK);
          const n = await file.read(buf);
          if (n === null) return;
          total += n;
          if (total > maxBytes) throw new RangeError(`${path} grew past ${maxBytes} bytes`);
          yield buf.subarray(0, n);
        }
      } finally {
        file.close();
      }
    })();
  },
  async listDir(path) {
    const out: string[] = [];
    try {
      const info = await Deno.lstat(path);
      if (!info.isDirectory) return [];
      for await (const e of Deno.readDir(path)) if (e.isFile || e.isDirectory) out.push(e.name);
    } catch {
      return [];
    }
    return out.sort();
  },
};
