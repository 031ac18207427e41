/**
 * @module
 * The replay sandbox's file worker. It runs with read and write permission for the sandbox
 * folder only (see sandbox_files.ts), and it resolves every path before touching it: absolute
 * paths, `..`, the sandbox's own `.git`, and symlinks whose real target leaves the sandbox are
 * refused. Deno checks permissions on the path as written, so the symlink check is what keeps
 * a link inside the sandbox from writing outside it.
 */
import { dirname, isInside, normalizePath } from "../core/git/paths.ts";

export type SandboxRequest =
  & { id: number }
  & (
    | { op: "init"; root: string }
    | { op: "read"; path: string }
    | { op: "write"; path: string; bytes: Uint8Array; executable?: boolean }
    | { op: "symlink"; path: string; target: string }
    | { op: "remove"; path: string }
    | { op: "list" }
  );

export type SandboxResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; code: string; error: string };

class Refused extends Error {}

let root = "";

async function lstat(p: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(p);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** A sandbox-relative path, checked lexically: relative, no `..` out, not `.git`. */
function lexical(path: string): string[] {
  if (typeof path !== "string" || !path || path.includes("\0")) {
    throw new Refused("an empty or NUL path");
  }
  if (path.startsWith("/")) throw new Refused(`${path} is an absolute path`);
  const n = normalizePath(path);
  if (n === "." || n === ".." || n.startsWith("../")) {
    throw new Refused(`${path} leaves the sandbox`);
  }
  const parts = n.split("/");
  if (parts[0] === ".git") throw new Refused(`${path} is inside the sandbox's .git`);
  return parts;
}

/**
 * The real path a sandbox path names, every existing component resolved: a component that is
 * a symlink must resolve inside the sandbox. Missing folders are fine (a write makes them).
 */
async function resolve(path: string, options: { leaf: "follow" | "self" }): Promise<string> {
  const parts = lexical(path);
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    const last = i === parts.length - 1;
    const next = `${cur}/${parts[i]}`;
    const st = await lstat(next);
    if (!st) return [next, ...parts.slice(i + 1)].join("/");
    if (st.isSymlink && !(last && options.leaf === "self")) {
      let real: string;
      try {
        real = await Deno.realPath(next);
      } catch {
        throw new Refused(`${parts.slice(0, i + 1).join("/")} is a symlink that leads nowhere`);
      }
      if (!isInside(root, real)) {
        throw new Refused(
          `${parts.slice(0, i + 1).join("/")} is a symlink leading out of the sandbox`,
        );
      }
      cur = real;
      continue;
    }
    if (!last && !st.isDirectory && !st.isSymlink) {
      throw new Refused(`${parts.slice(0, i + 1).join("/")} is a file, not a folder`);
    }
    cur = next;
  }
  return cur;
}

async function mkdirs(dir: string): Promise<void> {
  if (dir === root || isInside(dir, root)) return;
  if (!isInside(root, dir)) throw new Refused(`${dir} is outside the sandbox`);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
}

async function list(): Promise<{ path: string; type: string; size: number }[]> {
  const out: { path: string; type: string; size: number }[] = [];
  const walk = async (dir: string, rel: string) => {
    const names: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e);
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of names) {
      if (!rel && e.name === ".git") continue;
      const p = rel ? `${rel}/${e.name}` : e.name;
      const full = `${dir}/${e.name}`;
      if (e.isSymlink) out.push({ path: p, type: "symlink", size: 0 });
      else if (e.isDirectory) {
        out.push({ path: p, type: "dir", size: 0 });
        await walk(full, p);
      } else out.push({ path: p, type: "file", size: (await Deno.lstat(full)).size });
    }
  };
  await walk(root, "");
  return out;
}

async function handle(req: SandboxRequest): Promise<unknown> {
  if (req.op === "init") {
    root = await Deno.realPath(req.root);
    return root;
  }
  if (!root) throw new Error("the sandbox worker has no root yet");
  switch (req.op) {
    case "read": {
      const p = await resolve(req.path, { leaf: "follow" });
      const st = await lstat(p);
      if (!st) return null;
      if (!st.isFile) throw new Refused(`${req.path} is not a file`);
      return await Deno.readFile(p);
    }
    case "write": {
      const p = await resolve(req.path, { leaf: "follow" });
      await mkdirs(dirname(p));
      await Deno.writeFile(p, req.bytes, { mode: req.executable ? 0o755 : 0o644 });
      return null;
    }
    case "symlink": {
      // Deno lets only unscoped permissions make symlinks: the worker checks the link and its
      // target and hands back the resolved place; the main thread makes the link there.
      const p = await resolve(req.path, { leaf: "self" });
      const target = req.target.startsWith("/")
        ? normalizePath(req.target)
        : normalizePath(`${dirname(p)}/${req.target}`);
      if (!isInside(root, target) || req.target.includes("\0")) return "refused";
      await mkdirs(dirname(p));
      if (await lstat(p)) await Deno.remove(p);
      return { at: p };
    }
    case "remove": {
      const p = await resolve(req.path, { leaf: "self" });
      const st = await lstat(p);
      if (!st) return false;
      if (st.isDirectory) throw new Refused(`${req.path} is a folder`);
      await Deno.remove(p);
      return true;
    }
    case "list":
      return await list();
  }
}

self.onmessage = async (e: MessageEvent<SandboxRequest>) => {
  const req = e.data;
  let res: SandboxResponse;
  try {
    res = { id: req.id, ok: true, value: await handle(req) };
  } catch (err) {
    res = {
      id: req.id,
      ok: false,
      code: err instanceof Refused || err instanceof Deno.errors.NotCapable ? "outside" : "io",
      error: (err as Error).message,
    };
  }
  self.postMessage(res);
};
