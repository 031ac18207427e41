/** The `?` overlay: every keyboard shortcut of the UI, in one list (the one place they are named). */
import type { VNode } from "preact";
import { useRef } from "preact/hooks";
import { useFocusTrap } from "./dialog.ts";

/** Every shortcut the app answers, as the overlay lists it. */
export const SHORTCUTS: { keys: string[]; what: string }[] = [
  { keys: ["Ctrl K", "⌘ K"], what: "Search every session" },
  { keys: ["/"], what: "Filter the session list" },
  { keys: ["↑", "↓"], what: "Previous / next session in the list" },
  { keys: ["j", "k"], what: "Next / previous step, sub-agent threads included" },
  { keys: ["Enter"], what: "Open the sub-agent thread of the selected step" },
  { keys: ["s"], what: "Star or unstar the open session" },
  { keys: ["PageDown", "Space", "PageUp"], what: "Scroll the conversation" },
  { keys: ["Home", "End"], what: "Start / end of the conversation" },
  { keys: ["Esc"], what: "Close the inspector, a dialog or this overlay" },
  { keys: ["?"], what: "Show or hide this list" },
];

export function ShortcutsOverlay({ onClose }: { onClose: () => void }): VNode {
  const box = useRef<HTMLDivElement>(null);
  const closeButton = useRef<HTMLButtonElement>(null);
  useFocusTrap(box, closeButton);
  return (
    <div class="palette-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class="shortcuts"
        role="dialog"
        aria-modal="true"
        aria-labelledby="shortcuts-title"
        ref={box}
        onKeyDown={(e) => {
          if (e.key === "Escape" || e.key === "?") {
            e.preventDefault();
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <div class="shortcuts-head">
          <h2 id="shortcuts-title">Keyboard shortcuts</h2>
          <button type="button" class="icon" ref={closeButton} onClick={onClose}>
            Close <span aria-hidden="true">✕</span>
          </button>
        </div>
        <dl class="shortcut-list">
          {SHORTCUTS.map((s) => (
            <>
              <dt key={`k-${s.what}`}>
                {s.keys.map((k, i) => (
                  <>
                    {i > 0 && " "}
                    <kbd>{k}</kbd>
                  </>
                ))}
              </dt>
              <dd key={`d-${s.what}`}>{s.what}</dd>
            </>
          ))}
        </dl>
      </div>
    </div>
  );
}
