/**
 * Markdown rendered safely: markdown-it parses (HTML disabled) and its tokens become Preact
 * nodes here, so no transcript text is ever parsed as HTML by the browser. Tags come from a
 * fixed list; links keep only http(s) and mailto targets; images are shown as text.
 */
import MarkdownIt from "markdown-it";
import type { ComponentChildren, VNode } from "preact";
import { h } from "preact";
import { memo } from "preact/compat";
import { highlightLines, languageOfFence } from "../highlight.ts";

// Types come from the package's own token shape; only the fields used here are named.
interface Token {
  type: string;
  tag: string;
  nesting: number;
  content: string;
  attrs: [string, string][] | null;
  children: Token[] | null;
  info: string;
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

const TAGS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "strong",
  "em",
  "s",
  "a",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "pre",
  "code",
  "hr",
  "br",
]);

function attr(t: Token, name: string): string | undefined {
  return t.attrs?.find(([k]) => k === name)?.[1];
}

function props(t: Token): Record<string, string> {
  const p: Record<string, string> = {};
  if (t.tag === "a") {
    const href = attr(t, "href") ?? "";
    if (/^(https?:|mailto:)/i.test(href)) {
      p.href = href;
      p.target = "_blank";
      p.rel = "noopener noreferrer nofollow";
    }
  }
  if (t.tag === "ol") {
    const start = attr(t, "start");
    if (start && /^\d+$/.test(start)) p.start = start;
  }
  return p;
}

interface Frame {
  tag: string;
  props: Record<string, string>;
  children: ComponentChildren[];
}

function leaf(t: Token): ComponentChildren {
  switch (t.type) {
    case "text":
      return t.content;
    case "code_inline":
      return h("code", null, t.content);
    case "softbreak":
      return "\n";
    case "hardbreak":
      return h("br", null);
    case "fence":
    case "code_block":
      return codeBlock(t);
    case "hr":
      return h("hr", null);
    case "image":
      return `[image: ${t.content || attr(t, "alt") || ""}]`;
    case "inline":
      return build(t.children ?? []);
    default:
      return t.content;
  }
}

/** A code block, highlighted when its info string names a known language. */
function codeBlock(t: Token): ComponentChildren {
  const lang = languageOfFence(t.info);
  const code = t.content.replace(/\n$/, "");
  const lines = highlightLines(code, lang);
  const body = lines ? lines.flatMap((l, i) => (i ? ["\n", ...l] : l)) : [code];
  return h(
    "pre",
    { class: `code hl`, "data-lang": t.info.trim().split(/\s/)[0] || undefined },
    h("code", null, ...body),
  );
}

function build(tokens: Token[]): ComponentChildren[] {
  const root: Frame = { tag: "", props: {}, children: [] };
  const stack: Frame[] = [root];
  for (const t of tokens) {
    const top = stack[stack.length - 1];
    if (t.nesting === 1) {
      stack.push({ tag: TAGS.has(t.tag) ? t.tag : "span", props: props(t), children: [] });
    } else if (t.nesting === -1) {
      if (stack.length === 1) continue;
      const done = stack.pop()!;
      stack[stack.length - 1].children.push(h(done.tag, done.props, ...done.children));
    } else {
      top.children.push(leaf(t));
    }
  }
  while (stack.length > 1) {
    const done = stack.pop()!;
    stack[stack.length - 1].children.push(h(done.tag, done.props, ...done.children));
  }
  return root.children;
}

/** Markdown text as Preact nodes (never innerHTML). */
export function markdownNodes(text: string): ComponentChildren[] {
  return build(md.parse(text, {}) as unknown as Token[]);
}

export const Markdown = memo(function Markdown({ text }: { text: string }): VNode {
  return <div class="md">{markdownNodes(text)}</div>;
});
