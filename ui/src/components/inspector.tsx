/** The right pane: everything about the selected step, raw input and result included. */
import type { VNode } from "preact";
import { isErrorResult } from "../../../core/analytics/error_heuristic.ts";
import { Time } from "./time.tsx";
import { navigate, sessionUrl } from "../router.ts";
import type { SessionState } from "../session_state.ts";
import { CausalityPanel, FilesTouchedMap } from "./causality_panel.tsx";
import { CodeAtMomentButton } from "./code_at_moment.tsx";
import { PayloadBlock } from "./op_row.tsx";

function InspectorHead({ title, close }: { title: string; close: () => void }): VNode {
  return (
    <div class="inspector-head">
      <h2 class="inspector-title">{title}</h2>
      <button type="button" class="secondary inspector-close" onClick={close} title="Esc">
        <span aria-hidden="true">✕</span> Close
      </button>
    </div>
  );
}

export function Inspector({ state }: { state: SessionState }): VNode | null {
  const id = state.focus.value;
  if (!id) return null;
  // Rows of any thread (a sub-agent's step opened by a link) arrive after the focus is set.
  void state.rows.value;
  const row = state.byOp.get(id);
  const close = () => {
    state.focus.value = null;
    navigate(sessionUrl(state.id), { replace: true });
  };
  if (!row) {
    return (
      <aside class="inspector" aria-label="Inspector">
        <InspectorHead title="Step" close={close} />
        {state.error.value
          ? <div class="error-text pad">{state.error.value}</div>
          : <div class="muted pad" role="status">Loading…</div>}
      </aside>
    );
  }
  const op = row.op;
  const { extensions: _ext, provenance, ...core } = op;
  const facts: [string, string | VNode | undefined][] = [
    ["kind", op.kind],
    ["tool", op.tool],
    ["effect", op.effect],
    ["thread", row.connection],
    ["time", row.ts_ms === null ? undefined : <Time key="time" at={row.ts_ms} />],
    ["model", op.model],
    ["completeness", op.completeness],
    ["error", isErrorResult(op, row.result?.text) ? "yes" : "no"],
    ["replay", op.replay.replayable ? "replayable" : "not replayable"],
    ["blockers", op.replay.blockers.join(", ") || undefined],
    ["native id", op.native_id],
    ["target", op.target],
    [
      "source",
      `${provenance.source_range.file.split("/").slice(-1)[0]} lines ${
        provenance.source_range.lines.join("–")
      } (epoch ${provenance.epoch})`,
    ],
  ];
  return (
    <aside class="inspector" aria-label="Inspector">
      <InspectorHead title={`Step ${row.seq + 1}`} close={close} />
      <dl class="facts-list">
        {facts.filter(([, v]) => v).map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
      <CodeAtMomentButton state={state} opId={row.op_id} />
      <CausalityPanel state={state} row={row} />
      {row.input && <PayloadBlock payload={row.input} label="Input" pretty />}
      {row.result && <PayloadBlock payload={row.result} label="Result" />}
      <FilesTouchedMap state={state} focus={row.op_id} />
      <details>
        <summary>Canonical operation</summary>
        <pre class="payload-text">{JSON.stringify({ ...core, provenance }, null, 2)}</pre>
      </details>
    </aside>
  );
}
