/** Analytics per project or overall: activity per day, tools, kinds, errors, tokens. */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { api, qs } from "../api.ts";
import { basename, count } from "../format.ts";
import { navigate, onLink } from "../router.ts";
import type { Stats } from "../types.ts";
import { AgentOptions, useProjects } from "./filter_options.tsx";
import { type BarItem, DayBars, HBars, Heatmap } from "./charts.tsx";
import { KIND_LABEL } from "../../../core/export/tool_view.ts";
import { CostText, TokenCards } from "./cost.tsx";
import { estimateCost, tokenTotal } from "../../../core/analytics/prices.ts";
import type { ModelTokens, ToolCount } from "../../../core/analytics/stats.ts";
import { TableScroll } from "./table_scroll.tsx";

/**
 * Tool calls grouped by what they do across agents (a read is a read whether the agent calls it
 * Read, read_file or view: the kind core/model/tools.ts gave it at import), with each kind's
 * native names and counts for the tooltip.
 */
function toolKinds(tools: ToolCount[]): BarItem[] {
  const kinds = new Map<string, ToolCount[]>();
  for (const t of tools) kinds.set(t.kind, [...(kinds.get(t.kind) ?? []), t]);
  return [...kinds].map(([kind, ts]) => ({
    label: KIND_LABEL[kind] ?? kind,
    value: ts.reduce((n, t) => n + t.count, 0),
    bad: ts.reduce((n, t) => n + t.errors, 0),
    cls: `k-${kind}`,
    title: ts.map((t) => `${t.tool} ${t.count}`).join(", "),
  })).sort((a, b) => b.value - a.value);
}

/** Usage rows grouped by a key, in the order the keys first appear. */
function groupBy<T extends ModelTokens>(rows: T[], key: (r: T) => string): [string, T[]][] {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    out.set(k, [...(out.get(k) ?? []), r]);
  }
  return [...out];
}

