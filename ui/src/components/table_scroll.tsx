/**
 * A box that scrolls sideways when what it holds (a wide table, the activity grid) is wider
 * than the screen: a named region the keyboard can reach and scroll, as a pointer can.
 */
import type { ComponentChildren, VNode } from "preact";

export function TableScroll(
  { label, children }: { label: string; children: ComponentChildren },
): VNode {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
