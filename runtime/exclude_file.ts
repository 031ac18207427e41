/**
 * @module
 * The exclude list on disk: `<data folder>/exclude.json`, 0600, replaced whole and atomically
 * (a temporary file beside it, flushed, then renamed over it), so a crash leaves the old list
 * or the new one, never half of either. A file that is not valid is never overwritten by
 * accident: a write names the text it replaces (`expect`), and a read of a bad file is one
 * error line that says which entry is wrong.
 */
import {
  compileExclude,
  EMPTY_EXCLUDE,
  EXCLUDE_FILE,
  type ExcludeList,
  excludeListText,
  type ExcludeRules,
  parseExcludeList,
} from "../core/archive/mod.ts";
import { ChronicleError, sha256Hex } from "../core/model/mod.ts";

/** Larger than this, the file is not an exclude list anyone wrote. */
const MAX_FILE_BYTES = 1 << 20;

export function excludePath(dataDir: string): string {
  return `${dataDir}/${EXCLUDE_FILE}`;
}

/** What the file holds now: its text (null when there is none) and the tag of that text. */
export interface ExcludeFileState {
  text: string | null;
  /** Names the text a write replaces (`writeExcludeList`'s `expect`). */
  etag: string;
}

/** The tag of a file's text ("none" for no file). */
export function excludeEtag(text: string | null): string {
  return text === null ? "none" : sha256Hex(text).slice(0, 32);
}

/** The file's text, or null when there is none. Throws for a file that cannot be read. */
export async function readExcludeText(dataDir: string): Promise<ExcludeFileState> {
  const path = excludePath(dataDir);
  let text: string | null = null;
  try {
    const st = await Deno.lstat(path);
    if (!st.isFile) throw new ChronicleError("invalid_config", `${path} is not a regular file`);
    if (st.size > MAX_FILE_BYTES) {
      throw new ChronicleError("invalid_config", `The exclude list ${path} is over 1 MiB`);
    }
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return { text, etag: excludeEtag(text) };
}

/** The list in the data folder (empty when there is no file); a bad file throws one line. */
export async function readExcludeList(dataDir: string): Promise<ExcludeList> {
  const { text } = await readExcludeText(dataDir);
  return text === null ? EMPTY_EXCLUDE : parseExcludeList(text, excludePath(dataDir));
}

/** The list compiled for an import (`~` is `home`). */
export async function loadExcludeRules(dataDir: string, home: string): Promise<ExcludeRules> {
  return compileExclude(await readExcludeList(dataDir), { home });
}

/**
 * Replaces the list. With `expect`, only if the file still holds the text that tag names (the
 * one the caller read): a ChronicleError (`conflict`) otherwise. Returns the new state.
 */
export async function writeExcludeList(
  dataDir: string,
  list: ExcludeList,
  options: { expect?: string } = {},
): Promise<ExcludeFileState> {
  const path = excludePath(dataDir);
  if (options.expect !== undefined) {
    const now = await readExcludeText(dataDir).catch(() => null);
    if (!now || now.etag !== options.expect) {
      throw new ChronicleError(
        "conflict",
        "The exclude list changed since it was read; read it again and redo the change",
      );
    }
  }
  const text = excludeListText(list);
  const tmp = `${dataDir}/.${EXCLUDE_FILE}.${crypto.randomUUID()}.tmp`;
  try {
    const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    try {
      const bytes = new TextEncoder().encode(text);
      for (let done = 0; done < bytes.byteLength;) done += await f.write(bytes.subarray(done));
      await f.syncData();
    } finally {
      f.close();
    }
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, 0o600);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  try {
    // the rename reaches the disk with the folder's entry
    const dir = await Deno.open(dataDir, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
  } catch { /* not every system syncs a folder */ }
  return { text, etag: excludeEtag(text) };
}
