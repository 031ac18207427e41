import { assert, assertEquals, assertMatch, assertRejects } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import {
  type CanonicalSession,
  classifyTool,
  validationProblems,
} from "../../../core/model/mod.ts";
import { claudeCode } from "../../../core/sources/claude_code/mod.ts";
import { recordKey, SeenRecords } from "../../../core/sources/claude_code/seen.ts";
import { SEEN_NOT_KEPT, seenAfter, slicedOn } from "../../../core/sources/results.ts";
import type { SourceFs, SourceUnit } from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { MemFs } from "../../_helpers/mem_fs.ts";
import { assertSnapshot, normalize } from "./_snapshot.ts";
import { importThroughStore } from "./_run_importer.ts";

const SHARED = FIXTURES;
const decoder = new TextDecoder();

function unit(path: string, rank = 0): SourceUnit {
  return { source: "claude-code", path, kind: "jsonl", rank };
}

/** Imports files as one pass and loads their sessions back from a store. */
const importFiles = (fs: SourceFs, units: SourceUnit[]) =>
  importThroughStore(claudeCode, fs, units);

function text(payloads: Map<string, Uint8Array>, ref: unknown): string | undefined {
  if (!ref || typeof ref !== "object" || !("sha256" in ref)) return undefined;
  const b = payloads.get((ref as { sha256: string }).sha256);
  return b ? decoder.decode(b) : undefined;
}

function ops(s: CanonicalSession) {
  return s.timeline.map((t) => ({ id: t.op, conn: t.connection, ...s.operations[t.op] }));
}

const line = (o: Record<string, unknown>) => JSON.stringify(o) + "\n";
const base = {
  sessionId: "11111111-2222-3333-4444-555555555555",
  cwd: "/home/u/proj",
  version: "2.1.0",
  gitBranch: "main",
};
let n = 0;
const uuid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
const rec = (type: string, extra: Record<string, unknown>, ts = "2026-01-01T00:00:00.000Z") => ({
  type,
  uuid: uuid(),
  parentUuid: null,
  timestamp: ts,
  ...base,
  ...extra,
});

