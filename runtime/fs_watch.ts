/**
 * @module
 * core/live's FileWatcher over `Deno.watchFs` (inotify, FSEvents, ReadDirectoryChangesW):
 * folders are watched without recursion, and every event's paths are passed on as they come
 * (core/live debounces). Where the platform cannot watch (no such folder, a network file
 * system, the inotify limit), `watch` throws and the caller polls instead.
 */
import type { FileWatcher, Watch } from "../core/live/mod.ts";

export function createDenoWatcher(
  options: { onError?: (e: unknown) => void } = {},
): FileWatcher {
  return {
    watch(paths: string[], onChange: (paths: string[]) => void): Watch {
      const watcher = Deno.watchFs(paths, { recursive: false });
      let open = true;
      (async () => {
        try {
          for await (const event of watcher) {
            if (event.kind === "access" || !event.paths.length) continue;
            onChange(event.paths);
          }
        } catch (e) {
          // The watcher broke (a watched folder went away): polling still covers the files.
          if (open) options.onError?.(e);
        }
      })();
      return {
        close() {
          if (!open) return;
          open = false;
          try {
            watcher.close();
          } catch { /* already closed */ }
        },
      };
    },
  };
}
