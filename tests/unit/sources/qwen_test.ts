import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  classifyTool,
  validationProblems,
} from "../../../core/model/mod.ts";
import { qwen, qwenRole, qwenRoots } from "../../../core/sources/qwen/mod.ts";
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

const SID = "9a9a9a9a-0000-4000-8000-000000000001";
const PROJECT = "/home/u/proj";
const DIR = "/h/.qwen/projects/-home-u-proj";
const PATH = `${DIR}/chats/${SID}.jsonl`;
const unit = (path = PATH, rank = 0): SourceUnit => ({ source: "qwen", path, kind: "jsonl", rank });

const j = (v: unknown) => JSON.stringify(v) + "\n";
let clock = Date.parse("2026-03-04T10:00:00.000Z");
let n = 0;
/** A record in Qwen Code's envelope. */
const rec = (type: string, extra: Record<string, unknown>) =>
  j({
    uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    parentUuid: null,
    sessionId: SID,
    timestamp: new Date(clock += 1000).toISOString(),
    type,
    cwd: PROJECT,
    version: "0.15.10",
    gitBranch: "main",
    ...extra,
  });
const user = (text: string, extra: Record<string, unknown> = {}) =>
  rec("user", { message: { role: "user", parts: [{ text }] }, ...extra });
const model = (parts: unknown[], extra: Record<string, unknown> = {}) =>
  rec("assistant", { model: "qwen3-coder-plus", message: { role: "model", parts }, ...extra });
const call = (id: string, name: string, args: Record<string, unknown>) => ({
  functionCall: { id, name, args },
});
const result = (
  id: string,
  name: string,
  response: Record<string, unknown>,
  status = "success",
  extra: Record<string, unknown> = {},
) =>
  rec("tool_result", {
    message: { role: "user", parts: [{ functionResponse: { id, name, response } }] },
    toolCallResult: { callId: id, status, resultDisplay: "", ...extra },
  });
const system = (subtype: string, systemPayload: unknown) =>
  rec("system", { subtype, systemPayload });

async function importText(text: string, path = PATH) {
  const fs = new MemFs();
  fs.write(path, text);
  const { sessions, payloads, results } = await importThroughStore(qwen, fs, [unit(path)], {
    closed: true,
  });
  assertEquals(sessions.length, 1);
  assertEquals(validationProblems(sessions[0]), []);
  return { s: sessions[0], payloads, result: results[0] };
}

