/** "N new steps": shown instead of a jump when steps arrive while the reader is scrolled up. */
import type { VNode } from "preact";
import type { LiveSession } from "../live_session.ts";

export function NewStepsButton({ live }: { live: LiveSession }): VNode | null {
  const n = live.newSteps.value;
  if (!n) return null;
  return (
    <button type="button" class="new-steps" onClick={() => live.showNewest()}>
      {n === 1 ? "1 new step" : `${n.toLocaleString("en-US")} new steps`} ↓
    </button>
  );
}
