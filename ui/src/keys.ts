/** Keyboard helpers shared by the views that answer keys. */

/** True when a key press belongs to a form control (typing, choosing in a select). */
export function isFormControl(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement ||
    (target instanceof HTMLElement && target.isContentEditable);
}
