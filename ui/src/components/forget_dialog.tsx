/**
 * "Forget this session": a confirm step that first asks the server what would go (a dry run:
 * steps, the payloads only this session holds, share links), says plainly that it cannot be
 * undone and that the agent's own log stays, then forgets and goes back to the list. Cancel has
 * the focus; Escape closes.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { ForgetOutcome } from "../../../core/store/types.ts";
import { api } from "../api.ts";
import { listUrl, navigate } from "../router.ts";
import { bytes } from "../format.ts";
import { useFocusTrap } from "./dialog.ts";

export function ForgetDialog(
  { id, title, onClose }: { id: string; title: string; onClose: () => void },
): VNode {
  const plan = useSignal<ForgetOutcome | null>(null);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const dialog = useRef<HTMLDivElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  useFocusTrap(dialog, cancel);
  const path = `/api/sessions/${encodeURIComponent(id)}/forget`;

  useEffect(() => {
    api<ForgetOutcome>(path, { method: "POST", body: { dry_run: true } })
      .then((r) => (plan.value = r))
      .catch((e) => (error.value = (e as Error).message));
  }, [id]);

  const forget = async () => {
    busy.value = true;
    error.value = null;
    try {
      await api<ForgetOutcome>(path, { method: "POST", body: { confirm: id } });
      onClose();
      navigate(listUrl());
    } catch (e) {
      error.value = (e as Error).message;
      busy.value = false;
    }
  };

  const p = plan.value;
  return (
    <div class="palette-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={dialog}
        class="share-dialog forget-dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="forget-title"
        aria-describedby="forget-what"
        onKeyDown={(e) => {
          if (e.key === "Escape" && !busy.value) {
            e.preventDefault();
            onClose();
          }
        }}
      >
        <div class="share-head">
          <h2 id="forget-title">Forget this session?</h2>
          <button type="button" class="icon" aria-label="Close" onClick={onClose}>✕</button>
        </div>
        <section>
          <p class="forget-name">{title}</p>
          <div id="forget-what">
            <p>
              Chronicle deletes it from its store for good
              {p
                ? (
                  <>
                    : its {p.operations} step{p.operations === 1 ? "" : "s"},{" "}
                    {bytes(p.payload_bytes)}{" "}
                    of tool inputs and outputs that no other session shares, its search entries and
                    statistics
                    {p.shares ? `, and ${p.shares} share link${p.shares === 1 ? "" : "s"}` : ""}.
                  </>
                )
                : "."}
            </p>
            <p>
              It is never imported again, even when its log grows. There is no undo. The agent's own
              log stays where it is: Chronicle never touches it.
            </p>
          </div>
          {!p && !error.value && <p class="muted" aria-live="polite">Counting what would go…</p>}
          {error.value && <p class="error-text" role="alert">{error.value}</p>}
          <div class="share-actions forget-actions">
            <button ref={cancel} type="button" class="secondary" onClick={onClose}>
              Cancel
            </button>
            <button
              type="button"
              class="danger"
              disabled={busy.value || !p}
              onClick={forget}
            >
              {busy.value ? "Forgetting…" : "Forget session"}
            </button>
          </div>
        </section>
      </div>
    </div>
  );
}
