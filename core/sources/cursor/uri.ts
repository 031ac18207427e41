/** Cursor names folders by URI (`file:///…`, `vscode-remote://…`); importers want paths. */

/** `file:///a%20b` -> `/a b`; `vscode-remote://host/path` -> `/path`; plain paths as they are. */
export function uriToPath(uri: string | undefined): string | undefined {
  if (!uri) return undefined;
  const m = /^([a-z][a-z0-9+.-]*):\/\/[^/]*(\/.*)?$/i.exec(uri);
  if (!m) return uri.startsWith("/") || /^[a-z]:[\\/]/i.test(uri) ? uri : undefined;
  let path: string;
  try {
    path = decodeURIComponent(m[2] ?? "/");
  } catch {
    path = m[2] ?? "/";
  }
  // file:///c%3A/Users/x -> c:/Users/x
  if (/^\/[a-z]:\//i.test(path)) path = path.slice(1);
  return path;
}
