/**
 * The background import's progress above the session list, while a first import fills it in:
 * files, sessions, percent and an estimate, then the search index filling in. Gone once the
 * import is done.
 */
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { importProgress, loadImportProgress } from "../live.ts";

export function ImportProgressBar(): VNode | null {
  useEffect(() => loadImportProgress(), []);
  const p = importProgress.value;
  if (!p || p.state === "idle" || (!p.first && p.files_total < 20)) return null;
  const eta = p.eta_s === null
    ? ""
    : p.eta_s < 1
    ? ", almost done"
    : p.eta_s < 60
    ? `, about ${p.eta_s} s left`
    : `, about ${Math.round(p.eta_s / 60)} min left`;
  const label = p.state === "discovering"
    ? "Looking for agent logs…"
    : p.state === "indexing"
    ? `Indexing for search: ${p.index_done.toLocaleString("en-US")} of ${
      p.index_total.toLocaleString("en-US")
    } steps${eta}`
    : `Importing: ${p.files_done.toLocaleString("en-US")} of ${
      p.files_total.toLocaleString("en-US")
    } files, ${p.sessions.toLocaleString("en-US")} sessions${eta}`;
  return (
    <div class="import-progress" role="status" aria-live="polite">
      <div class="import-progress-text small">
        <span>{label}</span>
        <span>{p.state === "importing" || p.state === "indexing" ? `${p.percent}%` : ""}</span>
      </div>
      <div
        class="import-progress-bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={p.percent}
        aria-label="Import progress"
      >
        <span style={{ width: `${p.percent}%` }} />
      </div>
    </div>
  );
}
