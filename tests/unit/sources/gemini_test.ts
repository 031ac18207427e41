import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  classifyTool,
  validationProblems,
} from "../../../core/model/mod.ts";
import { gemini, geminiLayout, workspaceFromContext } from "../../../core/sources/gemini/mod.ts";
import { cutMark } from "../../../core/model/cut_mark.ts";
import { KEEP_TEXT_BYTES } from "../../../core/sources/json_cut.ts";
import { MAX_LINE_BYTES } from "../../../core/sources/jsonl.ts";
import type { SourceUnit } from "../../../core/sources/types.ts";
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
  relativeTo,
  resume,
  SHARED,
} from "./_run_importer.ts";

const CHATS = "/h/.gemini/tmp/proj/chats";
const PATH = `${CHATS}/session-2026-01-02T10-00-5e55a0a1.jsonl`;
const unit = (path = PATH, rank = 0): SourceUnit => ({
  source: "gemini",
  path,
  kind: path.endsWith(".json") ? "json" : "jsonl",
  rank,
});

const j = (v: unknown) => JSON.stringify(v) + "\n";
const SID = "5e55a0a1-0000-4000-8000-000000000001";
const META = j({
  sessionId: SID,
  projectHash: "abc",
  startTime: "2026-01-02T10:00:00.000Z",
  lastUpdated: "2026-01-02T10:00:00.000Z",
  kind: "main",
});
let clock = Date.parse("2026-01-02T10:00:01.000Z");
const at = () => new Date(clock++).toISOString();
const userMsg = (id: string, text: string) =>
  j({ id, timestamp: at(), type: "user", content: [{ text }] });
const reply = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  j({ id, timestamp: at(), type: "gemini", content, model: "gemini-2.5-flash", ...extra });
const toolCall = (
  id: string,
  name: string,
  args: Record<string, unknown>,
  response: Record<string, unknown> | null,
  status = "success",
) => ({
  id,
  name,
  args,
  ...(response ? { result: [{ functionResponse: { id, name, response } }] } : {}),
  status,
  timestamp: at(),
  displayName: name,
});

async function importText(text: string, path = PATH) {
  const fs = new MemFs();
  fs.write(path, text);
  const { sessions, payloads, results } = await importThroughStore(gemini, fs, [unit(path)], {
    closed: true,
  });
  assertEquals(sessions.length, 1);
  assertEquals(validationProblems(sessions[0]), []);
  return { s: sessions[0], payloads, result: results[0] };
}