Deno.test("claude-code importer maps each record type", async (t) => {
  const cases: {
    name: string;
    lines: Record<string, unknown>[];
    check: (s: CanonicalSession, p: Map<string, Uint8Array>) => void;
  }[] = [
    {
      name: "a string prompt is a prompt operation with its text as request",
      lines: [rec("user", { message: { role: "user", content: "fix the bug" } })],
      check: (s, p) => {
        const [op] = ops(s);
        assertEquals([op.kind, op.text, op.effect], ["prompt", "fix the bug", "none"]);
        assertEquals(text(p, op.request), "fix the bug");
      },
    },
    {
      name: "a tool_use with its tool_result is one complete operation",
      lines: [
        rec("assistant", {
          requestId: "req_1",
          message: {
            id: "msg_1",
            model: "claude-opus-4-8",
            content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }],
            usage: { input_tokens: 10, output_tokens: 3 },
          },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: "a\nb",
              is_error: false,
            }],
          },
          toolUseResult: { stdout: "a\nb", stderr: "", interrupted: false },
        }),
      ],
      check: (s, p) => {
        const [op] = ops(s);
        assertEquals([op.kind, op.tool, op.is_error, op.completeness], [
          "exec",
          "Bash",
          false,
          "complete",
        ]);
        assertEquals(JSON.parse(text(p, op.request)!), { command: "ls" });
        assertEquals(text(p, op.response), "a\nb");
        assertEquals(op.replay, { replayable: true, blockers: ["needs_confirmation"] });
        assert(op.provenance.completion, "completion provenance recorded");
        assertEquals(s.connections[0].server.model, "claude-opus-4-8");
      },
    },
    {
      name: "an error result keeps is_error and block content as JSON",
      lines: [
        rec("assistant", {
          message: {
            id: "m2",
            model: "claude-x",
            content: [{ type: "tool_use", id: "t2", name: "Read", input: { file_path: "/x" } }],
          },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{
              type: "tool_result",
              tool_use_id: "t2",
              is_error: true,
              content: [{
                type: "text",
                text: "<tool_use_error>File does not exist.</tool_use_error>",
              }],
            }],
          },
          toolUseResult: "Error: File does not exist.",
        }),
      ],
      check: (s, p) => {
        const [op] = ops(s);
        assertEquals([op.kind, op.is_error, op.target], ["read", true, "/x"]);
        assertMatch(text(p, op.response)!, /^\[\{"type":"text"/);
      },
    },
    {
      name: "an Edit keeps its structuredPatch in the extensions",
      lines: [
        rec("assistant", {
          message: {
            id: "m3",
            model: "claude-x",
            content: [{
              type: "tool_use",
              id: "t3",
              name: "Edit",
              input: { file_path: "/a.py", old_string: "a", new_string: "b" },
            }],
          },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "t3", content: "ok" }],
          },
          toolUseResult: {
            filePath: "/a.py",
            structuredPatch: [{
              oldStart: 1,
              oldLines: 1,
              newStart: 1,
              newLines: 1,
              lines: ["-a", "+b"],
            }],
          },
        }),
      ],
      check: (s) => {
        const [op] = ops(s);
        const ext = op.extensions?.["claude-code"] as Record<string, unknown>;
        assertEquals((ext.structured_patch as unknown[]).length, 1);
        assertEquals(op.replay.replayable, true);
      },
    },
    {
      name: "Glob's matching paths are its result, kept once; none matching stays as it is",
      lines: [
        rec("assistant", {
          message: {
            id: "m5",
            model: "claude-x",
            content: [
              { type: "tool_use", id: "g1", name: "Glob", input: { pattern: "**/*.ts" } },
              { type: "tool_use", id: "g2", name: "Glob", input: { pattern: "**/*.rs" } },
            ],
          },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "g1", content: "/p/a.ts\n/p/b.ts" }],
          },
          toolUseResult: { filenames: ["/p/a.ts", "/p/b.ts"], numFiles: 2, truncated: false },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "g2", content: "No files found" }],
          },
          toolUseResult: { filenames: [], numFiles: 0, truncated: false },
        }),
      ],
      check: (s) => {
        const [some, none] = ops(s).map((o) => o.extensions?.["claude-code"]);
        assertEquals(some, {
          tool_use_result: { numFiles: 2, truncated: false },
          tool_use_result_dropped: ["filenames"],
        });
        assertEquals(none, { tool_use_result: { filenames: [], numFiles: 0, truncated: false } });
      },
    },
    {
      name: "a call without result is incomplete and not replayable",
      lines: [rec("assistant", {
        message: {
          id: "m4",
          model: "claude-x",
          content: [{
            type: "tool_use",
            id: "t4",
            name: "Write",
            input: { file_path: "/n", content: "x" },
          }],
        },
      })],
      check: (s) => {
        const [op] = ops(s);
        assertEquals([op.completeness, op.replay.replayable, op.replay.blockers], [
          "incomplete",
          false,
          ["incomplete"],
        ]);
        assertEquals(s.completeness.connections.main, "incomplete");
      },
    },
    {
      name: "a result without call is an unmatched, continuation-only operation",
      lines: [rec("user", {
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "gone", content: "x" }],
        },
      })],
      check: (s) => {
        const [op] = ops(s);
        assertEquals([op.completeness, op.replay.blockers], ["unmatched", ["continuation_only"]]);
      },
    },
    {
      name: "one API message split over lines counts its usage once, with the final output",
      lines: [
        rec("assistant", {
          requestId: "r",
          message: {
            id: "m5",
            model: "claude-x",
            content: [{ type: "thinking", thinking: "hmm", signature: "" }],
            usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 5 },
          },
        }),
        rec("assistant", {
          requestId: "r",
          message: {
            id: "m5",
            model: "claude-x",
            content: [{ type: "text", text: "done" }],
            usage: { input_tokens: 100, output_tokens: 42, cache_read_input_tokens: 5 },
          },
        }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => o.kind), ["thinking", "reply"]);
        assertEquals(s.usage.by_model["claude-x"], {
          input: 100,
          output: 42,
          cache_read: 5,
          cache_write: 0,
        });
      },
    },
    {
      name: "records repeated by a resume are imported once",
      lines: (() => {
        const r = rec("user", { message: { role: "user", content: "once" } });
        return [r, r];
      })(),
      check: (s) => {
        assertEquals(ops(s).length, 1);
        assertEquals(s.issues.find((i) => i.code === "duplicate_record")?.count, 1);
      },
    },
    {
      name: "summaries, titles and compaction become events and session fields",
      lines: [
        { type: "summary", summary: "Old title", leafUuid: "x" },
        { type: "ai-title", aiTitle: "AI title", sessionId: base.sessionId },
        { type: "custom-title", customTitle: "My title", sessionId: base.sessionId },
        { type: "last-prompt", lastPrompt: "and then?", sessionId: base.sessionId },
        rec("system", {
          subtype: "compact_boundary",
          compactMetadata: { trigger: "auto", preTokens: 9 },
        }),
        rec("user", {
          isCompactSummary: true,
          message: { role: "user", content: "Summary of before" },
        }),
      ],
      check: (s) => {
        assertEquals(s.session.title, "My title");
        assertEquals(s.session.last_prompt, "and then?");
        assertEquals(ops(s).map((o) => o.event), ["summary", "compaction", "compaction_summary"]);
      },
    },
    {
      name: "meta and system-reminder prompts are marked injected; a task notification is an event",
      lines: [
        rec("user", {
          isMeta: true,
          message: { role: "user", content: "<command-name>/clear</command-name>" },
        }),
        rec("user", {
          message: {
            role: "user",
            content: [{ type: "text", text: "<system-reminder>x</system-reminder>" }],
          },
        }),
        rec("user", {
          message: {
            role: "user",
            content: "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>",
          },
        }),
        rec("user", { message: { role: "user", content: "now fix it" } }),
      ],
      check: (s) => {
        assertEquals(ops(s).map((o) => [o.kind, o.injected]), [
          ["prompt", true],
          ["prompt", true],
          ["event", undefined],
          ["prompt", undefined],
        ]);
        assertEquals(s.session.id.startsWith("claude-code:"), true);
      },
    },
    {
      name: "2.1.3xx's request, blob, latch and tool records are counted; its cost state is kept",
      lines: [
        rec("user", { message: { role: "user", content: "hi" } }),
        { type: "atis-latch", atis: "", sessionId: base.sessionId },
        { type: "api-request-shape", sessionId: base.sessionId, shapeHash: "ab", shape: {} },
        { type: "api-request-blob", sessionId: base.sessionId, hash: "cd", message: {} },
        { type: "api-request", sessionId: base.sessionId, id: "r1", params: { model: "m" } },
        { type: "tools-used", tools: ["Write"], sessionId: base.sessionId },
        { type: "tools-used", tools: ["Bash"], sessionId: base.sessionId },
        {
          type: "cost-state",
          sessionId: base.sessionId,
          totalCostUSD: 0.004,
          totalLinesAdded: 6,
          totalLinesRemoved: 1,
        },
      ],
      check: (s) => {
        assertEquals(s.issues.filter((i) => i.code.startsWith("unknown")), []);
        assertEquals(ops(s).map((o) => o.kind), ["prompt"]);
        const ext = s.extensions["claude-code"] as Record<string, unknown>;
        assertEquals(ext.skipped_records, {
          "atis-latch": 1,
          "api-request-shape": 1,
          "api-request-blob": 1,
          "api-request": 1,
          "tools-used": 2,
        });
        assertEquals(ext.cost_state, {
          totalCostUSD: 0.004,
          totalLinesAdded: 6,
          totalLinesRemoved: 1,
        });
      },
    },
    {
      name: "images and unknown blocks do not crash; unknown record types are counted issues",
      lines: [
        rec("user", {
          message: {
            role: "user",
            content: [
              { type: "text", text: "see" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
            ],
          },
        }),
        rec("assistant", {
          message: { id: "m9", model: "claude-x", content: [{ type: "hologram" }] },
        }),
        rec("brand-new-type", { foo: 1 }),
        rec("brand-new-type", { foo: 2 }),
        rec("attachment", { attachment: { type: "hook_success" } }),
      ],
      check: (s) => {
        const [prompt] = ops(s);
        assertEquals((prompt.extensions?.["claude-code"] as { images: number }).images, 1);
        const unknown = s.issues.find((i) => i.code === "unknown_record_type");
        assertEquals(unknown?.count, 2);
        assertMatch(unknown!.message, /brand-new-type/);
        assert(s.issues.some((i) => i.code === "unknown_block_type"));
      },
    },
    {
      name: "several models on one connection leave its model absent and say why",
      lines: [
        rec("assistant", {
          message: { id: "a", model: "claude-a", content: [{ type: "text", text: "1" }] },
        }),
        rec("assistant", {
          message: { id: "b", model: "claude-b", content: [{ type: "text", text: "2" }] },
        }),
      ],
      check: (s) => {
        assertEquals(s.connections[0].server.model, undefined);
        assert(s.issues.some((i) => i.code === "conflicting_model"));
        assertEquals(ops(s).map((o) => o.model), ["claude-a", "claude-b"]);
      },
    },
    {
      name: "an inline sidechain is a sub-agent connection under its Task call",
      lines: (() => {
        const task = rec("assistant", {
          message: {
            id: "mt",
            model: "claude-x",
            content: [{
              type: "tool_use",
              id: "tt",
              name: "Task",
              input: { description: "look", prompt: "go" },
            }],
          },
        });
        const root = rec("user", { isSidechain: true, message: { role: "user", content: "go" } });
        const child = rec("assistant", {
          isSidechain: true,
          parentUuid: root.uuid,
          message: { id: "ms", model: "claude-x", content: [{ type: "text", text: "found" }] },
        });
        return [task, root, child];
      })(),
      check: (s) => {
        const sub = s.connections.find((c) => c.kind === "subagent")!;
        const taskOp = ops(s).find((o) => o.kind === "task")!;
        assertEquals(sub.parent_op, taskOp.id);
        assertEquals(ops(s).filter((o) => o.conn === sub.id).length, 2);
      },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const fs = new MemFs();
      fs.write("/h/.claude/projects/-p/s.jsonl", c.lines.map(line).join(""));
      const { sessions, payloads } = await importFiles(fs, [
        unit("/h/.claude/projects/-p/s.jsonl"),
      ]);
      assertEquals(sessions.length, 1);
      assertEquals(validationProblems(sessions[0]), []);
      c.check(sessions[0], payloads);
    });
  }
});

