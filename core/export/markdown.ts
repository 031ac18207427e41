/**
 * The export document as Markdown. Transcript text never becomes raw HTML in any renderer:
 * prose keeps its Markdown but every `<` outside code is written as `&lt;`, and a piece that
 * markdown-it (with HTML on) would still read as HTML is written as a fenced block instead;
 * inputs, results and diffs are fenced blocks whose fence is longer than any backtick run
 * inside them. Sub-agent threads are nested as block quotes.
 */
import MarkdownIt from "markdown-it";
import {
  blockText,
  count,
  duration,
  redactionLine,
  stepCounts,
  stepTime,
  tokenTotals,
  utc,
  whoOf,
} from "./_format.ts";
import type { DiffBlock, DocStep, DocThread, SteppedDocument, TextBlock } from "./document.ts";
import { KIND_LABEL } from "./tool_view.ts";

/** The strictest reading: HTML allowed, as the most permissive Markdown renderers do. */
const probe = new MarkdownIt({ html: true, linkify: false });

interface Token {
  type: string;
  children: Token[] | null;
}

/** True when markdown-it, with HTML enabled, finds raw HTML in `src`. */
export function hasRawHtml(src: string): boolean {
  const walk = (tokens: Token[]): boolean =>
    tokens.some((t) =>
      t.type === "html_block" || t.type === "html_inline" || (t.children ? walk(t.children) : false)
    );
  return walk(probe.parse(src, {}) as Token[]);
}

/** A fenced code block whose fence no line inside can close. */
export function fence(text: string, info = ""): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const f = "`".repeat(Math.max(3, longest + 1));
  return `${f}${info}\n${text}${text.endsWith("\n") ? "" : "\n"}${f}`;
}

/** One line of text as an inline code span. */
export function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ");
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((r) => r.length));
  const f = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat.startsWith(" ") ? " " : "";
  return `${f}${pad}${flat}${pad}${f}`;
}

