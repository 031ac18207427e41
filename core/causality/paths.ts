/**
 * Paths as one file: the same file spelled absolute or relative, with `./`, `..`, doubled
 * slashes, a `file://` URI or Windows separators, becomes one key. Pure string work; the file
 * system is never asked. The POSIX rules themselves are the git engine's (core/git/paths.ts).
 */
import { normalizePath as posixNormalize } from "../git/paths.ts";

/** True for `/x`, `C:/x` and `C:\x`. */
export function isAbsolute(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p);
}

/**
 * The one spelling of a path: `file://` stripped, backslashes of Windows paths turned into
 * slashes, `.` and `..` resolved, no trailing slash. A relative path is resolved against
 * `base` (itself normalised) when given, and otherwise stays relative.
 */
export function normalizePath(path: string, base?: string): string {
  if (isClean(path)) return path;
  let p = path.trim();
  if (p.startsWith("file://")) {
    p = p.slice("file://".length);
    try {
      p = decodeURIComponent(p);
    } catch { /* keep the raw spelling */ }
    if (/^\/[A-Za-z]:\//.test(p)) p = p.slice(1);
  }
  if (/^[A-Za-z]:\\/.test(p) || (p.includes("\\") && !p.includes("/"))) p = p.replace(/\\/g, "/");
  if (p === "~" || p.startsWith("~/")) return collapse(p);
  if (!isAbsolute(p) && base) {
    const joined = `${normalizePath(base)}/${p}`;
    return isClean(joined) ? joined : collapse(joined);
  }
  return collapse(p);
}

/** An absolute path already in its one spelling (the common case, checked cheaply). */
function isClean(p: string): boolean {
  return p.length > 1 && p[0] === "/" && p[p.length - 1] !== "/" && p[p.length - 1] !== " " &&
    !p.includes("//") && !p.includes("/./") && !p.includes("/../") &&
    !p.endsWith("/.") && !p.endsWith("/..") && !p.includes("\\");
}

/** `.`, `..` and doubled slashes resolved, keeping a Windows drive in front. */
function collapse(p: string): string {
  const drive = /^[A-Za-z]:/.exec(p)?.[0] ?? "";
  if (!drive) return posixNormalize(p);
  const rest = posixNormalize(p.slice(drive.length));
  return drive + (rest === "." ? "" : rest);
}

export function basename(p: string): string {
  const i = p.lastIndexOf("/");
  return i < 0 ? p : p.slice(i + 1);
}

/** The folder of a normalised path (`/` for a file at the root, `.` for a bare name). */
export function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  if (i < 0) return ".";
  if (i === 0) return "/";
  return p.slice(0, i);
}

/** A normalised path as a person reads it: relative to the project when inside it. */
export function displayPath(path: string, project?: string): string {
  if (!project) return path;
  const root = normalizePath(project);
  if (path === root) return ".";
  if (root === "/") return path.startsWith("/") ? path.slice(1) : path;
  return path.startsWith(root + "/") ? path.slice(root.length + 1) : path;
}