/** Tokens and estimated cost per project or per day, each row a link to its sessions. */
function CostTable(
  { title, head, rows, link, label }: {
    title: string;
    head: string;
    rows: [string, ModelTokens[]][];
    link: (key: string) => string;
    label: (key: string) => string;
  },
): VNode {
  return (
    <section class="card">
      <h2>{title}</h2>
      {!rows.length ? <div class="muted">No tokens recorded.</div> : (
        <TableScroll label={title}>
          <table class="table">
            <thead>
              <tr>
                <th>{head}</th>
                <th>tokens</th>
                <th>est. cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(([k, r]) => {
                const e = estimateCost(r);
                return (
                  <tr key={k}>
                    <td>
                      <a href={link(k)} onClick={(e) => onLink(e, link(k))} title={k}>
                        {label(k)}
                      </a>
                    </td>
                    <td
                      title={`${count(e.tokens.input)} in, ${count(e.tokens.output)} out, ${
                        count(e.tokens.cache_read)
                      } cache read, ${count(e.tokens.cache_write)} cache write`}
                    >
                      {count(tokenTotal(e.tokens))}
                    </td>
                    <td>
                      <CostText estimate={e} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

export function AnalyticsPage({ project }: { project: string | null }): VNode {
  const stats = useSignal<Stats | null>(null);
  const error = useSignal<string | null>(null);
  const projects = useProjects();
  const source = useSignal("");

  useEffect(() => {
    stats.value = null;
    api<Stats>(`/api/analytics${qs({ project, source: source.value })}`)
      .then((s) => (stats.value = s))
      .catch((e) => (error.value = (e as Error).message));
  }, [project, source.value]);

  const s = stats.value;
  const estimate = s ? estimateCost(s.tokens) : null;
  const dayLink = (day: string) =>
    `/${qs({ from: day, to: day, project: project ?? undefined, source: source.value })}`;
  return (
    <div class="page">
      <div class="page-head">
        <h1>Analytics {project ? <span class="muted">· {basename(project)}</span> : ""}</h1>
        <select
          aria-label="Project"
          value={project ?? ""}
          onChange={(e) => {
            const v = (e.currentTarget as HTMLSelectElement).value;
            navigate(`/analytics${qs({ project: v })}`);
          }}
        >
          <option value="">All projects</option>
          {projects.value.map((p) => <option key={p.path} value={p.path}>{p.path}</option>)}
        </select>
        <select
          aria-label="Agent"
          value={source.value}
          onChange={(e) => (source.value = (e.currentTarget as HTMLSelectElement).value)}
        >
          <AgentOptions />
        </select>
      </div>
      {error.value && <div class="error-text">{error.value}</div>}
      {!s ? <div class="muted">Loading…</div> : (
        <>
          <div class="stat-cards">
            <div class="stat">
              <b>{count(s.sessions)}</b>
              <span>sessions</span>
            </div>
            <div class="stat">
              <b>{count(s.operations)}</b>
              <span>steps</span>
            </div>
            <div class={`stat ${s.errors ? "stat-bad" : ""}`}>
              <b>{count(s.errors)}</b>
              <span>tool errors</span>
            </div>
            {estimate && <TokenCards estimate={estimate} />}
            <div class="stat">
              <b>{count(s.tools.reduce((n, t) => n + t.count, 0))}</b>
              <span>tool calls</span>
            </div>
          </div>
          <section class="card">
            <h2>
              Steps per day <span class="muted small">(failed tool calls in red)</span>
            </h2>
            <DayBars days={s.activity} link={dayLink} />
          </section>
          <section class="card">
            <h2>Activity</h2>
            <Heatmap days={s.activity} link={dayLink} />
          </section>
          <div class="grid2">
            <section class="card">
              <h2>
                Tools by what they do{" "}
                <span class="muted small">(hover for each agent's names)</span>
              </h2>
              <HBars label="Tool calls by kind" items={toolKinds(s.tools)} />
            </section>
            <section class="card">
              <h2>Step kinds</h2>
              <HBars
                label="Steps by kind"
                items={s.kinds.map((k) => ({ label: k.kind, value: k.count, cls: `k-${k.kind}` }))}
              />
            </section>
          </div>
          <div class="grid2">
            <section class="card">
              <h2>Tokens per model</h2>
              <TableScroll label="Tokens per model">
                <table class="table">
                  <thead>
                    <tr>
                      <th>model</th>
                      <th>input</th>
                      <th>output</th>
                      <th>cache read</th>
                      <th>cache write</th>
                      <th>est. cost</th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.tokens.map((t) => (
                      <tr key={t.model}>
                        <td>{t.model}</td>
                        <td>{count(t.input)}</td>
                        <td>{count(t.output)}</td>
                        <td>{count(t.cache_read)}</td>
                        <td>{count(t.cache_write)}</td>
                        <td>
                          <CostText estimate={estimateCost([t])} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </section>
            <CostTable
              title="Estimated cost per project"
              head="project"
              rows={groupBy(s.tokens_by_project, (r) => r.project)}
              link={(p) => `/${qs({ project: p })}`}
              label={(p) => p ? basename(p) : "(no project)"}
            />
            <CostTable
              title="Estimated cost per day"
              head="day (UTC)"
              rows={groupBy(s.tokens_by_day, (r) => r.day).reverse().slice(0, 31)}
              link={(d) => `/${qs({ from: d, to: d, project: project ?? undefined })}`}
              label={(d) => d}
            />
            <section class="card">
              <h2>
                Most touched files <span class="muted small">of {count(s.files_touched)}</span>
              </h2>
              <ul class="plain">
                {s.files.slice(0, 15).map((f) => (
                  <li key={f.path}>
                    <code title={f.path}>{f.path.split("/").slice(-2).join("/")}</code>{" "}
                    <span class="muted small">{f.writes}w {f.reads}r</span>
                  </li>
                ))}
              </ul>
            </section>
          </div>
        </>
      )}
    </div>
  );
}