Deno.test("claude-code importer records malformed lines as loss windows and keeps the rest", async () => {
  const fs = new MemFs();
  const good = line(rec("user", { message: { role: "user", content: "hello" } }));
  fs.write(
    "/p/s.jsonl",
    `${good}{broken\n[1,2]\n${good.replace(/"uuid":"[^"]+"/, `"uuid":"${uuid()}"`)}`,
  );
  const { sessions } = await importFiles(fs, [unit("/p/s.jsonl")]);
  const s = sessions[0];
  assertEquals(ops(s).length, 2);
  assertEquals(s.provenance.loss_windows.map((l) => [l.lines, l.reason]), [
    [[2, 2], "invalid JSON"],
    [[3, 3], "not a JSON object"],
  ]);
});

Deno.test("claude-code importer completes a call in a later pass and keeps both epochs", async () => {
  const fs = new MemFs();
  const path = "/p/s.jsonl";
  fs.write(
    path,
    line(rec("assistant", {
      message: {
        id: "m",
        model: "claude-x",
        content: [{ type: "tool_use", id: "tu", name: "Bash", input: { command: "x" } }],
      },
    })),
  );
  const first = await claudeCode.import(unit(path), { fs, epoch: 0 });
  assertEquals(first.deltas[0].operations[0].op.completeness, "incomplete");
  fs.append(
    path,
    line(
      rec("user", {
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "tu", content: "ok" }],
        },
      }),
    ),
  );
  const second = await claudeCode.import(unit(path), {
    fs,
    epoch: 1,
    resume: { checkpoint: first.checkpoint!, state: first.state },
  });
  assertEquals(second.mode, "append");
  const op = second.deltas[0].operations[0];
  assertEquals(op.id, first.deltas[0].operations[0].id);
  assertEquals([op.op.completeness, op.op.provenance.epoch, op.op.provenance.completion?.epoch], [
    "complete",
    0,
    1,
  ]);
  const third = await claudeCode.import(unit(path), {
    fs,
    epoch: 2,
    resume: { checkpoint: second.checkpoint!, state: second.state },
  });
  assertEquals([third.mode, third.deltas.length], ["unchanged", 0]);
});

