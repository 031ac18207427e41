import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  classifyTool,
  validationProblems,
} from "../../../core/model/mod.ts";
import { codex, parseApplyPatch, patchFromCommand } from "../../../core/sources/codex/mod.ts";
import type { SourceUnit } from "../../../core/sources/types.ts";
import { mirrorKey } from "../../../core/sources/codex/state.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { MemFs } from "../../_helpers/mem_fs.ts";
import { assertSnapshot, normalize } from "./_snapshot.ts";
import {
  assemble,
  filesUnder,
  importThroughStore,
  ops,
  payloadText,
  readScenario,
  resume,
  SHARED,
} from "./_run_importer.ts";

const PATH =
  "/home/u/.codex/sessions/2026/01/02/rollout-2026-01-02T10-00-00-0aa0aa0a-0000-7000-8000-000000000001.jsonl";
const unit = (path = PATH): SourceUnit => ({ source: "codex", path, kind: "jsonl", rank: 0 });

let clock = Date.parse("2026-01-02T10:00:00.000Z");
/** One envelope line, one millisecond after the previous. */
const env = (type: string, payload: Record<string, unknown>) =>
  JSON.stringify({ timestamp: new Date(clock++).toISOString(), type, payload }) + "\n";
const item = (payload: Record<string, unknown>) => env("response_item", payload);
const event = (payload: Record<string, unknown>) => env("event_msg", payload);
const META = env("session_meta", {
  id: "0aa0aa0a-0000-7000-8000-000000000001",
  timestamp: "2026-01-02T10:00:00.000Z",
  cwd: "/home/u/proj",
  originator: "codex_cli_rs",
  cli_version: "0.171.0",
  model_provider: "openai",
  git: { branch: "main", commit_hash: "abc123", repository_url: "https://example.invalid/r.git" },
});
const TURN = env("turn_context", { cwd: "/home/u/proj", model: "gpt-5.5" });
const user = (text: string) =>
  item({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const call = (name: string, args: unknown, callId: string) =>
  item({
    type: "function_call",
    name,
    arguments: typeof args === "string" ? args : JSON.stringify(args),
    call_id: callId,
  });
const output = (callId: string, out: unknown) =>
  item({ type: "function_call_output", call_id: callId, output: out });

async function importText(text: string) {
  const fs = new MemFs();
  fs.write(PATH, text);
  const { sessions, payloads, results } = await importThroughStore(codex, fs, [unit()], {
    closed: true,
  });
  assertEquals(sessions.length, 1);
  assertEquals(validationProblems(sessions[0]), []);
  return { s: sessions[0], payloads, result: results[0] };
}

const PATCH = [
  "*** Begin Patch",
  "*** Add File: docs/new.md",
  "+hello",
  "*** Update File: src/app.py",
  "*** Move to: src/main.py",
  "@@",
  "-a",
  "+b",
  "*** Delete File: old.txt",
  "*** End Patch",
].join("\n");

Deno.test("codex importer maps each record type and tool shape", async (t) => {
  const cases: {
    name: string;
    lines: string[];
    check: (s: CanonicalSession, p: Map<string, Uint8Array>) => void;
  }[] = [
    {
      name: "session_meta gives the session, project, git and the client endpoint",
      lines: [META, TURN, user("hi")],
      check: (s) => {
        assertEquals(s.session.id, "codex:0aa0aa0a-0000-7000-8000-000000000001");
        assertEquals(s.session.project, {
          path: "/home/u/proj",
          git: { branch: "main", commit: "abc123", repository: "https://example.invalid/r.git" },
        });
        assertEquals(s.session.started_at, "2026-01-02T10:00:00.000Z");
        const c = s.connections[0];
        assertEquals([c.client.agent, c.client.version, c.client.entrypoint], [
          "codex",
          "0.171.0",
          "codex_cli_rs",
        ]);
        assertEquals([c.server.provider, c.server.model], ["openai", "gpt-5.5"]);
        assertEquals(c.server.evidence.map((e) => e.field), [
          "session_meta.model_provider",
          "turn_context.model",
        ]);
        assertEquals(s.issues, []);
      },
    },
    {
      name: "two models leave the connection's model absent, record an issue, keep per-op models",
      lines: [
        META,
        TURN,
        call("shell", { command: ["ls"] }, "c1"),
        env("turn_context", { model: "gpt-5.6" }),
        call("shell", { command: ["pwd"] }, "c2"),
      ],
      check: (s) => {
        assertEquals(s.connections[0].server.model, undefined);
        assertEquals(s.issues.map((i) => i.code), ["conflicting_model"]);
        assertEquals(ops(s).map((o) => o.model), ["gpt-5.5", "gpt-5.6"]);
      },
    },
    {
      name: "a file without session_meta or turn_context says so and invents nothing",
      lines: [user("hi")],
      check: (s) => {
        assertEquals(s.session.native_id, "0aa0aa0a-0000-7000-8000-000000000001");
        assertEquals(s.connections[0].client.version, undefined);
        assertEquals(s.connections[0].server, { evidence: [] });
        assertEquals(s.issues.map((i) => i.code).sort(), [
          "missing_client_version",
          "missing_model",
        ]);
      },
    },
    {
      name: "a user message is a prompt with its text as request; injected context is marked",
      lines: [
        META,
        TURN,
        user("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
        user("# AGENTS.md instructions for /x\n\nbe nice"),
        item({
          type: "message",
          role: "developer",
          content: [{ type: "input_text", text: "<permissions>p</permissions>" }],
        }),
        user("fix the bug"),
      ],
      check: (s, p) => {
        const all = ops(s);
        assertEquals(all.map((o) => [o.kind, o.injected ?? false]), [
          ["prompt", true],
          ["prompt", true],
          ["prompt", true],
          ["prompt", false],
        ]);
        assertEquals(payloadText(p, all[3].request), "fix the bug");
        assertEquals(s.session.last_prompt, "fix the bug");
      },
    },
    {
      name: "an event mirror after its response item adds nothing",
      lines: [
        META,
        TURN,
        user("go"),
        event({ type: "user_message", message: "go" }),
        item({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "ok" }],
        }),
        event({ type: "agent_message", message: "ok" }),
      ],
      check: (s) =>
        assertEquals(ops(s).map((o) => [o.kind, o.text]), [["prompt", "go"], ["reply", "ok"]]),
    },
    {
      name: "an event of another text of the same length mirrors nothing",
      lines: [
        META,
        TURN,
        user("go"),
        item({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "abc" }],
        }),
        event({ type: "agent_message", message: "abd" }),
        event({ type: "agent_message", message: "abc" }),
      ],
      check: (s) =>
        assertEquals(ops(s).map((o) => [o.kind, o.text]), [
          ["prompt", "go"],
          ["reply", "abc"],
          ["reply", "abd"],
        ]),
    },
    {
      name: "a response item after its event mirror takes over the event's operation",
      lines: [
        META,
        TURN,
        event({ type: "agent_reasoning", text: "**Planning**" }),
        item({ type: "reasoning", summary: [{ type: "summary_text", text: "**Planning**" }] }),
        event({
          type: "item_completed",
          item: { type: "AgentMessage", id: "m1", content: [{ type: "Text", text: "done" }] },
        }),
        item({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "done" }],
        }),
      ],
      check: (s, p) => {
        const all = ops(s);
        assertEquals(all.map((o) => [o.kind, o.text, o.provenance.source_range.lines[0]]), [
          ["thinking", "**Planning**", 4],
          ["reply", "done", 6],
        ]);
        assertEquals(payloadText(p, all[1].response), "done");
      },
    },
    {
      name: "event-only reasoning (older logs) still becomes a thinking step",
      lines: [META, TURN, event({ type: "agent_reasoning", text: "hmm" })],
      check: (s) => assertEquals(ops(s).map((o) => [o.kind, o.text]), [["thinking", "hmm"]]),
    },
    {
      name:
        "function_call JSON-string arguments are parsed; a JSON-string output gives the exit code",
      lines: [
        META,
        TURN,
        call("shell", { command: ["bash", "-lc", "false"], workdir: "/x" }, "c1"),
        output("c1", JSON.stringify({ output: "", metadata: { exit_code: 1 } })),
      ],
      check: (s, p) => {
        const [op] = ops(s);
        assertEquals([op.kind, op.effect, op.tool, op.native_id, op.is_error, op.completeness], [
          "exec",
          "process",
          "shell",
          "c1",
          true,
          "complete",
        ]);
        assertEquals(JSON.parse(payloadText(p, op.request)!), {
          command: ["bash", "-lc", "false"],
          workdir: "/x",
        });
        assertEquals(op.summary, "bash -lc false");
        assertEquals(op.replay, { replayable: true, blockers: ["needs_confirmation"] });
      },
    },
    {
      name: "unparseable arguments are kept raw in extensions",
      lines: [META, TURN, call("shell", "{not json", "c1"), output("c1", "x")],
      check: (s, p) => {
        const [op] = ops(s);
        assertEquals(op.extensions, { codex: { raw_arguments: "{not json" } });
        assertEquals(payloadText(p, op.request), "{not json");
        assertEquals(s.issues.map((i) => i.code), ["unparsed_arguments"]);
      },
    },
    {
      name: "exit codes in the output text set the error flag",
      lines: [
        META,
        TURN,
        call("exec_command", { cmd: "a" }, "c1"),
        output("c1", "Chunk ID: 1\nWall time: 0 seconds\nProcess exited with code 2\nOutput:\nno"),
        call("exec_command", { cmd: "b" }, "c2"),
        output("c2", "Chunk ID: 2\nProcess exited with code 0\nOutput:\nyes"),
        call("shell_command", { command: "c" }, "c3"),
        output("c3", "Exit code: 1\nWall time: 0 seconds\nOutput:\n"),
        call("shell", { command: ["d"] }, "c4"),
        output("c4", [{ type: "input_text", text: "array output" }]),
        call("shell", { command: ["e"] }, "c5"),
        output("c5", { content: "old shape", success: false }),
      ],
      check: (s, p) => {
        const all = ops(s);
        assertEquals(all.map((o) => o.is_error), [true, false, true, false, true]);
        assertEquals(JSON.parse(payloadText(p, all[3].response)!), [
          { type: "input_text", text: "array output" },
        ]);
      },
    },
    {
      name: "an exec end event gives the error flag when the output carries no exit code",
      lines: [
        META,
        TURN,
        call("shell", { command: ["x"] }, "c1"),
        event({ type: "exec_command_end", call_id: "c1", exit_code: 3, parsed_cmd: [] }),
        output("c1", "plain text"),
      ],
      check: (s) => assertEquals(ops(s)[0].is_error, true),
    },
    {
      name: "apply_patch is one write/edit per file, each keeping the whole patch as request",
      lines: [
        META,
        TURN,
        item({ type: "custom_tool_call", name: "apply_patch", call_id: "p1", input: PATCH }),
        item({
          type: "custom_tool_call_output",
          call_id: "p1",
          output: "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.",
        }),
      ],
      check: (s, p) => {
        const all = ops(s);
        assertEquals(all.map((o) => [o.kind, o.effect, o.target, o.is_error, o.completeness]), [
          ["write", "fs_write", "docs/new.md", false, "complete"],
          ["edit", "fs_write", "src/app.py", false, "complete"],
          ["edit", "fs_write", "old.txt", false, "complete"],
        ]);
        assertEquals(
          all.map((o) => (o.extensions?.codex as Record<string, unknown>).patch_action),
          [
            "add",
            "update",
            "delete",
          ],
        );
        assertEquals((all[1].extensions?.codex as Record<string, unknown>).move_to, "src/main.py");
        for (const o of all) {
          assertEquals(payloadText(p, o.request), PATCH);
          assertEquals(o.native_id, "p1");
          assertEquals(o.replay, { replayable: true, blockers: [] });
        }
        assertEquals(new Set(all.map((o) => o.id)).size, 3);
      },
    },
    {
      name: "apply_patch as a JSON function call, a shell argv and a heredoc are all patches",
      lines: [
        META,
        TURN,
        call(
          "apply_patch",
          { input: "*** Begin Patch\n*** Update File: a.py\n*** End Patch" },
          "c1",
        ),
        output("c1", "Success. Updated the following files:\nM a.py"),
        call("shell", {
          command: ["apply_patch", "*** Begin Patch\n*** Add File: b.py\n+x\n*** End Patch"],
        }, "c2"),
        output("c2", JSON.stringify({ output: "ok", metadata: { exit_code: 0 } })),
        call("shell_command", {
          command:
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: c.py\n*** End Patch\nEOF",
        }, "c3"),
        output("c3", "Exit code: 1\nOutput:\nfailed"),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.tool, o.kind, o.target, o.is_error]), [
          ["apply_patch", "edit", "a.py", false],
          ["shell", "write", "b.py", false],
          ["shell_command", "edit", "c.py", true],
        ]);
      },
    },
    {
      name: "a patch that fails verification is an error",
      lines: [
        META,
        TURN,
        item({ type: "custom_tool_call", name: "apply_patch", call_id: "p1", input: PATCH }),
        item({
          type: "custom_tool_call_output",
          call_id: "p1",
          output: "apply_patch verification failed: Failed to find expected lines",
        }),
      ],
      check: (s) => assertEquals(ops(s).map((o) => o.is_error), [true, true, true]),
    },
    {
      name: "local_shell_call, web_search_call and MCP tools map to exec, web and mcp",
      lines: [
        META,
        TURN,
        item({
          type: "local_shell_call",
          call_id: "l1",
          status: "completed",
          action: { type: "exec", command: ["ls"], working_directory: "/x" },
        }),
        output("l1", "a\nb"),
        item({
          type: "web_search_call",
          status: "completed",
          action: { type: "open_page", url: "https://example.invalid/doc" },
        }),
        call("github__search_issues", { q: "bug" }, "m1"),
        output("m1", "[]"),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.effect, o.tool, o.completeness]), [
          ["exec", "process", "local_shell", "complete"],
          ["web", "network", "web_search", "complete"],
          ["mcp", "network", "github__search_issues", "complete"],
        ]);
        assertEquals(ops(s)[1].target, "https://example.invalid/doc");
      },
    },
    {
      name: "a call without its output is incomplete; an output without its call is unmatched",
      lines: [
        META,
        TURN,
        output("gone", "Exit code: 0\nOutput:\nx"),
        call("shell", { command: ["sleep", "9"] }, "c1"),
      ],
      check: (s) => {
        const [orphan, running] = ops(s);
        assertEquals([orphan.completeness, orphan.replay], ["unmatched", {
          replayable: false,
          blockers: ["continuation_only"],
        }]);
        assertEquals([running.completeness, running.replay], ["incomplete", {
          replayable: false,
          blockers: ["incomplete"],
        }]);
        assertEquals(s.completeness.connections.main, "unmatched");
      },
    },
    {
      name: "cumulative token counts become per-request entries summing to the last total",
      lines: [
        META,
        TURN,
        event({
          type: "token_count",
          info: {
            total_token_usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 10 },
          },
        }),
        event({
          type: "token_count",
          info: {
            total_token_usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 10 },
          },
        }),
        event({ type: "token_count", info: null }),
        event({
          type: "token_count",
          info: {
            total_token_usage: {
              input_tokens: 250,
              cached_input_tokens: 90,
              output_tokens: 30,
              cache_write_input_tokens: 5,
            },
          },
        }),
      ],
      check: (s) => {
        assertEquals(s.usage.by_model, {
          "gpt-5.5": { input: 160, output: 30, cache_read: 90, cache_write: 5 },
        });
      },
    },
    {
      name: "compaction is one event whether the record or its event mirror comes first",
      lines: [
        META,
        TURN,
        event({ type: "context_compacted" }),
        env("compacted", { message: "summary of before", replacement_history: [{}, {}] }),
        event({ type: "turn_aborted", reason: "interrupted" }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.event, o.text]), [
          ["event", "compaction", "summary of before"],
          ["event", "turn_aborted", "interrupted"],
        ]);
      },
    },
    {
      name: "unknown record, item and event types are issues counted per type",
      lines: [
        META,
        TURN,
        env("brand_new", { a: 1 }),
        env("brand_new", { a: 2 }),
        item({ type: "hologram" }),
        event({ type: "telepathy" }),
        env("world_state", { full: true }),
      ],
      check: (s) => {
        assertEquals(s.issues.map((i) => [i.code, i.message, i.count]), [
          ["unknown_record_type", 'Unknown Codex record type "brand_new"', 2],
          ["unknown_item_type", 'Unknown Codex response item type "hologram"', 1],
          ["unknown_event_type", 'Unknown Codex event_msg type "telepathy"', 1],
        ]);
        // Known types shown nowhere are counted, not reported.
        assertEquals(s.extensions.codex, { skipped_records: { world_state: 1 } });
      },
    },
    {
      name: "known records with nothing to show are counted per type in skipped_records",
      lines: [
        META,
        TURN,
        event({ type: "turn_diff", unified_diff: "" }),
        event({ type: "turn_diff", unified_diff: "" }),
        item({ type: "ghost_snapshot" }),
        env("token_usage_record", {}),
      ],
      check: (s) => {
        assertEquals(s.issues.filter((i) => i.code.startsWith("unknown")), []);
        assertEquals(s.extensions.codex, {
          skipped_records: {
            "event_msg:turn_diff": 2,
            "response_item:ghost_snapshot": 1,
            token_usage_record: 1,
          },
        });
      },
    },
    {
      name: "the pre-envelope layout: a bare header line, state markers, bare items",
      lines: [
        JSON.stringify({ id: "legacy-1", timestamp: "2025-08-20T13:20:47.060Z", git: {} }) + "\n",
        JSON.stringify({ record_type: "state" }) + "\n",
        JSON.stringify({
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "ls" }],
        }) +
        "\n",
        JSON.stringify({
          type: "function_call",
          name: "shell",
          arguments: '{"command":["ls"]}',
          call_id: "c",
        }) +
        "\n",
        JSON.stringify({ type: "function_call_output", call_id: "c", output: "README.md" }) + "\n",
      ],
      check: (s) => {
        assertEquals(s.session.id, "codex:legacy-1");
        assertEquals(ops(s).map((o) => [o.kind, o.completeness]), [
          ["prompt", "complete"],
          ["exec", "complete"],
        ]);
        assertEquals(ops(s).map((o) => o.ts_ms), [
          Date.parse("2025-08-20T13:20:47.060Z"),
          Date.parse("2025-08-20T13:20:47.060Z"),
        ]);
      },
    },
    {
      name: "thread_name_updated gives the session title",
      lines: [META, event({ type: "thread_name_updated", thread_name: "Fix login" })],
      check: (s) => assertEquals(s.session.title, "Fix login"),
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const { s, payloads } = await importText(c.lines.join(""));
      c.check(s, payloads);
    });
  }
});

