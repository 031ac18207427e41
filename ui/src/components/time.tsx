/** A point in time as the UI shows it: local, with its zone and UTC in the tooltip. */
import type { VNode } from "preact";
import { dateTime, instant, localDate, timeTitle, when } from "../format.ts";

export interface TimeProps {
  /** Milliseconds, or an ISO instant from the API. */
  at: number | string | null | undefined;
  /** `datetime` (default) `YYYY-MM-DD HH:MM:SS`, `date` the local day, `ago` relative. */
  show?: "datetime" | "date" | "ago";
  /** "Now" for `ago` (one clock for a whole list). */
  now?: number;
  class?: string;
}

export function Time({ at, show = "datetime", now, class: cls }: TimeProps): VNode | null {
  const ms = typeof at === "string" ? instant(at) : at ?? null;
  if (ms === null || Number.isNaN(ms)) return null;
  const text = show === "date"
    ? localDate(ms)
    : show === "ago"
    ? when(new Date(ms).toISOString(), now)
    : dateTime(ms);
  return <time class={cls} dateTime={new Date(ms).toISOString()} title={timeTitle(ms)}>{text}
  </time>;
}