Deno.test("qwen importer maps each record type", async (t) => {
  const cases: {
    name: string;
    lines: string[];
    check: (s: CanonicalSession, p: Map<string, Uint8Array>) => void;
  }[] = [
    {
      name: "the envelope gives the session, project, branch, CLI version and model",
      lines: [user("hi"), model([{ text: "hello" }])],
      check: (s) => {
        assertEquals([s.session.id, s.session.native_id], [`qwen:${SID}`, SID]);
        assertEquals(s.session.project.path, PROJECT);
        assertEquals(s.session.project.git?.branch, "main");
        assertEquals(s.session.started_at, "2026-03-04T10:00:01.000Z");
        const c = s.connections[0];
        assertEquals([c.id, c.kind, c.client.agent, c.client.version, c.server.model], [
          "main",
          "main",
          "qwen",
          "0.15.10",
          "qwen3-coder-plus",
        ]);
        assertEquals(s.session.last_prompt, "hi");
      },
    },
    {
      name: "thought, text and calls of one record are ordered steps; results pair by call id",
      lines: [
        user("fix it"),
        model([
          { text: "Let me look.", thought: true },
          { text: "Reading the file." },
          call("c1", "read_file", { file_path: `${PROJECT}/a.py` }),
          call("c2", "run_shell_command", { command: "pytest", description: "tests" }),
        ]),
        result("c1", "read_file", { output: "print(1)\n" }),
        result("c2", "run_shell_command", {
          output:
            "Command: pytest\nDirectory: (root)\nOutput: 1 failed\nError: (none)\nExit Code: 1",
        }),
        model([{ text: "Done." }]),
      ],
      check: (s, p) => {
        assertEquals(ops(s).map((o) => [o.kind, o.tool ?? o.text, o.completeness, o.is_error]), [
          ["prompt", "fix it", "complete", undefined],
          ["thinking", "Let me look.", "complete", undefined],
          ["reply", "Reading the file.", "complete", undefined],
          ["read", "read_file", "complete", false],
          ["exec", "run_shell_command", "complete", true],
          ["reply", "Done.", "complete", undefined],
        ]);
        const read = ops(s)[3];
        assertEquals(read.target, `${PROJECT}/a.py`);
        assertEquals(JSON.parse(payloadText(p, read.request)!), { file_path: `${PROJECT}/a.py` });
        assert(payloadText(p, read.response)!.includes("print(1)"));
        assertEquals(ops(s)[4].summary, "pytest");
      },
    },
    {
      name: "a failed call is an error with its error type; an edit maps to edit",
      lines: [
        model([call("e1", "edit", { file_path: "/x", old_string: "a", new_string: "b" })]),
        result("e1", "edit", { error: "Failed to edit, 0 occurrences found" }, "error", {
          errorType: "edit_no_occurrence_found",
        }),
      ],
      check: (s) => {
        const [e] = ops(s);
        assertEquals([e.kind, e.is_error, e.completeness], ["edit", true, "complete"]);
        assertEquals(
          (e.extensions?.qwen as Record<string, unknown>).error_type,
          "edit_no_occurrence_found",
        );
      },
    },
    {
      name: "a call without its result is incomplete; a result without its call is unmatched",
      lines: [
        model([call("open1", "write_file", { file_path: "/w", content: "x" })]),
        result("lost", "read_file", { output: "?" }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.completeness, o.request !== undefined]), [
          ["write", "incomplete", true],
          ["read", "unmatched", false],
        ]);
      },
    },
    {
      name: "usage counts once per record: cached tokens apart, thoughts with output",
      lines: [
        model([{ text: "a" }], {
          usageMetadata: {
            promptTokenCount: 1000,
            candidatesTokenCount: 50,
            thoughtsTokenCount: 10,
            cachedContentTokenCount: 400,
          },
        }),
      ],
      check: (s) => {
        assertEquals(s.usage.by_model["qwen3-coder-plus"], {
          input: 600,
          output: 60,
          cache_read: 400,
          cache_write: 0,
        });
      },
    },
    {
      name: "a cron prompt is injected, a notification is an event, not the user's words",
      lines: [
        user("real words"),
        user("run the nightly check", { subtype: "cron" }),
        user("<task-notification>done</task-notification>", {
          subtype: "notification",
          systemPayload: { displayText: "Background agent finished" },
        }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.text, o.injected ?? false]), [
          ["prompt", "real words", false],
          ["prompt", "run the nightly check", true],
          ["event", "Background agent finished", false],
        ]);
        assertEquals(s.session.last_prompt, "real words");
      },
    },
    {
      name: "system records: title, compaction and rewind shown; telemetry and snapshots counted",
      lines: [
        user("go"),
        system("attribution_snapshot", { snapshot: {} }),
        system("ui_telemetry", { uiEvent: { "event.name": "qwen-code.api_response" } }),
        system("ui_telemetry", {
          uiEvent: {
            "event.name": "qwen-code.api_error",
            error: "429 Too Many Requests",
            error_type: "rate_limit",
            status_code: 429,
            model: "qwen3-coder-plus",
          },
        }),
        system("chat_compression", { info: {} }),
        system("rewind", { targetTurnIndex: 0 }),
        system("custom_title", { customTitle: "Fix the tests", titleSource: "auto" }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.event, o.is_error ?? false]), [
          ["prompt", undefined, false],
          ["event", "error", true],
          ["event", "compaction", false],
          ["event", "rewind", false],
        ]);
        assertEquals(ops(s)[1].text, "429 Too Many Requests");
        assertEquals(s.session.title, "Fix the tests");
        assertEquals((s.extensions.qwen as Record<string, unknown>).counted_records, {
          "system:attribution_snapshot": 1,
          "system:ui_telemetry:api_response": 1,
          "system:custom_title": 1,
        });
      },
    },
    {
      name: "unknown record types and system subtypes are counted issues",
      lines: [user("a"), rec("zz_new", {}), system("zz_sub", {}), j({ nothing: true })],
      check: (s) => {
        const codes = s.issues.map((i) => [i.code, i.count]);
        assertEquals(codes, [
          ["unknown_record_type", 1],
          ["unknown_system_subtype", 1],
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

Deno.test("qwen importer: a result appended in a later pass completes the call under its id", async () => {
  const fs = new MemFs();
  const head = user("go") +
    model([call("c1", "run_shell_command", { command: "ls" })]);
  fs.write(PATH, head);
  const first = await qwen.import(unit(), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations.map((o) => o.op.completeness), [
    "complete",
    "incomplete",
  ]);
  fs.append(PATH, result("c1", "run_shell_command", { output: "Exit Code: 0" }));
  const second = await resume(qwen, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  const ids = first.deltas[0].operations.map((o) => o.id);
  assertEquals(second.deltas[0].operations.map((o) => [o.id, o.op.completeness, o.op.is_error]), [
    [ids[1], "complete", false],
  ]);
});

Deno.test("qwen discover() reads every runtime folder the CLI may have used", async (t) => {
  const fs = new MemFs();
  fs.write(PATH, user("a"));
  fs.write(`${DIR}/subagents/${SID}/agent-bg1.jsonl`, user("sub"));
  fs.write(`${DIR}/subagents/${SID}/agent-bg1.meta.json`, "{}");
  fs.write(`${DIR}/chats/notes.txt`, "");
  fs.write("/alt/projects/-p/chats/x.jsonl", user("b"));
  fs.write("/rt/projects/-p/chats/y.jsonl", user("c"));
  await t.step("~/.qwen", async () => {
    const units = await qwen.discover({ home: "/h", env: {}, platform: "linux" }, fs);
    assertEquals(units.map((u) => [u.path.slice(DIR.length + 1), u.rank]), [
      [`chats/${SID}.jsonl`, 0],
      [`subagents/${SID}/agent-bg1.jsonl`, 1],
    ]);
    assert(units.every((u) => qwen.detect(u.path)));
  });
  await t.step("QWEN_HOME and QWEN_RUNTIME_DIR as well", async () => {
    const env = { QWEN_HOME: "/alt", QWEN_RUNTIME_DIR: "/rt" };
    assertEquals(qwenRoots({ home: "/h", env, platform: "linux" }), ["/rt", "/alt", "/h/.qwen"]);
    const units = await qwen.discover({ home: "/h", env, platform: "linux" }, fs);
    assertEquals(units.map((u) => u.path).sort(), [
      "/alt/projects/-p/chats/x.jsonl",
      PATH,
      `${DIR}/subagents/${SID}/agent-bg1.jsonl`,
      "/rt/projects/-p/chats/y.jsonl",
    ]);
  });
  await t.step("a missing root is no units; other agents' files are not Qwen's", async () => {
    assertEquals(await qwen.discover({ home: "/nobody", env: {}, platform: "linux" }, fs), []);
    assert(!qwen.detect("/h/.claude/projects/-p/1234.jsonl"));
    assert(!qwen.detect("/h/.gemini/tmp/abc/chats/session-1.json"));
    assertEquals(qwenRole(`${DIR}/subagents/${SID}/agent-bg1.jsonl`), {
      main: false,
      parentSession: SID,
      agentId: "bg1",
    });
  });
});

Deno.test("qwen importer: a background sub-agent's transcript joins its session, under the agent call whose prompt it was given", async () => {
  const fs = new MemFs();
  const sub = `${DIR}/subagents/${SID}/agent-bg1.jsonl`;
  fs.write(PATH, user("delegate") + model([call("a1", "agent", { prompt: "look around" })]));
  fs.write(sub, user("look around", { isSidechain: true }) + model([{ text: "found it" }]));
  fs.write(`${DIR}/subagents/${SID}/agent-bg1.meta.json`, JSON.stringify({ agentType: "Explore" }));
  const { sessions } = await importThroughStore(qwen, fs, [unit(), unit(sub, 1)], {
    closed: true,
  });
  assertEquals(sessions.length, 1);
  const s = sessions[0];
  assertEquals(validationProblems(s), []);
  const task = ops(s).find((o) => o.kind === "task")!;
  assertEquals(s.connections.map((c) => [c.id, c.kind, c.agent_type, c.parent_op]), [
    ["main", "main", undefined, undefined],
    ["subagent:bg1", "subagent", "Explore", task.id],
  ]);
  assertEquals(ops(s).map((o) => [o.conn, o.kind]), [
    ["main", "prompt"],
    ["main", "task"],
    ["subagent:bg1", "prompt"],
    ["subagent:bg1", "reply"],
  ]);
  assertEquals(s.session.last_prompt, "delegate");
});

Deno.test("qwen importer: bad lines are loss windows; other records still import", async () => {
  const { s } = await importText(user("a") + "{not json\n" + j([1, 2]) + user("b"));
  assertEquals(ops(s).map((o) => o.text), ["a", "b"]);
  assertEquals(s.provenance.loss_windows.map((w) => [w.lines, w.reason.slice(0, 12)]), [
    [[2, 2], "invalid JSON"],
    [[3, 3], "not a JSON o"],
  ]);
});

// ------------------------------------------------------------------ real CLI fixtures

const realFs = createDenoFs();
const REAL = `${SHARED}/realclients/qwen`;

function scenarios(): string[] {
  return [...Deno.readDirSync(REAL)].filter((e) => e.isDirectory).map((e) => e.name).sort();
}

Deno.test("qwen importer: every real-client fixture imports, validates and matches its snapshot", async (t) => {
  for (const scenario of scenarios()) {
    await t.step(scenario, async () => {
      const home = `${REAL}/${scenario}/native`;
      const units = await qwen.discover({ home, env: {}, platform: "linux" }, realFs);
      assert(units.length > 0);
      const { sessions } = await importThroughStore(qwen, realFs, units, { closed: true });
      assertEquals(sessions.length, 1);
      for (const s of sessions) assertEquals(validationProblems(s), []);
      await assertSnapshot(
        `qwen__realclients__${scenario}`,
        normalize(sessions, { [SHARED]: "<FIXTURES>" }),
      );
    });
  }
});

Deno.test("qwen importer: real-client sessions match their scenarios call by call", async (t) => {
  for (const scenario of scenarios()) {
    await t.step(scenario, async () => {
      const dir = `${REAL}/${scenario}`;
      const truth = await readScenario(dir);
      const units = await qwen.discover(
        { home: `${dir}/native`, env: {}, platform: "linux" },
        realFs,
      );
      const { sessions, payloads } = await importThroughStore(qwen, realFs, units, {
        closed: true,
      });
      const s = sessions[0];
      assertEquals(s.session.native_id, truth.session_id);
      assertEquals(s.session.project.path, truth.cwd, "project from the records' cwd");
      checkScenarioCalls(s, payloads, truth, scenario, classifyTool);
    });
  }
});