Deno.test("gemini importer maps each record type and tool shape", async (t) => {
  const cases: {
    name: string;
    lines: string[];
    check: (s: CanonicalSession, p: Map<string, Uint8Array>) => void;
  }[] = [
    {
      name: "the metadata line gives the session; the model comes from messages",
      lines: [META, userMsg("u1", "hi"), reply("a1", "hello")],
      check: (s) => {
        assertEquals(s.session.id, `gemini:${SID}`);
        assertEquals(s.session.started_at, "2026-01-02T10:00:00.000Z");
        const c = s.connections[0];
        assertEquals([c.id, c.kind, c.client.agent, c.client.version], [
          "main",
          "main",
          "gemini",
          undefined,
        ]);
        assertEquals(c.server.model, "gemini-2.5-flash");
        assertEquals(s.issues.map((i) => i.code), ["missing_client_version"]);
      },
    },
    {
      name: "a user message is a prompt; the CLI's session context is injected",
      lines: [
        META,
        userMsg(
          "ctx",
          "<session_context>\n- **Workspace Directories:**\n  - /home/u/proj\n</session_context>",
        ),
        userMsg("u1", "fix it"),
      ],
      check: (s, p) => {
        assertEquals(ops(s).map((o) => [o.kind, o.injected ?? false]), [
          ["prompt", true],
          ["prompt", false],
        ]);
        assertEquals(payloadText(p, ops(s)[1].request), "fix it");
        assertEquals(s.session.project.path, "/home/u/proj");
        assertEquals(s.session.last_prompt, "fix it");
      },
    },
    {
      name: "thoughts, text and tool calls of one message are ordered steps",
      lines: [
        META,
        reply("a1", "Reading it.", {
          thoughts: [{ subject: "Plan", description: "read first" }],
          toolCalls: [
            toolCall("r1", "read_file", { file_path: "/p/a.md" }, { output: "# A" }),
          ],
          tokens: { input: 100, output: 10, cached: 40, thoughts: 5, tool: 0, total: 115 },
        }),
      ],
      check: (s, p) => {
        const all = ops(s);
        assertEquals(all.map((o) => [o.kind, o.text]), [
          ["thinking", "Plan: read first"],
          ["reply", "Reading it."],
          ["read", undefined],
        ]);
        const read = all[2];
        assertEquals([read.tool, read.native_id, read.target, read.is_error, read.completeness], [
          "read_file",
          "r1",
          "/p/a.md",
          false,
          "complete",
        ]);
        assertEquals(JSON.parse(payloadText(p, read.request)!), { file_path: "/p/a.md" });
        assertEquals(JSON.parse(payloadText(p, read.response)!)[0].functionResponse.response, {
          output: "# A",
        });
        assertEquals(s.usage.by_model, {
          "gemini-2.5-flash": { input: 60, output: 15, cache_read: 40, cache_write: 0 },
        });
      },
    },
    {
      name: "error status, an error response and a non-zero exit code are errors",
      lines: [
        META,
        reply("a1", "", {
          toolCalls: [
            toolCall("e1", "replace", { file_path: "/p/x" }, { error: "no match" }, "error"),
            toolCall("e2", "run_shell_command", { command: "false" }, {
              output: "Output: \nExit Code: 1\nProcess Group PGID: 1",
            }),
            toolCall("e3", "run_shell_command", { command: "true" }, {
              output: "Output: ok\nProcess Group PGID: 2",
            }),
            toolCall("e4", "read_file", { file_path: "/p/y" }, { error: "File not found" }),
          ],
        }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.is_error]), [
          ["edit", true],
          ["exec", true],
          ["exec", false],
          ["read", true],
        ]);
      },
    },
    {
      name: "a call still running is incomplete; one recorded without result keeps a missing ref",
      lines: [
        META,
        reply("a1", "", {
          toolCalls: [
            toolCall("x1", "run_shell_command", { command: "sleep 9" }, null, "executing"),
            toolCall("x2", "read_file", { file_path: "main.go" }, null, "success"),
          ],
        }),
      ],
      check: (s) => {
        const [running, done] = ops(s);
        assertEquals([running.completeness, running.replay.replayable], ["incomplete", false]);
        assertEquals(s.completeness.connections.main, "incomplete");
        assertEquals(done.completeness, "complete");
        assertEquals(done.response, {
          missing: true,
          reason: "the log records no result for this call",
        });
      },
    },
    {
      name: "info, warning and error messages are events",
      lines: [
        META,
        j({ id: "i", timestamp: at(), type: "info", content: "Request cancelled." }),
        j({ id: "w", timestamp: at(), type: "warning", content: "careful" }),
        j({ id: "e", timestamp: at(), type: "error", content: "quota" }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.event, o.text, o.is_error ?? false]), [
          ["event", "info", "Request cancelled.", false],
          ["event", "warning", "careful", false],
          ["event", "error", "quota", true],
        ]);
      },
    },
    {
      name: "a re-appended message replaces its operations: the last record with an id wins",
      lines: [
        META,
        reply("a1", "Working."),
        j({ $set: { lastUpdated: "2026-01-02T10:05:00.000Z" } }),
        reply("a1", "Working.", {
          toolCalls: [toolCall("w1", "write_file", { file_path: "/p/n.md", content: "x" }, {
            output: "ok",
          })],
        }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.provenance.source_range.lines[0]]), [
          ["reply", 4],
          ["write", 4],
        ]);
        // The message keeps the place of its first record.
        assertEquals(ops(s).map((o) => s.timeline.find((t) => t.op === o.id)!.seq), [0, 1]);
        assertEquals(s.session.ended_at, "2026-01-02T10:05:00.000Z");
      },
    },
    {
      name: "$rewindTo drops that message and everything after it",
      lines: [
        META,
        userMsg("u1", "one"),
        reply("a1", "first answer"),
        userMsg("u2", "two"),
        reply("a2", "second answer"),
        j({ $rewindTo: "u2" }),
        userMsg("u3", "two, again"),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => o.text), ["one", "first answer", "two, again"]);
      },
    },
    {
      name: "$set messages adds the messages it names and keeps those it leaves out",
      lines: [
        META,
        userMsg("u1", "old"),
        j({
          $set: {
            messages: [{
              id: "ctx",
              type: "user",
              content: [{ text: "<session_context>x</session_context>" }],
            }],
            summary: "A title",
          },
        }),
        userMsg("u2", "new"),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.text, o.injected ?? false]), [
          ["old", false],
          ["<session_context>x</session_context>", true],
          ["new", false],
        ]);
        assertEquals(s.session.title, "A title");
        assertEquals(s.extensions.gemini, undefined, "every key it set was read");
      },
    },
    {
      name: "a $set of a key Chronicle does not read is counted in skipped_records",
      lines: [
        META,
        j({ $set: { memoryScratchpad: "x", lastUpdated: "2026-01-01T00:00:00Z" } }),
        j({ $set: { memoryScratchpad: "y" } }),
        userMsg("u1", "hi"),
      ],
      check: (s) => {
        assertEquals(s.extensions.gemini, { skipped_records: { "$set:memoryScratchpad": 2 } });
        assertEquals(ops(s).map((o) => o.text), ["hi"]);
      },
    },
    {
      name: "tool results carried by a user message complete a call recorded without one",
      lines: [
        META,
        reply("a1", "", {
          toolCalls: [{ id: "c1", name: "read_file", args: { file_path: "/a" } }],
        }),
        j({
          id: "u9",
          timestamp: at(),
          type: "user",
          content: [{
            functionResponse: { id: "c1", name: "read_file", response: { output: "A" } },
          }],
        }),
      ],
      check: (s) => {
        const all = ops(s);
        assertEquals(all.map((o) => [o.kind, o.completeness, o.is_error]), [[
          "read",
          "complete",
          false,
        ]]);
      },
    },
    {
      name: "a tool result whose call was never read is an unmatched continuation",
      lines: [
        META,
        j({
          id: "u9",
          timestamp: at(),
          type: "user",
          content: [{
            functionResponse: { id: "old1", name: "read_file", response: { output: "A" } },
          }],
        }),
      ],
      check: (s) => {
        const [op] = ops(s);
        assertEquals([op.kind, op.tool, op.native_id, op.completeness, op.replay], [
          "read",
          "read_file",
          "old1",
          "unmatched",
          { replayable: false, blockers: ["continuation_only"] },
        ]);
        assertEquals(s.completeness.connections.main, "unmatched");
      },
    },
    {
      name: "MCP-style names are mcp; unknown message and record kinds are counted issues",
      lines: [
        META,
        reply("a1", "", {
          toolCalls: [toolCall("m1", "github__list", { q: 1 }, { output: "[]" })],
        }),
        j({ id: "z1", timestamp: at(), type: "hologram", content: "?" }),
        j({ id: "z2", timestamp: at(), type: "hologram", content: "?" }),
        j({ mystery: true }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.effect]), [["mcp", "network"]]);
        assertEquals(
          s.issues.filter((i) => i.code.startsWith("unknown")).map((i) => [i.code, i.count])
            .sort(),
          [["unknown_message_type", 2], ["unknown_record_type", 1]],
        );
      },
    },
    {
      name: "several models leave the connection's model absent with an issue",
      lines: [
        META,
        reply("a1", "x"),
        j({ id: "a2", timestamp: at(), type: "gemini", content: "y", model: "gemini-2.5-pro" }),
      ],
      check: (s) => {
        assertEquals(s.connections[0].server.model, undefined);
        assert(s.issues.some((i) => i.code === "conflicting_model"));
        assertEquals(ops(s).map((o) => o.model), ["gemini-2.5-flash", "gemini-2.5-pro"]);
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

Deno.test("gemini helpers read the workspace from the injected context and the folder layout", () => {
  assertEquals(workspaceFromContext("- **Workspace Directories:**\n  - /a/b\n"), "/a/b");
  assertEquals(geminiLayout(PATH), {
    root: "/h/.gemini",
    projectDir: "proj",
    parentSession: undefined,
  });
  assertEquals(geminiLayout(`${CHATS}/${SID}/child.jsonl`).parentSession, SID);
});

// ------------------------------------------------------------------ legacy JSON documents

Deno.test("gemini importer reads legacy .json documents, whole, again on any change", async () => {
  const fs = new MemFs();
  const path = `${CHATS}/session-2025-01-01T00-00-aaaa.json`;
  const doc = (messages: unknown[]) =>
    JSON.stringify({ sessionId: "legacy", startTime: "2025-01-01T00:00:00Z", messages });
  fs.write(
    path,
    doc([{ id: "u", type: "user", content: "hi", timestamp: "2025-01-01T00:00:01Z" }]),
  );
  const first = await gemini.import(unit(path), { fs, epoch: 0 });
  assertEquals([first.mode, first.deltas[0].operations.length], ["full", 1]);
  const again = await resume(gemini, fs, unit(path), first, 1);
  assertEquals([again.mode, again.bytesRead], ["unchanged", 0]);
  fs.write(
    path,
    doc([
      { id: "u", type: "user", content: "hi", timestamp: "2025-01-01T00:00:01Z" },
      { id: "m", type: "model", content: "hello", timestamp: "2025-01-01T00:00:02Z" },
    ]),
  );
  const second = await resume(gemini, fs, unit(path), first, 2);
  assertEquals(second.mode, "full");
  assertEquals(second.deltas[0].operations.map((o) => o.op.kind), ["prompt", "reply"]);
  assertEquals(second.deltas[0].operations[0].id, first.deltas[0].operations[0].id);
});

Deno.test("gemini importer: a half-written .json document is a loss window, not a crash", async () => {
  const fs = new MemFs();
  const path = `${CHATS}/session-2025-01-01T00-00-bbbb.json`;
  fs.write(path, '{"sessionId":"x","messages":[{"id":"u","type":"us');
  const r = await gemini.import(unit(path), { fs, epoch: 0 });
  assertEquals(r.deltas[0].loss_windows.map((l) => l.bytes), [[
    0,
    fs.files.get(path)!.bytes.length,
  ]]);
  assertEquals(r.deltas[0].session_id, "gemini:session-2025-01-01T00-00-bbbb");
  assertEquals(
    r.deltas[0].loss_windows[0].reason,
    "the JSON document does not parse (half-written or corrupt)",
  );
});

Deno.test("gemini importer: a .json document over the longest line keeps its messages, long texts cut", async () => {
  const fs = new MemFs();
  fs.chunk = 1 << 20; // as deno_fs reads
  const path = `${CHATS}/session-2025-01-01T00-00-cccc.json`;
  const huge = "hugestart " + "z".repeat(MAX_LINE_BYTES);
  fs.write(
    path,
    JSON.stringify({
      sessionId: "big",
      messages: [
        { id: "u", type: "user", content: "dump it", timestamp: "2025-01-01T00:00:01Z" },
        { id: "m", type: "model", content: huge, timestamp: "2025-01-01T00:00:02Z" },
        { id: "v", type: "user", content: "thanks", timestamp: "2025-01-01T00:00:03Z" },
      ],
    }),
  );
  const r = await gemini.import(unit(path), { fs, epoch: 0 });
  const d = r.deltas[0];
  assertEquals(d.operations.map((o) => o.op.kind), ["prompt", "reply", "prompt"]);
  // the reply lost part of its text: truncated; the prompts are whole
  assertEquals(d.operations.map((o) => o.op.completeness), ["complete", "truncated", "complete"]);
  const reply = d.operations[1].op;
  const text = reply.text ?? payloadText(r.payloads, reply.response)!;
  assert(text.startsWith("hugestart zzz"));
  assert(text.endsWith(cutMark(MAX_LINE_BYTES + 10 - KEEP_TEXT_BYTES)), text.slice(-60));
  assertEquals(d.loss_windows.map((l) => l.reason), [
    `document longer than ${MAX_LINE_BYTES} bytes: 1 text cut after ${KEEP_TEXT_BYTES} bytes, ` +
    `${MAX_LINE_BYTES + 10 - KEEP_TEXT_BYTES} bytes left out`,
  ]);
});

// ------------------------------------------------------------------ incremental passes

Deno.test("gemini importer: a re-appended message upserts its operation in the next pass", async () => {
  const fs = new MemFs();
  fs.write(PATH, META + userMsg("u1", "go") + reply("a1", "On it."));
  const first = await gemini.import(unit(), { fs, epoch: 0 });
  fs.append(
    PATH,
    reply("a1", "On it.", {
      toolCalls: [toolCall("c1", "run_shell_command", { command: "ls" }, { output: "Output: a" })],
    }),
  );
  const second = await resume(gemini, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  const replyId = first.deltas[0].operations.find((o) => o.op.kind === "reply")!.id;
  assertEquals(second.deltas[0].operations.map((o) => [o.op.kind, o.id === replyId]), [
    ["reply", true],
    ["exec", false],
  ]);
  const { sessions } = assemble([first, second]);
  assertEquals(ops(sessions[0]).map((o) => o.kind), ["prompt", "reply", "exec"]);
  const third = await resume(gemini, fs, unit(), second, 2);
  assertEquals([third.mode, third.deltas.length], ["unchanged", 0]);
});

Deno.test("gemini importer: a rewind past an earlier pass re-reads the file from zero", async () => {
  const fs = new MemFs();
  fs.write(PATH, META + userMsg("u1", "one") + userMsg("u2", "two"));
  const first = await gemini.import(unit(), { fs, epoch: 0 });
  fs.append(PATH, j({ $rewindTo: "u2" }) + userMsg("u3", "three"));
  const second = await resume(gemini, fs, unit(), first, 1);
  assertEquals(second.mode, "full");
  assertEquals(second.deltas[0].operations.map((o) => o.op.text), ["one", "three"]);
});

Deno.test("gemini importer: truncated and replaced files are read from zero", async (t) => {
  for (const how of ["truncated", "replaced"] as const) {
    await t.step(how, async () => {
      const fs = new MemFs();
      fs.write(PATH, META + userMsg("u1", "one") + userMsg("u2", "two"));
      const first = await gemini.import(unit(), { fs, epoch: 0 });
      if (how === "truncated") fs.write(PATH, META + userMsg("u1", "one"));
      else {fs.write(
          PATH,
          META + userMsg("v1", "uno") + userMsg("v2", "dos") + userMsg("v3", "tres"),
          {
            replace: true,
          },
        );}
      const second = await resume(gemini, fs, unit(), first, 1);
      assertEquals(second.mode, "full");
      assertEquals(
        second.deltas[0].operations.map((o) => o.op.text),
        how === "truncated" ? ["one"] : ["uno", "dos", "tres"],
      );
    });
  }
});

Deno.test("gemini importer: malformed lines are loss windows; a half-written last line waits", async () => {
  const fs = new MemFs();
  const tail = userMsg("u3", "three");
  fs.write(
    PATH,
    META + userMsg("u1", "one") + "{oops\n" + userMsg("u2", "two") + tail.slice(0, 15),
  );
  const first = await gemini.import(unit(), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations.map((o) => o.op.text), ["one", "two"]);
  assertEquals(first.deltas[0].loss_windows.map((l) => [l.lines, l.reason]), [[
    [3, 3],
    "invalid JSON",
  ]]);
  fs.append(PATH, tail.slice(15));
  const second = await resume(gemini, fs, unit(), first, 1);
  assertEquals(second.mode, "append");
  assertEquals(second.deltas[0].operations.map((o) => o.op.text), ["three"]);
});

// ------------------------------------------------------------------ discovery

Deno.test("gemini discover() finds chats, sub-agent chats and legacy documents", async (t) => {
  const fs = new MemFs();
  fs.write(PATH, META);
  fs.write(`${CHATS}/session-2025-01-01T00-00-aaaa.json`, "{}");
  fs.write(`${CHATS}/session-2025-02-01T00-00-cccc.json`, "{}");
  fs.write(`${CHATS}/session-2025-02-01T00-00-cccc.jsonl`, META);
  fs.write(`${CHATS}/${SID}/child-1.jsonl`, META);
  fs.write(`/h/.gemini/tmp/proj/logs.json`, "[]");
  fs.write(`/alt/.gemini/tmp/p2/chats/session-x.jsonl`, META);
  await t.step("under ~/.gemini", async () => {
    const units = await gemini.discover({ home: "/h", env: {}, platform: "linux" }, fs);
    assertEquals(units.map((u) => [u.path.slice(CHATS.length + 1), u.kind, u.rank]), [
      [`${SID}/child-1.jsonl`, "jsonl", 1],
      ["session-2025-01-01T00-00-aaaa.json", "json", 0],
      ["session-2025-02-01T00-00-cccc.jsonl", "jsonl", 0],
      ["session-2026-01-02T10-00-5e55a0a1.jsonl", "jsonl", 0],
    ]);
    assert(units.every((u) => gemini.detect(u.path)));
  });
  await t.step("under GEMINI_CLI_HOME", async () => {
    const units = await gemini.discover(
      { home: "/h", env: { GEMINI_CLI_HOME: "/alt" }, platform: "linux" },
      fs,
    );
    assertEquals(units.map((u) => u.path), ["/alt/.gemini/tmp/p2/chats/session-x.jsonl"]);
  });
  await t.step("a missing root is no units, not an error", async () => {
    assertEquals(await gemini.discover({ home: "/nobody", env: {}, platform: "linux" }, fs), []);
  });
});

Deno.test("gemini importer: a sub-agent chat joins its parent session as a sub-agent connection", async () => {
  const fs = new MemFs();
  const child = `${CHATS}/${SID}/7c7c7c7c-0000-4000-8000-000000000002.jsonl`;
  fs.write(PATH, META + userMsg("u1", "delegate"));
  fs.write(
    child,
    j({ sessionId: "7c7c7c7c-0000-4000-8000-000000000002", kind: "subagent" }) +
      reply("s1", "sub-agent reply"),
  );
  const { sessions } = await importThroughStore(gemini, fs, [unit(), unit(child, 1)]);
  assertEquals(sessions.length, 1);
  const s = sessions[0];
  assertEquals(validationProblems(s), []);
  assertEquals(s.connections.map((c) => [c.id, c.kind]), [
    ["main", "main"],
    ["subagent:7c7c7c7c-0000-4000-8000-000000000002", "subagent"],
  ]);
  assertEquals(ops(s).map((o) => [o.conn, o.text]), [
    ["main", "delegate"],
    ["subagent:7c7c7c7c-0000-4000-8000-000000000002", "sub-agent reply"],
  ]);
});

// ------------------------------------------------------------------ fixtures

const realFs = createDenoFs();

Deno.test("gemini importer: every peers and real-client fixture imports, validates and matches its snapshot", async (t) => {
  const files = [
    ...await filesUnder(`${SHARED}/peers/gemini`, /\.jsonl?$/),
    ...(await filesUnder(`${SHARED}/realclients/gemini`, /^session-.*\.jsonl?$/)),
  ];
  for (const path of files) {
    const name = path.slice(SHARED.length + 1);
    await t.step(name, async () => {
      const { sessions } = await importThroughStore(gemini, realFs, [unit(path)], { closed: true });
      assertEquals(sessions.length, 1);
      for (const s of sessions) assertEquals(validationProblems(s), []);
      await assertSnapshot(
        `gemini__${
          name.replace(/^realclients\/gemini\/([^/]+)\/.*$/, "realclients__$1")
            .replace(/^peers\/gemini\//, "peers__")
        }`,
        normalize(sessions, { [SHARED]: "<FIXTURES>" }),
      );
    });
  }
});

Deno.test("gemini importer: the schema-drift fixture reports its unknown layout", async () => {
  const { sessions } = await importThroughStore(gemini, realFs, [
    unit(`${SHARED}/peers/gemini/agentsessions_schema_drift.json`),
  ]);
  const s = sessions[0];
  assertEquals(s.issues.filter((i) => i.code === "unknown_layout").length, 1);
  assertEquals(ops(s).map((o) => [o.kind, o.text]), [
    ["prompt", "Describe this image:"],
    ["reply", "It looks like..."],
  ]);
});

Deno.test("gemini importer: real-client sessions match their scenarios call by call", async (t) => {
  for (const scenario of ["s1-basic", "s2-errors", "s4-long", "s7-resume"]) {
    await t.step(scenario, async () => {
      const dir = `${SHARED}/realclients/gemini/${scenario}`;
      const truth = await readScenario(dir);
      const units = await gemini.discover(
        { home: `${dir}/native`, env: {}, platform: "linux" },
        realFs,
      );
      assertEquals(units.length, 1);
      const { sessions, payloads } = await importThroughStore(gemini, realFs, units, {
        closed: true,
      });
      const s = sessions[0];
      assertEquals(s.session.native_id.slice(0, 8), truth.session_id.slice(0, 8));
      assertEquals(s.session.project.path, truth.cwd, "project from projects.json");
      const calls = ops(s).filter((o) => o.tool !== undefined);
      assertEquals(calls.length, truth.tool_calls.length, "one operation per scripted tool call");
      calls.forEach((c, i) => {
        const exp = truth.tool_calls[i];
        const where = `${scenario} call ${exp.seq} (${exp.native_tool})`;
        assertEquals(c.tool, exp.native_tool, where);
        assertEquals(c.kind, classifyTool(exp.native_tool), where);
        assertEquals(JSON.parse(payloadText(payloads, c.request)!), exp.input, where);
        if (exp.path !== null && c.kind !== "exec") {
          assertEquals(relativeTo(truth.cwd, c.target), exp.path, where);
        }
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

Deno.test("gemini importer: bad input is recorded as issues and loss, other sessions unaffected", async (t) => {
  const cases: { name: string; lines: string[]; issue?: string; loss?: string }[] = [
    {
      name: "NULL content, tool calls and tokens",
      lines: [
        META,
        j({ id: "a", type: "gemini", content: null, toolCalls: "none", tokens: "many" }),
      ],
      issue: "unexpected_shape",
    },
    {
      name: "a string where a tool call or its args belong",
      lines: [
        META,
        j({
          id: "a",
          type: "gemini",
          content: "",
          toolCalls: ["x", { id: "t", name: "read_file", args: "a.md" }],
        }),
      ],
      issue: "unexpected_shape",
    },
    {
      name: "a NULL $set and a numeric $rewindTo",
      lines: [META, j({ $set: null }), j({ $rewindTo: 3 })],
      issue: "unknown_record_type",
    },
    {
      name: "binary garbage and a truncated line",
      lines: [META, "\u0000\u0001garbage\n", userMsg("u", "ok"), '{"id":"x","type":"us'],
      loss: "invalid JSON",
    },
  ];
  const good = "/h/.gemini/tmp/other/chats/session-2026-01-02T10-00-900d0000.jsonl";
  for (const c of cases) {
    await t.step(c.name, async () => {
      const fs = new MemFs();
      fs.write(PATH, c.lines.join(""));
      fs.write(good, j({ sessionId: "good" }) + userMsg("g", "fine"));
      const { sessions } = await importThroughStore(gemini, fs, [unit(), unit(good)], {
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
    });
  }
});

Deno.test("gemini importer: a result record in a later pass does not look unmatched", async () => {
  const fs = new MemFs();
  fs.write(
    PATH,
    META + reply("a1", "", {
      toolCalls: [toolCall("c1", "read_file", { file_path: "/a" }, { output: "A" })],
    }),
  );
  const first = await gemini.import(unit(), { fs, epoch: 0 });
  fs.append(
    PATH,
    j({
      id: "u2",
      timestamp: at(),
      type: "user",
      content: [{ functionResponse: { id: "c1", name: "read_file", response: { output: "A" } } }],
    }),
  );
  const second = await resume(gemini, fs, unit(), first, 1);
  assertEquals([second.mode, second.deltas[0].operations.length], ["append", 0]);
});

Deno.test("gemini importer: a shell output kept in its own file is read whole", async () => {
  const dir = `${SHARED}/realclients/gemini/s4-long`;
  const units = await gemini.discover(
    { home: `${dir}/native`, env: {}, platform: "linux" },
    realFs,
  );
  const { sessions, payloads } = await importThroughStore(gemini, realFs, units, { closed: true });
  const big = ops(sessions[0]).filter((o) =>
    (o.extensions?.gemini as Record<string, unknown> | undefined)?.persisted_output
  );
  assertEquals(big.length, 1);
  const full = payloadText(payloads, big[0].response)!;
  // The file holds the whole output; the log only its head and tail with a pointer.
  const file = await Deno.readTextFile(
    `${dir}/native/.gemini/tmp/s4-long/tool-outputs/session-86fdca6a-b6bd-4f20-aad6-5845ee65923b/run_shell_command__run_shell_command_1796032189905_0.txt`,
  );
  assertEquals(full, file);
  const note = (big[0].extensions!.gemini as Record<string, Record<string, unknown>>)
    .persisted_output;
  assert(String(note.path).endsWith("run_shell_command__run_shell_command_1796032189905_0.txt"));
  assert(/Output too large/.test(payloadText(payloads, note.logged as never)!));
});

Deno.test("gemini importer: a persisted-output pointer outside the chat's project folder is not read", async () => {
  const fs = new MemFs();
  fs.write("/etc/secret.txt", "TOP SECRET");
  const output = "Output too large. Showing first 1 and last 1 characters. For full output see: " +
    "/etc/secret.txt\nx";
  fs.write(
    PATH,
    META + j({
      id: "g1",
      timestamp: at(),
      type: "gemini",
      content: "",
      toolCalls: [{
        ...toolCall("c1", "run_shell_command", { command: "cat big" }, { output }),
      }],
    }),
  );
  const { sessions, payloads } = await importThroughStore(gemini, fs, [unit(PATH)], {
    closed: true,
  });
  const call = ops(sessions[0]).find((o) => o.tool === "run_shell_command")!;
  assert(!payloadText(payloads, call.response)!.includes("TOP SECRET"));
});