Deno.test("claude-code importer: the records a log gave are kept apart from its state", async (t) => {
  const path = "/p/s.jsonl";
  const prompt = (text: string) => rec("user", { message: { role: "user", content: text } });
  const first = prompt("first");
  const second = prompt("second");
  /** A uuid's key as the store keeps it: its 16 bytes. */
  const keyOf = (uuid: string) =>
    new Uint8Array(uuid.replace(/-/g, "").match(/../g)!.map((h) => parseInt(h, 16)));

  await t.step("a resumed record is imported once across passes", async () => {
    const fs = new MemFs();
    fs.write(path, line(first));
    const a = await claudeCode.import(unit(path), { fs, epoch: 0 });
    const state = a.state as { v: number; seen?: unknown };
    assertEquals([state.v, state.seen], [4, undefined]);
    assertEquals(a.seen, { from: 0, added: keyOf(first.uuid) });
    fs.append(path, line(first) + line(second));
    const b = await claudeCode.import(unit(path), {
      fs,
      epoch: 1,
      resume: { checkpoint: a.checkpoint!, state: a.state, seen: a.seen!.added },
    });
    assertEquals(b.mode, "append");
    assertEquals(b.deltas[0].operations.length, 1);
    assertEquals(b.deltas[0].issues?.find((i) => i.code === "duplicate_record")?.count, 1);
    // only the new key, on top of the store's one
    assertEquals(b.seen, { from: 1, added: keyOf(second.uuid) });
  });

  await t.step(
    "a slice keeps its table for the next; one not kept is asked for again",
    async () => {
      const fs = new MemFs();
      fs.write(path, line(first) + line(prompt("filler ".repeat(40))) + line(first) + line(second));
      // the slice ends with the line that takes it past the limit: the filler
      const maxPassBytes = line(first).length + 1;
      const a = await claudeCode.import(unit(path), { fs, epoch: 0, maxPassBytes });
      assert(slicedOn(a.checkpoint), "the first slice stops early");
      assertEquals(seenAfter(a.seen), { kept: 2 });
      const resume = { checkpoint: a.checkpoint!, state: a.state };
      await assertRejects(
        () =>
          claudeCode.import(unit(path), { fs, epoch: 0, resume: { ...resume, seen: { kept: 3 } } }),
        Error,
        SEEN_NOT_KEPT,
      );
      // the failed ask dropped the table: only the keys themselves will do now
      await assertRejects(
        () =>
          claudeCode.import(unit(path), { fs, epoch: 0, resume: { ...resume, seen: { kept: 2 } } }),
        Error,
        SEEN_NOT_KEPT,
      );
      const again = await claudeCode.import(unit(path), { fs, epoch: 0, maxPassBytes });
      const b = await claudeCode.import(unit(path), {
        fs,
        epoch: 0,
        maxPassBytes: 1 << 20,
        resume: { ...resume, checkpoint: again.checkpoint!, seen: seenAfter(again.seen) },
      });
      assertEquals(b.deltas[0].operations.length, 1, "the repeated first record is dropped");
      assertEquals(b.seen, { from: 2, added: keyOf(second.uuid) });
      // and from the store's keys, in a thread that kept nothing, the same
      const c = await claudeCode.import(unit(path), {
        fs,
        epoch: 0,
        resume: { ...resume, seen: new Uint8Array([...again.seen!.added]) },
      });
      assertEquals(c.deltas[0].operations.length, 1);
      assertEquals(c.seen, { from: 2, added: keyOf(second.uuid) });
    },
  );

  await t.step("a version-3 or 2 state's records are carried over, not read again", async () => {
    const fs = new MemFs();
    fs.write(path, line(first));
    const a = await claudeCode.import(unit(path), { fs, epoch: 0 });
    const v3 = { ...(a.state as object), v: 3, seen: recordKey(first.uuid) };
    const v2 = { ...(a.state as object), v: 2, seen: [first.uuid.replace(/-/g, "")] };
    fs.append(path, line(first) + line(second));
    for (const old of [v3, v2]) {
      const b = await claudeCode.import(unit(path), {
        fs,
        epoch: 1,
        resume: { checkpoint: a.checkpoint!, state: old },
      });
      assertEquals(b.mode, "append");
      assertEquals(b.deltas[0].operations.length, 1);
      const state = b.state as { v: number; seen?: unknown };
      assertEquals([state.v, state.seen], [4, undefined]);
      // every key goes to the store, replacing what it held
      assertEquals(b.seen!.from, 0);
      const keys = Array.from(
        { length: b.seen!.added.length / 16 },
        (_, i) => b.seen!.added.slice(i * 16, i * 16 + 16).join(),
      );
      assertEquals(new Set(keys), new Set([keyOf(first.uuid).join(), keyOf(second.uuid).join()]));
    }
    // an older shape is still dropped, and the file read from its start
    const c = await claudeCode.import(unit(path), {
      fs,
      epoch: 1,
      resume: { checkpoint: a.checkpoint!, state: { ...v2, v: 1 } },
    });
    assertEquals([c.mode, c.deltas[0].operations.length], ["full", 2]);
  });

  await t.step("every uuid keeps a key of its own, and the keys read back", () => {
    const base = "01890a5d-ac96-774b-bcce-b302099a0000";
    const seen = SeenRecords.resume("/k", undefined);
    assert(seen.add(base));
    // a uuid that differs from it in any one digit, wherever: time-ordered uuids share their
    // first digits, counters and made-up ones their last
    for (let i = 0; i < base.length; i++) {
      if (base[i] === "-") continue;
      const other = base.slice(0, i) + (base[i] === "f" ? "e" : "f") + base.slice(i + 1);
      assert(seen.add(other), `digit ${i} changed, taken for a repeat`);
    }
    assert(!seen.add(base.toUpperCase().replace(/-/g, "")), "the same uuid written otherwise");
    const { added } = seen.result("/k", false);
    assertEquals(added.length, 33 * 16);
    const again = SeenRecords.resume("/k", added);
    assert(!again.add(base) && again.add("01890a5d-ac96-774b-bcce-b302099a0001"));
    // a table grown far past its first size holds every key
    const many = SeenRecords.resume("/k", undefined);
    const uuids = Array.from({ length: 5000 }, () => crypto.randomUUID());
    for (const u of uuids) assert(many.add(u));
    const back = SeenRecords.resume("/k", many.result("/k", false).added);
    for (const u of uuids) assert(!back.add(u), u);
  });

  await t.step("a key is the uuid's bits in base64, as saved states hold them", () => {
    // pinned: a saved state's keys must read the same in every later version
    assertEquals(recordKey("00000000-0000-0000-0000-000000000000"), "AAAAAAAAAAAAAAAAAAAAAA");
    assertEquals(recordKey("ffffffff-ffff-ffff-ffff-ffffffffffff"), "/////////////////////w");
    assertEquals(recordKey("5f2b1c3d-9e8a-4b7c-a1d2-e3f4a5b6c7d8"), "XyscPZ6KS3yh0uP0pbbH2A");
    assertEquals(recordKey("5F2B1C3D9E8A4B7CA1D2E3F4A5B6C7D8"), "XyscPZ6KS3yh0uP0pbbH2A");
    // and every uuid as the first way of writing them (three hex digits, two base64) did
    const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const byThrees = (uuid: string) => {
      const hex = uuid.replace(/-/g, "").toLowerCase();
      let key = "";
      for (let i = 0; i < 30; i += 3) {
        const v = parseInt(hex.slice(i, i + 3), 16);
        key += b64[v >> 6] + b64[v & 63];
      }
      const v = parseInt(hex.slice(30, 32), 16) << 4;
      return key + b64[v >> 6] + b64[v & 63];
    };
    for (let i = 0; i < 2000; i++) {
      const uuid = crypto.randomUUID();
      assertEquals(recordKey(uuid), byThrees(uuid), uuid);
      assertEquals(recordKey(uuid.toUpperCase().replace(/-/g, "")), byThrees(uuid), uuid);
    }
  });
});

