/**
 * The guard's view of the real file system (core/security's `GuardFs`): real paths, stat that
 * tells regular files from FIFOs and devices, folder listings, and capped chunked reads that
 * never open anything but a regular file.
 */
import type { GuardFs, PathInfo } from "../core/security/pretooluse.ts";

const CHUNK = 1 << 20;
const MAX_ENTRIES = 20_000;

function kindOf(i: Deno.FileInfo): PathInfo["kind"] {
  return i.isFile ? "file" : i.isDirectory ? "dir" : "other";
}

async function readInto(file: Deno.FsFile, buf: Uint8Array, check: () => void): Promise<number> {
  let n = 0;
  while (n < buf.length) {
    check();
    const r = await file.read(buf.subarray(n, Math.min(buf.length, n + CHUNK)));
    if (r === null) break;
    n += r;
  }
  return n;
}

/** Missing: null. Present but not ours to look at (`/proc/self/...` needs more than --allow-read). */
function missing(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
}

/**
 * The real path as the kernel resolves it, component by component: `..` after a symlinked
 * folder leaves the link's target (Deno.realPath under narrowed permissions resolves `..` by
 * the letter first, which is not what `cat dir/../file` reads).
 */
async function resolveReal(path: string): Promise<string | null> {
  let parts = path.split("/").filter(Boolean);
  let out: string[] = [];
  let hops = 0;
  while (parts.length) {
    const part = parts.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      out.pop();
      continue;
    }
    const current = "/" + [...out, part].join("/");
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(current);
    } catch (e) {
      return missing(e) ? null : path;
    }
    if (!info.isSymlink) {
      out.push(part);
      continue;
    }
    if (++hops > 40) return null; // a loop
    const target = await Deno.readLink(current);
    if (target.startsWith("/")) out = [];
    parts = [...target.split("/").filter(Boolean), ...parts];
  }
  return "/" + out.join("/");
}

export const denoGuardFs: GuardFs = {
  realPath: (path) => resolveReal(path),
  async stat(path) {
    try {
      const i = await Deno.stat(path);
      return { kind: kindOf(i), size: i.size };
    } catch (e) {
      return missing(e) ? null : { kind: "other", size: 0 };
    }
  },
  async readDir(path) {
    const out: { name: string; kind: "file" | "dir" | "symlink" | "other" }[] = [];
    try {
      for await (const e of Deno.readDir(path)) {
        out.push({
          name: e.name,
          kind: e.isSymlink ? "symlink" : e.isFile ? "file" : e.isDirectory ? "dir" : "other",
        });
        if (out.length >= MAX_ENTRIES) break;
      }
    } catch {
      // unreadable folder: nothing to list
    }
    return out;
  },
  async readFile(path, { maxBytes, tailBytes, deadline }) {
    // Opening a FIFO blocks until a writer comes: look before opening, and again after.
    try {
      if (!(await Deno.stat(path)).isFile) return null;
    } catch {
      return null;
    }
    let file: Deno.FsFile | undefined;
    try {
      file = await Deno.open(path, { read: true });
      const info = await file.stat();
      if (!info.isFile) return null;
      // /proc files report size 0 and still hold data: read to the end, up to the cap
      const head = new Uint8Array(info.size > 0 ? Math.min(info.size, maxBytes) : maxBytes);
      const n = await readInto(file, head, () => deadline.check());
      if (info.size <= maxBytes || tailBytes <= 0) return head.subarray(0, n);
      // a big file: its start and its end (keys are often appended)
      const tail = new Uint8Array(Math.min(tailBytes, info.size - n));
      await file.seek(info.size - tail.length, Deno.SeekMode.Start);
      const t = await readInto(file, tail, () => deadline.check());
      const out = new Uint8Array(n + 1 + t);
      out.set(head.subarray(0, n));
      out[n] = 10;
      out.set(tail.subarray(0, t), n + 1);
      return out;
    } catch (e) {
      if ((e as { name?: string }).name === "ChronicleError") throw e; // the deadline
      return null;
    } finally {
      file?.close();
    }
  },
};
