/**
 * The store's merge of deltas (the only one: importer tests and snapshots go through it too):
 * what one file says about a session is kept when another file says something else.
 */
import { assertEquals } from "../../_helpers/assert.ts";
import type { Connection, SessionDelta } from "../../../core/model/mod.ts";
import { ChronicleStore, prepareUnit } from "../../../core/store/mod.ts";
import type { SourceUnit, UnitResult } from "../../../core/sources/types.ts";

const conn = (id: string, extra: Partial<Connection> = {}): Connection => ({
  id,
  kind: id === "main" ? "main" : "subagent",
  client: { agent: "claude-code", evidence: [] },
  server: { evidence: [] },
  ...extra,
});

function delta(file: string, extra: Partial<SessionDelta>): SessionDelta {
  return {
    session_id: "claude-code:s1",
    file,
    primary: file === "/main.jsonl",
    info: { id: "claude-code:s1", native_id: "s1", source: "claude-code" },
    connections: [],
    operations: [],
    usage: [],
    loss_windows: [],
    issues: [],
    ...extra,
  };
}

function apply(store: ChronicleStore, d: SessionDelta): void {
  const unit: SourceUnit = { source: "claude-code", path: d.file, kind: "jsonl", rank: 0 };
  const result: UnitResult = {
    mode: "full",
    deltas: [d],
    checkpoint: null,
    state: null,
    issues: [],
    payloads: new Map(),
    bytesRead: 0,
  };
  store.applyUnit(unit, prepareUnit(result), 0);
}

Deno.test("extensions from two files of a session are merged key by key", () => {
  const store = ChronicleStore.open(":memory:");
  apply(store, delta("/main.jsonl", { extensions: { "claude-code": { skipped: 1 } } }));
  apply(store, delta("/agent.jsonl", { extensions: { "claude-code": { mode: "plan" } } }));
  assertEquals(store.loadSession("claude-code:s1")!.extensions, {
    "claude-code": { skipped: 1, mode: "plan" },
  });
  store.close();
});

Deno.test("a sub-agent's parent call named by one file survives a later file that does not name it", () => {
  const store = ChronicleStore.open(":memory:");
  apply(
    store,
    delta("/main.jsonl", {
      connections: [conn("main"), conn("agent-1", { parent_op: "op_task", agent_type: "x" })],
    }),
  );
  apply(store, delta("/agent.jsonl", { connections: [conn("agent-1")] }));
  const agent = store.loadSession("claude-code:s1")!.connections.find((c) => c.id === "agent-1");
  assertEquals([agent?.parent_op, agent?.agent_type], ["op_task", "x"]);
  store.close();
});
