/**
 * Replay mode beside the session view: the plan, a preview diff per step, step-by-step or
 * auto-play at 1x/2x/5x (pausing on a divergence or failure), the sandbox's files, the final
 * comparison, and the sandbox folder's path to copy. Statuses also mark the timeline's rows
 * (see `replayMarks`).
 */
import { computed, signal, useSignal, useSignalEffect } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useMemo } from "preact/hooks";
import type { Preview } from "../../../core/replay/replay.ts";
import { api } from "../api.ts";

interface StepView {
  seq: number;
  op: string;
  kind: string;
  tool?: string;
  target: string | null;
  status: "pending" | "applied" | "skipped" | "blocked" | "diverged" | "failed";
  detail: string;
  diff?: string;
  output?: string;
  exit_code?: number | null;
  replayable: boolean;
  needs_confirmation: boolean;
  blockers: string[];
}

interface ReplayView {
  id: string;
  sandbox: string;
  seeded_from: string | null;
  notices: string[];
  shell: { ok: boolean; detail: string };
  steps: StepView[];
  divergences: number;
}

interface FinalView {
  compared_with: string;
  files: number;
  equal: number;
  differing: { path: string; detail: string }[];
}

/** Replay statuses by timeline seq, for the session view's rows (one replay at a time). */
export const replayMarks = signal<ReadonlyMap<number, string>>(new Map());

/** The CSS class a timeline row gets from the open replay, if any. */
export function replayMarkClass(seq: number): string {
  const s = replayMarks.value.get(seq);
  return s ? `replay-mark replay-${s}` : "";
}

const SPEEDS = [1, 2, 5] as const;
const STEP_MS = 1200;

function createReplayState(sessionId: string) {
  const view = signal<ReplayView | null>(null);
  const error = signal<string | null>(null);
  const busy = signal(false);
  const selected = signal<number | null>(null);
  const preview = signal<Preview | null>(null);
  const files = signal<{ path: string; type: string; size: number }[] | null>(null);
  const file = signal<{ path: string; text: string; truncated: boolean } | null>(null);
  const final = signal<FinalView | null | undefined>(undefined);
  const playing = signal(false);
  const speed = signal<(typeof SPEEDS)[number]>(1);
  const confirm = signal(false);
  const base = () => `/api/replays/${encodeURIComponent(view.value!.id)}`;

  const next = computed(() => view.value?.steps.find((s) => s.status === "pending") ?? null);

  const fail = (e: unknown) => {
    error.value = (e as Error).message;
    playing.value = false;
  };

  return {
    view,
    error,
    busy,
    selected,
    preview,
    files,
    file,
    final,
    playing,
    speed,
    confirm,
    next,
    async start() {
      busy.value = true;
      error.value = null;
      try {
        view.value = await api<ReplayView>(
          `/api/sessions/${encodeURIComponent(sessionId)}/replays`,
          { method: "POST", body: {} },
        );
        selected.value = view.value.steps[0]?.seq ?? null;
      } catch (e) {
        fail(e);
      } finally {
        busy.value = false;
      }
    },
    /** Selects a step and loads its preview (the diff it would make, the reasoning before it). */
    async select(seq: number) {
      selected.value = seq;
      preview.value = null;
      try {
        const p = await api<Preview>(`${base()}/steps/${seq}/preview`);
        if (selected.value === seq) preview.value = p; // not a slower answer to an earlier click
      } catch (e) {
        fail(e);
      }
    },
    /** Runs the next pending step; returns false when auto-play should stop. */
    async step(): Promise<boolean> {
      const s = next.value;
      if (!s || !view.value) return false;
      busy.value = true;
      try {
        const r = await api<StepView>(`${base()}/steps/${s.seq}`, {
          method: "POST",
          body: { confirm: confirm.value },
        });
        const steps = view.value.steps.map((x) => (x.seq === r.seq ? { ...x, ...r } : x));
        view.value = { ...view.value, steps };
        selected.value = r.seq;
        return r.status !== "diverged" && r.status !== "failed";
      } catch (e) {
        fail(e);
        return false;
      } finally {
        busy.value = false;
      }
    },
    async loadFiles() {
      try {
        files.value = (await api<{ files: { path: string; type: string; size: number }[] }>(
          `${base()}/files`,
        )).files;
      } catch (e) {
        fail(e);
      }
    },
    async openFile(path: string) {
      try {
        const f = await api<{ text: string; truncated: boolean }>(
          `${base()}/file?path=${encodeURIComponent(path)}`,
        );
        file.value = { path, ...f };
      } catch (e) {
        fail(e);
      }
    },
    async compare() {
      try {
        final.value = (await api<{ final: FinalView | null }>(`${base()}/compare`, {
          method: "POST",
          body: {},
        })).final;
      } catch (e) {
        fail(e);
      }
    },
  };
}