Deno.test("parseApplyPatch() lists each file with its action", () => {
  assertEquals(parseApplyPatch(PATCH), [
    { action: "add", path: "docs/new.md" },
    { action: "update", path: "src/app.py", move_to: "src/main.py" },
    { action: "delete", path: "old.txt" },
  ]);
  assertEquals(parseApplyPatch("[trimmed]"), []);
});

Deno.test("patchFromCommand() finds argv and heredoc patches, and nothing else", () => {
  assertEquals(patchFromCommand(["apply_patch", "P"]), "P");
  assertEquals(
    patchFromCommand(["bash", "-lc", 'cd x && apply_patch <<"EOF"\n*** Begin Patch\nEOF\n']),
    "*** Begin Patch",
  );
  assertEquals(patchFromCommand("ls -la"), undefined);
  assertEquals(patchFromCommand(["echo", "apply_patch"]), undefined);
});

// ------------------------------------------------------------------ incremental passes

Deno.test("codex importer: an appended line is read from the checkpoint and completes the call", async () => {
  const fs = new MemFs();
  fs.write(PATH, META + TURN + call("shell", { command: ["ls"] }, "c1"));
  const first = await codex.import(unit(), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations.map((o) => o.op.completeness), ["incomplete"]);
  fs.append(PATH, output("c1", "Exit code: 0\nOutput:\na"));
  const second = await resume(codex, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  const [op] = second.deltas[0].operations;
  assertEquals(op.id, first.deltas[0].operations[0].id);
  assertEquals([op.op.completeness, op.op.provenance.epoch, op.op.provenance.completion?.epoch], [
    "complete",
    0,
    1,
  ]);
  assert(second.bytesRead < fs.files.get(PATH)!.bytes.byteLength, "only the new bytes are read");
  const third = await resume(codex, fs, unit(), second, 2);
  assertEquals([third.mode, third.deltas.length, third.bytesRead], ["unchanged", 0, 0]);
  const { sessions } = assemble([first, second]);
  assertEquals(ops(sessions[0]).map((o) => o.completeness), ["complete"]);
});

Deno.test("codex importer: a mirror split across passes is still one operation", async () => {
  const fs = new MemFs();
  // the first pass ends after an event whose item comes next, and after an item whose event does
  const thinking = event({ type: "agent_reasoning", text: "**Plan**" });
  const reply = item({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "done" }],
  });
  fs.write(PATH, META + TURN + thinking + reply);
  const first = await codex.import(unit(), { fs, epoch: 0 });
  const kept = (first.state as { mirrors: { key: string }[] }).mirrors.map((m) => m.key);
  assertEquals(kept, [mirrorKey("thinking:**Plan**"), mirrorKey("reply:done")]);
  fs.append(
    PATH,
    item({ type: "reasoning", summary: [{ type: "summary_text", text: "**Plan**" }] }) +
      event({ type: "agent_message", message: "done" }),
  );
  const second = await resume(codex, fs, unit(), first, 1);
  const { sessions } = assemble([first, second]);
  assertEquals(ops(sessions[0]).map((o) => [o.kind, o.text, o.provenance.source_range.lines[0]]), [
    ["thinking", "**Plan**", 5], // the item took over the event's operation, in the second pass
    ["reply", "done", 4],
  ]);
});

