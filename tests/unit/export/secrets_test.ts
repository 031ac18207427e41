/**
 * No secret of the labelled cases survives a share page, an HTML export or a Markdown export:
 * checked by the substrings themselves (raw, JSON-escaped and after HTML decoding), by
 * `chronicle scan` run on the written files, and by secretlint as a second scanner.
 */
import { lintSource, secretlintRecommended as recommended } from "../../_helpers/test_deps.ts";
import { documentOf, renderHtml, renderMarkdown } from "../../../core/export/mod.ts";
import { runCli } from "../../../cli/main.ts";
import type { CliIo } from "../../../cli/io.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { call, testApp } from "../server/_helpers.ts";
import { type SecretCase, secretStore } from "./_secret_session.ts";

const { store, id, cases } = await secretStore();

function decodeHtml(html: string): string {
  return html.replace(/<[^>]*>/g, "").replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === "#") {
      return String.fromCodePoint(Number(e[1] === "x" ? "0" + e.slice(1) : e.slice(1)));
    }
    return ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" } as Record<string, string>)[e] ?? m;
  });
}

function survivors(output: string, all: SecretCase[]): string[] {
  const forms = [output, decodeHtml(output)];
  const out: string[] = [];
  for (const c of all) {
    for (const secret of c.secrets) {
      const variants = [secret, JSON.stringify(secret).slice(1, -1)];
      if (forms.some((f) => variants.some((v) => f.includes(v)))) {
        out.push(`#${c.index}: ${secret}`);
      }
    }
  }
  return out;
}

async function secretlint(text: string, name: string): Promise<string[]> {
  const result = await lintSource({
    source: {
      content: text,
      filePath: `/out/${name}`,
      ext: name.slice(name.lastIndexOf(".")),
      contentType: "text",
    },
    options: {
      config: {
        rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }],
      },
      noPhysicFilePath: true,
    },
  });
  return result.messages.map((m) =>
    `${m.ruleId}: ${text.slice(m.range[0], m.range[1]).slice(0, 40)}`
  );
}

/** `chronicle scan FILE` in process: its exit code and what it printed. */
async function chronicleScan(path: string): Promise<{ code: number; out: string }> {
  let out = "";
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (out += t),
    stdin: () => Promise.resolve(new Uint8Array()),
    env: { HOME: "/nonexistent", CHRONICLE_HOME: "/nonexistent/chronicle" },
    cwd: "/",
    isTerminal: false,
  };
  const code = await runCli(["scan", path], io);
  return { code, out };
}

async function outputs(): Promise<Record<string, string>> {
  const doc = documentOf(store, id, { thinking: true })!;
  const app = testApp(store);
  const made = await call(app, "POST", `/api/sessions/${encodeURIComponent(id)}/shares`, {
    body: { days: 1, thinking: true },
  });
  assertEquals(made.status, 201);
  const { path } = await made.json();
  const page = await call(app, "GET", path, { token: null });
  assertEquals(page.status, 200);
  return {
    "export.md": renderMarkdown(doc),
    "export.html": renderHtml(doc),
    "share.html": await page.text(),
  };
}

const produced = await outputs();

Deno.test("the secret session puts every redact case in prompts, replies, thinking, tools, diffs and a sub-agent", () => {
  const doc = documentOf(store, id, { thinking: true })!;
  // Every redact case of the file is in (each has a secret the engine recognises).
  const file = Deno.readTextFileSync(`${FIXTURES}/secrets/cases.jsonl`);
  assertEquals(
    cases.length,
    file.split("\n").filter((l) => l.includes('"expect": "redact"')).length,
  );
  const types = new Set<string>();
  const visit = (steps: typeof doc.steps) => {
    for (const s of steps) {
      types.add(s.type === "tool" ? `tool:${s.kind}` : s.type);
      if (s.diffs?.length) types.add("diff");
      if (s.result?.omitted) types.add("cut result");
      for (const t of s.threads ?? []) {
        types.add("thread");
        visit(t.steps);
      }
    }
  };
  visit(doc.steps);
  for (
    const t of [
      "prompt",
      "reply",
      "thinking",
      "tool:exec",
      "tool:edit",
      "tool:write",
      "diff",
      "cut result",
      "thread",
    ]
  ) {
    assert(types.has(t), `no ${t} step`);
  }
  // Redaction found at least one finding per secret, in every output.
  assert(doc.redaction.total >= cases.reduce((n, c) => n + c.secrets.length, 0) * 4);
});

for (const [name, text] of Object.entries(produced)) {
  Deno.test(`no secret of the cases survives in the ${name}`, () => {
    assertEquals(survivors(text, cases), []);
  });

  Deno.test(`chronicle scan finds nothing in the ${name}`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "chronicle-secrets-out-" });
    try {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      const r = await chronicleScan(`${dir}/${name}`);
      assertEquals(r.code, 0, r.out);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`secretlint finds nothing in the ${name}`, async () => {
    assertEquals(await secretlint(text, name), []);
  });
}

Deno.test("the same session exported with --no-redact fails all three checks", async () => {
  const raw = renderMarkdown(documentOf(store, id, { redact: false, thinking: true })!);
  const left = survivors(raw, cases);
  assertEquals(left.length, cases.reduce((n, c) => n + c.secrets.length, 0));
  assert((await secretlint(raw, "raw.md")).length > 0, "secretlint sees the raw secrets");
  const dir = await Deno.makeTempDir({ prefix: "chronicle-secrets-out-" });
  try {
    await Deno.writeTextFile(`${dir}/raw.md`, raw);
    assertEquals((await chronicleScan(`${dir}/raw.md`)).code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("secret session teardown", () => store.close());
