/**
 * Where the analytics charts' days go, without the DOM (ui/src/components/charts.tsx draws them):
 * every day of a history, and the heatmap's weeks, weekdays and month labels.
 */

const DAY_MS = 86_400_000;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** A YYYY-MM-DD day's UTC midnight, in ms, and back. */
const timeOf = (day: string) => Date.parse(day + "T00:00:00Z");
const dayAt = (t: number) => new Date(t).toISOString().slice(0, 10);

/** One day's counts. */
export interface DayCount {
  day: string;
  operations: number;
  errors: number;
}

/** Every UTC day from the first to the last of `days`, the ones without activity at zero. */
export function fillDays(days: readonly DayCount[]): DayCount[] {
  if (!days.length) return [];
  const byDay = new Map(days.map((d) => [d.day, d]));
  const first = timeOf(days[0].day);
  const last = timeOf(days[days.length - 1].day);
  const out: DayCount[] = [];
  for (let t = first; t <= last; t += DAY_MS) {
    const day = dayAt(t);
    out.push(byDay.get(day) ?? { day, operations: 0, errors: 0 });
  }
  return out;
}

/** A heatmap label's width in the chart's units: its 10 px text, about 0.6 em a character. */
const labelWidth = (text: string) => Math.ceil(text.length * 6.2);

/** One day of the heatmap: its week (column), weekday (row, Monday first) and steps. */
export interface HeatCell {
  day: string;
  x: number;
  y: number;
  n: number;
}

/**
 * Where the heatmap's cells and month labels go: a column per week (Monday first), up to a year
 * back from the last day; `width` holds the columns and every label whole (a history of a week
 * or two is narrower than "Nov 2026", which was cut to "No").
 */
export function heatLayout(given: readonly DayCount[]): {
  cells: HeatCell[];
  months: { x: number; text: string }[];
  width: number;
  shown: DayCount[];
} {
  const all = fillDays(given);
  const last = timeOf(all[all.length - 1].day);
  // From the Monday of the week a year before the last day (or of the first day, if later).
  const yearBack = Math.max(timeOf(all[0].day), last - 364 * DAY_MS);
  const weekday = (t: number) => (new Date(t).getUTCDay() + 6) % 7;
  const start = yearBack - weekday(yearBack) * DAY_MS;
  const byDay = new Map(all.map((d) => [d.day, d]));
  const cells: HeatCell[] = [];
  for (let t = start; t <= last; t += DAY_MS) {
    const day = dayAt(t);
    cells.push({
      day,
      x: Math.floor((t - start) / DAY_MS / 7),
      y: weekday(t),
      n: byDay.get(day)?.operations ?? 0,
    });
  }
  const weeks = cells[cells.length - 1].x + 1;
  // A label at each month's first week, the year with January and the first one; none closer
  // than three weeks to the one before (five after one with its year).
  const months: { x: number; text: string }[] = [];
  for (const c of cells) {
    if (!(c.day.endsWith("-01") || c === cells[0])) continue;
    const prev = months[months.length - 1];
    if (prev && c.x - prev.x < (prev.text.length > 3 ? 5 : 3)) continue;
    const m = Number(c.day.slice(5, 7)) - 1;
    const year = m === 0 || !months.length ? ` ${c.day.slice(0, 4)}` : "";
    months.push({ x: c.x, text: `${MONTHS[m]}${year}` });
  }
  const width = Math.max(weeks * 12 + 30, ...months.map((m) => 30 + m.x * 12 + labelWidth(m.text)));
  const shown = all.filter((d) => timeOf(d.day) >= start);
  return { cells, months, width, shown };
}
