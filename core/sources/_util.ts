/** Small helpers every importer needs: JSON shape checks and path pieces. Private to sources/. */

export type Json = Record<string, unknown>;

export const isObj = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

export function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

export function dirname(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/** Input keys that name the file or resource a tool call touches, across agents. */
const TARGET_KEYS = [
  "file_path",
  "filePath",
  "notebook_path",
  "target_file",
  "targetFile",
  "relative_workspace_path",
  "relativeWorkspacePath",
  "absolute_path",
  "path",
  "url",
];

/** The file or resource a tool input names, if any. */
export function targetOf(
  input: unknown,
  keys: readonly string[] = TARGET_KEYS,
): string | undefined {
  if (!isObj(input)) return undefined;
  for (const k of keys) {
    const v = input[k];
    if (typeof v === "string" && v) return v;
  }
  return undefined;
}
