/**
 * The guard's view of the real file system (core/security's `GuardFs`): real paths, stat that
 * tells regular files from FIFOs and devices, folder listings, and capped chunked reads that
 * never open anything but a regular file.
 *
 * Every call is synchronous behind the promise the interface asks for: a guard process makes
 * one decision and exits, and Deno's first asynchronous file operation costs a thread pool's
 * start (10-25 ms, half the guard's budget above a bare `deno run`). Nothing here can block
 * for long: a FIFO or device is never opened, and a read goes in 1 MiB chunks with the
 * deadline checked between them.
 */
import type { GuardFs, PathInfo } from "../core/security/pretooluse.ts";

const CHUNK = 1 << 20;
const MAX_ENTRIES = 20_000;

function kindOf(i: Deno.FileInfo): PathInfo["kind"] {
  return i.isFile ? "file" : i.isDirectory ? "dir" : "other";
}

function readInto(file: Deno.FsFile, buf: Uint8Array, check: () => void): number {
  let n = 0;
  while (n < buf.length) {
    check();
    const r = file.readSync(buf.subarray(n, Math.min(buf.length, n + CHUNK)));
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
function resolveReal(path: string): string | null {
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
      info = Deno.lstatSync(current);
    } catch (e) {
      return missing(e) ? null : path;
    }
    if (!info.isSymlink) {
      out.push(part);
      continue;
    }
    if (++hops > 40) return null; // a loop
    const target = Deno.readLinkSync(current);
    if (target.startsWith("/")) out = [];
    parts = [...target.split("/").filter(Boolean), ...parts];
  }
  return "/" + out.join("/");
}

function statOf(path: string): PathInfo | null {
  try {
    const i = Deno.statSync(path);
    return { kind: kindOf(i), size: i.size };
  } catch (e) {
    return missing(e) ? null : { kind: "other", size: 0 };
  }
}

function readDirOf(path: string): { name: string; kind: "file" | "dir" | "symlink" | "other" }[] {
  const out: { name: string; kind: "file" | "dir" | "symlink" | "other" }[] = [];
  try {
    for (const e of Deno.readDirSync(path)) {
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
}

function readFileOf(
  path: string,
  { maxBytes, tailBytes, deadline }: Parameters<GuardFs["readFile"]>[1],
): Uint8Array | null {
  // Opening a FIFO blocks until a writer comes: look before opening, and again after.
  try {
    if (!Deno.statSync(path).isFile) return null;
  } catch {
    return null;
  }
  let file: Deno.FsFile | undefined;
  try {
    file = Deno.openSync(path, { read: true });
    const info = file.statSync();
    if (!info.isFile) return null;
    // /proc files report size 0 and still hold data: read to the end, up to the cap
    const head = new Uint8Array(info.size > 0 ? Math.min(info.size, maxBytes) : maxBytes);
    const n = readInto(file, head, () => deadline.check());
    if (info.size <= maxBytes || tailBytes <= 0) return head.subarray(0, n);
    // a big file: its start and its end (keys are often appended)
    const tail = new Uint8Array(Math.min(tailBytes, info.size - n));
    file.seekSync(info.size - tail.length, Deno.SeekMode.Start);
    const t = readInto(file, tail, () => deadline.check());
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
}

/** A synchronous call as the promise `GuardFs` returns (a throw becomes a rejection). */
function later<T>(f: () => T): Promise<T> {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(e);
  }
}

export const denoGuardFs: GuardFs = {
  realPath: (path) => later(() => resolveReal(path)),
  stat: (path) => later(() => statOf(path)),
  readDir: (path) => later(() => readDirOf(path)),
  readFile: (path, options) => later(() => readFileOf(path, options)),
};
