/**
 * The analytics heatmap's layout (ui/src/chart_layout.ts): a column per week, Monday
 * first, and a chart wide enough for its month labels whole, however short the history.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { type DayCount, heatLayout } from "../../../ui/src/chart_layout.ts";

const day = (d: string, operations = 1): DayCount => ({ day: d, operations, errors: 0 });

/** Where a label ends in the chart's units, at about 0.6 em a character of 10 px text. */
const labelEnd = (m: { x: number; text: string }) => 30 + m.x * 12 + m.text.length * 6;

Deno.test("a history of one day has a week's column and its month label whole", () => {
  const { cells, months, width } = heatLayout([day("2026-11-30", 119)]);
  assertEquals(cells.length, 1, "Monday 2026-11-30 alone");
  assertEquals(cells[0], { day: "2026-11-30", x: 0, y: 0, n: 119 });
  assertEquals(months, [{ x: 0, text: "Nov 2026" }]);
  // (the chart was 42 units wide, a week's column: the label read "No")
  assert(width >= labelEnd(months[0]), `${width} holds "Nov 2026"`);
});

Deno.test("a year of history keeps the grid's width, each label inside it", () => {
  const { cells, months, width } = heatLayout([day("2025-12-01"), day("2026-11-30")]);
  const weeks = cells[cells.length - 1].x + 1;
  assertEquals(width, weeks * 12 + 30, "no wider than its columns");
  assertEquals(cells.filter((c) => c.n).map((c) => c.day), ["2025-12-01", "2026-11-30"]);
  assertEquals(months[0].text, "Dec 2025");
  // a label a month, none closer than three weeks (January's falls too near "Dec 2025")
  assertEquals(months.map((m) => m.text).slice(1, 3), ["Feb", "Mar"]);
  for (let i = 1; i < months.length; i++) assert(months[i].x - months[i - 1].x >= 3);
  for (const m of months) assert(labelEnd(m) <= width, `${m.text} at week ${m.x}`);
  // a day's row is its weekday, Monday first: 2026-11-30 is a Monday, 2026-11-29 a Sunday
  assertEquals(cells.find((c) => c.day === "2026-11-29")?.y, 6);
});
