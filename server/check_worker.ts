/**
 * The security check's worker: runs `checkSession` off the server's main thread, so the API
 * keeps answering during a check of many sessions or of one huge result. It has no
 * permissions at all (no files, no network): it gets plain data and answers plain data.
 */
/// <reference lib="deno.worker" />
import { type CheckInput, checkSession } from "./security_check.ts";
import { collectOnGrowth } from "../core/paged.ts";

// a big session's check, a page of operations a message, leaves the next page's room
const collect = collectOnGrowth();

self.onmessage = (e: MessageEvent<{ id: number; input: CheckInput }>) => {
  const { id, input } = e.data;
  try {
    self.postMessage({ id, report: checkSession(input) });
  } catch (err) {
    self.postMessage({ id, error: (err as Error).message ?? String(err) });
  }
  collect();
};