// ------------------------------------------------------------------ real files

const realFs = createDenoFs();

async function fixtureUnits(root: string): Promise<SourceUnit[]> {
  const units: SourceUnit[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.name.endsWith(".jsonl") && !dir.endsWith("/mock")) {
        units.push(unit(p, e.name.startsWith("agent-") || p.includes("/subagents/") ? 1 : 0));
      }
    }
  };
  await walk(root);
  return units.sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path));
}

Deno.test("claude-code importer: every peers fixture imports, validates and matches its snapshot", async (t) => {
  const root = `${SHARED}/peers/claude-code`;
  for (const u of await fixtureUnits(root)) {
    const name = u.path.slice(root.length + 1);
    if (name.includes("subagents/")) continue; // imported with its session below
    await t.step(name, async () => {
      // A session's folder beside it holds its sub-agents and workflow runs.
      const folder = u.path.replace(/\.jsonl$/, "");
      const units = [u];
      if (await Deno.stat(folder).then((st) => st.isDirectory, () => false)) {
        units.push(...(await fixtureUnits(folder)));
      }
      const { sessions } = await importFiles(realFs, units);
      for (const s of sessions) assertEquals(validationProblems(s), []);
      await assertSnapshot(
        `claude-code__${name.replace(/\//g, "__")}`,
        normalize(sessions, { [SHARED]: "<FIXTURES>" }),
      );
    });
  }
});

