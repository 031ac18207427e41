/** Hand-drawn SVG charts: bars per day and horizontal bars. Sized by viewBox, themed by CSS. */
import type { VNode } from "preact";

export function DayBars(
  { days, height = 160 }: {
    days: { day: string; operations: number; errors: number }[];
    height?: number;
  },
): VNode {
  if (!days.length) return <div class="muted">No dated activity.</div>;
  const width = 720;
  const pad = { l: 40, r: 8, t: 8, b: 22 };
  const max = Math.max(...days.map((d) => d.operations), 1);
  const w = (width - pad.l - pad.r) / days.length;
  const y = (v: number) => pad.t + (height - pad.t - pad.b) * (1 - v / max);
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label="Operations per day"
    >
      <line class="axis" x1={pad.l} x2={width - pad.r} y1={y(0)} y2={y(0)} />
      <text class="tick" x={pad.l - 6} y={y(max) + 4} text-anchor="end">{max}</text>
      <text class="tick" x={pad.l - 6} y={y(0)} text-anchor="end">0</text>
      {days.map((d, i) => (
        <g key={d.day}>
          <rect
            class="bar"
            x={pad.l + i * w + 1}
            y={y(d.operations)}
            width={Math.max(1, w - 2)}
            height={y(0) - y(d.operations)}
          >
            <title>{`${d.day}: ${d.operations} steps, ${d.errors} errors`}</title>
          </rect>
          {d.errors > 0 && (
            <rect
              class="bar-error"
              x={pad.l + i * w + 1}
              y={y(d.errors)}
              width={Math.max(1, w - 2)}
              height={y(0) - y(d.errors)}
            />
          )}
          {i % labelEvery === 0 && (
            <text class="tick" x={pad.l + i * w + w / 2} y={height - 6} text-anchor="middle">
              {d.day.slice(5)}
            </text>
          )}
        </g>
      ))}
    </svg>
  );
}

export function HBars(
  { items, max: maxItems = 15 }: {
    items: { label: string; value: number; bad?: number; cls?: string }[];
    max?: number;
  },
): VNode {
  const shown = items.slice(0, maxItems);
  if (!shown.length) return <div class="muted">Nothing yet.</div>;
  const max = Math.max(...shown.map((i) => i.value), 1);
  const rowH = 22;
  const width = 520;
  const labelW = 150;
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${shown.length * rowH + 4}`} role="img">
      {shown.map((it, i) => {
        const w = ((width - labelW - 60) * it.value) / max;
        const bw = it.bad ? ((width - labelW - 60) * it.bad) / max : 0;
        return (
          <g key={it.label} transform={`translate(0 ${i * rowH + 2})`}>
            <text class="label" x={labelW - 6} y={15} text-anchor="end">
              {it.label.slice(0, 22)}
            </text>
            <rect
              class={`bar ${it.cls ?? ""}`}
              x={labelW}
              y={3}
              width={Math.max(1, w)}
              height={rowH - 6}
            />
            {bw > 0 && (
              <rect class="bar-error" x={labelW} y={3} width={Math.max(1, bw)} height={rowH - 6} />
            )}
            <text class="value" x={labelW + w + 6} y={15}>
              {it.value.toLocaleString("en-US")}
              {it.bad ? ` (${it.bad} err)` : ""}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
