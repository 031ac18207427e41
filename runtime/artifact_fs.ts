/**
 * @module ArtifactWriter / ArtifactReader over Deno's file APIs (0700 folders, 0600 files).
 * Neither follows a symlink: the reader looks with lstat and reads regular files only (never a
 * FIFO, a device or /dev/zero), sizes checked before reading; the writer creates files that
 * must not exist yet and refuses a folder that is really a symlink.
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
    await Deno.writeFile(path, data, { mode, createNew: true });
    if (unix) await Deno.chmod(path, mode);
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
 * not one.
 */
async function openRegular(
  path: string,
  maxBytes: number,
): Promise<{ file: Deno.FsFile; size: number } | null> {
  let file: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > maxBytes) return null;
    file = await Deno.open(path, { read: true });
    const opened = await file.stat();
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

/** How much `stream` reads at a time. */
const STREAM_CHUNK = 256 << 10;

export const denoArtifactReader: ArtifactReader = {
  async readFile(path, maxBytes = Number.MAX_SAFE_INTEGER) {
    const opened = await openRegular(path, maxBytes);
    if (!opened) return null;
    const { file } = opened;
    try {
      const buf = new Uint8Array(opened.size);
      let n = 0;
      while (n < buf.length) {
        const r = await file.read(buf.subarray(n));
        if (r === null) break;
        n += r;
      }
      return buf.subarray(0, n);
    } catch {
      return null;
    } finally {
      file.close();
    }
  },
  async stream(path, maxBytes = Number.MAX_SAFE_INTEGER) {
    try {
      const info = await Deno.lstat(path);
      if (!info.isFile || info.size > maxBytes) return null;
    } catch {
      return null;
    }
    // opened when read: a stream never read holds no file open
    return (async function* () {
      const opened = await openRegular(path, maxBytes);
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
