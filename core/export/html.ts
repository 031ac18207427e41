/**
 * The export document as one self-contained HTML page: inline CSS, no script, no request to
 * anywhere (a Content-Security-Policy in the page forbids them), light and dark from the
 * system, collapsible parts as `<details>`, so it reads the same from `file://`, in a mail
 * attachment and as a share page. Every text is escaped; Markdown in prompts and replies goes
 * through markdown-it with HTML off, links limited to http(s) and mailto, images shown as text.
 */
import { createHash } from "node:crypto";
import MarkdownIt from "markdown-it";
import {
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

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text (or an attribute value) escaped for HTML. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.validateLink = (url: string) => /^(https?:|mailto:)/i.test(url.trim());
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet("rel", "nofollow noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};
// An image would be a request; the alt text and the address are shown instead.
md.renderer.rules.image = (tokens, idx) => {
  const t = tokens[idx];
  const src = String(t.attrGet("src") ?? "");
  const alt = (t.children ?? []).map((c) => c.content).join("");
  return `<span class="img">[image${alt ? ": " + esc(alt) : ""}${
    src ? " " + esc(src) : ""
  }]</span>`;
};

/** Markdown to safe HTML (no raw HTML, no scripts, no images). */
export function markdownHtml(text: string): string {
  return md.render(text);
}

export const EXPORT_CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;
--user:#eef5ff;--user-line:#b6d4fe;--accent:#0969da;--add:#dafbe1;--del:#ffebe9;--hunk:#ddf4ff;
--bad:#cf222e;--bad-soft:#ffebe9;--warn:#9a6700;--think:#f5f0ff}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--soft:#151b23;--user:#132339;--user-line:#1f4b85;--accent:#4493f8;--add:rgba(46,160,67,.22);
--del:rgba(248,81,73,.22);--hunk:rgba(56,139,253,.18);--bad:#ff7b72;--bad-soft:rgba(248,81,73,.15);
--warn:#d29922;--think:#1c1530}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:62rem;margin:0 auto;padding:1.25rem 1rem 3rem}
a{color:var(--accent)}
code,pre,kbd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.86em}
h1{font-size:1.45rem;line-height:1.3;margin:.2rem 0 .8rem;overflow-wrap:anywhere}
.banner{border:1px solid var(--line);background:var(--soft);border-radius:8px;padding:.5rem .75rem;margin-bottom:1rem;color:var(--muted);font-size:.9em}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 .8rem;font-size:.92em}
.facts dt{color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.redaction{margin:.5rem 0 0;padding:.4rem .7rem;border-radius:6px;font-size:.9em;background:var(--soft);border:1px solid var(--line)}
.redaction.off{background:var(--bad-soft);border-color:var(--bad);color:var(--bad);font-weight:600}
.steps{list-style:none;margin:0;padding:0}
.step{margin:.7rem 0}
.meta{display:flex;flex-wrap:wrap;gap:.15rem .6rem;align-items:baseline;font-size:.82em;color:var(--muted);margin-bottom:.2rem}
.who{font-weight:650;color:var(--fg)}
.meta a{color:var(--muted);text-decoration:none}
.prompt>.text{background:var(--user);border:1px solid var(--user-line);border-radius:10px;padding:.1rem .9rem}
.reply>.text{padding:0 .1rem}
.thinking>details,.context>details{border-left:3px solid var(--line);padding-left:.7rem}
.thinking>details{background:var(--think);border-radius:0 6px 6px 0}
.event{color:var(--muted);font-size:.9em}
.md p{margin:.5rem 0}.md pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.6rem .75rem;overflow:auto}
.md code{background:var(--soft);border-radius:4px;padding:.05em .3em}.md pre code{background:none;padding:0}
.md table{border-collapse:collapse;display:block;overflow:auto}.md td,.md th{border:1px solid var(--line);padding:.2rem .5rem}
.md blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid var(--line);color:var(--muted)}
.md img,.img{color:var(--muted)}
.tool{border:1px solid var(--line);border-radius:8px;background:var(--bg)}
.tool.error{border-color:var(--bad)}
summary{cursor:pointer;list-style-position:outside}
.tool>details>summary{padding:.4rem .6rem;display:flex;flex-wrap:wrap;gap:.2rem .5rem;align-items:baseline}
.tool>details>summary::-webkit-details-marker{display:none}
.tool>details>summary::before{content:"▸";color:var(--muted)}
.tool>details[open]>summary::before{content:"▾"}
.badge{font-size:.75em;font-weight:650;text-transform:uppercase;letter-spacing:.03em;border:1px solid var(--line);border-radius:999px;padding:0 .45rem;background:var(--soft)}
.badge.bad{color:var(--bad);border-color:var(--bad);background:var(--bad-soft)}
.badge.warn{color:var(--warn);border-color:var(--warn)}
.tname{font-weight:600}
.sum{overflow-wrap:anywhere;min-width:0;flex:1 1 12rem}
.when{color:var(--muted);font-size:.82em;margin-left:auto}
.body{padding:0 .6rem .6rem;border-top:1px solid var(--line)}
.label{font-size:.8em;color:var(--muted);margin:.55rem 0 .2rem;font-weight:600}
pre.out{margin:0;background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.5rem .65rem;white-space:pre-wrap;overflow-wrap:anywhere;max-height:28rem;overflow:auto}
.error pre.res{border-color:var(--bad)}
.cut{display:block;color:var(--muted);font-style:italic;margin:.3rem 0}
.diff{margin:.55rem 0;border:1px solid var(--line);border-radius:6px;overflow:hidden}
.diff>summary{padding:.3rem .6rem;background:var(--soft);font-size:.85em;overflow-wrap:anywhere}
.diff .add-n{color:#1a7f37}.diff .del-n{color:var(--bad)}
.diff pre{margin:0;overflow:auto;max-height:32rem;font-size:.8em;line-height:1.45}
.diff pre span{display:block;padding:0 .6rem;white-space:pre}
.dl-add{background:var(--add)}.dl-del{background:var(--del)}.dl-hunk{background:var(--hunk);color:var(--muted)}.dl-meta{color:var(--muted)}
.thread{margin:.5rem 0 0;border-left:3px solid var(--accent);padding-left:.7rem}
.thread>summary{font-size:.9em;font-weight:600;padding:.2rem 0;list-style-position:inside}
.step>.thread{margin-top:.3rem}
footer{margin-top:2rem;color:var(--muted);font-size:.82em;border-top:1px solid var(--line);padding-top:.6rem}
@media (max-width:600px){body{font-size:14.5px}main{padding:.8rem .6rem 2rem}.facts{grid-template-columns:1fr}.facts dt{margin-top:.3rem}.when{margin-left:0}}
@media print{details>*{display:block}pre.out,.diff pre{max-height:none}}
`.trim();

/** The CSP source for the page's one style block. */
export const EXPORT_STYLE_HASH = `'sha256-${
  createHash("sha256").update(EXPORT_CSS).digest("base64")
}'`;

