/**
 * On the timeline: a ⛓ badge on each change that has likely sources (click: select the change
 * and show them), and the marks a selected change puts on other steps: its sources tinted by
 * tier, the other reads and searches dimmed into the background.
 */
import type { ComponentChildren, VNode } from "preact";
import { navigate, sessionUrl } from "../router.ts";
import type { SessionState } from "../session_state.ts";
import type { Row } from "../types.ts";
import { causalityOf } from "./causality_state.ts";

const SOURCE_KINDS = new Set(["read", "search"]);

/** A small line icon in the text's colour (drawn: emoji fonts are not everywhere). */
export function Icon({ children }: { children: ComponentChildren }): VNode {
  return (
    <svg
      class="cz-icon"
      viewBox="0 0 24 24"
      width="12"
      height="12"
      fill="none"
      stroke="currentColor"
      stroke-width="2.4"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
    >
      {children}
    </svg>
  );
}

/** The ⛓ chain mark. */
export function ChainIcon(): VNode {
  return (
    <Icon>
      <path d="M10 13a5 5 0 0 0 7.5.5l3-3a5 5 0 0 0-7-7l-1.7 1.7" />
      <path d="M14 11a5 5 0 0 0-7.5-.5l-3 3a5 5 0 0 0 7 7l1.7-1.7" />
    </Icon>
  );
}

/** Classes a step gets while a change is selected: its tier, or dimmed as background. */
export function causalityRowClass(state: SessionState, row: Row): string {
  const c = causalityOf(state);
  const selected = c.selected.value;
  if (!selected) return "";
  if (row.op_id === selected) return "cz-selected";
  const mark = c.marks.value.get(row.op_id);
  if (mark) return `cz-source cz-tier-${mark.tier}`;
  return SOURCE_KINDS.has(row.op.kind) || row.op.kind === "exec" ? "cz-background" : "";
}

/** The ⛓ badge of a change: how many likely sources it has, the best score in its title. */
export function CausalityBadge({ state, row }: { state: SessionState; row: Row }): VNode | null {
  const c = causalityOf(state);
  const change = c.change(row.op_id);
  const mark = c.marks.value.get(row.op_id);
  if (mark) {
    return (
      <span
        class={`cz-chip cz-tier-${mark.tier}`}
        title={`A source of the selected change (${mark.tier.replace("_", " ")})`}
      >
        {mark.score.toFixed(2)}
      </span>
    );
  }
  if (!change || !change.sources) return null;
  const on = c.selected.value === row.op_id;
  return (
    <button
      type="button"
      class={`cz-badge${on ? " on" : ""}`}
      aria-pressed={on}
      title={`${change.sources} likely source${change.sources > 1 ? "s" : ""} (best ${
        change.best?.toFixed(2)
      }): show why this changed`}
      aria-label={`Show the ${change.sources} likely sources of this change`}
      onClick={() => {
        if (on) c.selected.value = null;
        else if (state.focus.value === row.op_id) c.select(row.op_id);
        else navigate(sessionUrl(state.id, row.op_id), { replace: true });
      }}
    >
      <ChainIcon /> {change.sources}
    </button>
  );
}