Deno.test("claude-code importer: schema-drift fixtures report their unknown types", async () => {
  const { sessions } = await importFiles(realFs, [
    unit(`${SHARED}/peers/claude-code/agentsessions_schema_drift.jsonl`),
  ]);
  const unknown = sessions[0].issues.filter((i) => i.code === "unknown_record_type").map((i) =>
    i.message
  );
  assertEquals(unknown.sort(), [
    'unknown record type "tool_result"',
    'unknown record type "tool_use"',
  ]);
});

interface ScenarioCall {
  agent: string;
  op: string;
  native_tool: string;
  input: Record<string, unknown>;
  expected_error: boolean;
}

Deno.test("claude-code importer: real-client sessions match their scenarios call by call", async (t) => {
  for (const scenario of ["s1-basic", "s2-errors", "s4-long", "s6-subagent", "s7-resume"]) {
    await t.step(scenario, async () => {
      const dir = `${SHARED}/realclients/claude/${scenario}`;
      const truth = JSON.parse(await Deno.readTextFile(`${dir}/scenario.json`));
      const { sessions, payloads } = await importFiles(realFs, await fixtureUnits(`${dir}/native`));
      assertEquals(sessions.length, 1);
      const s = sessions[0];
      assertEquals(s.session.native_id, truth.session_id);
      assertEquals(validationProblems(s), []);
      await assertSnapshot(
        `claude-code__realclients__${scenario}`,
        normalize(s, { [SHARED]: "<FIXTURES>" }),
      );
      const calls = ops(s).filter((o) => o.tool !== undefined);
      const expected = truth.tool_calls as ScenarioCall[];
      assertEquals(calls.length, expected.length, "one operation per scripted tool call");
      // Sub-agent calls interleave in time; compare per connection, in order.
      const mainCalls = calls.filter((c) => c.conn === "main");
      const subCalls = calls.filter((c) => c.conn !== "main");
      const expMain = expected.filter((c) => c.agent === "main");
      const expSub = expected.filter((c) => c.agent !== "main");
      for (const [actual, exp] of [[mainCalls, expMain], [subCalls, expSub]] as const) {
        assertEquals(actual.length, exp.length);
        actual.forEach((c, i) => {
          assertEquals(c.tool, exp[i].native_tool);
          assertEquals(c.kind, classifyTool(exp[i].native_tool));
          // The agent may add defaults it filled in (Edit's replace_all): the scripted input
          // must be there exactly, key by key.
          const recorded = JSON.parse(text(payloads, c.request)!);
          for (const [k, v] of Object.entries(exp[i].input)) assertEquals(recorded[k], v, k);
          assertEquals(c.is_error, exp[i].expected_error, `${c.tool} #${i} error flag`);
          assertEquals(c.completeness, "complete");
          assert(text(payloads, c.response) !== undefined, "the real result is kept");
        });
      }
      if (scenario === "s6-subagent") {
        const sub = s.connections.find((c) => c.kind === "subagent")!;
        assertEquals(sub.agent_type, "general-purpose");
        assertEquals(s.operations[sub.parent_op!].kind, "task");
      }
    });
  }
});

