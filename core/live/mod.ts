/**
 * @module
 * Live: watching the sessions people are looking at, and a first start that never waits.
 * Pure engines with injected time, file watching and file status: the per-session watch with
 * debounce, polling and backoff (`unit_watch.ts`), the fan-out of a session's changes to its
 * viewers with resumable event ids (`hub.ts`, `event_id.ts`), the service tying them to the
 * import pipeline (`service.ts`), one import at a time with live imports first
 * (`import_queue.ts`), and the background pass that imports newest first in growing chunks
 * with progress (`background.ts`). The Deno adapters are in runtime/, the HTTP side in
 * server/routes/live.ts, the serve loop in cli/serve.ts.
 */
export * from "./types.ts";
export * from "./event_id.ts";
export * from "./unit_watch.ts";
export * from "./hub.ts";
export * from "./service.ts";
export * from "./import_queue.ts";
export * from "./background.ts";
export * from "./writing.ts";
