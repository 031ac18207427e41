/**
 * Reading preferences kept in the browser (localStorage): whether long lines of code wrap.
 * One signal per preference, so every diff and output follows a change at once.
 */
import { effect, signal } from "@preact/signals";

const WRAP_KEY = "chronicle-wrap";

function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/** Long lines in diffs and code wrap (true) or scroll sideways (false, the default). */
export const wrapLines = signal(stored(WRAP_KEY) === "1");

effect(() => {
  try {
    localStorage.setItem(WRAP_KEY, wrapLines.value ? "1" : "0");
  } catch { /* private mode: the choice lasts this page only */ }
});
