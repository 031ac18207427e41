/**
 * Syntax highlighting stays text: highlight.js's HTML is read back into spans and strings by a
 * strict grammar, so hostile code (markup, script, entities) can only come out as text.
 */
import type { ComponentChildren, VNode } from "preact";
import {
  highlightDiff,
  highlightLines,
  languageOfFence,
  languageOfPath,
  toLines,
} from "../../../ui/src/highlight.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";

/** The text a node tree shows, and every element type in it. */
function walk(nodes: ComponentChildren, types: Set<unknown>): string {
  if (nodes === null || nodes === undefined || typeof nodes === "boolean") return "";
  if (typeof nodes === "string" || typeof nodes === "number") return String(nodes);
  if (Array.isArray(nodes)) return nodes.map((n) => walk(n, types)).join("");
  const v = nodes as VNode<{ children?: ComponentChildren; class?: string }>;
  types.add(v.type);
  for (const k of Object.keys(v.props)) assert(k === "children" || k === "class", `prop ${k}`);
  return walk(v.props.children, types);
}

const HOSTILE = [
  `<script>window.__pwned=1</script>`,
  `<img src=x onerror="window.__pwned=2">`,
  `const s = "</span><script>alert(1)</script>"; // &lt;b&gt; &amp;`,
  "`${'<iframe srcdoc=\"<script>parent.__pwned=3</script>\">'}`",
].join("\n");

Deno.test("highlightLines() turns hostile code into spans and its own text, line for line", async (t) => {
  for (const lang of ["xml", "typescript", "javascript", "markdown", "bash", "python", "json"]) {
    await t.step(lang, () => {
      const lines = highlightLines(HOSTILE, lang);
      assert(lines, `${lang} highlights`);
      const types = new Set<unknown>();
      assertEquals(lines.map((l) => walk(l, types)), HOSTILE.split("\n"));
      assert([...types].every((x) => x === "span"), `only spans in ${lang}`);
    });
  }
});

Deno.test("toLines() refuses anything but spans, text and highlight.js's entities", async (t) => {
  const cases = [
    { name: "an element", input: `<img src=x onerror=alert(1)>`, ok: false },
    {
      name: "an attribute besides class",
      input: `<span class="a" onclick="x">y</span>`,
      ok: false,
    },
    { name: "a quote in the class", input: `<span class="a&quot;">y</span>`, ok: false },
    { name: "an unknown entity", input: `&nbsp;`, ok: false },
    { name: "an unclosed span", input: `<span class="hljs-string">"x"`, ok: false },
    { name: "a stray close", input: `x</span>`, ok: false },
    {
      name: "spans across lines",
      input: `<span class="hljs-comment">/* a\nb */</span>&lt;`,
      ok: true,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(toLines(c.input) !== null, c.ok));
  }
  const lines = toLines(`<span class="hljs-comment">/* a\nb */</span>&lt;`)!;
  const types = new Set<unknown>();
  assertEquals(lines.map((l) => walk(l, types)), ["/* a", "b */<"]);
});

Deno.test("languages are chosen by file name and by a code block's info string", async (t) => {
  const cases: { name: string; input: string; expected: string | undefined }[] = [
    { name: "TypeScript", input: "/repo/src/app.tsx", expected: "typescript" },
    { name: "Python", input: "tools/run.py", expected: "python" },
    { name: "a Dockerfile", input: "/x/Dockerfile", expected: "dockerfile" },
    { name: "a Makefile", input: "Makefile", expected: "makefile" },
    { name: "TOML as INI", input: "Cargo.toml", expected: "ini" },
    { name: "an unknown extension", input: "notes.xyz", expected: undefined },
    { name: "no extension", input: "/usr/bin/tool", expected: undefined },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(languageOfPath(c.input), c.expected));
  }
  assertEquals(languageOfFence("ts"), "typescript");
  assertEquals(languageOfFence("sh title=x"), "bash");
  assertEquals(languageOfFence("html"), "xml");
  assertEquals(languageOfFence("klingon"), undefined);
});

Deno.test("highlightDiff() colours each side in context and keeps every line's text", () => {
  const lines = [
    { type: "hunk", text: "@@ -1,2 +1,2 @@" },
    { type: "ctx", text: "/* start" },
    { type: "del", text: "old */ let a = 1;" },
    { type: "add", text: "new */ let a = 2;" },
  ];
  const lit = highlightDiff(lines, "javascript")!;
  assertEquals(lit[0], null);
  const types = new Set<unknown>();
  assertEquals(lit.slice(1).map((l) => walk(l, types)), lines.slice(1).map((l) => l.text));
  // The added line continues the comment the context line opened.
  const added = lit[3]![0] as VNode<{ class: string }>;
  assertEquals(added.props.class, "hljs-comment");
});
