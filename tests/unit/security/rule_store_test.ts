import { assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { RuleStore } from "../../../core/security/mod.ts";

function open() {
  const db = ChronicleStore.open(":memory:");
  let n = 0;
  let t = Date.parse("2026-01-01T00:00:00Z");
  const store = new RuleStore(db.ruleTable, {
    newId: () => `rule_${++n}`,
    now: () => new Date(t += 1000),
  });
  return { db, store };
}

Deno.test("RuleStore adds, lists in claim order, toggles and deletes rules", () => {
  const { store } = open();
  const a = store.add({ name: "codenames", pattern: "BLUEBIRD-*", action: "redact" });
  const b = store.add({
    name: " test keys ",
    pattern: "sk-test-*",
    action: "allow",
    enabled: false,
  });
  assertEquals(a, {
    id: "rule_1",
    name: "codenames",
    pattern: "BLUEBIRD-*",
    action: "redact",
    enabled: true,
    created_at: "2026-01-01T00:00:01.000Z",
  });
  assertEquals(b.name, "test keys");
  assertEquals(store.list().map((r) => [r.id, r.enabled]), [["rule_1", true], ["rule_2", false]]);
  assertEquals(store.active().map((r) => r.id), ["rule_1"]);

  assertEquals(store.toggle("rule_2").enabled, true);
  assertEquals(store.toggle("rule_2", true).enabled, true);
  assertEquals(store.toggle("rule_1", false).enabled, false);
  assertEquals(store.active().map((r) => r.id), ["rule_2"]);

  assertEquals(store.delete("rule_1"), true);
  assertEquals(store.delete("rule_1"), false);
  assertEquals(store.list().map((r) => r.id), ["rule_2"]);
  assertEquals(store.get("rule_2")?.pattern, "sk-test-*");
});

Deno.test("RuleStore refuses invalid rules and unknown ids with clear errors", () => {
  const { store } = open();
  const bad = [
    { name: "", pattern: "x*", action: "redact" as const },
    { name: "all", pattern: "*", action: "redact" as const },
    { name: "odd", pattern: "x", action: "delete" as unknown as "redact" },
  ];
  for (const rule of bad) {
    const e = assertThrows(() => store.add(rule), ChronicleError) as ChronicleError;
    assertEquals(e.code, "usage");
  }
  const e = assertThrows(() => store.toggle("nope"), ChronicleError) as ChronicleError;
  assertEquals(e.code, "not_found");
  assertEquals(store.list(), []);
});

Deno.test("RuleStore logs interceptions and lists them newest first", () => {
  const { store } = open();
  const first = store.logInterception({
    at: "2026-01-01T00:00:00.000Z",
    session_id: "s1",
    tool: "Read",
    file: "/p/.env",
    rules: ["api_key", "password"],
    sample: "KEY=sk-****",
    action: "block",
  });
  store.logInterception({
    at: "2026-01-01T00:00:01.000Z",
    tool: "Bash",
    rules: [],
    action: "allow",
  });
  assertEquals(first, 1);
  assertEquals(store.interceptionCount(), 2);
  assertEquals(store.interceptionCount({ action: "block" }), 1);
  assertEquals(store.interceptions(), [
    { id: 2, at: "2026-01-01T00:00:01.000Z", tool: "Bash", rules: [], action: "allow" },
    {
      id: 1,
      at: "2026-01-01T00:00:00.000Z",
      session_id: "s1",
      tool: "Read",
      file: "/p/.env",
      rules: ["api_key", "password"],
      sample: "KEY=sk-****",
      action: "block",
    },
  ]);
  assertEquals(store.interceptions({ limit: 1, offset: 1 }).map((i) => i.id), [1]);
  assertEquals(store.interceptions({ sessionId: "s1" }).map((i) => i.id), [1]);
});
