/**
 * Syntax highlighting for code in diffs, file reads and Markdown code blocks: highlight.js's
 * core with a chosen set of languages registered one by one (the whole library is ~10× the
 * size), the language picked by file name or a code block's info string. Bundled; no network.
 *
 * highlight.js returns HTML. It is never given to the browser as HTML: `toLines` reads it with
 * a strict grammar (only `<span class="...">`, `</span>`, text and the five entities
 * highlight.js writes) into Preact nodes, one array per line, and anything else makes the
 * caller fall back to plain text. So a transcript's code can only ever become text.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { type ComponentChildren, h } from "preact";

const LANGUAGES = {
  bash,
  c,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  makefile,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

/** File extensions (lower-cased, without the dot) and the language each is highlighted as. */
const BY_EXTENSION: Record<string, keyof typeof LANGUAGES> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  json: "json",
  jsonc: "json",
  jsonl: "json",
  py: "python",
  pyi: "python",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  go: "go",
  rs: "rust",
  java: "java",
  c: "c",
  h: "c",
  // C++ is read with the C grammar (cpp's own is 14 KB more for finer keywords).
  cc: "c",
  cpp: "c",
  cxx: "c",
  hpp: "c",
  hh: "c",
  css: "css",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  vue: "xml",
  md: "markdown",
  markdown: "markdown",
  yml: "yaml",
  yaml: "yaml",
  sql: "sql",
  diff: "diff",
  patch: "diff",
  toml: "ini",
  ini: "ini",
  cfg: "ini",
  env: "ini",
  mk: "makefile",
};

/** Whole file names that say their language without an extension. */
const BY_NAME: Record<string, keyof typeof LANGUAGES> = {
  dockerfile: "dockerfile",
  makefile: "makefile",
  gnumakefile: "makefile",
  ".bashrc": "bash",
  ".zshrc": "bash",
  ".env": "ini",
};

/** The language a file is highlighted as, from its name; undefined when none fits. */
export function languageOfPath(path: string | null | undefined): string | undefined {
  if (!path) return undefined;
  const name = path.replace(/[\\/]+$/, "").split(/[\\/]/).pop()!.toLowerCase();
  if (BY_NAME[name]) return BY_NAME[name];
  if (name.startsWith("dockerfile")) return "dockerfile";
  const dot = name.lastIndexOf(".");
  return dot > 0 || (dot === 0 && name.length > 1) ? BY_EXTENSION[name.slice(dot + 1)] : undefined;
}

/** The language a Markdown code block's info string names (`ts`, `python`, ...), if known. */
export function languageOfFence(info: string | undefined): string | undefined {
  const word = (info ?? "").trim().split(/\s/)[0].toLowerCase();
  if (!word) return undefined;
  const lang = hljs.getLanguage(word);
  if (!lang) return BY_EXTENSION[word];
  return Object.keys(LANGUAGES).find((n) => hljs.getLanguage(n) === lang);
}

/** Code longer than this is shown plain: highlighting it would hold up the page. */
export const HIGHLIGHT_MAX_CHARS = 100_000;

const TOKEN = /<span class="([\w -]+)">|<\/span>|&(amp|lt|gt|quot|#x27);|([^<&]+)/y;
const ENTITY: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'" };

interface Open {
  cls: string;
  children: ComponentChildren[];
}

/**
 * highlight.js's HTML as Preact nodes, one array per line (spans that cross a line end are
 * closed and opened again), or null when the HTML holds anything outside the grammar.
 */
export function toLines(html: string): ComponentChildren[][] | null {
  const lines: ComponentChildren[][] = [];
  let line: ComponentChildren[] = [];
  const stack: Open[] = [];
  const top = () => (stack.length ? stack[stack.length - 1].children : line);
  const closeAll = () => {
    // Closes every open span into the line, innermost first.
    for (let i = stack.length - 1; i >= 0; i--) {
      const node = h("span", { class: stack[i].cls }, ...stack[i].children);
      (i ? stack[i - 1].children : line).push(node);
    }
  };
  const text = (t: string) => {
    const parts = t.split("\n");
    parts.forEach((p, i) => {
      if (i > 0) {
        closeAll();
        lines.push(line);
        line = [];
        for (const o of stack) o.children = [];
      }
      if (p) top().push(p);
    });
  };
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < html.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(html);
    if (!m || m.index !== at) return null;
    if (m[1] !== undefined) stack.push({ cls: m[1], children: [] });
    else if (m[0] === "</span>") {
      const done = stack.pop();
      if (!done) return null;
      top().push(h("span", { class: done.cls }, ...done.children));
    } else if (m[2] !== undefined) text(ENTITY[m[2]]);
    else text(m[3]);
  }
  if (stack.length) return null;
  lines.push(line);
  return lines;
}

/**
 * `code` highlighted as `language`, one node array per line; null when the language is unknown,
 * the code too long, or highlight.js's output not what the grammar allows (show it plain).
 */
export function highlightLines(
  code: string,
  language: string | undefined,
): ComponentChildren[][] | null {
  if (!language || code.length > HIGHLIGHT_MAX_CHARS || !hljs.getLanguage(language)) return null;
  try {
    return toLines(hljs.highlight(code, { language, ignoreIllegals: true }).value);
  } catch {
    return null;
  }
}

/**
 * The lines of a diff highlighted in context: the new side (context and added lines) and the
 * old side (removed lines) are each highlighted as one text, so a string or comment that spans
 * lines colours right. Returns one node array per diff line (hunk and meta lines stay plain),
 * or null when `language` gives nothing.
 */
export function highlightDiff(
  lines: readonly { type: string; text: string }[],
  language: string | undefined,
): (ComponentChildren[] | null)[] | null {
  if (!language) return null;
  const side = (types: string[]) => {
    const at = lines.flatMap((l, i) => (types.includes(l.type) ? [i] : []));
    const lit = highlightLines(at.map((i) => lines[i].text).join("\n"), language);
    return lit && lit.length === at.length ? { at, lit } : null;
  };
  const added = side(["ctx", "add"]);
  const removed = side(["del"]);
  if (!added && !removed) return null;
  const out: (ComponentChildren[] | null)[] = lines.map(() => null);
  for (const s of [added, removed]) s?.at.forEach((i, k) => (out[i] = s.lit[k]));
  return out;
}
