/**
 * Causality in the session view, as a signal factory kept beside each open session: the
 * session's changes (for the ⛓ badges) and files-touched map, the change the user selected
 * with its sources (loaded on demand), and which step "code at this moment" is open on.
 * Selecting a change marks its sources on the timeline; stepping to one of them keeps it.
 */
import { computed, effect, type ReadonlySignal, type Signal, signal } from "@preact/signals";
import type { ChainEdge, FileTouch } from "../../../core/causality/chains.ts";
import type { ChangeLinks, Tier } from "../../../core/causality/score.ts";
import { api } from "../api.ts";
import type { SessionState } from "../session_state.ts";

/** A change as the summary lists it. */
export interface ChangeBrief {
  op: string;
  seq: number;
  connection: string;
  kind: string;
  files: string[];
  failed: boolean;
  sources: number;
  best: number | null;
}

export interface TierInfo {
  tier: Tier;
  score: number;
  label: string;
}

export interface CausalitySummary {
  project: string | null;
  tiers: TierInfo[];
  changes: ChangeBrief[];
  files: (FileTouch & { events_omitted: number })[];
}

export interface ChangeDetail extends ChangeLinks {
  tiers: TierInfo[];
  /** The changes this one builds on, oldest first. */
  chain: ChainEdge[];
  /** Later changes whose sources saw what this one wrote. */
  led_to: ChainEdge[];
}

export interface CausalityState {
  summary: Signal<CausalitySummary | null>;
  error: Signal<string | null>;
  /** The change whose sources are marked; it stays while the user visits its sources. */
  selected: Signal<string | null>;
  detail: ReadonlySignal<ChangeDetail | null>;
  /** Sources of the selected change by operation id. */
  marks: ReadonlySignal<Map<string, { tier: Tier; score: number }>>;
  /** The step "code at this moment" is open on (an operation id), or null. */
  codeAt: Signal<string | null>;
  /** The file it shows (kept while moving between steps). */
  codePath: Signal<string | null>;
  change(op: string): ChangeBrief | undefined;
  /** Selects a change (loading its sources). */
  select(op: string): void;
  dispose(): void;
}

const states = new WeakMap<SessionState, CausalityState>();

/** The causality state of an open session, made on first use. */
export function causalityOf(session: SessionState): CausalityState {
  let s = states.get(session);
  if (!s) {
    s = createCausalityState(session);
    states.set(session, s);
  }
  return s;
}

function createCausalityState(session: SessionState): CausalityState {
  const base = `/api/sessions/${encodeURIComponent(session.id)}/causality`;
  const summary = signal<CausalitySummary | null>(null);
  const error = signal<string | null>(null);
  const selected = signal<string | null>(null);
  const codeAt = signal<string | null>(null);
  const codePath = signal<string | null>(null);
  const details = signal(new Map<string, ChangeDetail>());
  const byOp = computed(() => new Map((summary.value?.changes ?? []).map((c) => [c.op, c])));
  const detail = computed(
    () => (selected.value ? details.value.get(selected.value) ?? null : null),
  );
  const marks = computed(() => {
    const out = new Map<string, { tier: Tier; score: number }>();
    for (const s of detail.value?.sources ?? []) out.set(s.op, { tier: s.tier, score: s.score });
    return out;
  });

  api<CausalitySummary>(base).then((s) => (summary.value = s)).catch((e) =>
    error.value = (e as Error).message
  );

  const load = (op: string) => {
    if (details.value.has(op)) return;
    api<ChangeDetail>(`${base}/${encodeURIComponent(op)}`).then((d) => {
      const next = new Map(details.value);
      next.set(op, d);
      details.value = next;
    }).catch((e) => (error.value = (e as Error).message));
  };

  // Focusing a change selects it; focusing one of its sources keeps it; anything else clears.
  const stop = effect(() => {
    const focus = session.focus.value;
    const changes = byOp.value;
    if (!focus) return;
    if (changes.has(focus)) {
      if (selected.peek() !== focus) selected.value = focus;
      load(focus);
    } else if (!marks.peek().has(focus)) selected.value = null;
  });

  return {
    summary,
    error,
    selected,
    detail,
    marks,
    codeAt,
    codePath,
    change: (op) => byOp.value.get(op),
    select(op) {
      selected.value = op;
      load(op);
    },
    dispose: stop,
  };
}
