/**
 * The archive of a running server (`ArchiveService`): the exclude list in the data folder, and
 * forgetting sessions between imports on the importer's connection. A forget waits for the
 * import chunk that is running, never runs while another process imports (409), and then has
 * the server's own connection let go of removed packs, so their space really comes back.
 */
import {
  EMPTY_EXCLUDE,
  type ExcludeList,
  parseExcludeList,
  validateExcludeList,
} from "../core/archive/mod.ts";
import { ChronicleError } from "../core/model/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { excludePath, readExcludeText, writeExcludeList } from "../runtime/exclude_file.ts";
import { isLock, tryImportLock } from "../runtime/import_lock.ts";
import type { ArchiveService, ExcludeView } from "../server/deps.ts";
import type { EventHub } from "../server/sse.ts";
import type { Importing } from "./serve_import.ts";

export interface ServeArchiveOptions {
  /** The data folder. */
  dir: string;
  /** The server's connection (reads; forgets when nothing imports). */
  store: ChronicleStore;
  /** The server's importing, when it imports. */
  importer: Importing | null;
  events: EventHub;
}

export function serveArchive(options: ServeArchiveOptions): ArchiveService {
  const { dir, store, importer, events } = options;
  const path = excludePath(dir);

  const readExclude = async (): Promise<ExcludeView> => {
    const state = await readExcludeText(dir);
    let list: ExcludeList | null = EMPTY_EXCLUDE;
    let error: string | null = null;
    try {
      if (state.text !== null) list = parseExcludeList(state.text, path);
    } catch (e) {
      if (!(e instanceof ChronicleError && e.code === "invalid_config")) throw e;
      list = null;
      error = e.message;
    }
    return { path, list, etag: state.etag, error };
  };

  return {
    readExclude,
    async writeExclude(sent, etag) {
      const list = validateExcludeList(
        { version: 1, paths: sent.paths, projects: sent.projects },
        "sent",
      );
      await writeExcludeList(dir, list, { expect: etag });
      importer?.refresh();
      return await readExclude();
    },
    async forget(id, { dry_run }) {
      if (dry_run) return store.forget([id], { dryRun: true });
      const lock = await tryImportLock(dir, "chronicle serve (forget)");
      if (!isLock(lock) && lock.pid !== Deno.pid) {
        throw new ChronicleError(
          "conflict",
          `An import is running (pid ${lock.pid}); forget the session once it has finished`,
        );
      }
      try {
        const out = importer
          ? await importer.exclusive((writer) => writer.forget([id]))
          : store.forget([id]);
        store.releasePacks();
        events.publish("import", { at: Date.now() });
        return out;
      } finally {
        if (isLock(lock)) lock.release();
      }
    },
    forgotten: () => store.forgottenSessions(),
  };
}
