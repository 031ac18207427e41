/**
 * The Markdown export lets no raw HTML through, whatever the transcript holds: each hostile
 * piece is rendered by markdown-it with HTML enabled (the most permissive reading) and no
 * `html_block` / `html_inline` token may come out, and no tag or script URL in the HTML.
 */
import MarkdownIt from "markdown-it";
import {
  code,
  fence,
  hasRawHtml,
  plain,
  prose,
  renderMarkdown,
  sessionDocument,
} from "../../../core/export/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";

const md = new MarkdownIt({ html: true, linkify: true });

const HOSTILE = [
  "<script>alert(1)</script>",
  "Look: <img src=x onerror=alert(1)> here",
  '<a href="javascript:alert(1)">x</a>',
  "<details open><summary>s</summary>hidden</details>",
  "<!-- a comment -->",
  "<?php echo 1; ?>",
  "<![CDATA[ x ]]>",
  "<!DOCTYPE html>",
  "<div>\nblock\n</div>",
  "    <div>indented</div>",
  "`code` then <b>bold</b> then `more`",
  "`` ` `` <i>after double ticks</i>",
  "\\`<b>escaped ticks</b>\\`",
  "unclosed `span <u>x</u>",
  "```\nunclosed fence <script>x</script>",
  "~~~\n<div>in fence</div>\n~~~\n<div>after fence</div>",
  "````\n```\n<b>inner</b>\n````\n<b>out</b>",
  "[click](javascript:alert(1)) and <javascript:alert(1)>",
  "<http://example.com/x> autolink",
  "> quote <span>x</span>",
  "* item <em>x</em>\n* item",
  "| a | b |\n|---|---|\n| <i>c</i> | d |",
  "&lt;script&gt; entity text",
  "x <style>body{}</style>",
  "<svg><script>alert(1)</script></svg>",
  "a\n\n<table><tr><td>x</td></tr></table>",
];

/** Tags markdown-it never writes itself: any of them in its output came from the transcript. */
const FOREIGN_TAG =
  /<(?:(?:script|img|iframe|svg|style|details|summary|div|span|b|i|u)(?=[\s/>])|!--|\?|!doctype|!\[cdata)/i;

function assertNoHtml(src: string, label: string): void {
  assert(!hasRawHtml(src), `${label}: raw HTML token in ${JSON.stringify(src.slice(0, 200))}`);
  const html = md.render(src);
  const m = FOREIGN_TAG.exec(html);
  assert(!m, `${label}: ${m && html.slice(Math.max(0, m.index - 80), m.index + 80)}`);
  assert(!/href="javascript:/i.test(html), `${label}: script link`);
}

Deno.test("prose() lets no raw HTML through markdown-it", async (t) => {
  for (const [i, text] of HOSTILE.entries()) {
    await t.step(
      `#${i} ${JSON.stringify(text.slice(0, 40))}`,
      () => assertNoHtml(prose(text), `#${i}`),
    );
  }
});

Deno.test("the raw-HTML check sees HTML that prose() did not handle", () => {
  for (const raw of ["<script>x</script>", "a <img src=x>", "<!-- c -->", "<div>\nb\n</div>"]) {
    assert(hasRawHtml(raw), raw);
  }
  assert(!hasRawHtml("a `<b>` code span"));
});

Deno.test("prose() keeps Markdown and code as written", async (t) => {
  const cases = [
    {
      name: "emphasis and lists survive",
      input: "**bold** and\n\n- a\n- b",
      expected: "**bold** and\n\n- a\n- b",
    },
    {
      name: "a tag in a code span stays raw",
      input: "use `<div>` here",
      expected: "use `<div>` here",
    },
    {
      name: "a tag in a fence stays raw",
      input: "```html\n<p>x</p>\n```",
      expected: "```html\n<p>x</p>\n```",
    },
    { name: "a tag in prose is escaped", input: "a <b>c</b>", expected: "a &lt;b>c&lt;/b>" },
    { name: "an unclosed fence is closed", input: "```\ncode", expected: "```\ncode\n```" },
  ];
  for (const c of cases) await t.step(c.name, () => assertEquals(prose(c.input), c.expected));
});

Deno.test("fence() and code() cannot be closed from inside", async (t) => {
  for (const text of ["```\n<b>x</b>", "a ```` b\n<i>y</i>\n`````", "`x`"]) {
    await t.step(JSON.stringify(text), () => {
      const f = fence(text, "text");
      const tokens = md.parse(f, {});
      assertEquals(tokens.length, 1);
      assertEquals(tokens[0].type, "fence");
      assertEquals(tokens[0].content, text + "\n");
      const c = code(text);
      const inline = md.parseInline(c, {})[0].children!;
      assertEquals(inline.map((k) => k.type), ["code_inline"]);
    });
  }
});

Deno.test("plain() shows markup characters as text", () => {
  const html = md.renderInline(plain("<b>[x](y)</b> *z* | #"));
  assertEquals(html, "&lt;b&gt;[x](y)&lt;/b&gt; *z* | #");
});

Deno.test("a whole Markdown export of hostile and real sessions has no raw HTML token", async () => {
  const store = await fixtureStore(["claude/s6-subagent", "claude/s2-errors", "codex/s2-errors"]);
  try {
    for (const s of store.listSessions().items) {
      const session = store.loadSession(s.id)!;
      // Hostile text in every field a reader sees.
      const ops = Object.values(session.operations);
      ops.forEach((op, i) => {
        const evil = HOSTILE[i % HOSTILE.length];
        if (op.text !== undefined) op.text = `${op.text}\n\n${evil}`;
        if (op.summary !== undefined) op.summary = `${op.summary} ${evil}`;
        if (op.tool) op.tool = `${op.tool}<b>`;
      });
      session.session.title = HOSTILE[0];
      session.session.project.path = "/work/<img src=x onerror=alert(1)>";
      const text = (sha: string) => {
        const b = store.payload(sha);
        return b ? new TextDecoder().decode(b) + "\n" + HOSTILE.join("\n") : null;
      };
      const doc = sessionDocument(session, text, { thinking: true });
      const out = renderMarkdown(doc);
      assertNoHtml(out, s.id);
      assert(
        out.includes("# &lt;script&gt;alert(1)&lt;/script&gt;\n"),
        "the title is shown as text",
      );
    }
  } finally {
    store.close();
  }
});
