/**
 * POSIX path rules shared by the git engine and replay: normalising without touching a disk,
 * and keeping a path inside the folder it belongs to. Pure: no file system access.
 */
import { ChronicleError } from "../model/mod.ts";

/** Normalises a POSIX path: collapses `//` and `.`, resolves `..` lexically. */
export function normalizePath(path: string): string {
  const absolute = path.startsWith("/");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  const joined = out.join("/");
  return absolute ? "/" + joined : joined || ".";
}

/** True when `path` (normalised, absolute) is `root` or lies under it. */
export function isInside(root: string, path: string): boolean {
  const r = normalizePath(root);
  const p = normalizePath(path);
  if (r === "/") return p.startsWith("/");
  return p === r || p.startsWith(r + "/");
}

/**
 * The path relative to `root` that `path` names: an absolute path must lie inside `root`, a
 * relative one is taken from `root` and must not climb out of it. Returns "" for `root`
 * itself. Throws ChronicleError("outside") otherwise, and for NUL bytes.
 */
export function relativeInside(root: string, path: string, what = "folder"): string {
  if (path.includes("\0")) throw new ChronicleError("outside", `A path holds a NUL byte`);
  const base = normalizePath(root);
  const outside = () =>
    new ChronicleError("outside", `"${path.slice(0, 300)}" is outside the ${what} ${base}`);
  if (!path.startsWith("/")) {
    const rel = normalizePath(path);
    if (rel === ".." || rel.startsWith("../")) throw outside();
    return rel === "." ? "" : rel;
  }
  const full = normalizePath(path);
  if (!isInside(base, full)) throw outside();
  if (full === base) return "";
  return base === "/" ? full.slice(1) : full.slice(base.length + 1);
}

/** The folder part of a POSIX path ("" for a bare name). */
export function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : i === 0 ? "/" : path.slice(0, i);
}
