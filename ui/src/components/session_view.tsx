/**
 * The middle pane: a session as a readable conversation, virtualised, with an overview on
 * top (duration, counts per kind, errors, tokens, files touched), and the inspector on the
 * right for the selected step.
 */
import { useSignal, useSignalEffect } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { api } from "../api.ts";
import { agentName, basename, count, duration, sessionTitle } from "../format.ts";
import { Time } from "./time.tsx";
import { followSession, type LiveSession } from "../live_session.ts";
import { goBack, listUrl, navigate, sessionUrl } from "../router.ts";
import { createSessionState, type SessionState, type TimelineState } from "../session_state.ts";
import type { SessionDetail } from "../types.ts";
import { isFormControl } from "../keys.ts";
import { estimateCost } from "../../../core/analytics/prices.ts";
import { CodeAtMomentHost } from "./code_at_moment.tsx";
import { CostText, TokenBreakdown, TokenCards } from "./cost.tsx";
import { ForgetDialog } from "./forget_dialog.tsx";
import { Inspector } from "./inspector.tsx";
import { LiveBadge } from "./live_badge.tsx";
import { NewStepsButton } from "./new_steps.tsx";
import { OpRow } from "./op_row.tsx";
import { replayMarkClass, ReplayPanel } from "./replay_panel.tsx";
import { sessionMarked, SessionTitle, toggleStar } from "./session_marks.tsx";
import { ShareDialog } from "./share_dialog.tsx";
import { VirtualList } from "./virtual_list.tsx";

function Overview({ state, live }: { state: SessionState; live: LiveSession }): VNode {
  const d = state.detail.value;
  const stats = state.stats.value;
  if (!d) return <div class="overview muted">Loading…</div>;
  const s = d.session;
  const main = d.connections.find((c) => c.kind === "main");
  const estimate = stats ? estimateCost(stats.tokens) : null;
  return (
    <header class="overview">
      <SessionTitle state={state} session={s} />
      <div class="facts">
        <LiveBadge live={live} />
        <span class={`agent agent-${s.source}`}>{agentName(s.source)}</span>
        {main?.client.version && <span class="muted">{main.client.version}</span>}
        {s.project_path && <span title={s.project_path}>project {basename(s.project_path)}</span>}
        {d.info.project.git?.branch && <span>⎇ {d.info.project.git.branch}</span>}
        {main?.server.model && <span>{main.server.model}</span>}
        <Time class="muted" at={s.started_at} />
      </div>
      {s.kept_count > 0 && (
        <p class="kept-note" role="note">
          {s.kept_count === s.op_count
            ? "The agent's log of this session is gone: every step here is Chronicle's copy."
            : `${count(s.kept_count)} of ${
              count(s.op_count)
            } steps are no longer in the agent's log: Chronicle kept them (marked “kept”).`}
        </p>
      )}
      {stats && (
        <div class="stat-cards">
          <div class="stat">
            <b>{duration(stats.duration_ms)}</b>
            <span>duration</span>
          </div>
          <div class="stat">
            <b>{count(stats.operations)}</b>
            <span>steps</span>
          </div>
          <div class={`stat ${stats.errors ? "stat-bad" : ""}`}>
            <b>{stats.errors}</b>
            <span>errors</span>
          </div>
          {estimate && <TokenCards estimate={estimate} />}
          <div class="stat">
            <b>{count(stats.files_touched)}</b>
            <span>files</span>
          </div>
          <div class="stat">
            <b>{d.connections.filter((c) => c.kind === "subagent").length}</b>
            <span>sub-agents</span>
          </div>
        </div>
      )}
      {stats && (
        <div class="kind-chips">
          {stats.kinds.map((k) => (
            <span key={k.kind} class={`chip badge-${k.kind}`}>{k.kind} {k.count}</span>
          ))}
        </div>
      )}
      {stats && stats.files.length > 0 && (
        <details class="files">
          <summary>
            Files touched ({stats.files_touched > stats.files.length
              ? `${count(stats.files_touched)}; the ${stats.files.length} most touched`
              : stats.files.length})
          </summary>
          <ul>
            {stats.files.map((f) => (
              <li key={f.path}>
                <code>{f.path}</code>{" "}
                <span class="muted">
                  {f.writes ? `${f.writes} write${f.writes > 1 ? "s" : ""}` : ""}
                  {f.writes && f.reads ? ", " : ""}
                  {f.reads ? `${f.reads} read${f.reads > 1 ? "s" : ""}` : ""}
                </span>
              </li>
            ))}
          </ul>
        </details>
      )}
      {(d.issues > 0 || d.loss_windows > 0) && (
        <div class="muted">
          {d.issues} import issue(s), {d.loss_windows} loss window(s) in this session's logs
        </div>
      )}
      {stats && stats.tokens.length > 0 && (
        <ul class="muted tokens-line plain">
          {stats.tokens.map((t) => (
            <li key={t.model}>
              {t.model}: <TokenBreakdown tokens={t} /> · <CostText estimate={estimateCost([t])} />
            </li>
          ))}
        </ul>
      )}
    </header>
  );
}

