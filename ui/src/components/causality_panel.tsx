/**
 * In the inspector: why the selected change was made (its likely sources, strongest tier
 * first, each a link to the step), the earlier changes it builds on and the later ones it fed,
 * and the session's files-touched map (each file's reads, changes and mentions on a strip).
 */
import type { VNode } from "preact";
import type { ChainEdge } from "../../../core/causality/chains.ts";
import type { SourceLink, Tier } from "../../../core/causality/score.ts";
import { navigate, sessionUrl } from "../router.ts";
import type { SessionState } from "../session_state.ts";
import type { Row } from "../types.ts";
import { ChainIcon } from "./causality_badge.tsx";
import { causalityOf, type ChangeDetail, type TierInfo } from "./causality_state.ts";

function jump(state: SessionState, op: string): void {
  navigate(sessionUrl(state.id, op));
}

function before(n: number): string {
  return n === 1 ? "the step before" : `${n} steps before`;
}

/** What a source showed, in a line: the file it read, or the pattern and the matching line. */
function sourceText(s: SourceLink): string {
  const e = s.evidence;
  if (e.via === "pattern") return `pattern “${e.match ?? ""}” names ${e.changed}`;
  if (e.via === "result") return e.match ?? e.path ?? e.changed;
  if (e.via === "window") return [e.path, e.match ? `“${e.match}”` : ""].filter(Boolean).join(" ");
  return e.path ?? e.changed;
}

function SourceItem(
  { state, change, source }: { state: SessionState; change: ChangeDetail; source: SourceLink },
): VNode {
  const thread = source.connection !== change.connection ? ` · in ${source.connection}` : "";
  return (
    <li>
      <button
        type="button"
        class="cz-source-link"
        onClick={() => jump(state, source.op)}
        title="Go to this step"
      >
        <span class={`badge badge-${source.kind === "list" ? "search" : source.kind}`}>
          {source.kind}
        </span>
        <span class="cz-source-text">{sourceText(source)}</span>
        {source.failed && <span class="badge badge-error">failed</span>}
      </button>
      <div class="muted cz-source-meta">
        {source.tool ?? ""} · {before(change.seq - source.seq)}
        {thread}
        {change.files.length > 1 ? ` · for ${source.evidence.changed}` : ""}
      </div>
    </li>
  );
}

