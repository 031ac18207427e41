/**
 * The export document of real fixture sessions: header facts, sub-agents nested under their
 * call, diffs, errors marked with the one error heuristic, thinking only when asked, long
 * texts cut to a head and a tail; and the redactor, which scans past the cut so a secret that
 * crosses it is still replaced whole.
 */
import {
  buildDocument,
  buildDocumentInTurns,
  contentText,
  createRedactor,
  type DocStep,
  documentOf,
  renderHtml,
  renderMarkdown,
  SCAN_MARGIN,
  sessionDocument,
} from "../../../core/export/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { FakeSecrets } from "../security/_fake_secrets.ts";
import { fixtureStore } from "../server/_helpers.ts";

const store = await fixtureStore([
  "claude/s6-subagent",
  "claude/s2-errors",
  "codex/s2-errors",
  "opencode/s4-long",
  "gemini/s1-basic",
]);
const byAgent = (source: string, title?: RegExp) =>
  store.listSessions({ source, limit: 100 }).items.find((s) =>
    !title || title.test(s.title ?? s.first_prompt ?? "")
  )!;

function flatten(steps: DocStep[]): DocStep[] {
  return steps.flatMap((s) => [s, ...(s.threads ?? []).flatMap((t) => flatten(t.steps))]);
}

Deno.test("the header carries agent, version, model, project, times, tokens and counts", () => {
  const s = byAgent("claude-code", /sub-agent/);
  const session = store.loadSession(s.id)!;
  const doc = documentOf(store, s.id)!;
  const h = doc.session;
  assertEquals(h.agent, "Claude Code");
  assertEquals(h.agent_version, session.connections[0].client.version);
  assertEquals(h.models, ["claude-opus-4-8"]);
  assertEquals(h.project, session.session.project.path);
  assertEquals(h.branch, "main");
  assertEquals(h.started_at, s.started_at);
  assertEquals(h.steps, session.timeline.length);
  assertEquals(h.subagents, 1);
  assertEquals(
    h.tokens.map((t) => t.input + t.output),
    Object.values(session.usage.by_model).map((u) => u.input + u.output),
  );
  const md = renderMarkdown(doc);
  for (const part of ["**Agent:** Claude Code", "**Model:** claude-opus-4-8", "**Tokens:**"]) {
    assertStringIncludes(md, part);
  }
});

Deno.test("a sub-agent thread is nested under the call that spawned it", () => {
  const s = byAgent("claude-code", /sub-agent/);
  const doc = documentOf(store, s.id)!;
  const task = doc.steps.find((st) => st.kind === "task")!;
  assertEquals(task.threads?.length, 1);
  const thread = task.threads![0];
  assertEquals(thread.agent_type, "general-purpose");
  assert(thread.steps.length >= 3);
  assert(thread.steps.every((st) => st.n > task.n), "thread steps come after the call");
  // Nothing of the thread is also at the top level.
  const top = new Set(doc.steps.map((st) => st.n));
  assert(thread.steps.every((st) => !top.has(st.n)));
  assertStringIncludes(renderMarkdown(doc), "> **Sub-agent** `general-purpose`");
  assertStringIncludes(
    renderHtml(doc),
    '<details class="thread"><summary>Sub-agent general-purpose',
  );
});

Deno.test("a sub-agent thread whose call is unknown stands alone where it began, whole or packed", async () => {
  const s = byAgent("claude-code", /sub-agent/);
  const session = store.loadSession(s.id)!;
  // no call names the thread, and none could be guessed
  for (const c of session.connections) delete c.parent_op;
  for (const op of Object.values(session.operations)) {
    delete op.spawns;
    if (op.kind === "task") op.kind = "exec";
  }
  const read = (sha: string) => store.payloadText({ sha256: sha, size: 0 });
  const options = { redactor: createRedactor(), now: () => new Date(0) };
  const whole = buildDocument(session, read, options);
  const packed = await buildDocumentInTurns(session, read, {
    ...options,
    turn: () => Promise.resolve(),
  });
  assertEquals([...packed.steps], whole.steps);
  const at = whole.steps.findIndex((st) => st.type === "thread");
  const alone = whole.steps[at];
  const sub = session.connections.find((c) => c.kind === "subagent")!;
  const first = session.timeline.find((t) => t.connection === sub.id)!;
  assertEquals(alone.n, first.seq + 1);
  assert(at > 0 && at < whole.steps.length - 1, "between the steps before and after it");
  assert(whole.steps[at - 1].n < alone.n && whole.steps[at + 1].n > alone.n);
});