type ReplayState = ReturnType<typeof createReplayState>;

function DiffText({ diff }: { diff: string }): VNode {
  return (
    <pre class="replay-diff">
      {diff.split("\n").map((l) => (
        <div
          class={l.startsWith("+") && !l.startsWith("+++")
            ? "dl-add"
            : l.startsWith("-") && !l.startsWith("---")
            ? "dl-del"
            : l.startsWith("@@")
            ? "dl-hunk"
            : ""}
        >
          {l || " "}
        </div>
      ))}
    </pre>
  );
}

function StepDetail({ state }: { state: ReplayState }): VNode | null {
  const seq = state.selected.value;
  const s = state.view.value?.steps.find((x) => x.seq === seq);
  if (!s) return null;
  const p = state.preview.value;
  return (
    <div class="replay-detail" data-testid="replay-detail">
      <h3>
        Step {s.seq} · {s.kind} <span class={`replay-badge replay-${s.status}`}>{s.status}</span>
      </h3>
      <div class="mono replay-target">{s.target}</div>
      {s.detail && <p class="replay-why">{s.detail}</p>}
      {p?.seq === s.seq && p.reasoning.length > 0 && (
        <details>
          <summary>Reasoning before this step ({p.reasoning.length})</summary>
          {p.reasoning.map((r, i) => <p key={i} class="replay-reasoning">{r.kind}: {r.text}</p>)}
        </details>
      )}
      {s.diff ? <DiffText diff={s.diff} /> : p?.diff && s.status === "pending" && (
        <>
          <div class="muted">
            Preview: applies{p.lines?.length ? ` at line ${p.lines.join(", ")}` : ""}
          </div>
          <DiffText diff={p.diff} />
        </>
      )}
      {p && p.applies === false && s.status === "pending" && (
        <p class="error-text">Would not apply now: {p.reason}</p>
      )}
      {p?.command && s.status === "pending" && (
        <p class="muted">
          Runs in {p.workdir}: {p.isolation}
        </p>
      )}
      {s.output !== undefined && (
        <>
          <div class="muted">exit {String(s.exit_code)}</div>
          <pre class="replay-output">{s.output}</pre>
        </>
      )}
    </div>
  );
}

