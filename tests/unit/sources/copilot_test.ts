import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  classifyTool,
  validationProblems,
} from "../../../core/model/mod.ts";
import { copilot, copilotHome, sessionOfPath } from "../../../core/sources/copilot/mod.ts";
import type { SourceUnit } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { MemFs } from "../../_helpers/mem_fs.ts";
import { assertSnapshot, normalize } from "./_snapshot.ts";
import {
  checkScenarioCalls,
  importThroughStore,
  ops,
  payloadText,
  readScenario,
  resume,
  SHARED,
} from "./_run_importer.ts";

const SID = "c0c0c0c0-0000-4000-8000-000000000001";
const PROJECT = "/home/u/proj";
const STATE = "/h/.copilot/session-state";
const PATH = `${STATE}/${SID}/events.jsonl`;
const unit = (path = PATH): SourceUnit => ({ source: "copilot", path, kind: "jsonl", rank: 0 });

const j = (v: unknown) => JSON.stringify(v) + "\n";
let clock = Date.parse("2026-05-06T10:00:00.000Z");
let n = 0;
const ev = (type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  j({
    type,
    data,
    id: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    timestamp: new Date(clock += 1000).toISOString(),
    parentId: null,
    ...extra,
  });
const START = ev("session.start", {
  sessionId: SID,
  version: 1,
  producer: "copilot-agent",
  copilotVersion: "1.0.102",
  startTime: "2026-05-06T09:59:59.000Z",
  context: { cwd: PROJECT, branch: "main", headCommit: "abc123" },
});
const user = (content: string, extra: Record<string, unknown> = {}) =>
  ev("user.message", { content, ...extra });
const say = (content: string, toolRequests: unknown[] = [], extra: Record<string, unknown> = {}) =>
  ev("assistant.message", {
    messageId: `m${n}`,
    model: "gpt-5",
    content,
    toolRequests,
    ...extra,
  });
const req = (toolCallId: string, name: string, args: Record<string, unknown>) => ({
  toolCallId,
  name,
  arguments: args,
  type: "function",
});
const done = (toolCallId: string, extra: Record<string, unknown>) =>
  ev("tool.execution_complete", { toolCallId, success: true, ...extra });

async function importText(text: string, path = PATH) {
  const fs = new MemFs();
  fs.write(path, text);
  const { sessions, payloads } = await importThroughStore(copilot, fs, [unit(path)], {
    closed: true,
  });
  assertEquals(sessions.length, 1);
  assertEquals(validationProblems(sessions[0]), []);
  return { s: sessions[0], payloads };
}

Deno.test("copilot importer maps each event type", async (t) => {
  const cases: {
    name: string;
    lines: string[];
    check: (s: CanonicalSession, p: Map<string, Uint8Array>) => void;
  }[] = [
    {
      name: "session.start gives the session, project, git context and CLI version",
      lines: [START, user("hi"), say("hello")],
      check: (s) => {
        assertEquals([s.session.id, s.session.native_id], [`copilot:${SID}`, SID]);
        assertEquals(s.session.started_at, "2026-05-06T09:59:59.000Z");
        assertEquals(s.session.project, {
          path: PROJECT,
          git: { branch: "main", commit: "abc123" },
        });
        const c = s.connections[0];
        assertEquals([c.id, c.client.agent, c.client.version, c.server.model], [
          "main",
          "copilot",
          "1.0.102",
          "gpt-5",
        ]);
        assertEquals(s.session.last_prompt, "hi");
      },
    },
    {
      name: "reasoning, text and tool requests are ordered steps; results pair by call id",
      lines: [
        START,
        user("fix it"),
        ev("assistant.reasoning", { reasoningId: "r1", content: "Look first." }),
        say("Reading.", [req("c1", "view", { path: `${PROJECT}/a.py` })], {
          reasoningText: "Look first.",
        }),
        ev("tool.execution_start", { toolCallId: "c1", toolName: "view" }),
        done("c1", { result: { content: "print(1)\n" } }),
        say("", [req("c2", "bash", { command: "pytest", description: "tests" })]),
        done("c2", {
          result: { content: "1 failed\n<shellId: 0 completed with exit code 1>" },
          shellExecution: { exitCode: 1 },
        }),
        say("", [req("c3", "edit", { path: "/x", old_str: "a", new_str: "b" })]),
        ev("tool.execution_complete", {
          toolCallId: "c3",
          success: false,
          error: { message: "No match found", code: "failure" },
        }),
        say("Done."),
      ],
      check: (s, p) => {
        assertEquals(ops(s).map((o) => [o.kind, o.tool ?? o.text, o.completeness, o.is_error]), [
          ["prompt", "fix it", "complete", undefined],
          ["thinking", "Look first.", "complete", undefined],
          ["reply", "Reading.", "complete", undefined],
          ["read", "view", "complete", false],
          ["exec", "bash", "complete", true],
          ["edit", "edit", "complete", true],
          ["reply", "Done.", "complete", undefined],
        ]);
        const read = ops(s)[3];
        assertEquals(read.target, `${PROJECT}/a.py`);
        assertEquals(JSON.parse(payloadText(p, read.request)!), { path: `${PROJECT}/a.py` });
        assert(payloadText(p, read.response)!.includes("print(1)"));
        assert(payloadText(p, ops(s)[5].response)!.includes("No match found"));
      },
    },
    {
      name: "an exit code only printed in the output still makes the call an error",
      lines: [
        START,
        say("", [req("c1", "bash", { command: "false" })]),
        done("c1", { result: { content: "<shellId: 3 completed with exit code 2>" } }),
      ],
      check: (s) => assertEquals(ops(s).map((o) => o.is_error), [true]),
    },
    {
      name: "a call without its result is incomplete; a result without its call is unmatched",
      lines: [
        START,
        say("", [req("open1", "create", { path: "/w", file_text: "x" })]),
        done("lost", { result: { content: "?" } }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.completeness, o.request !== undefined]), [
          ["write", "incomplete", true],
          ["other", "unmatched", false],
        ]);
      },
    },
    {
      name: "usage counts once per model call, whichever event reports it",
      lines: [
        START,
        ev("session.usage_record", {
          usage: {
            model: "gpt-5",
            inputTokens: 900,
            outputTokens: 40,
            cacheReadTokens: 300,
            cacheWriteTokens: 5,
            apiCallId: "call-1",
          },
        }),
        ev("assistant.usage", {
          model: "gpt-5",
          inputTokens: 900,
          outputTokens: 40,
          cacheReadTokens: 300,
          cacheWriteTokens: 5,
          apiCallId: "call-1",
        }),
      ],
      check: (s) =>
        assertEquals(s.usage.by_model["gpt-5"], {
          input: 900,
          output: 40,
          cache_read: 300,
          cache_write: 5,
        }),
    },
    {
      name: "errors, warnings, aborts, compaction and failed hooks are events; the rest is counted",
      lines: [
        START,
        user("go"),
        ev("session.error", { errorType: "rate_limit", message: "Rate limited", statusCode: 429 }),
        ev("session.warning", { warningType: "mcp", message: "MCP server slow" }),
        ev("abort", { reason: "user_cancelled" }),
        ev("session.compaction_complete", { success: true, summaryContent: "We fixed a.py." }),
        ev("hook.end", {
          hookInvocationId: "h",
          hookType: "preToolUse",
          success: false,
          error: { message: "lint failed" },
        }),
        ev("hook.end", { hookInvocationId: "h2", hookType: "postToolUse", success: true }),
        ev("assistant.turn_start", { turnId: "0" }),
        ev("system.message", { role: "system", content: "You are..." }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.event, o.text, o.is_error ?? false]), [
          ["prompt", undefined, "go", false],
          ["event", "error", "Rate limited", true],
          ["event", "warning", "MCP server slow", false],
          ["event", "abort", "user_cancelled", false],
          ["event", "compaction", "We fixed a.py.", false],
          ["event", "error", "preToolUse hook failed: lint failed", true],
        ]);
        assertEquals((s.extensions.copilot as Record<string, unknown>).counted_records, {
          "session.start": 1,
          "hook.end": 1,
          "assistant.turn_start": 1,
          "system.message": 1,
        });
      },
    },
    {
      name: "a message from a skill or autopilot is injected, not the user's words",
      lines: [
        START,
        user("real"),
        user("skill text", { source: "skill-pdf" }),
        user("continue", { isAutopilotContinuation: true }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.text, o.injected ?? false]), [
          ["real", false],
          ["skill text", true],
          ["continue", true],
        ]);
        assertEquals(s.session.last_prompt, "real");
      },
    },
    {
      name: "a sub-agent's events sit on its connection, linked to the task call",
      lines: [
        START,
        user("delegate"),
        say("", [req("t1", "task", { description: "inspect", prompt: "look around" })]),
        ev("subagent.started", {
          toolCallId: "t1",
          agentName: "explore",
          agentDisplayName: "Explore",
          agentDescription: "reads",
          agentType: "explore",
        }),
        say("", [req("s1", "glob", { pattern: "**/*.py" })], { parentToolCallId: "t1" }),
        done("s1", { parentToolCallId: "t1", result: { content: "a.py" } }),
        say("found a.py", [], { parentToolCallId: "t1" }),
        ev("subagent.completed", { toolCallId: "t1", agentName: "explore", agentDisplayName: "E" }),
        done("t1", { result: { content: "a.py exists" } }),
      ],
      check: (s) => {
        const task = ops(s).find((o) => o.tool === "task")!;
        assertEquals([task.kind, task.spawns], ["task", "subagent:t1"]);
        const sub = s.connections.find((c) => c.id === "subagent:t1")!;
        assertEquals([sub.kind, sub.agent_type, sub.parent_op], ["subagent", "explore", task.id]);
        assertEquals(ops(s).map((o) => [o.conn, o.kind]), [
          ["main", "prompt"],
          ["main", "task"],
          ["subagent:t1", "search"],
          ["subagent:t1", "reply"],
        ]);
      },
    },
    {
      name: "an unknown event namespace is a counted issue",
      lines: [START, user("a"), ev("zz_new.thing", {}), j({ nothing: true })],
      check: (s) => {
        assertEquals(s.issues.map((i) => [i.code, i.count]), [
          ["unknown_record_type", 1],
          ["unknown_record_type", 1],
        ]);
        assertEquals(ops(s).map((o) => o.text), ["a"]);
      },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const { s, payloads } = await importText(c.lines.join(""));
      c.check(s, payloads);
    });
  }
});

