/** Opens the user's store from the environment: the data folder, 0700/0600, migrated. */
import { pagedTurns } from "../core/paged.ts";
import { type CanonicalSession, ChronicleError } from "../core/model/mod.ts";
import { termSafe } from "../core/security/terminal.ts";
import { ChronicleStore } from "../core/store/mod.ts";
import { dataDir, ensureDataDir, lockDownFiles, storePath } from "../runtime/data_dir.ts";
import { createPackFiles, packDir } from "../runtime/pack_files.ts";
import type { CliIo } from "./io.ts";

export async function openUserStore(io: CliIo): Promise<{ store: ChronicleStore; dir: string }> {
  const dir = await ensureDataDir(dataDir(io.env));
  const path = storePath(dir);
  let store: ChronicleStore;
  try {
    store = ChronicleStore.open(path, { packs: createPackFiles(packDir(dir)) });
  } catch (e) {
    if (!(e instanceof ChronicleError) || e.code !== "unsupported_schema") throw e;
    throw new ChronicleError(
      e.code,
      `${e.message} To keep both, run Chronicle with CHRONICLE_HOME set to another folder.`,
      { cause: e },
    );
  }
  await lockDownFiles([path, `${path}-wal`, `${path}-shm`]);
  return { store, dir };
}

/**
 * The session a user named (id, native id or unique prefix); null after saying there is none.
 * Loaded a page of steps at a time, its garbage collected as it grows (core/paged.ts).
 */
export async function loadNamedSession(
  store: ChronicleStore,
  id: string,
  io: CliIo,
  options: { textChars?: number } = {},
): Promise<CanonicalSession | null> {
  const resolved = namedSessionId(store, id, io);
  if (resolved === null) return null;
  const session = await store.loadSessionInTurns(resolved, { ...options, turn: pagedTurns() });
  if (!session) unreadableSession(resolved, io);
  return session;
}

/** The id of the session a user named (id, native id or unique prefix); null after saying there is none. */
export function namedSessionId(store: ChronicleStore, id: string, io: CliIo): string | null {
  try {
    return store.requireSessionId(id);
  } catch (e) {
    if (!(e instanceof ChronicleError)) throw e;
    io.stderr(`chronicle: ${termSafe(e.message)}\n`);
    return null;
  }
}

/** Says that a session found a moment ago cannot be read (it went meanwhile). */
export function unreadableSession(id: string, io: CliIo): void {
  io.stderr(`chronicle: session "${termSafe(id)}" cannot be read\n`);
}
