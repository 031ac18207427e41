/** The LIVE badge of a session being written, or how its live connection is doing. */
import type { VNode } from "preact";
import type { LiveSession } from "../live_session.ts";

export function LiveBadge({ live }: { live: LiveSession }): VNode | null {
  const status = live.status.value;
  if (status === "reconnecting") {
    const s = Math.ceil((live.retryInMs.value ?? 0) / 1000);
    return (
      <span class="live-badge is-reconnecting" role="status" title="The live connection dropped">
        Reconnecting{s ? ` in ${s} s` : "…"}
      </span>
    );
  }
  if (status !== "live" || !live.writing.value) return null;
  return (
    <span
      class="live-badge"
      role="status"
      title="This session is being written: new steps appear as the agent works"
    >
      <span class="live-dot" aria-hidden="true" />LIVE
    </span>
  );
}