Deno.test("errors are marked by the one error heuristic, as the store counts them", () => {
  for (const source of ["claude-code", "codex"]) {
    const s = store.listSessions({ source, limit: 100 }).items.find((x) => x.error_count > 0)!;
    const doc = documentOf(store, s.id)!;
    const marked = flatten(doc.steps).filter((st) => st.error).length;
    assertEquals(marked, s.error_count, source);
    assertEquals(doc.session.errors, s.error_count);
    assertStringIncludes(renderMarkdown(doc), "**✗ error**");
  }
});

Deno.test("edits and writes become diffs, with their counts", () => {
  const s = byAgent("opencode");
  const doc = documentOf(store, s.id)!;
  const diffs = flatten(doc.steps).flatMap((st) => st.diffs ?? []);
  assert(diffs.length > 0);
  for (const d of diffs) {
    assertEquals(d.adds, d.lines.filter((l) => l.type === "add").length + 0 * d.omitted);
    assert(d.path.length > 0);
  }
  assert(renderMarkdown(doc).includes("```diff\n"));
});

Deno.test("thinking is left out unless asked for, and the header says so", () => {
  const s = byAgent("claude-code", /sub-agent/);
  const session = store.loadSession(s.id)!;
  const reply = Object.values(session.operations).find((o) => o.kind === "reply")!;
  reply.kind = "thinking";
  reply.text = "Let me think about the repository layout.";
  const read = (sha: string) => new TextDecoder().decode(store.payload(sha)!);
  const without = sessionDocument(session, read);
  const withIt = sessionDocument(session, read, { thinking: true });
  assertEquals(flatten(without.steps).filter((st) => st.type === "thinking").length, 0);
  assertEquals(flatten(withIt.steps).filter((st) => st.type === "thinking").length, 1);
  assertEquals(without.session.thinking, "left out");
  assertEquals(withIt.session.thinking, "included");
  assertStringIncludes(renderMarkdown(without), "(thinking left out)");
  assertStringIncludes(renderHtml(withIt), "<summary>Thinking (");
  assertEquals(documentOf(store, s.id)!.session.thinking, "none");
});

Deno.test("a long result keeps its head and tail and says how much was left out", () => {
  const s = byAgent("opencode");
  const session = store.loadSession(s.id)!;
  const long = "A".repeat(5000) + "MIDDLE" + "Z".repeat(5000);
  const op = Object.values(session.operations).find((o) => o.kind === "exec")!;
  op.response = { inline: long };
  const doc = sessionDocument(session, () => null, { limits: { resultHead: 100, resultTail: 50 } });
  const step = flatten(doc.steps).find((st) => st.result?.omitted)!;
  assertEquals(step.result!.head, "A".repeat(100));
  assertEquals(step.result!.tail, "Z".repeat(50));
  assertEquals(step.result!.omitted, long.length - 150);
  assertStringIncludes(
    renderMarkdown(doc),
    `… ${(long.length - 150).toLocaleString("en-US")} characters left out …`,
  );
});

Deno.test("a result recorded as content blocks reads as its text", async (t) => {
  const cases = [
    {
      name: "text blocks are joined",
      input: '[{"type":"text","text":"one"},{"type":"text","text":"two"}]',
      expected: "one\n\ntwo",
    },
    {
      name: "other blocks are named",
      input: '[{"type":"image","source":{}}]',
      expected: "[image]",
    },
    { name: "an array of other things stays", input: '[{"a":1}]', expected: '[{"a":1}]' },
    { name: "plain text stays", input: "[{ not json", expected: "[{ not json" },
  ];
  for (const c of cases) await t.step(c.name, () => assertEquals(contentText(c.input), c.expected));
});