export function ReplayPanel(
  { sessionId, onClose }: { sessionId: string; onClose: () => void },
): VNode {
  const state = useMemo(() => createReplayState(sessionId), [sessionId]);
  const copied = useSignal(false);
  const v = state.view.value;

  // Timeline marks follow the replay; cleared when the panel closes.
  useSignalEffect(() => {
    const steps = state.view.value?.steps ?? [];
    replayMarks.value = new Map(
      steps.filter((s) => s.status !== "pending").map((s) => [s.seq, s.status]),
    );
  });
  useEffect(() => () => void (replayMarks.value = new Map()), []);

  // Auto-play: one step per tick at the chosen speed, pausing on a divergence or failure.
  useSignalEffect(() => {
    if (!state.playing.value) return;
    const ms = STEP_MS / state.speed.value;
    let stop = false;
    const tick = async () => {
      if (stop) return;
      const go = await state.step();
      if (!go || !state.next.value) {
        state.playing.value = false;
        return;
      }
      if (!stop) timer = setTimeout(tick, ms);
    };
    let timer = setTimeout(tick, ms);
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  });

  useEffect(() => {
    const s = state.selected.value;
    if (s !== null && state.view.value) void state.select(s);
  }, [state.selected.value]);

  if (!v) {
    return (
      <aside class="inspector replay-panel" aria-label="Replay">
        <div class="inspector-head">
          <b>Replay</b>
          <button type="button" onClick={onClose}>Close</button>
        </div>
        <p>
          Replay plays this session's file edits and (when you allow it) its shell commands again in
          a new sandbox folder, seeded from the project's last commit before the session, and shows
          where the result differs from the recording.
        </p>
        <button
          type="button"
          class="primary"
          disabled={state.busy.value}
          onClick={() => state.start()}
        >
          {state.busy.value ? "Preparing the sandbox…" : "Start replay"}
        </button>
        {state.error.value && <p class="error-text">{state.error.value}</p>}
      </aside>
    );
  }
  const counts = (st: string) => v.steps.filter((s) => s.status === st).length;
  return (
    <aside class="inspector replay-panel" aria-label="Replay" data-testid="replay-panel">
      <div class="inspector-head">
        <b>Replay</b>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <div class="replay-sandbox">
        <div class="muted">Sandbox folder</div>
        <code class="mono" data-testid="replay-sandbox">{v.sandbox}</code>
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(v.sandbox).catch(() => {});
            copied.value = true;
          }}
        >
          {copied.value ? "Copied" : "Copy path"}
        </button>
        <div class="muted small">
          Open it in your file manager: Chronicle runs only git and bubblewrap, never a file
          manager.
        </div>
        <div class="small">
          Seeded from{" "}
          {v.seeded_from ? <code>{v.seeded_from.slice(0, 12)}</code> : "nothing (empty)"}
        </div>
        {v.notices.map((n, i) => <div key={i} class="replay-notice small">{n}</div>)}
        <div class={`small ${v.shell.ok ? "muted" : "error-text"}`}>
          Shell steps: {v.shell.detail}
        </div>
      </div>
      <div class="replay-controls">
        <button
          type="button"
          disabled={state.busy.value || !state.next.value}
          onClick={() => state.step()}
        >
          Step
        </button>
        <button
          type="button"
          disabled={!state.next.value}
          onClick={() => (state.playing.value = !state.playing.value)}
        >
          {state.playing.value ? "Pause" : "Play"}
        </button>
        {SPEEDS.map((x) => (
          <button
            type="button"
            class={state.speed.value === x ? "active" : ""}
            aria-pressed={state.speed.value === x}
            onClick={() => (state.speed.value = x)}
          >
            {x}x
          </button>
        ))}
        <label class="small">
          <input
            type="checkbox"
            checked={state.confirm.value}
            disabled={!v.shell.ok}
            onChange={(e) => (state.confirm.value = (e.target as HTMLInputElement).checked)}
          />{" "}
          run shell commands
        </label>
      </div>
      <div class="small muted">
        {counts("applied")} applied · {counts("diverged")} diverged · {counts("failed")} failed ·
        {" "}
        {counts("blocked")} blocked · {counts("skipped")} skipped · {counts("pending")} to go
      </div>
      {state.error.value && <p class="error-text">{state.error.value}</p>}
      <ol class="replay-steps" data-testid="replay-steps">
        {v.steps.map((s) => (
          <li
            class={`replay-step replay-${s.status} ${
              state.selected.value === s.seq ? "selected" : ""
            }`}
            data-seq={s.seq}
            onClick={() => (state.selected.value = s.seq)}
          >
            <span class="replay-seq">{s.seq}</span>
            <span class="replay-kind">{s.kind}</span>
            <span class="replay-tgt mono">{s.target ?? ""}</span>
            <span class={`replay-badge replay-${s.status}`}>{s.status}</span>
          </li>
        ))}
      </ol>
      <StepDetail state={state} />
      <details onToggle={(e) => (e.target as HTMLDetailsElement).open && state.loadFiles()}>
        <summary>Sandbox files</summary>
        {state.files.value?.map((f) => (
          <div class="replay-file">
            {f.type === "file"
              ? (
                <button
                  type="button"
                  class="replay-file-open"
                  onClick={() => state.openFile(f.path)}
                >
                  {f.path}
                </button>
              )
              : <span class="muted">{f.path}{f.type === "dir" ? "/" : " (link)"}</span>}
          </div>
        ))}
        {state.file.value && (
          <>
            <div class="mono small">{state.file.value.path}</div>
            <pre class="replay-output">{state.file.value.text}</pre>
          </>
        )}
      </details>
      <div class="replay-final">
        <button type="button" onClick={() => state.compare()}>Compare with the project</button>
        {state.final.value === null && (
          <p class="muted small">
            The project's final state is unknown (no repository or later commit).
          </p>
        )}
        {state.final.value && (
          <p class="small">
            {state.final.value.equal} of {state.final.value.files} files equal to{" "}
            {state.final.value.compared_with}
            {state.final.value.differing.map((d) => (
              <div class="error-text">≠ {d.path}: {d.detail}</div>
            ))}
          </p>
        )}
      </div>
    </aside>
  );
}