Deno.test("codex importer: a re-import from zero gives the same operation ids", async () => {
  const text = META + TURN + user("go") + call("shell", { command: ["ls"] }, "c1") +
    output("c1", "x");
  const a = await importText(text);
  const b = await importText(text);
  assertEquals(Object.keys(a.s.operations), Object.keys(b.s.operations));
});

Deno.test("codex importer: a truncated or replaced file is read again from zero", async (t) => {
  for (const how of ["truncated", "replaced"] as const) {
    await t.step(how, async () => {
      const fs = new MemFs();
      fs.write(PATH, META + TURN + user("one") + user("two"));
      const first = await codex.import(unit(), { fs, epoch: 0 });
      if (how === "truncated") fs.write(PATH, META + TURN + user("one"));
      else {fs.write(PATH, META + TURN + user("uno") + user("dos") + user("tres"), {
          replace: true,
        });}
      const second = await resume(codex, fs, unit(), first, 1);
      assertEquals(second.mode, "full");
      assertEquals(
        second.deltas[0].operations.map((o) => o.op.text),
        how === "truncated" ? ["one"] : ["uno", "dos", "tres"],
      );
    });
  }
});

Deno.test("codex importer: a malformed line becomes a loss window and the rest is kept", async () => {
  const { s } = await importText(META + TURN + user("a") + "{broken\n[1,2]\n" + user("b"));
  assertEquals(ops(s).map((o) => o.text), ["a", "b"]);
  assertEquals(s.provenance.loss_windows.map((l) => [l.lines, l.reason]), [
    [[4, 4], "invalid JSON"],
    [[5, 5], "not a JSON object"],
  ]);
});