/** The policy of an export page: nothing but its own style block. */
export const EXPORT_CSP = [
  "default-src 'none'",
  `style-src ${EXPORT_STYLE_HASH}`,
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

export interface HtmlOptions {
  /** A line shown above the title (a share page says when it expires). */
  banner?: string;
}

function textPre(b: TextBlock, cls: string): string {
  if (!b.omitted) return `<pre class="out ${cls}">${esc(b.head)}</pre>`;
  return `<pre class="out ${cls}">${esc(b.head)}<span class="cut">… ${
    count(b.omitted)
  } characters left out …</span>${esc(b.tail ?? "")}</pre>`;
}

function diffHtml(d: DiffBlock): string {
  const rows = d.lines.map((l) => {
    const sign = l.type === "add" ? "+" : l.type === "del" ? "-" : l.type === "ctx" ? " " : "";
    return `<span class="dl-${l.type}">${esc(sign + l.text)}</span>`;
  }).join("");
  const more = d.omitted
    ? `<span class="dl-meta">… ${count(d.omitted)} more diff lines left out …</span>`
    : "";
  return `<details class="diff" open><summary><code>${
    esc(d.path || "(file)")
  }</code> <span class="add-n">+${d.adds}</span> <span class="del-n">−${d.dels}</span>${
    d.kind === "write" ? " · new content" : ""
  }</summary><pre>${rows}${more}</pre></details>`;
}

function metaHtml(step: DocStep, who: string): string {
  const time = stepTime(step);
  return `<div class="meta"><span class="who">${
    esc(who)
  }</span><a href="#s${step.n}">step ${step.n}</a>${time ? `<span>${esc(time)}</span>` : ""}</div>`;
}

function threadHtml(t: DocThread): string {
  const head = [`Sub-agent${t.agent_type ? " " + t.agent_type : ""}`];
  if (t.model) head.push(t.model);
  head.push(`${count(t.step_count)} step${t.step_count === 1 ? "" : "s"}`);
  if (t.guessed) head.push("spawning call matched by time");
  return `<details class="thread"><summary>${esc(head.join(" · "))}</summary><ol class="steps">${
    t.steps.map(stepHtml).join("")
  }</ol></details>`;
}

function stepHtml(step: DocStep): string {
  const id = `s${step.n}`;
  if (step.type === "thread") {
    return `<li class="step" id="${id}">${(step.threads ?? []).map(threadHtml).join("")}</li>`;
  }
  const who = whoOf(step);
  if (step.type !== "tool") {
    const text = step.text ?? { head: "", omitted: 0 };
    if (step.type === "event") {
      return `<li class="step event" id="${id}">${metaHtml(step, who)}${textPre(text, "")}</li>`;
    }
    if (step.injected || step.type === "thinking") {
      const cls = step.injected ? "context" : "thinking";
      const size = text.head.length + (text.tail?.length ?? 0) + text.omitted;
      const body = step.injected
        ? textPre(text, "")
        : `<div class="md">${markdownHtml(proseOf(text))}</div>`;
      return `<li class="step ${cls}" id="${id}">${metaHtml(step, who)}<details><summary>${
        step.injected ? "Injected context" : "Thinking"
      } (${count(size)} characters)</summary>${body}</details></li>`;
    }
    return `<li class="step ${step.type}" id="${id}">${metaHtml(step, who)}<div class="text md">${
      markdownHtml(proseOf(text))
    }</div></li>`;
  }
  const label = KIND_LABEL[step.kind ?? ""] ?? "Tool";
  const badges = [
    step.error ? `<span class="badge bad">error</span>` : "",
    step.completeness ? `<span class="badge warn">${esc(step.completeness)}</span>` : "",
  ].join("");
  const time = stepTime(step);
  const summary = `<summary><span class="badge">${esc(label)}</span>${
    step.tool ? `<span class="tname">${esc(step.tool)}</span>` : ""
  }${
    step.summary ? `<code class="sum">${esc(step.summary)}</code>` : ""
  }${badges}<span class="when"><a href="#${id}">step ${step.n}</a>${
    time ? " · " + esc(time) : ""
  }</span></summary>`;
  const parts: string[] = [];
  if (step.input) {
    parts.push(`<div class="label">Input</div>${textPre(step.input, "in")}`);
  }
  if (step.result) {
    parts.push(
      `<div class="label">${step.error ? "Result (error)" : "Result"}</div>${
        textPre(step.result, "res")
      }`,
    );
  }
  const diffs = (step.diffs ?? []).map(diffHtml).join("");
  const body = parts.length ? `<div class="body">${parts.join("")}</div>` : "";
  const details = `<details${step.error ? " open" : ""}>${summary}${body}</details>`;
  return `<li class="step tool-step" id="${id}"><div class="tool${
    step.error ? " error" : ""
  }">${details}${diffs ? `<div class="body">${diffs}</div>` : ""}</div>${
    (step.threads ?? []).map(threadHtml).join("")
  }</li>`;
}

function proseOf(b: TextBlock): string {
  return b.omitted
    ? `${b.head}\n\n*… ${count(b.omitted)} characters left out …*\n\n${b.tail ?? ""}`
    : b.head;
}

/** The document as one self-contained HTML page. */
export function renderHtml(doc: SteppedDocument, options: HtmlOptions = {}): string {
  return [...htmlChunks(doc, options)].join("");
}

/**
 * {@link renderHtml}'s page in pieces: up to the steps, each step, then the end (a download
 * streamed as it is rendered, never held whole).
 */
export function* htmlChunks(doc: SteppedDocument, options: HtmlOptions = {}): Generator<string> {
  const h = doc.session;
  const facts: [string, string][] = [
    ["Agent", `${esc(h.agent)}${h.agent_version ? " " + esc(h.agent_version) : ""}`],
  ];
  if (h.models.length) facts.push(["Model", esc(h.models.join(", "))]);
  if (h.project) {
    facts.push([
      "Project",
      `<code>${esc(h.project)}</code>${h.branch ? ` · branch <code>${esc(h.branch)}</code>` : ""}`,
    ]);
  }
  if (h.started_at) facts.push(["Started", esc(utc(h.started_at))]);
  if (h.ended_at) {
    facts.push([
      "Ended",
      `${esc(utc(h.ended_at))}${
        h.duration_ms !== undefined ? ` (${esc(duration(h.duration_ms))})` : ""
      }`,
    ]);
  }
  if (h.tokens.length) facts.push(["Tokens", esc(tokenTotals(h))]);
  facts.push([
    "Steps",
    esc(stepCounts(h) + (h.thinking === "left out" ? " (thinking left out)" : "")),
  ]);
  facts.push(["Session", `<code>${esc(h.id)}</code>`]);
  const r = doc.redaction;
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(EXPORT_CSP)}">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="Chronicle">
<title>${esc(h.title)} · Chronicle</title>
<style>${EXPORT_CSS}</style>
</head>
<body>
<main>
<header>
${options.banner ? `<div class="banner">${esc(options.banner)}</div>` : ""}
<h1>${esc(h.title)}</h1>
<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>
<p class="redaction${r.enabled ? "" : " off"}">${esc(redactionLine(r))}</p>
</header>
<ol class="steps">
`;
  let first = true;
  for (const step of doc.steps) {
    yield (first ? "" : "\n") + stepHtml(step);
    first = false;
  }
  yield `
</ol>
<footer>Exported ${
    esc(utc(doc.generated_at))
  } by Chronicle. This page runs no script and loads nothing from the network.</footer>
</main>
</body>
</html>
`;
}
