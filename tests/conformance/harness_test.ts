/**
 * Tests of the conformance harness itself (no agent CLI, no socket): the scripted model, the
 * four wire protocols, the translation to native calls, and the comparison, including that
 * the comparison fails on each kind of mismatch.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { checkConversation, checkSession, inputDiff, servedOrder } from "./check.ts";
import type { RequestLogEntry } from "./servers/mod.ts";
import { createModelHandler, type Protocol } from "./servers/mod.ts";
import { type NativeScript, replyFor } from "./script.ts";
import { SCENARIOS } from "./scenarios.ts";
import { type ExpectedCall, translate } from "./translate.ts";

const SCRIPT: NativeScript = {
  segments: [{
    match: "Fix the bug",
    turns: [
      { text: "Reading.", calls: [{ name: "Read", input: { file_path: "/p/a.py" } }] },
      {
        calls: [
          { name: "Bash", input: { command: "ls" } },
          { name: "Bash", input: { command: "pwd" } },
        ],
      },
      { text: "All done." },
    ],
  }],
  subagents: [{
    match: "Inspect the repo",
    turns: [{ calls: [{ name: "Bash", input: { command: "ls -la" } }] }, { text: "Sub done." }],
  }],
  side_text: "A title",
};

const view = (text: string, n: number, hasTools = true) => ({
  firstUserText: text,
  results: Array.from({ length: n }, () => ({ err: false, head: "" })),
  userTexts: [{ text, after: 0 }],
  hasTools,
});

Deno.test("replyFor() picks the turn from the number of tool results", async (t) => {
  const cases = [
    { name: "first request", n: 0, turn: 0, calls: ["Read"], text: "Reading." },
    { name: "after one result", n: 1, turn: 1, calls: ["Bash", "Bash"], text: undefined },
    { name: "after both parallel results", n: 3, turn: 2, calls: [], text: "All done." },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const r = replyFor(SCRIPT, view("<ctx>\nFix the bug please", c.n), "x");
      assertEquals(r.kind, "main");
      assertEquals(r.turn, c.turn);
      assertEquals(r.calls.map((x) => x.name), c.calls);
      assertEquals(r.text, c.text);
      assertEquals(r.warning, undefined);
    });
  }
});

Deno.test("replyFor() answers a resumed conversation from its latest segment", () => {
  const script = {
    ...SCRIPT,
    segments: [...SCRIPT.segments, {
      match: "Now add a test",
      turns: [{ calls: [{ name: "Write", input: { file_path: "t.py" } }] }, { text: "Added." }],
    }],
  };
  const resumed = {
    firstUserText: "Fix the bug please",
    results: Array.from({ length: 4 }, () => ({ err: false, head: "" })),
    userTexts: [{ text: "Fix the bug please", after: 0 }, { text: "Now add a test", after: 3 }],
    hasTools: true,
  };
  const first = replyFor(script, resumed, "x");
  assertEquals([first.segment, first.turn, first.calls.map((c) => c.name)], [1, 1, []]);
  assertEquals(first.text, "Added.");
  const opening = replyFor(script, { ...resumed, results: resumed.results.slice(0, 3) }, "x");
  assertEquals([opening.segment, opening.turn, opening.calls.map((c) => c.name)], [1, 0, [
    "Write",
  ]]);
  // The first run's requests still get the first segment.
  const early = replyFor(script, view("Fix the bug please", 1), "x");
  assertEquals([early.segment, early.turn], [0, 1]);
});

Deno.test("replyFor() warns when a request's result count falls inside a turn", () => {
  const r = replyFor(SCRIPT, view("Fix the bug", 2), "x");
  assertStringIncludes(r.warning ?? "", "2 tool results");
});

Deno.test("replyFor() routes sub-agent prompts and side requests", () => {
  assertEquals(replyFor(SCRIPT, view("Inspect the repo now", 0), "x").kind, "sub");
  assertEquals(replyFor(SCRIPT, view("Fix the bug", 0, false), "x").text, "A title");
  assertEquals(replyFor(SCRIPT, view("Summarise this", 0), "x").kind, "side");
});

async function sseEvents(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  return text.split("\n\n").filter((f) => f.includes("data: ")).map((f) =>
    f.split("\n").find((l) => l.startsWith("data: "))!.slice(6)
  ).filter((d) => d !== "[DONE]").map((d) => JSON.parse(d));
}

async function ask(protocol: Protocol, path: string, body: unknown) {
  const log: RequestLogEntry[] = [];
  const handler = createModelHandler(protocol, SCRIPT, (e) => log.push(e));
  const res = await handler(
    new Request(`http://127.0.0.1:1${path}`, { method: "POST", body: JSON.stringify(body) }),
  );
  return { res, log };
}

Deno.test("the Anthropic server streams a tool_use whose input reassembles exactly", async () => {
  const { res, log } = await ask("anthropic", "/v1/messages", {
    model: "claude-x",
    stream: true,
    tools: [{ name: "Read" }],
    messages: [{ role: "user", content: [{ type: "text", text: "Fix the bug" }] }],
  });
  const events = await sseEvents(res);
  assertEquals(events[0].type, "message_start");
  assertEquals(events.at(-1)?.type, "message_stop");
  const json = events.filter((e) => (e.delta as { type?: string })?.type === "input_json_delta")
    .map((e) => (e.delta as { partial_json: string }).partial_json).join("");
  assertEquals(JSON.parse(json), { file_path: "/p/a.py" });
  assertEquals(log[0].kind, "main");
});

Deno.test("the Anthropic server answers stream:false with one JSON message", async () => {
  const { res } = await ask("anthropic", "/v1/messages", {
    stream: false,
    tools: [{ name: "Bash" }],
    messages: [
      { role: "user", content: "Fix the bug" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "x" }] },
    ],
  });
  const msg = await res.json();
  assertEquals(msg.stop_reason, "tool_use");
  assertEquals(msg.content.map((b: { name?: string }) => b.name), ["Bash", "Bash"]);
});

Deno.test("the Responses server uses custom_tool_call for tools declared custom", async () => {
  const script: NativeScript = {
    segments: [{
      match: "Patch it",
      turns: [{ calls: [{ name: "apply_patch", input: "*** Begin Patch" }] }],
    }],
    subagents: [],
    side_text: "",
  };
  const handler = createModelHandler("openai-responses", script, () => {});
  const body = {
    model: "gpt-x",
    tools: [{ type: "custom", name: "apply_patch" }],
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Patch it" }] }],
  };
  const res = await handler(
    new Request("http://127.0.0.1:1/v1/responses", { method: "POST", body: JSON.stringify(body) }),
  );
  const events = await sseEvents(res);
  const done = events.find((e) => e.type === "response.output_item.done");
  assertEquals((done?.item as { type: string }).type, "custom_tool_call");
  assertEquals((done?.item as { input: string }).input, "*** Begin Patch");
  assertEquals(events.at(-1)?.type, "response.completed");
});

Deno.test("the chat.completions server streams tool_calls argument deltas", async () => {
  const { res } = await ask("openai-chat", "/v1/chat/completions", {
    stream: true,
    tools: [{ type: "function", function: { name: "Read" } }],
    messages: [{ role: "system", content: "sys" }, { role: "user", content: "Fix the bug" }],
  });
  const events = await sseEvents(res);
  const args = events.flatMap((e) =>
    (e.choices as { delta?: { tool_calls?: { function?: { arguments?: string } }[] } }[]) ?? []
  )
    .flatMap((c) => c.delta?.tool_calls ?? []).map((tc) => tc.function?.arguments ?? "").join("");
  assertEquals(JSON.parse(args), { file_path: "/p/a.py" });
});

Deno.test("the Gemini server finds the prompt after Gemini CLI's context turn", async () => {
  const { res, log } = await ask("gemini", "/v1beta/models/g:streamGenerateContent?alt=sse", {
    contents: [
      { role: "user", parts: [{ text: "<session_context>" }] },
      { role: "user", parts: [{ text: "Fix the bug" }] },
    ],
    tools: [{ functionDeclarations: [{ name: "read_file" }] }],
  });
  const events = await sseEvents(res);
  const parts = events.flatMap((e) =>
    (e.candidates as { content: { parts: Record<string, unknown>[] } }[])[0].content.parts
  );
  assert(parts.some((p) => (p.functionCall as { name?: string })?.name === "Read"));
  assertEquals(log[0].kind, "main");
});

Deno.test("translate() writes Codex edits as apply_patch hunks and reads as sed", () => {
  const s1 = SCENARIOS.find((s) => s.id === "s1-basic")!;
  const { calls, script } = translate(s1, "codex", "/p");
  assertEquals(calls.map((c) => c.tool), [
    "apply_patch",
    "apply_patch",
    "exec_command",
    "exec_command",
  ]);
  assertEquals(
    calls[1].input,
    "*** Begin Patch\n*** Update File: notes.md\n@@\n-- [ ] wirte docs\n+- [ ] write docs\n*** End Patch",
  );
  assertEquals((calls[3].input as { cmd: string }).cmd, "sed -n '1,200p' README.md");
  assertEquals(script.segments[0].turns.at(-1)?.calls, undefined);
});

Deno.test("servedOrder() interleaves sub-agent calls where the server served them", () => {
  const s6 = SCENARIOS.find((s) => s.id === "s6-subagent")!;
  const { calls } = translate(s6, "claude", "/p");
  const req = (kind: "main" | "sub", turn: number, n: number): RequestLogEntry => ({
    n: 0,
    ts: "",
    method: "POST",
    path: "/",
    ua: null,
    kind,
    segment: 0,
    turn,
    body: "",
    reply: { calls: Array.from({ length: n }, () => ({ name: "x", input: {} })) },
  });
  const order = servedOrder(calls, [
    req("main", 0, 1),
    req("sub", 0, 1),
    req("sub", 1, 1),
    req("sub", 1, 1), // a retried request counts once
    req("sub", 2, 0),
    req("main", 1, 1),
  ]);
  assertEquals(order.map((c) => `${c.thread}:${c.tool}`), [
    "main:Agent",
    "sub:Bash",
    "sub:Read",
    "main:Write",
  ]);
});

// A minimal imported session for checkSession().
const enc = new TextEncoder();
interface FakeOp {
  kind: string;
  tool: string;
  input: unknown;
  result: string;
  is_error?: boolean;
  conn?: string;
}

function fakeSession(ops: FakeOp[]) {
  const payloads = new Map<string, Uint8Array>();
  const operations: Record<string, unknown> = {};
  const timeline: unknown[] = [];
  ops.forEach((o, i) => {
    payloads.set(`req${i}`, enc.encode(JSON.stringify(o.input)));
    payloads.set(`res${i}`, enc.encode(o.result));
    operations[`op${i}`] = {
      kind: o.kind,
      tool: o.tool,
      request: { sha256: `req${i}`, size: 1 },
      response: { sha256: `res${i}`, size: 1 },
      is_error: o.is_error ?? false,
      completeness: "complete",
    };
    timeline.push({ seq: i, op: `op${i}`, connection: o.conn ?? "main", offset_ns: i });
  });
  return {
    session: {
      connections: [{ id: "main", kind: "main" }, { id: "agent-1", kind: "subagent" }],
      timeline,
      operations,
    },
    payload: (sha: string) => Promise.resolve(payloads.get(sha)),
  };
}

const EXPECTED: ExpectedCall[] = [
  {
    thread: "main",
    segment: 0,
    step: { op: "read", path: "a.py" },
    tool: "Read",
    input: { file_path: "/p/a.py" },
    kinds: ["read"],
    error: false,
    result_has: "def f",
  },
  {
    thread: "sub",
    segment: 0,
    step: { op: "bash", command: "false", description: "" },
    tool: "Bash",
    input: { command: "false" },
    kinds: ["exec"],
    error: true,
  },
];

const GOOD: FakeOp[] = [
  { kind: "read", tool: "Read", input: { file_path: "/p/a.py" }, result: "1\tdef f(): pass" },
  {
    kind: "exec",
    tool: "Bash",
    input: { command: "false" },
    result: "Exit code 1",
    is_error: true,
    conn: "agent-1",
  },
];

Deno.test("checkSession() passes a session that matches the script", async () => {
  const out = await checkSession(EXPECTED, fakeSession(GOOD));
  assertEquals(out.mismatches, []);
  assert(out.ok);
});

Deno.test("checkSession() reports each kind of mismatch", async (t) => {
  const cases: { name: string; ops: FakeOp[]; expect: string }[] = [
    { name: "wrong kind", ops: [{ ...GOOD[0], kind: "search" }, GOOD[1]], expect: "kind search" },
    { name: "wrong tool", ops: [{ ...GOOD[0], tool: "View" }, GOOD[1]], expect: "tool View" },
    {
      name: "wrong input",
      ops: [{ ...GOOD[0], input: { file_path: "/p/b.py" } }, GOOD[1]],
      expect: "file_path=",
    },
    {
      name: "error flag lost",
      ops: [GOOD[0], { ...GOOD[1], is_error: false }],
      expect: "is_error false, want true",
    },
    {
      name: "result not the real one",
      ops: [{ ...GOOD[0], result: "" }, GOOD[1]],
      expect: "result lacks",
    },
    {
      name: "sub-agent call on the main thread",
      ops: [GOOD[0], { ...GOOD[1], conn: "main" }],
      expect: "want subagent",
    },
    { name: "missing call", ops: [GOOD[0]], expect: "missing" },
    { name: "extra call", ops: [...GOOD, GOOD[0]], expect: "extra operation" },
    { name: "calls out of order", ops: [GOOD[1], GOOD[0]], expect: "placed before #1" },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const out = await checkSession(EXPECTED, fakeSession(c.ops));
      assert(!out.ok);
      assertStringIncludes(out.mismatches.join("\n"), c.expect);
    });
  }
});

Deno.test("inputDiff() accepts a free-form input stored raw, as JSON or under input", async (t) => {
  const patch = "*** Begin Patch\n*** End Patch";
  for (
    const [name, payload] of [
      ["raw", patch],
      ["JSON string", JSON.stringify(patch)],
      ["input field", JSON.stringify({ input: patch })],
    ]
  ) {
    await t.step(name, () => assertEquals(inputDiff(patch, payload), {}));
  }
  await t.step("a different patch", () => assert(inputDiff(patch, "*** Begin Patch").problem));
});

Deno.test("checkConversation() wants the prompt and each thread's final reply", async (t) => {
  const payloads = new Map([
    ["p", enc.encode("Fix the bug")],
    ["r", enc.encode("All done.")],
    ["s", enc.encode("Sub done.")],
  ]);
  const session = (subOn: string) => ({
    session: {
      connections: [{ id: "main", kind: "main" }, { id: "a1", kind: "subagent" }],
      timeline: [
        { seq: 0, op: "o1", connection: "main" },
        { seq: 1, op: "o2", connection: subOn },
        { seq: 2, op: "o3", connection: "main" },
      ],
      operations: {
        o1: { kind: "prompt", request: { sha256: "p" } },
        o2: { kind: "reply", response: { sha256: "s" } },
        o3: { kind: "reply", response: { sha256: "r" } },
      },
    },
    payload: (sha: string) => Promise.resolve(payloads.get(sha)),
  });
  await t.step("all there", async () => {
    assertEquals(
      await checkConversation(session("a1"), "Fix the bug", "All done.", "Sub done."),
      [],
    );
  });
  await t.step("the sub-agent's reply on the main thread", async () => {
    const out = await checkConversation(session("main"), "Fix the bug", "All done.", "Sub done.");
    assertStringIncludes(out.join("\n"), "no sub-agent reply");
  });
  await t.step("a different prompt", async () => {
    const out = await checkConversation(session("a1"), "Other", "All done.");
    assertStringIncludes(out.join("\n"), "no prompt operation");
  });
});

Deno.test("checkSession() with the request log checks only the order causality fixes", async (t) => {
  // Codex's s8-spawn: the parent spawns a thread, then waits for it while the thread works.
  const call = (thread: "main" | "sub", tool: string): ExpectedCall => ({
    thread,
    segment: 0,
    step: { op: "bash", command: tool, description: "" },
    tool,
    input: { command: tool },
    kinds: ["exec"],
    error: false,
  });
  const spawn = call("main", "spawn"), ls = call("sub", "ls"), wait = call("main", "wait");
  const read = call("sub", "read"), patch = call("main", "patch");
  const expected = [spawn, ls, wait, read, patch];
  const req = (kind: "main" | "sub", turn: number, calls: number): RequestLogEntry => ({
    n: 0,
    ts: "",
    method: "POST",
    path: "/",
    ua: null,
    kind,
    segment: 0,
    turn,
    body: "",
    reply: { calls: Array.from({ length: calls }, () => ({ name: "x", input: {} })) },
  });
  const requests = [
    req("main", 0, 1), // spawn
    req("sub", 0, 1), // ls, served just before the parent's wait
    req("main", 1, 1), // wait (spawn's result)
    req("sub", 1, 1), // read
    req("sub", 2, 0), // the thread ends
    req("main", 2, 1), // patch, after the wait came back
    req("main", 3, 0),
  ];
  const op = (c: ExpectedCall): FakeOp => ({
    kind: "exec",
    tool: c.tool,
    input: c.input,
    result: "ok",
    conn: c.thread === "sub" ? "agent-1" : "main",
  });
  await t.step("the parent's wait recorded before the thread's first call passes", async () => {
    const out = await checkSession(
      expected,
      fakeSession([spawn, wait, ls, read, patch].map(op)),
      requests,
    );
    assertEquals(out.mismatches, []);
  });
  await t.step("without the request log the served order is strict", async () => {
    const out = await checkSession(expected, fakeSession([spawn, wait, ls, read, patch].map(op)));
    assertStringIncludes(out.mismatches.join("\n"), "placed before #2");
  });
  await t.step("a call after another thread's call whose result it followed fails", async () => {
    const out = await checkSession(
      expected,
      fakeSession([spawn, ls, wait, patch, read].map(op)),
      requests,
    );
    assertStringIncludes(out.mismatches.join("\n"), "#5 patch (bash): placed before #4");
  });
  await t.step("a sub-agent call before the call that started it fails", async () => {
    const out = await checkSession(
      expected,
      fakeSession([ls, spawn, wait, read, patch].map(op)),
      requests,
    );
    assertStringIncludes(out.mismatches.join("\n"), "#2 sub-agent ls (bash): placed before #1");
  });
});