Deno.test("codex importer: a half-written last line is left for the next pass", async () => {
  const fs = new MemFs();
  const last = user("second");
  fs.write(PATH, META + TURN + user("first") + last.slice(0, 20));
  const first = await codex.import(unit(), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations.map((o) => o.op.text), ["first"]);
  assertEquals(first.deltas[0].loss_windows, []);
  fs.append(PATH, last.slice(20));
  const second = await resume(codex, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  assertEquals(second.deltas[0].operations.map((o) => o.op.text), ["second"]);
  assertEquals(second.deltas[0].operations[0].order.line, 4);
});

Deno.test("codex importer: usage stays exact across passes", async () => {
  const fs = new MemFs();
  const tc = (i: number, o: number) =>
    event({
      type: "token_count",
      info: { total_token_usage: { input_tokens: i, output_tokens: o } },
    });
  fs.write(PATH, META + TURN + tc(10, 1) + tc(10, 1));
  const first = await codex.import(unit(), { fs, epoch: 0 });
  fs.append(PATH, tc(10, 1) + tc(35, 4));
  const second = await resume(codex, fs, unit(), first, 1);
  const { sessions } = assemble([first, second]);
  assertEquals(sessions[0].usage.by_model["gpt-5.5"], {
    input: 35,
    output: 4,
    cache_read: 0,
    cache_write: 0,
  });
});

// ------------------------------------------------------------------ discovery

Deno.test("codex discover() finds sessions and archived sessions, each once", async (t) => {
  const fs = new MemFs();
  const name = (n: number) =>
    `rollout-2026-01-02T10-00-0${n}-0aa0aa0a-0000-7000-8000-00000000000${n}.jsonl`;
  fs.write(`/h/.codex/sessions/2026/01/02/${name(1)}`, META);
  fs.write(`/h/.codex/sessions/2026/01/02/notes.txt`, "x");
  fs.write(`/h/.codex/archived_sessions/${name(1)}`, META);
  fs.write(`/h/.codex/archived_sessions/${name(2)}`, META);
  fs.write(`/elsewhere/sessions/2026/02/03/${name(3)}`, META);
  await t.step("under ~/.codex", async () => {
    const units = await codex.discover({ home: "/h", env: {}, platform: "linux" }, fs);
    assertEquals(units.map((u) => u.path), [
      `/h/.codex/sessions/2026/01/02/${name(1)}`,
      `/h/.codex/archived_sessions/${name(2)}`,
    ]);
    assert(units.every((u) => u.kind === "jsonl" && u.source === "codex" && codex.detect(u.path)));
  });
  await t.step("under CODEX_HOME", async () => {
    const units = await codex.discover(
      { home: "/h", env: { CODEX_HOME: "/elsewhere" }, platform: "linux" },
      fs,
    );
    assertEquals(units.map((u) => u.path), [`/elsewhere/sessions/2026/02/03/${name(3)}`]);
  });
  await t.step("a missing root is no units, not an error", async () => {
    assertEquals(await codex.discover({ home: "/nobody", env: {}, platform: "linux" }, fs), []);
  });
});

// ------------------------------------------------------------------ fixtures

const realFs = createDenoFs();

Deno.test("codex importer: every peers and real-client fixture imports, validates and matches its snapshot", async (t) => {
  const roots = [`${SHARED}/peers/codex`, `${SHARED}/realclients/codex`];
  for (const root of roots) {
    const files = (await filesUnder(root, /\.jsonl$/)).filter((p) => !p.includes("/mock/"));
    // A real-client scenario's rollouts (a parent and the threads it spawned) are one session.
    const groups = new Map<string, string[]>();
    for (const path of files) {
      const key = /^(.*\/realclients\/codex\/[^/]+)\//.exec(path)?.[1] ?? path;
      groups.set(key, [...(groups.get(key) ?? []), path]);
    }
    for (const paths of groups.values()) {
      const name = paths[0].slice(SHARED.length + 1);
      await t.step(name, async () => {
        const { sessions } = await importThroughStore(codex, realFs, paths.map((p) => unit(p)), {
          closed: true,
        });
        assertEquals(sessions.length, 1);
        for (const s of sessions) assertEquals(validationProblems(s), []);
        await assertSnapshot(
          `codex__${
            name.replace(/^realclients\/codex\/([^/]+)\/.*$/, "realclients__$1")
              .replace(/^peers\/codex\//, "peers__").replace(/\//g, "__")
          }`,
          normalize(sessions, { [SHARED]: "<FIXTURES>" }),
        );
      });
    }
  }
});

Deno.test("codex importer: schema-drift fixtures report their unknown types as issues", async () => {
  const { sessions } = await importThroughStore(codex, realFs, [
    unit(`${SHARED}/peers/codex/agentsessions_schema_drift.jsonl`),
  ], { closed: true });
  const s = sessions[0];
  assertEquals(
    s.issues.filter((i) => i.code === "unknown_record_type").map((i) => [i.message, i.count]),
    [['Unknown Codex record type "(none)"', 2], ['Unknown Codex record type "function_result"', 1]],
  );
  // The one function_call line reads as a bare item; its name sits in `function.name`.
  assertEquals(ops(s).map((o) => [o.tool, o.completeness]), [["translate", "incomplete"]]);
  const rich = (await importThroughStore(codex, realFs, [
    unit(`${SHARED}/peers/codex/agentsessions_small_v0.146_schema_rich.jsonl`),
  ])).sessions[0];
  assertEquals(validationProblems(rich), []);
  assert(rich.timeline.length > 20);
});

Deno.test("codex importer: real-client sessions match their scenarios call by call", async (t) => {
  for (const scenario of ["s1-basic", "s2-errors", "s4-long", "s7-resume"]) {
    await t.step(scenario, async () => {
      const dir = `${SHARED}/realclients/codex/${scenario}`;
      const truth = await readScenario(dir);
      const units = await codex.discover(
        { home: `${dir}/native`, env: {}, platform: "linux" },
        realFs,
      );
      assertEquals(units.length, 1);
      const { sessions, payloads } = await importThroughStore(codex, realFs, units, {
        closed: true,
      });
      const s = sessions[0];
      assertEquals(s.session.native_id, truth.session_id);
      assertEquals(s.session.project.path, truth.cwd);
      assertEquals(s.connections[0].client.version, "0.171.0");
      const calls = ops(s).filter((o) => o.tool !== undefined);
      assertEquals(calls.length, truth.tool_calls.length, "one operation per scripted tool call");
      calls.forEach((c, i) => {
        const exp = truth.tool_calls[i];
        const where = `${scenario} call ${exp.seq} (${exp.native_tool})`;
        assertEquals(c.tool, exp.native_tool, where);
        const kind = exp.native_tool === "apply_patch"
          ? (exp.op === "write" ? "write" : "edit")
          : classifyTool(exp.native_tool);
        assertEquals(c.kind, kind, where);
        const request = payloadText(payloads, c.request)!;
        if (typeof exp.input === "string") assertEquals(request, exp.input, where);
        else assertEquals(JSON.parse(request), exp.input, where);
        if (exp.path !== null) assertEquals(c.target, exp.path, where);
        assertEquals(c.is_error, exp.expected_error, `${where}: error flag`);
        assertEquals(c.completeness, "complete", where);
        assert(payloadText(payloads, c.response) !== undefined, `${where}: the result is kept`);
      });
      const replies = ops(s).filter((o) => o.kind === "reply").map((o) => o.text);
      assertEquals(replies.at(-1), truth.final_texts.at(-1));
      // One prompt per run (a resumed scenario runs twice).
      assertEquals(
        ops(s).filter((o) => o.kind === "prompt" && !o.injected).length,
        truth.runs?.length ?? 1,
      );
    });
  }
});

Deno.test("codex importer: bad input is recorded as issues and loss, other sessions unaffected", async (t) => {
  const cases: { name: string; lines: string[]; issue?: string; loss?: string }[] = [
    {
      name: "a NULL payload",
      lines: [
        JSON.stringify({
          timestamp: "2026-01-02T10:00:00Z",
          type: "response_item",
          payload: null,
        }) + "\n",
      ],
      issue: "unexpected_shape",
    },
    {
      name: "a string where the payload object belongs",
      lines: [JSON.stringify({ type: "event_msg", payload: "token_count" }) + "\n"],
      issue: "unexpected_shape",
    },
    {
      name: "NULL message content and NULL arguments",
      lines: [
        item({ type: "message", role: "user", content: null }),
        item({ type: "function_call", name: "shell", arguments: null, call_id: "c" }),
      ],
      issue: "unexpected_shape",
    },
    {
      name: "strings where objects were expected inside payloads",
      lines: [
        env("session_meta", { id: "x", git: "main", cli_version: 171 }),
        env("turn_context", { model: { name: "gpt" } }),
        event({ type: "token_count", info: "lots" }),
        item({ type: "local_shell_call", call_id: "l", action: "ls" }),
        output("l", { metadata: "none" }),
      ],
      issue: "missing_client_version",
    },
    {
      name: "binary garbage and a truncated line",
      lines: [
        "\u0000\u0001\u0002garbage\n",
        user("ok"),
        '{"timestamp":"2026-01-02T10:00:00Z","type":"resp',
      ],
      loss: "invalid JSON",
    },
  ];
  const good = "/home/u/.codex/sessions/2026/01/02/rollout-good.jsonl";
  for (const c of cases) {
    await t.step(c.name, async () => {
      const fs = new MemFs();
      fs.write(PATH, c.lines.join(""));
      fs.write(
        good,
        env("session_meta", { id: "900d", cli_version: "0.171.0" }) + TURN + user("fine"),
      );
      const { sessions } = await importThroughStore(codex, fs, [unit(), unit(good)], {
        closed: true,
      });
      assertEquals(sessions.length, 2);
      for (const s of sessions) assertEquals(validationProblems(s), []);
      const bad = sessions.find((s) => s.recording.source_paths[0] === PATH)!;
      const fine = sessions.find((s) => s.recording.source_paths[0] === good)!;
      if (c.issue) assert(bad.issues.some((i) => i.code === c.issue), JSON.stringify(bad.issues));
      if (c.loss) {
        assert(bad.provenance.loss_windows.some((l) => l.reason.startsWith(c.loss!)));
      }
      assertEquals(ops(fine).map((o) => o.text), ["fine"]);
      assertEquals(fine.issues, []);
    });
  }
});

Deno.test("codex importer: a last line without its newline is read when it parses", async () => {
  const fs = new MemFs();
  fs.write(PATH, META + TURN + user("first").trimEnd());
  const first = await codex.import(unit(), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations.map((o) => o.op.text), ["first"]);
  fs.append(PATH, "\n" + user("second"));
  const second = await resume(codex, fs, unit(), first, 1);
  assertEquals([second.mode, second.deltas[0].operations.map((o) => o.op.text)], [
    "append",
    ["second"],
  ]);
  assertEquals(second.deltas[0].loss_windows, []);
});

Deno.test("codex importer: a spawned thread is a sub-agent of its parent, its fork marked inherited", async () => {
  const dir = `${SHARED}/realclients/codex/s8-spawn`;
  const truth = await readScenario(dir);
  const units = await codex.discover(
    { home: `${dir}/native`, env: {}, platform: "linux" },
    realFs,
  );
  assertEquals(units.length, 2, "the parent's rollout and the thread's");
  const { sessions, payloads } = await importThroughStore(codex, realFs, units, { closed: true });
  assertEquals(sessions.length, 1, "the thread is not a session of its own");
  const s = sessions[0];
  assertEquals(validationProblems(s), []);
  const thread = s.connections.find((c) => c.kind === "subagent")!;
  assertEquals(thread.id, "thread:/root/inspect");
  const spawn = s.operations[thread.parent_op!];
  assertEquals([spawn.tool, spawn.spawns], ["spawn_agent", thread.id], "linked both ways");
  const mine = ops(s).filter((o) => o.conn === thread.id && !o.inherited);
  const inherited = ops(s).filter((o) => o.inherited);
  assert(inherited.length > 0 && inherited.every((o) => o.conn === thread.id));
  assert(inherited.some((o) => o.tool === "spawn_agent"), "the copied prefix ends at the spawn");
  // The thread's own first prompt is the task it was given.
  const firstPrompt = mine.find((o) => o.kind === "prompt" && !o.injected)!;
  assertEquals(firstPrompt.text, (truth.tool_calls[0].input as { message: string }).message);
  // Every scripted call once, the thread's on its connection, none of the copies.
  const calls = ops(s).filter((o) => o.tool !== undefined && !o.inherited);
  assertEquals(calls.map((c) => c.tool).sort(), truth.tool_calls.map((c) => c.native_tool).sort());
  for (const c of calls) {
    assertEquals(c.completeness, "complete", c.tool);
    assert(payloadText(payloads, c.response) !== undefined, `${c.tool} keeps its result`);
  }
  assertEquals(
    calls.filter((c) => c.conn === thread.id).length,
    truth.tool_calls.filter((c) => c.agent === "subagent").length,
  );
});

Deno.test("codex importer: a thread without a name of its own takes it from session_index.jsonl", async () => {
  const fs = new MemFs();
  fs.write(PATH, META + TURN + user("hello"));
  fs.write(
    "/home/u/.codex/session_index.jsonl",
    JSON.stringify({
      id: "0aa0aa0a-0000-7000-8000-000000000001",
      thread_name: "First name",
      updated_at: "2026-01-02T10:00:00Z",
    }) + "\n" +
      JSON.stringify({
        id: "0aa0aa0a-0000-7000-8000-000000000001",
        thread_name: "Renamed",
        updated_at: "2026-01-02T11:00:00Z",
      }) + "\n",
  );
  const { sessions } = await importThroughStore(codex, fs, [unit()], { closed: true });
  assertEquals(sessions[0].session.title, "Renamed", "the newest entry wins");
});