Deno.test("the redactor replaces a secret that crosses a cut, whole, and counts it", async (t) => {
  const key = new FakeSecrets(5).anthropic();
  const text = "x".repeat(1000) + " " + key + " " + "y".repeat(1000);
  const at = 1001 + Math.floor(key.length / 2);
  await t.step("a head cut in the middle of the key", () => {
    const r = createRedactor();
    const head = r.slice(text, 0, at, "result");
    assert(!head.includes(key.slice(0, 20)), head.slice(-60));
    assertEquals(r.summary().total, 1);
    assertEquals(r.summary().by_rule, { api_key: 1 });
  });
  await t.step("a tail cut in the middle of the key", () => {
    const r = createRedactor();
    const tail = r.slice(text, at, text.length, "result");
    assert(!tail.includes(key.slice(-20)), tail.slice(0, 60));
    assertEquals(r.summary().total, 1);
  });
  await t.step("a key past the scan margin is not the slice's", () => {
    const far = "x".repeat(SCAN_MARGIN * 2) + " " + key;
    const r = createRedactor();
    assertEquals(r.slice(far, 0, 100, "result"), "x".repeat(100));
    assertEquals(r.summary().total, 0);
  });
  await t.step("samples show where and which rule, never the secret", () => {
    const r = createRedactor();
    r.text(`token: ${key}`, "step 3 (result)");
    const [sample] = r.summary().samples;
    assertEquals(sample.where, "step 3 (result)");
    assertEquals(sample.rule, "api_key");
    assert(!sample.sample.includes(key.slice(10, 30)));
  });
  await t.step("off, it changes and counts nothing", () => {
    const r = createRedactor({ enabled: false });
    assertEquals(r.text(key, "x"), key);
    assertEquals(r.summary(), {
      enabled: false,
      total: 0,
      by_rule: {},
      samples: [],
      samples_capped: false,
    });
  });
});

Deno.test("a title and a summary are redacted before they are shortened", () => {
  const s = byAgent("claude-code", /sub-agent/);
  const session = store.loadSession(s.id)!;
  const key = new FakeSecrets(9).anthropic();
  const prompt = Object.values(session.operations).find((o) => o.kind === "prompt")!;
  prompt.text = "x".repeat(70) + " " + key;
  const call = Object.values(session.operations).find((o) => o.kind === "exec")!;
  call.summary = "echo " + "y".repeat(270) + " " + key;
  const doc = sessionDocument(session, () => null);
  assert(doc.session.title.length <= 100);
  const exec = flatten(doc.steps).find((st) => st.kind === "exec")!;
  assert(exec.summary!.length <= 300);
  for (const text of [doc.session.title, exec.summary!, renderMarkdown(doc)]) {
    assert(!text.includes(key.slice(0, 20)), "no opening of the key survives the cut");
  }
});

Deno.test("a custom redact rule applies to exports", () => {
  const s = byAgent("claude-code", /sub-agent/);
  const rules = [{
    id: "r1",
    name: "project name",
    pattern: "inventory-*",
    action: "redact" as const,
    enabled: true,
  }];
  const doc = documentOf(store, s.id, { rules })!;
  assertEquals(doc.redaction.by_rule["project name"] > 0, true);
  assert(!renderMarkdown(doc).includes("inventory-api"));
  assert(renderMarkdown(documentOf(store, s.id)!).includes("inventory-api"));
});

Deno.test("every fixture session renders to Markdown and HTML", () => {
  for (const s of store.listSessions({ limit: 100 }).items) {
    const doc = documentOf(store, s.id, { thinking: true })!;
    assert(renderMarkdown(doc).startsWith("# "));
    const html = renderHtml(doc);
    assert(html.startsWith("<!doctype html>"));
    assert(!/<script/i.test(html), "no script");
    assertEquals((html.match(/<li class="step/g) ?? []).length, countSteps(doc.steps));
  }
});

function countSteps(steps: DocStep[]): number {
  return steps.reduce(
    (n, s) => n + 1 + (s.threads ?? []).reduce((m, t) => m + countSteps(t.steps), 0),
    0,
  );
}

Deno.test("the user's name for a session titles its documents, redacted; the canonical title stays", () => {
  const s = byAgent("gemini");
  const recorded = documentOf(store, s.id)!.session.title;
  const secret = new FakeSecrets(11).anthropic();
  store.markSession(s.id, { title: `Deploy notes ${secret}` });
  try {
    const doc = documentOf(store, s.id)!;
    assertEquals(doc.session.title.startsWith("Deploy notes "), true, doc.session.title);
    assert(!doc.session.title.includes(secret), "the name is redacted like every text");
    assert(doc.redaction.total > 0);
    assertStringIncludes(renderMarkdown(doc), `# Deploy notes `);
    assertStringIncludes(renderHtml(doc), `<h1>Deploy notes `);
    assertEquals(store.loadSession(s.id)!.session.title, s.title ?? undefined);
    store.markSession(s.id, { title: "" });
    assertEquals(documentOf(store, s.id)!.session.title, recorded, "cleared: the recorded title");
  } finally {
    store.markSession(s.id, { title: null });
  }
});

Deno.test("document tests teardown", () => store.close());