function ChainList(
  { state, edges, title, end }: {
    state: SessionState;
    edges: ChainEdge[];
    title: string;
    end: "from" | "to";
  },
): VNode | null {
  if (!edges.length) return null;
  return (
    <div class="cz-chain">
      <div class="payload-label">{title}</div>
      <ol>
        {edges.map((e) => (
          <li key={`${e.from}-${e.to}`}>
            <button type="button" class="link" onClick={() => jump(state, e[end])}>
              {end === "from" ? "the change" : "a later change"}
            </button>{" "}
            {end === "from" ? "to" : "after reading"} <code>{e.file}</code>
            {end === "from"
              ? (
                <>
                  , then{" "}
                  <button type="button" class="link" onClick={() => jump(state, e.via)}>
                    read back
                  </button>{" "}
                  {before(e.to_seq - e.via_seq)} this one
                </>
              )
              : (
                <>
                  {" "}(
                  <button type="button" class="link" onClick={() => jump(state, e.via)}>
                    the read
                  </button>)
                </>
              )}
            <span class="muted">· {e.score.toFixed(2)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The causality section of the inspector for the focused step. */
export function CausalityPanel({ state, row }: { state: SessionState; row: Row }): VNode | null {
  const c = causalityOf(state);
  const selected = c.selected.value;
  const detail = c.detail.value;
  if (c.error.value && !c.summary.value) {
    return <div class="error-text cz-panel">{c.error.value}</div>;
  }
  const brief = c.change(row.op_id);
  if (selected && selected !== row.op_id) {
    const mark = detail?.sources.find((s) => s.op === row.op_id);
    if (!mark || !detail) return null;
    return (
      <section class="cz-panel cz-note" aria-label="Causality">
        <div>
          <span class={`cz-chip cz-tier-${mark.tier}`}>{mark.score.toFixed(2)}</span>{" "}
          A likely source of the change to <code>{detail.files.join(", ")}</code>:{" "}
          {detail.tiers.find((t) => t.tier === mark.tier)?.label ?? mark.tier}.
        </div>
        <button type="button" class="link" onClick={() => jump(state, detail.op)}>
          ← Back to the change
        </button>
      </section>
    );
  }
  if (!brief) return null;
  if (!detail || detail.op !== row.op_id) {
    return <section class="cz-panel muted" aria-label="Causality">Finding sources…</section>;
  }
  const groups = new Map<Tier, SourceLink[]>();
  for (const s of detail.sources) groups.set(s.tier, [...(groups.get(s.tier) ?? []), s]);
  return (
    <section class="cz-panel" aria-label="Causality">
      <h2 class="cz-title">
        <ChainIcon /> Why this changed
      </h2>
      <div class="muted">
        {detail.kind} <code>{detail.files.join(", ")}</code>
        {detail.failed ? " (the change itself failed)" : ""}
      </div>
      {!detail.sources.length && (
        <p class="muted">No read, search or listing before this change points to it.</p>
      )}
      {detail.tiers.filter((t: TierInfo) => groups.has(t.tier)).map((t) => (
        <div key={t.tier} class={`cz-group cz-tier-${t.tier}`}>
          <div class="cz-group-head">
            <span class={`cz-chip cz-tier-${t.tier}`}>{t.score.toFixed(2)}</span> {t.label}
          </div>
          <ul class="cz-sources">
            {groups.get(t.tier)!.map((s) => (
              <SourceItem key={s.op} state={state} change={detail} source={s} />
            ))}
          </ul>
        </div>
      ))}
      <ChainList state={state} edges={detail.chain} title="Builds on" end="from" />
      <ChainList state={state} edges={detail.led_to} title="Led to" end="to" />
    </section>
  );
}

const ROLE_LABEL: Record<string, string> = {
  read: "read",
  search: "named by a search",
  list: "listed",
  change: "changed",
};

/** The session's files-touched map: each file's events on a strip across the session. */
export function FilesTouchedMap(
  { state, focus }: { state: SessionState; focus: string },
): VNode | null {
  const c = causalityOf(state);
  const summary = c.summary.value;
  if (!summary || !summary.files.length) return null;
  const steps = Math.max(1, state.detail.value?.session.op_count ?? 1);
  const files = summary.files;
  return (
    <details class="cz-files" open={files.length <= 12}>
      <summary>Files touched ({files.length})</summary>
      <ul>
        {files.map((f) => {
          const here = f.events.some((e) => e.op === focus);
          return (
            <li key={f.key} class={here ? "cz-file here" : "cz-file"}>
              <div class="cz-file-head">
                <code title={f.key}>{f.path}</code>
                <span class="muted">
                  {[
                    f.reads && `${f.reads} read${f.reads > 1 ? "s" : ""}`,
                    f.changes && `${f.changes} change${f.changes > 1 ? "s" : ""}`,
                    f.mentions && `${f.mentions} mention${f.mentions > 1 ? "s" : ""}`,
                  ].filter(Boolean).join(" · ")}
                </span>
              </div>
              <div class="cz-strip" role="group" aria-label={`Steps that touched ${f.path}`}>
                {f.events.map((e) => (
                  <button
                    type="button"
                    key={`${e.op}-${e.role}`}
                    class={`cz-dot cz-dot-${e.role}${e.failed ? " failed" : ""}${
                      e.op === focus ? " here" : ""
                    }`}
                    style={{ left: `${Math.min(100, (e.seq / steps) * 100)}%` }}
                    title={`${ROLE_LABEL[e.role]}${e.action ? ` (${e.action})` : ""}${
                      e.gap ? `, ${e.gap} steps after the previous` : ""
                    }${e.failed ? ", failed" : ""}`}
                    aria-label={`${ROLE_LABEL[e.role]} at step ${e.seq + 1}`}
                    onClick={() => jump(state, e.op)}
                  />
                ))}
              </div>
            </li>
          );
        })}
      </ul>
    </details>
  );
}