/**
 * The step after (`by` 1) or before (-1) `current` as the timeline shows it: rows in the page
 * in document order (open sub-agent threads sit under their call), else the main thread's
 * neighbour by index (a row scrolled out of the window).
 */
function nextStep(
  state: SessionState,
  main: TimelineState,
  current: string | null,
  by: 1 | -1,
): { op: string; index?: number } | null {
  const total = main.total.value ?? 0;
  if (!total) return null;
  const shown = Array.from(document.querySelectorAll<HTMLElement>(".timeline .op[data-op]"));
  const at = current ? shown.findIndex((el) => el.dataset.op === current) : -1;
  if (at >= 0 && shown[at + by]) return { op: shown[at + by].dataset.op! };
  let index = current ? main.indexOf(current) : undefined;
  if (current && index === undefined) {
    // A sub-agent step out of the window: continue from the call that spawned its thread.
    const conn = state.detail.value?.connections.find((c) =>
      c.id === state.byOp.get(current)?.connection
    );
    index = conn?.parent_op ? main.indexOf(conn.parent_op) : undefined;
  }
  const i = index === undefined ? 0 : Math.min(total - 1, Math.max(0, index + by));
  main.ensure(i, i);
  const row = main.row(i);
  return row && row.op_id !== current ? { op: row.op_id, index: i } : null;
}

