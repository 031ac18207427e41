/**
 * What every modal dialog of the UI does with the keyboard: it takes focus when it opens, keeps
 * Tab and Shift-Tab inside itself, and gives focus back to where it was when it closes.
 */
import type { RefObject } from "preact";
import { useEffect } from "preact/hooks";

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "summary",
  '[tabindex]:not([tabindex="-1"])',
].join(",");

/** The elements Tab reaches inside `root`, in order. */
export function focusables(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) =>
    el.offsetParent !== null || el === document.activeElement
  );
}

/**
 * Makes `ref` a modal's focus scope: focuses `initial` (else its first focusable) on mount, wraps
 * Tab at both ends, and restores the previously focused element on unmount.
 */
export function useFocusTrap(
  ref: RefObject<HTMLElement | null>,
  initial?: RefObject<HTMLElement | null>,
): void {
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const root = ref.current;
    if (!root) return;
    (initial?.current ?? focusables(root)[0] ?? root).focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Tab") return;
      const all = focusables(root);
      if (!all.length) {
        e.preventDefault();
        return;
      }
      const first = all[0];
      const last = all[all.length - 1];
      const at = document.activeElement;
      if (e.shiftKey && (at === first || !root.contains(at))) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (at === last || !root.contains(at))) {
        e.preventDefault();
        first.focus();
      }
    };
    root.addEventListener("keydown", onKey);
    return () => {
      root.removeEventListener("keydown", onKey);
      if (before && before.isConnected && before !== document.body) before.focus();
    };
  }, []);
}
