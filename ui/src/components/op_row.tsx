/**
 * One step of a session: a prompt, a reply (Markdown), thinking (collapsed), an event, or a
 * tool call with its input and result (collapsible, long output cut with "show all"), file
 * changes as diffs, errors marked, and the sub-agent it spawned nested beneath it.
 */
import { useComputed, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { isErrorResult } from "../../../core/analytics/error_heuristic.ts";
import { operationText } from "../api.ts";
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
 * How long a text "Show all" lays out as Markdown; a longer one (a pasted log) is shown as a
 * call's output is: plain lines, with a find box.
 */
const MARKDOWN_CHARS = 200_000;

/**
 * A prompt's, reply's or thinking's text (`render` lays it out). A long one comes as its opening
 * (the row's `text_bytes` says how long the whole is): a pasted log of megabytes made one row
 * 600,000 px tall at 390 px, and the page's JSON as big. "Show all" fetches the rest.
 */
function Opening(
  { row, sessionId, text, render }: {
    row: Row;
    sessionId: string;
    text: string;
    render: (text: string) => VNode;
  },
): VNode {
  const whole = useSignal<string | null>(null);
  const failed = useSignal<string | null>(null);
  const shown = useMemo(() => new TextEncoder().encode(text).byteLength, [text]);
  const size = row.text_bytes;
  if (whole.value !== null) return render(whole.value);
  if (size === undefined) return render(text);
  const load = () =>
    operationText(sessionId, row.op_id).then((t) => (whole.value = t)).catch((e) =>
      failed.value = (e as Error).message
    );
  return (
    <>
      {render(text)}
      <div class="prose-more">
        <span class="muted">Showing {bytes(shown)} of {bytes(size)}</span>{" "}
        <button type="button" class="link" onClick={load}>Show all</button>
        {failed.value && <div class="error-text">{failed.value}</div>}
      </div>
    </>
  );
}

/**
 * A text as Markdown, or as plain lines when it is longer than {@link MARKDOWN_CHARS}; `size`:
 * its bytes, when known.
 */
function prose(text: string, size?: number): VNode {
  return text.length <= MARKDOWN_CHARS
    ? <Markdown text={text} />
    : <PayloadBlock label="Text" payload={{ text, size: size ?? null, truncated: false }} />;
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
              <summary>Injected context ({bytes(row.text_bytes ?? text.length)})</summary>
              <Opening
                row={row}
                sessionId={state.id}
                text={text}
                render={(t) => <pre class="payload-text">{t}</pre>}
              />
            </details>
          )
          : (
            <Opening
              row={row}
              sessionId={state.id}
              text={text}
              render={(t) => prose(t, row.text_bytes)}
            />
          )}
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
          <Opening
            row={row}
            sessionId={state.id}
            text={op.text ?? row.result?.text ?? ""}
            render={(t) => prose(t, row.text_bytes)}
          />
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
