import { assertEquals, assertMatch, assertThrows } from "../../_helpers/assert.ts";
import {
  assembleSession,
  ChronicleError,
  classifyTool,
  readCanonicalSession,
  replayAttributes,
  type SessionDelta,
  validationProblems,
} from "../../../core/model/mod.ts";

function tinyDelta(): SessionDelta {
  const prov = {
    epoch: 0,
    source_range: {
      file: "/f",
      lines: [1, 1] as [number, number],
      bytes: [0, 1] as [number, number],
    },
  };
  return {
    session_id: "claude-code:s1",
    file: "/f",
    primary: true,
    info: { id: "claude-code:s1", native_id: "s1", source: "claude-code", project: { path: "/p" } },
    connections: [{
      id: "main",
      kind: "main",
      client: { agent: "claude-code", evidence: [] },
      server: { evidence: [] },
    }],
    operations: [
      {
        id: "op_b",
        connection: "main",
        order: { ts_ms: 2000, rank: 0, line: 2, block: 0 },
        op: {
          kind: "exec",
          effect: "process",
          tool: "Bash",
          completeness: "incomplete",
          provenance: prov,
          replay: { replayable: false, blockers: ["incomplete"] },
        },
      },
      {
        id: "op_a",
        connection: "main",
        order: { ts_ms: 1000, rank: 0, line: 1, block: 0 },
        op: {
          kind: "prompt",
          effect: "none",
          text: "hi",
          completeness: "complete",
          provenance: prov,
          replay: { replayable: false, blockers: [] },
        },
      },
    ],
    usage: [{
      key: "m1:r1",
      model: "claude-x",
      usage: { input: 3, output: 4, cache_read: 0, cache_write: 1 },
    }],
    loss_windows: [],
    issues: [],
  };
}

/** The stored parts of the tiny session, as the store would load them back. */
function tinySession() {
  const d = tinyDelta();
  return assembleSession({
    info: { ...d.info, project: d.info.project ?? {} },
    recording: {
      id: "rec_t",
      source: "claude-code",
      source_paths: [d.file],
      pipeline_version: "t",
    },
    connections: d.connections,
    operations: d.operations,
    usage: d.usage,
    epochs: [],
    loss_windows: [],
    issues: [],
    extensions: {},
  });
}

Deno.test("assembleSession() orders the timeline by time and gives offsets in nanoseconds", () => {
  const s = tinySession();
  assertEquals(s.timeline.map((t) => [t.seq, t.op, t.offset_ns]), [[0, "op_a", 0], [
    1,
    "op_b",
    1e9,
  ]]);
  assertEquals(s.completeness.connections.main, "incomplete");
  assertEquals(s.usage.by_model["claude-x"].output, 4);
  assertEquals(validationProblems(s), []);
});

Deno.test("readCanonicalSession() rejects any other schema version with a clear error", () => {
  const s = { ...tinySession(), schema_version: 2 };
  const err = assertThrows(() => readCanonicalSession(s), ChronicleError) as ChronicleError;
  assertEquals(err.code, "unsupported_schema");
  assertMatch(err.message, /schema_version 2.*version 1 only/);
});

/** A session as plain JSON, to damage on purpose. */
// deno-lint-ignore no-explicit-any
type Loose = Record<string, any>;

Deno.test("validationProblems() names what is wrong", async (t) => {
  const cases: { name: string; mutate: (s: Loose) => void; expected: RegExp }[] = [
    {
      name: "unknown kind",
      mutate: (s) => (s.operations.op_a.kind = "dance"),
      expected: /kind: invalid/,
    },
    {
      name: "bad hash ref",
      mutate: (s) => (s.operations.op_a.request = { sha256: "xyz", size: 1 }),
      expected: /request: invalid ref/,
    },
    {
      name: "incomplete but replayable",
      mutate: (s) => (s.operations.op_b.replay = { replayable: true, blockers: [] }),
      expected: /cannot be replayable/,
    },
    { name: "timeline gap", mutate: (s) => s.timeline.pop(), expected: /every operation once/ },
    { name: "missing session", mutate: (s) => delete s.session, expected: /session: missing/ },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const s = structuredClone(tinySession()) as unknown as Loose;
      c.mutate(s);
      assertMatch(validationProblems(s).join("\n"), c.expected);
    });
  }
});

Deno.test("classifyTool() maps every agent's tool names to canonical kinds", async (t) => {
  const table: [string, string][] = [
    ["Read", "read"],
    ["Write", "write"],
    ["Edit", "edit"],
    ["MultiEdit", "edit"],
    ["Bash", "exec"],
    ["Grep", "search"],
    ["Glob", "search"],
    ["WebFetch", "web"],
    ["Task", "task"],
    ["Agent", "task"],
    ["TodoWrite", "plan"],
    ["mcp__github__create_issue", "mcp"],
    ["shell", "exec"],
    ["apply_patch", "edit"],
    ["run_shell_command", "exec"],
    ["read_file", "read"],
    ["SomethingNew", "other"],
  ];
  for (const [tool, kind] of table) {
    await t.step(`${tool} -> ${kind}`, () => assertEquals(classifyTool(tool), kind));
  }
});

Deno.test("replayAttributes() never lets incomplete or continuation-only steps replay", () => {
  const ref = { sha256: "0".repeat(64), size: 1 };
  assertEquals(replayAttributes({ kind: "edit", completeness: "complete", request: ref }), {
    replayable: true,
    blockers: [],
  });
  assertEquals(replayAttributes({ kind: "exec", completeness: "complete", request: ref }), {
    replayable: true,
    blockers: ["needs_confirmation"],
  });
  assertEquals(replayAttributes({ kind: "edit", completeness: "incomplete", request: ref }), {
    replayable: false,
    blockers: ["incomplete"],
  });
  assertEquals(replayAttributes({ kind: "write", completeness: "unmatched", request: ref }), {
    replayable: false,
    blockers: ["continuation_only"],
  });
  assertEquals(
    replayAttributes({
      kind: "write",
      completeness: "complete",
      request: { missing: true, reason: "x" },
    }),
    { replayable: false, blockers: ["missing_payload"] },
  );
});