/** One line of plain text, its Markdown and HTML characters escaped. */
export function plain(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(
    /[\\`*_[\]<>|~#!]/g,
    (c) => c === "<" ? "&lt;" : c === ">" ? "&gt;" : "\\" + c,
  );
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Markdown prose (prompts, replies) made safe to embed: `<` outside code becomes `&lt;`, an
 * unclosed fence is closed, and when markdown-it would still find raw HTML, the text is
 * written as a fenced block.
 */
export function prose(text: string): string {
  const out: string[] = [];
  let open: string | null = null;
  for (const line of text.split("\n")) {
    if (open) {
      const m = FENCE_OPEN.exec(line);
      if (
        m && m[1][0] === open[0] && m[1].length >= open.length && !line.slice(m[0].length).trim()
      ) {
        open = null;
      }
      out.push(line);
      continue;
    }
    const m = FENCE_OPEN.exec(line);
    if (m && !(m[1][0] === "`" && line.slice(m[0].length).includes("`"))) {
      open = m[1];
      out.push(line);
      continue;
    }
    out.push(escapeOutsideSpans(line));
  }
  if (open) out.push(open);
  const safe = out.join("\n");
  // Raw HTML needs a `<`; only then is markdown-it asked.
  return safe.includes("<") && hasRawHtml(safe) ? fence(text, "text") : safe;
}

/** `<` as `&lt;` in one line, except inside code spans on that line. */
function escapeOutsideSpans(line: string): string {
  let out = "";
  let i = 0;
  while (i < line.length) {
    const tick = line.indexOf("`", i);
    if (tick < 0) {
      out += line.slice(i).replaceAll("<", "&lt;");
      break;
    }
    out += line.slice(i, tick).replaceAll("<", "&lt;");
    let run = tick;
    while (line[run] === "`") run++;
    const n = run - tick;
    // The span closes at the next run of exactly n backticks.
    let close = -1;
    for (let j = line.indexOf("`", run); j >= 0; j = line.indexOf("`", j)) {
      let k = j;
      while (line[k] === "`") k++;
      if (k - j === n) {
        close = j;
        break;
      }
      j = k;
    }
    if (close < 0) {
      out += line.slice(tick, run);
      i = run;
      continue;
    }
    out += line.slice(tick, close + n);
    i = close + n;
  }
  return out;
}

function quote(md: string): string {
  return md.split("\n").map((l) => (l ? `> ${l}` : ">")).join("\n");
}

function resultLabel(label: string, b: TextBlock): string {
  const shown = b.head.length + (b.tail?.length ?? 0);
  return b.omitted
    ? `${label} (${count(shown)} of ${count(shown + b.omitted)} characters shown):`
    : `${label}:`;
}

function diffText(d: DiffBlock): string {
  const lines: string[] = [];
  if (d.kind !== "patch") lines.push(`--- ${d.path || "(file)"}`, `+++ ${d.path || "(file)"}`);
  for (const l of d.lines) {
    const sign = l.type === "add" ? "+" : l.type === "del" ? "-" : l.type === "ctx" ? " " : "";
    lines.push(sign + l.text);
  }
  if (d.omitted) lines.push(`… ${count(d.omitted)} more diff lines left out …`);
  return lines.join("\n");
}

function stepMd(step: DocStep): string {
  const time = stepTime(step);
  const meta = [`step ${step.n}`, time].filter(Boolean).join(" · ");
  const parts: string[] = [];
  if (step.type === "thread") {
    for (const t of step.threads ?? []) parts.push(threadMd(t));
    return parts.join("\n\n");
  }
  if (step.type !== "tool") {
    parts.push(`### ${whoOf(step)} · ${meta}`);
    const text = step.text ? blockText(step.text) : "";
    if (step.injected || step.type === "event") parts.push(fence(text, "text"));
    else if (text.trim()) parts.push(prose(text));
    return parts.join("\n\n");
  }
  const label = KIND_LABEL[step.kind ?? ""] ?? "Tool";
  const head = [`#### ${label}`];
  if (step.tool) head.push(plain(step.tool));
  let title = head.join(" · ");
  if (step.summary) title += ` ${code(step.summary)}`;
  const flags: string[] = [];
  if (step.error) flags.push("**✗ error**");
  if (step.completeness) flags.push(`*${step.completeness}*`);
  parts.push(`${title}${flags.length ? " — " + flags.join(" ") : ""}`);
  parts.push(`*${meta}*`);
  for (const d of step.diffs ?? []) {
    parts.push(
      `${plain(d.path || "(file)")}: +${d.adds} −${d.dels}${
        d.kind === "write" ? " (new content)" : ""
      }`,
    );
    parts.push(fence(diffText(d), "diff"));
  }
  if (step.input) {
    parts.push(resultLabel("Input", step.input));
    parts.push(fence(blockText(step.input), /^\s*[[{]/.test(step.input.head) ? "json" : "text"));
  }
  if (step.result) {
    parts.push(resultLabel(step.error ? "Result (error)" : "Result", step.result));
    parts.push(fence(blockText(step.result), "text"));
  }
  for (const t of step.threads ?? []) parts.push(threadMd(t));
  return parts.join("\n\n");
}

function threadMd(t: DocThread): string {
  const head = [`**Sub-agent** ${t.agent_type ? code(t.agent_type) : ""}`.trim()];
  if (t.model) head.push(plain(t.model));
  head.push(`${count(t.step_count)} step${t.step_count === 1 ? "" : "s"}`);
  if (t.guessed) head.push("*spawning call matched by time*");
  const body = [head.join(" · "), ...t.steps.map(stepMd)].join("\n\n");
  return quote(body);
}

/** The document as one Markdown file. */
export function renderMarkdown(doc: SteppedDocument): string {
  return [...markdownChunks(doc)].join("");
}

/**
 * {@link renderMarkdown}'s text in pieces: the header, then each step (a download streamed as
 * it is rendered, never held whole).
 */
export function* markdownChunks(doc: SteppedDocument): Generator<string> {
  const h = doc.session;
  const facts: string[] = [];
  facts.push(
    `- **Agent:** ${plain(h.agent)}${h.agent_version ? " " + plain(h.agent_version) : ""}`,
  );
  if (h.models.length) facts.push(`- **Model:** ${h.models.map(plain).join(", ")}`);
  if (h.project) {
    facts.push(`- **Project:** ${code(h.project)}${h.branch ? ` (branch ${code(h.branch)})` : ""}`);
  }
  const when = [
    h.started_at && `started ${utc(h.started_at)}`,
    h.ended_at && `ended ${utc(h.ended_at)}`,
  ]
    .filter(Boolean).join(", ");
  if (when) {
    facts.push(
      `- **Time:** ${when}${h.duration_ms !== undefined ? ` (${duration(h.duration_ms)})` : ""}`,
    );
  }
  if (h.tokens.length) facts.push(`- **Tokens:** ${tokenTotals(h)}`);
  facts.push(
    `- **Steps:** ${stepCounts(h)}${h.thinking === "left out" ? " (thinking left out)" : ""}`,
  );
  facts.push(`- **Session:** ${code(h.id)}`);
  facts.push(
    `- **${doc.redaction.enabled ? "Redaction" : "⚠ Redaction"}:** ${
      plain(redactionLine(doc.redaction))
    }`,
  );
  facts.push(`- **Exported:** ${utc(doc.generated_at)} by Chronicle`);
  yield [`# ${plain(h.title)}`, facts.join("\n"), "---"].join("\n\n");
  for (const step of doc.steps) yield "\n\n" + stepMd(step);
  yield "\n";
}