Deno.test("copilot importer: a result appended in a later pass completes the call under its id", async () => {
  const fs = new MemFs();
  fs.write(PATH, START + say("", [req("c1", "bash", { command: "ls" })]));
  const first = await copilot.import(unit(), { fs, epoch: 0 });
  const callId = first.deltas[0].operations.find((o) => o.op.tool === "bash")!.id;
  fs.append(PATH, done("c1", { result: { content: "a\n" }, shellExecution: { exitCode: 0 } }));
  const second = await resume(copilot, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  assertEquals(second.deltas[0].operations.map((o) => [o.id, o.op.completeness, o.op.is_error]), [
    [callId, "complete", false],
  ]);
});

Deno.test("copilot discover() finds both layouts under COPILOT_HOME or ~/.copilot", async (t) => {
  const fs = new MemFs();
  fs.write(PATH, START);
  fs.write(`${STATE}/${SID}/workspace.yaml`, "id: x\n");
  fs.write(`${STATE}/flat-1.jsonl`, START);
  fs.write(`${STATE}/.session-operation-locks/x.lock`, "");
  fs.write("/alt/session-state/s2/events.jsonl", START);
  await t.step("~/.copilot", async () => {
    const units = await copilot.discover({ home: "/h", env: {}, platform: "linux" }, fs);
    assertEquals(units.map((u) => u.path).sort(), [PATH, `${STATE}/flat-1.jsonl`]);
    assert(units.every((u) => copilot.detect(u.path)));
    assertEquals(sessionOfPath(`${STATE}/flat-1.jsonl`), "flat-1");
  });
  await t.step("COPILOT_HOME", async () => {
    const env = { home: "/h", env: { COPILOT_HOME: "/alt" }, platform: "linux" as const };
    assertEquals(copilotHome(env), "/alt");
    assertEquals((await copilot.discover(env, fs)).map((u) => u.path), [
      "/alt/session-state/s2/events.jsonl",
    ]);
  });
  await t.step("a missing root is no units", async () => {
    assertEquals(await copilot.discover({ home: "/nobody", env: {}, platform: "linux" }, fs), []);
    assert(!copilot.detect("/h/.claude/projects/p/x.jsonl"));
  });
});

Deno.test("copilot importer: a name the user gave in workspace.yaml titles the session", async () => {
  const fs = new MemFs();
  fs.write(PATH, START + user("first words"));
  fs.write(`${STATE}/${SID}/workspace.yaml`, 'id: x\nname: "Fix: the tests"\nuser_named: true\n');
  const { sessions } = await importThroughStore(copilot, fs, [unit()], { closed: true });
  assertEquals(sessions[0].session.title, "Fix: the tests");
  fs.write(`${STATE}/${SID}/workspace.yaml`, "id: x\nname: first words\nuser_named: false\n");
  const again = await importThroughStore(copilot, fs, [unit()], { closed: true });
  assertEquals(again.sessions[0].session.title, undefined);
});

// ------------------------------------------------------------------ real CLI fixtures

const realFs = createDenoFs();
const REAL = `${SHARED}/realclients/copilot`;

function scenarios(): string[] {
  return [...Deno.readDirSync(REAL)].filter((e) => e.isDirectory).map((e) => e.name).sort();
}

Deno.test("copilot importer: every real-client fixture imports, validates and matches its snapshot", async (t) => {
  for (const scenario of scenarios()) {
    await t.step(scenario, async () => {
      const home = `${REAL}/${scenario}/native`;
      const units = await copilot.discover({ home, env: {}, platform: "linux" }, realFs);
      assertEquals(units.length, 1);
      const { sessions } = await importThroughStore(copilot, realFs, units, { closed: true });
      assertEquals(sessions.length, 1);
      assertEquals(validationProblems(sessions[0]), []);
      await assertSnapshot(
        `copilot__realclients__${scenario}`,
        normalize(sessions, { [SHARED]: "<FIXTURES>" }),
      );
    });
  }
});

Deno.test("copilot importer: real-client sessions match their scenarios call by call", async (t) => {
  for (const scenario of scenarios()) {
    await t.step(scenario, async () => {
      const dir = `${REAL}/${scenario}`;
      const truth = await readScenario(dir);
      const units = await copilot.discover(
        { home: `${dir}/native`, env: {}, platform: "linux" },
        realFs,
      );
      const { sessions, payloads } = await importThroughStore(copilot, realFs, units, {
        closed: true,
      });
      const s = sessions[0];
      assertEquals(s.session.native_id, truth.session_id);
      assertEquals(s.session.project.path, truth.cwd, "project from session.start's context");
      checkScenarioCalls(s, payloads, truth, scenario, classifyTool);
    });
  }
});