export function SessionView({ id, op }: { id: string; op: string | null }): VNode {
  const state = useMemo(() => createSessionState(id), [id]);
  const main = state.main.value;
  const live = useMemo(() => followSession(state), [state]);
  useEffect(() => () => live.dispose(), [live]);
  const replaying = useSignal(false);
  const sharing = useSignal(false);
  const forgetting = useSignal(false);

  // The steps j / k moved the selection to, in order: each one's URL comes back here, maybe
  // after the next key has moved the selection on (a quick reader, a loaded machine), and is
  // then not revealed again, which took the selection back a step.
  const moved = useRef<string[]>([]);
  // A deep link (or a search hit) names a step: open its threads and scroll to it.
  useEffect(() => {
    if (!op) {
      state.focus.value = null;
      return;
    }
    const mine = moved.current.indexOf(op);
    if (mine >= 0) {
      moved.current.splice(0, mine + 1);
      return;
    }
    if (state.focus.value !== op) void state.reveal(op);
  }, [op, state]);

  // A rename or a star elsewhere (another tab, the CLI through a server): read the header again.
  useSignalEffect(() => {
    if (sessionMarked.value?.id !== id) return;
    api<SessionDetail>(`/api/sessions/${encodeURIComponent(id)}`).then(
      (d) => state.setDetail(d),
      () => {},
    );
  });

  // j / k move the selection through the steps as shown: the main thread and every open
  // sub-agent thread in between; Enter opens or closes the selected step's sub-agent thread;
  // s stars or unstars the session.
  useSignalEffect(() => {
    const m = state.main.value;
    if (!m) return;
    const onKey = (e: KeyboardEvent) => {
      if (isFormControl(e.target) || e.defaultPrevented) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if ((e.target as HTMLElement).closest?.("[role=dialog]")) return;
      if (e.key === "s") {
        e.preventDefault();
        void toggleStar(state).catch(() => {});
        return;
      }
      const current = state.focus.value;
      if (e.key === "Enter" && current && state.children.value.has(current)) {
        if ((e.target as HTMLElement).closest?.("button, a, summary")) return;
        e.preventDefault();
        state.toggle(current);
        return;
      }
      if (e.key !== "j" && e.key !== "k") return;
      const by = e.key === "j" ? 1 : -1;
      const next = nextStep(state, m, current, by);
      if (!next) return;
      e.preventDefault();
      state.focus.value = next.op;
      moved.current.push(next.op);
      if (moved.current.length > 64) moved.current.shift();
      navigate(sessionUrl(id, next.op), { replace: true });
      const el = document.querySelector<HTMLElement>(
        `.timeline .op[data-op="${CSS.escape(next.op)}"]`,
      );
      if (el) {
        el.focus({ preventScroll: true });
        el.scrollIntoView({ block: "nearest" });
      } else if (next.index !== undefined) {
        state.scrollTo.value = { index: next.index, nonce: Math.random() };
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  });

  if (state.error.value && !state.detail.value) {
    return <div class="empty error-text">{state.error.value}</div>;
  }
  const total = main?.total.value ?? null;
  void main?.version.value;
  return (
    <div class="session-layout">
      <section class="session-pane" aria-label="Session">
        <a
          class="back-link"
          href={listUrl()}
          onClick={(e) => {
            if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
            e.preventDefault();
            goBack(listUrl());
          }}
        >
          ← Sessions
        </a>
        {main && total !== null
          ? (
            <VirtualList
              class="timeline"
              count={total}
              estimate={90}
              header={<Overview state={state} live={live} />}
              scrollTo={state.scrollTo.value}
              onRange={(a, b) => main.ensure(a, b)}
              onAtEnd={(end) => live.setAtEnd(end)}
              renderRow={(i) => {
                const row = main.row(i);
                return row
                  ? (
                    <div class={replayMarkClass(row.seq)}>
                      <OpRow row={row} state={state} />
                    </div>
                  )
                  : <div class="op op-placeholder muted">Loading step {i + 1}…</div>;
              }}
            />
          )
          : (
            <div class="vscroll">
              <Overview state={state} live={live} />
              <div class="muted pad">Loading steps…</div>
            </div>
          )}
        <NewStepsButton live={live} />
      </section>
      {replaying.value
        ? <ReplayPanel sessionId={id} onClose={() => (replaying.value = false)} />
        : <Inspector state={state} />}
      <CodeAtMomentHost state={state} />
      {!replaying.value && (
        <div class="session-actions">
          <button type="button" class="secondary share-open" onClick={() => (sharing.value = true)}>
            Share / export
          </button>
          <button type="button" class="replay-open" onClick={() => (replaying.value = true)}>
            Replay
          </button>
          <button
            type="button"
            class="secondary forget-open"
            onClick={() => (forgetting.value = true)}
          >
            Forget…
          </button>
        </div>
      )}
      {sharing.value && <ShareDialog id={id} onClose={() => (sharing.value = false)} />}
      {forgetting.value && (
        <ForgetDialog
          id={id}
          title={state.detail.value ? sessionTitle(state.detail.value.session) : id}
          onClose={() => (forgetting.value = false)}
        />
      )}
    </div>
  );
}
