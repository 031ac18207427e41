/**
 * One step of a session: a prompt, a reply (Markdown), thinking (collapsed), an event, or a
 * tool call with its input and result (collapsible, long output cut with "show all"), file
 * changes as diffs, errors marked, and the sub-agent it spawned nested beneath it.
 */
import { useComputed, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { isErrorResult } from "../../../core/analytics/error_heuristic.ts";
import { bytes, duration } from "../format.ts";
import { languageOfPath } from "../highlight.ts";
import { navigate, sessionUrl } from "../router.ts";
import type { SessionState } from "../session_state.ts";
import type { ConnectionView, Row } from "../types.ts";
import {
  callSummary as summaryOf,
  failureReason,
  KIND_LABEL,
} from "../../../core/export/tool_view.ts";
import { CausalityBadge, causalityRowClass } from "./causality_badge.tsx";
import { DiffView, fileChanges } from "./diff_view.tsx";
import { CutNote, PayloadBlock } from "./payload_block.tsx";
import { ToolView } from "./tool_views.tsx";
import { Markdown } from "./markdown.tsx";

export { PayloadBlock } from "./payload_block.tsx";

/** A one-line description of a tool call: its command, path or query. */
export function callSummary(row: Row): string {
  return summaryOf(row.op, row.input?.text);
}

function SubagentThread({ state, conn }: { state: SessionState; conn: ConnectionView }): VNode {
  const timeline = useMemo(() => state.thread(conn.id), [state, conn.id]);
  // A revealed step deep in a long thread is shown with the rows before it.
  const shown = useSignal(Math.max(200, (state.wanted.get(conn.id) ?? 0) + 1));
  const total = timeline.total.value;
  void timeline.version.value;
  useEffect(() => timeline.ensure(0, Math.min(shown.value, total ?? 1) - 1), [shown.value, total]);
  const rows: Row[] = [];
  for (let i = 0; i < Math.min(shown.value, total ?? 0); i++) {
    const r = timeline.row(i);
    if (r) rows.push(r);
  }
  return (
    <div class="subagent" data-connection={conn.id}>
      <div class="subagent-head">
        <span class="badge badge-task">sub-agent</span> {conn.agent_type ?? conn.id}
        {conn.server?.model && <span class="muted">· {conn.server.model}</span>}
        {total !== null && <span class="muted">· {total} steps</span>}
        {conn.parent_guessed && (
          <span class="muted" title="The log does not name the spawning call; matched by time">
            · matched by time
          </span>
        )}
      </div>
      {total === null && <div class="muted pad">Loading…</div>}
      {rows.map((r) => <OpRow key={r.op_id} row={r} state={state} nested />)}
      {total !== null && total > shown.value && (
        <button type="button" class="link" onClick={() => (shown.value += 200)}>
          Show more ({total - shown.value} left)
        </button>
      )}
    </div>
  );
}

/**
 * The most of a prompt's, reply's or thinking's text a row lays out at first, as much as it is
 * sent of a call's output: a pasted log of a megabyte made one row 600,000 px tall at 390 px. The
 * rest is a click away.
 */
export const ROW_PROSE_CHARS = 6_000;

/** A prompt's, reply's or thinking's text as Markdown: only its opening when it is long. */
function Prose({ text }: { text: string }): VNode {
  const whole = useSignal(false);
  if (text.length <= ROW_PROSE_CHARS || whole.value) return <Markdown text={text} />;
  return (
    <>
      <Markdown text={text.slice(0, ROW_PROSE_CHARS)} />
      <div class="prose-more">
        <span class="muted">
          Showing {bytes(ROW_PROSE_CHARS)} of {bytes(text.length)}
        </span>{" "}
        <button type="button" class="link" onClick={() => (whole.value = true)}>
          Show all
        </button>
      </div>
    </>
  );
}

/** A text step's "truncated" mark, with how much its import cut when its marks say. */
function TextCut({ row }: { row: Row }): VNode | null {
  if (row.op.completeness === "complete") return null;
  const cut = row.input?.cut_bytes ?? row.result?.cut_bytes;
  return (
    <>
      <span class="badge badge-warn">{row.op.completeness}</span>
      {cut !== undefined && <CutNote bytes={cut} />}
    </>
  );
}

/** Why a call failed, shown in the row itself: the opening of its result, never folded. */
function FailureReason({ text }: { text: string | undefined }): VNode {
  const reason = failureReason(text);
  return (
    <div class="fail-reason" role="group" aria-label="Why it failed">
      <span class="fail-label">Error:</span>
      {reason.text
        ? <pre class="fail-text">{reason.text}{reason.cut ? "\n…" : ""}</pre>
        : <span class="muted">the agent recorded no reason</span>}
    </div>
  );
}

export function OpRow(
  { row, state, nested, selected }: {
    row: Row;
    state: SessionState;
    nested?: boolean;
    selected?: boolean;
  },
): VNode {
  const op = row.op;
  const focused = useComputed(() => state.focus.value === row.op_id);
  const ref = useRef<HTMLDivElement>(null);
  const error = isErrorResult(op, row.result?.text);
  const href = sessionUrl(state.id, row.op_id);
  useEffect(() => {
    if (focused.value && nested && ref.current) ref.current.scrollIntoView({ block: "center" });
  }, [focused.value]);

  const select = (e: MouseEvent) => {
    const t = e.target as HTMLElement;
    if (
      t.closest(
        "button, a, summary, input, pre.payload-text, .diff, .code-lines, .tool-view, .md a",
      )
    ) return;
    state.focus.value = row.op_id;
    navigate(href, { replace: true });
  };

  const cls = [
    "op",
    `op-${op.kind}`,
    error ? "is-error" : "",
    focused.value || selected ? "is-focused" : "",
    op.injected ? "is-injected" : "",
    row.kept ? "is-kept" : "",
    causalityRowClass(state, row),
  ].join(" ");
  const kept = row.kept && (
    <span class="badge badge-kept" title="No longer in the agent's log file: Chronicle kept it">
      kept
    </span>
  );
  const time = row.offset_ns ? `+${duration(row.offset_ns / 1e6)}` : "";
  const link = (
    <a
      class="op-link"
      href={href}
      title="Link to this step"
      aria-label="Link to this step"
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        state.focus.value = row.op_id;
        navigate(href, { replace: true });
      }}
    >
      #
    </a>
  );

  if (op.kind === "prompt" || op.kind === "reply") {
    const text = op.text ?? row.result?.text ?? row.input?.text ?? "";
    const who = op.kind === "prompt" ? (op.injected ? "Context" : "User") : "Assistant";
    return (
      <div class={cls} ref={ref} data-op={row.op_id} tabIndex={-1} onClick={select}>
        <div class="op-meta">
          <span class={`who who-${op.kind}`}>{who}</span>
          {kept}
          <TextCut row={row} />
          <span class="muted">{time}</span>
          {link}
        </div>
        {op.injected
          ? (
            <details>
              <summary>Injected context ({bytes(text.length)})</summary>
              <pre class="payload-text">{text}</pre>
            </details>
          )
          : <Prose text={text} />}
      </div>
    );
  }
  if (op.kind === "thinking") {
    return (
      <div class={cls} ref={ref} data-op={row.op_id} tabIndex={-1} onClick={select}>
        <details>
          <summary>
            <span class="who who-thinking">Thinking</span> {kept} <TextCut row={row} />{" "}
            <span class="muted">{time}</span>
          </summary>
          <Prose text={op.text ?? row.result?.text ?? ""} />
        </details>
      </div>
    );
  }
  if (op.kind === "event") {
    return (
      <div class={cls} ref={ref} data-op={row.op_id} tabIndex={-1} onClick={select}>
        <span class="badge">{op.event ?? "event"}</span> {kept}{" "}
        <span class="muted event-text">{(op.text ?? "").slice(0, 300)}</span>
      </div>
    );
  }

  // A tool call.
  const changes = (op.kind === "write" || op.kind === "edit") && row.input
    ? fileChanges(row.input.text)
    : [];
  const subs = state.children.value.get(row.op_id) ?? [];
  const open = state.expanded.value.has(row.op_id);
  const summary = callSummary(row);
  return (
    <div class={cls} ref={ref} data-op={row.op_id} tabIndex={-1} onClick={select}>
      <div class="tool-head">
        {error && <span class="badge badge-failed">✗ Failed</span>}
        <span class={`badge badge-${op.kind}`}>{KIND_LABEL[op.kind] ?? op.kind}</span>
        <span class="tool-name">{op.tool}</span>
        <span class="tool-summary" title={summary}>{summary}</span>
        <CausalityBadge state={state} row={row} />
        {op.completeness !== "complete" && <span class="badge badge-warn">{op.completeness}</span>}
        {kept}
        <span class="muted">{time}</span>
        {link}
      </div>
      {error && <FailureReason text={row.result?.text} />}
      {!error && <ToolView row={row} />}
      {changes.length > 0 && !error && changes.map((c, i) => <DiffView key={i} change={c} />)}
      {changes.length > 0 && error && (
        <details class="attempted">
          <summary>
            {changes.length === 1
              ? `Attempted change to ${changes[0].path || "a file"}, not applied`
              : `${changes.length} attempted changes, not applied`}
          </summary>
          {changes.map((c, i) => <DiffView key={i} change={c} attempted />)}
        </details>
      )}
      <details class="tool-body">
        <summary>{changes.length ? "Input and result" : "Details"}</summary>
        {row.input && <PayloadBlock payload={row.input} label="Input" pretty />}
        {row.result && (
          <PayloadBlock
            payload={row.result}
            label={error ? "Result (error)" : "Result"}
            lang={op.kind === "read" ? languageOfPath(op.target) : undefined}
            numbered={op.kind === "read"}
          />
        )}
      </details>
      {subs.length > 0 && (
        <div class="subagents">
          <button
            type="button"
            class="toggle"
            aria-expanded={open}
            onClick={() => state.toggle(row.op_id)}
          >
            {open ? "▾" : "▸"}{" "}
            {subs.length === 1 ? "Sub-agent thread" : `${subs.length} sub-agent threads`}
          </button>
          {open && subs.map((c) => <SubagentThread key={c.id} state={state} conn={c} />)}
        </div>
      )}
    </div>
  );
}
