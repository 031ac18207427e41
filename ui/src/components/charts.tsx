/**
 * The analytics charts. Bars per day on a real time axis (every day from the first to the
 * last, idle days empty, labels with the year), an activity heatmap (weeks by weekday), and
 * horizontal bars drawn in HTML so their text stays readable at any width. Each chart carries
 * a text alternative (a summary as its accessible name, and its numbers as a table under
 * "Show as a table"); a click on a day goes to that day's sessions.
 */
import type { VNode } from "preact";
import { navigate } from "../router.ts";
import { TableScroll } from "./table_scroll.tsx";
import { type DayCount, fillDays, heatLayout } from "../chart_layout.ts";

function daySummary(days: DayCount[], all: DayCount[]): string {
  const active = days.filter((d) => d.operations > 0);
  const top = active.reduce((a, b) => (b.operations > a.operations ? b : a), active[0]);
  const steps = active.reduce((n, d) => n + d.operations, 0);
  return `${steps.toLocaleString("en-US")} steps on ${active.length} of ${all.length} days from ${
    all[0].day
  } to ${all[all.length - 1].day}; busiest ${top.day} with ${
    top.operations.toLocaleString("en-US")
  }`;
}

/** The days as a table of links: the chart's numbers for a screen reader or a keyboard. */
function DayTable({ days, link }: { days: DayCount[]; link: (day: string) => string }): VNode {
  return (
    <details class="chart-table">
      <summary>Show as a table</summary>
      <TableScroll label="Steps per day">
        <table class="table">
          <thead>
            <tr>
              <th>day (UTC)</th>
              <th>steps</th>
              <th>errors</th>
            </tr>
          </thead>
          <tbody>
            {days.filter((d) => d.operations > 0).map((d) => (
              <tr key={d.day}>
                <td>
                  <a href={link(d.day)}>{d.day}</a>
                </td>
                <td>{d.operations}</td>
                <td>{d.errors}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </details>
  );
}

/** Goes to the day a chart's mark names (`data-day`), if the click was on one. */
function clickDay(e: MouseEvent, link: (day: string) => string): void {
  const day = (e.target as Element).closest("[data-day]")?.getAttribute("data-day");
  if (day) navigate(link(day));
}

/** Bars per day on a real time axis. */
export function DayBars(
  { days: given, link }: { days: DayCount[]; link: (day: string) => string },
): VNode {
  if (!given.length) return <div class="muted">No dated activity.</div>;
  const days = fillDays(given);
  const max = Math.max(...days.map((d) => d.operations), 1);
  const n = days.length;
  const ticks = Math.min(n, 6);
  const tickAt = Array.from(
    { length: ticks },
    (_, i) => (ticks === 1 ? 0 : Math.round((i * (n - 1)) / (ticks - 1))),
  );
  return (
    <figure class="day-chart">
      <div class="day-plot">
        <span class="y-max">{max.toLocaleString("en-US")}</span>
        <svg
          class="chart day-bars"
          viewBox={`0 0 ${n} 100`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`Steps per day: ${daySummary(days, days)}`}
          onClick={(e) => clickDay(e, link)}
        >
          {days.map((d, i) =>
            d.operations > 0 && (
              <g key={d.day} data-day={d.day}>
                <rect
                  class="bar"
                  x={i + 0.1}
                  width={0.8}
                  y={100 - (100 * d.operations) / max}
                  height={(100 * d.operations) / max}
                >
                  <title>{`${d.day}: ${d.operations} steps, ${d.errors} errors`}</title>
                </rect>
                {d.errors > 0 && (
                  <rect
                    class="bar-error"
                    x={i + 0.1}
                    width={0.8}
                    y={100 - (100 * d.errors) / max}
                    height={(100 * d.errors) / max}
                  />
                )}
              </g>
            )
          )}
        </svg>
      </div>
      <div class="day-axis" aria-hidden="true">
        {tickAt.map((i) => (
          <span key={i} style={{ left: `${((i + 0.5) / n) * 100}%` }}>{days[i].day}</span>
        ))}
      </div>
      <DayTable days={days} link={link} />
    </figure>
  );
}

const WEEKDAYS = ["Mon", "", "Wed", "", "Fri", "", "Sun"];
/** The heatmap is drawn at this scale, never stretched, so its 10 px text reads at 13 px. */
const HEAT_SCALE = 1.3;

/** Activity per day as a heatmap: a column per week (Monday first), up to a year back. */
export function Heatmap(
  { days: given, link }: { days: DayCount[]; link: (day: string) => string },
): VNode {
  if (!given.length) return <div class="muted">No dated activity.</div>;
  const { cells, months, width, shown } = heatLayout(given);
  const max = Math.max(...cells.map((c) => c.n), 1);
  const level = (n: number) => (n === 0 ? 0 : Math.min(4, Math.ceil((4 * n) / max)));
  return (
    <figure class="heatmap">
      <TableScroll label="Activity by day">
        <svg
          class="chart heat"
          viewBox={`0 0 ${width} ${7 * 12 + 16}`}
          width={width * HEAT_SCALE}
          height={(7 * 12 + 16) * HEAT_SCALE}
          role="img"
          aria-label={`Activity heatmap: ${daySummary(shown, shown)}`}
          onClick={(e) => clickDay(e, link)}
        >
          {months.map((m) => (
            <text key={m.x} class="tick" x={30 + m.x * 12} y={10}>
              {m.text}
            </text>
          ))}
          {WEEKDAYS.map((w, i) =>
            w && <text key={w} class="tick" x={0} y={16 + i * 12 + 9}>{w}</text>
          )}
          {cells.map((c) => (
            <rect
              key={c.day}
              data-day={c.n ? c.day : undefined}
              class={`heat-${level(c.n)}`}
              x={30 + c.x * 12}
              y={16 + c.y * 12}
              width={10}
              height={10}
              rx={2}
            >
              <title>{`${c.day}: ${c.n} steps`}</title>
            </rect>
          ))}
        </svg>
      </TableScroll>
      <div class="heat-legend" aria-hidden="true">
        less <span class="heat-key heat-0" /> <span class="heat-key heat-1" />{" "}
        <span class="heat-key heat-2" /> <span class="heat-key heat-3" />{" "}
        <span class="heat-key heat-4" /> more
      </div>
    </figure>
  );
}

/** One horizontal bar: its label (with a tooltip), its value and how much of it went wrong. */
export interface BarItem {
  label: string;
  value: number;
  bad?: number;
  cls?: string;
  title?: string;
  href?: string;
}

/** Horizontal bars in HTML: the text is the page's text, readable at every width. */
export function HBars(
  { items, max: maxItems = 15, label }: { items: BarItem[]; max?: number; label: string },
): VNode {
  const shown = items.slice(0, maxItems);
  if (!shown.length) return <div class="muted">Nothing yet.</div>;
  const max = Math.max(...shown.map((i) => i.value), 1);
  return (
    <ul class="chart hbars" aria-label={label}>
      {shown.map((it) => (
        <li key={it.label} title={it.title}>
          <span class="hb-label">
            {it.href ? <a href={it.href}>{it.label}</a> : it.label}
          </span>
          <span class="hb-track" aria-hidden="true">
            <span class={`bar ${it.cls ?? ""}`} style={{ width: `${(100 * it.value) / max}%` }} />
            {it.bad
              ? <span class="bar-error" style={{ width: `${(100 * it.bad) / max}%` }} />
              : null}
          </span>
          <span class="hb-value">
            {it.value.toLocaleString("en-US")}
            {it.bad ? ` (${it.bad} failed)` : ""}
          </span>
        </li>
      ))}
    </ul>
  );
}