Deno.test("claude-code importer: issue 13's layouts come out whole", async (t) => {
  const root = `${SHARED}/peers/claude-code/constructed`;
  const load = async (main: string) => {
    const folder = `${root}/${main}`.replace(/\.jsonl$/, "");
    const extra = await Deno.stat(folder).then((st) => st.isDirectory, () => false)
      ? await fixtureUnits(folder)
      : [];
    return await importFiles(realFs, [unit(`${root}/${main}`), ...extra]);
  };
  await t.step("a message rewritten as it grows is one thinking, one reply, one call", async () => {
    const { sessions } = await load("cumulative_rewrites.jsonl");
    const s = sessions[0];
    assertEquals(ops(s).map((o) => [o.kind, o.text ?? o.tool]), [
      ["prompt", "Say hello, then list the files."],
      ["thinking", "The user wants a greeting."],
      ["reply", "Hello! Listing the files now."],
      ["exec", "Bash"],
      ["reply", "There are two entries: README.md and src."],
    ]);
    // The line that names neither a uuid nor a message id counts its tokens too.
    assertEquals(s.usage.by_model["claude-opus-4-8"], {
      input: 17,
      output: 51,
      cache_read: 3,
      cache_write: 0,
    });
  });
  await t.step("a file holding two session ids is two sessions, linked", async () => {
    const { sessions } = await load("two_sessions_one_file.jsonl");
    assertEquals(sessions.map((s) => [s.session.native_id, s.session.continues]), [
      ["aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa", undefined],
      ["bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb", "claude-code:aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"],
    ]);
    assertEquals(ops(sessions[1]).map((o) => o.tool ?? o.kind), ["prompt", "Read", "reply"]);
    assertEquals(ops(sessions[1]).find((o) => o.tool === "Read")?.completeness, "complete");
  });
  await t.step("a workflow's agents nest under its run, the run under its call", async () => {
    const { sessions } = await load("workflow_layout/cccccccc-3333-4333-8333-cccccccccccc.jsonl");
    assertEquals(sessions.length, 1, "the journal is bookkeeping, not a session");
    const s = sessions[0];
    const conn = (id: string) => s.connections.find((c) => c.id === id)!;
    const call = ops(s).find((o) => o.tool === "Workflow")!;
    assertEquals(conn("workflow-wf_abc123def").parent_op, call.id);
    for (const [agent, step] of [["agent-wa1", "lint"], ["agent-wa2", "tests"]]) {
      assertEquals(s.operations[conn(agent).parent_op!].text, step);
    }
  });
  await t.step("teammates without agent ids are linked by their first prompt", async () => {
    const { sessions } = await load("teammate_layout/dddddddd-4444-4444-8444-dddddddddddd.jsonl");
    const s = sessions[0];
    const byTool = Object.fromEntries(
      ops(s).filter((o) => o.kind === "task").map((o) => [o.summary, o.spawns]),
    );
    // Spawned in one order, written in the other: a guess by order would cross them.
    assertEquals(byTool, { Links: "agent-beta", TODOs: "agent-alpha" });
  });
  await t.step("hook errors are error events, queued prompts the user's words", async () => {
    const { sessions } = await importFiles(realFs, [
      unit(`${SHARED}/peers/claude-code/agentsessions_small_schema_rich.jsonl`),
    ]);
    const s = sessions[0];
    const hooks = ops(s).filter((o) => o.event?.startsWith("hook_"));
    assertEquals(hooks.map((o) => [o.event, o.is_error]), [
      ["hook_non_blocking_error", true],
      ["hook_blocking_error", true],
    ]);
    const queued = ops(s).filter((o) =>
      (o.extensions?.["claude-code"] as Record<string, unknown>)?.attachment === "queued_command"
    );
    assertEquals(queued.map((o) => [o.kind, o.injected ?? false]), [
      ["prompt", false],
      ["prompt", false],
      ["prompt", false],
      ["prompt", false],
    ]);
  });
  await t.step("a background task notice is a task_notification event", async () => {
    const { sessions } = await load("task_notification.jsonl");
    const s = sessions[0];
    // The queued notice and the user turn that hands it to the model: both the task's words,
    // neither a prompt of the user's.
    assertEquals(ops(s).map((o) => [o.kind, o.event ?? o.tool ?? o.text]), [
      ["prompt", "Run the tests in the background, then tell me."],
      ["exec", "Bash"],
      ["event", "task_notification"],
      ["event", "task_notification"],
      ["reply", "The tests passed."],
    ]);
    for (const o of ops(s).filter((o) => o.kind === "event")) {
      assertMatch(o.text!, /^<task-notification>\n<task-id>bg_1<\/task-id>/);
    }
    const ext = s.extensions["claude-code"] as Record<string, unknown>;
    assertEquals(ext.skipped_records, { "queue-operation": 1 });
  });
  await t.step("a persisted output is read whole from its own file", async () => {
    const dir = `${SHARED}/realclients/claude/s4-long`;
    const { sessions, payloads } = await importFiles(realFs, await fixtureUnits(`${dir}/native`));
    const big = ops(sessions[0]).find((o) =>
      (o.extensions?.["claude-code"] as Record<string, unknown>)?.persisted_output
    )!;
    const full = text(payloads, big.response)!;
    assertEquals(full.length, 280800);
    assert(!full.startsWith("<persisted-output>"));
    const note = (big.extensions!["claude-code"] as Record<string, Record<string, unknown>>)
      .persisted_output;
    assertMatch(text(payloads, note.preview)!, /^<persisted-output>/);
  });
});
