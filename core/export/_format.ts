/** Formatting the Markdown and HTML renderers share: counts, durations, times, labels. */
import type { DocHeader, DocStep, TextBlock } from "./document.ts";
import { KIND_LABEL } from "./tool_view.ts";

export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** `2025-01-02 10:32:07 UTC`: exports are read elsewhere, so times carry their zone. */
export function utc(iso: string | undefined): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}

/** When a step happened: its time of day and its offset from the session's start. */
export function stepTime(step: DocStep): string {
  const parts: string[] = [];
  if (step.at) parts.push(utc(step.at).slice(11));
  if (step.offset_ms) parts.push(`+${duration(step.offset_ms)}`);
  return parts.join(" ");
}

export function whoOf(step: DocStep): string {
  switch (step.type) {
    case "prompt":
      return step.injected ? "Context" : "User";
    case "reply":
      return "Assistant";
    case "thinking":
      return "Thinking";
    case "event":
      return step.event ? `Event: ${step.event}` : "Event";
    case "thread":
      return "Sub-agent";
    default:
      return KIND_LABEL[step.kind ?? ""] ?? "Tool";
  }
}

/** The whole text of a block, with a line saying how much was left out. */
export function blockText(b: TextBlock): string {
  if (!b.omitted) return b.head;
  return `${b.head}\n… ${count(b.omitted)} characters left out …\n${b.tail ?? ""}`;
}

/** `12,345 in · 678 out · 9 cache read · 0 cache write` summed over models. */
export function tokenTotals(h: DocHeader): string {
  const sum = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const t of h.tokens) {
    sum.input += t.input;
    sum.output += t.output;
    sum.cache_read += t.cache_read;
    sum.cache_write += t.cache_write;
  }
  return `${count(sum.input)} in · ${count(sum.output)} out · ${
    count(sum.cache_read)
  } cache read · ${count(sum.cache_write)} cache write`;
}

/** `123 steps · 45 tool calls · 2 errors · 1 sub-agent`. */
export function stepCounts(h: DocHeader): string {
  const plural = (n: number, one: string, many = one + "s") =>
    `${count(n)} ${n === 1 ? one : many}`;
  return [
    plural(h.steps, "step"),
    plural(h.tool_calls, "tool call"),
    plural(h.errors, "error"),
    plural(h.subagents, "sub-agent"),
  ].join(" · ");
}

/** What redaction did, in one sentence. */
export function redactionLine(
  r: { enabled: boolean; total: number; by_rule: Record<string, number> },
) {
  if (!r.enabled) return "NOT redacted: this export may contain secrets and personal data.";
  if (!r.total) return "Redacted: no secrets or personal data found.";
  const rules = Object.entries(r.by_rule).map(([k, v]) => `${k} ${v}`).join(", ");
  return `Redacted: ${count(r.total)} finding${r.total === 1 ? "" : "s"} replaced (${rules}).`;
}
