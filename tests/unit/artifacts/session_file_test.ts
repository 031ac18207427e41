/**
 * session.json read as it streams in: each operation and the head are what `JSON.parse` of the
 * whole file gives, however the bytes are cut; a file that is not JSON (or not a session's
 * shape at its top) is a SyntaxError naming where, never a half-read session.
 */
import { SessionFileReader } from "../../../core/artifacts/session_file.ts";
import { sessionJson } from "../../../core/artifacts/mod.ts";
import { assert, assertEquals, assertMatch, assertThrows } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";

const encoder = new TextEncoder();

/** Reads `bytes` cut into chunks of `size`: the operations in order, the head, what was found. */
function readIn(bytes: Uint8Array, size: number) {
  const reader = new SessionFileReader();
  const operations: [string, unknown][] = [];
  for (let at = 0; at < bytes.length; at += size) {
    // each chunk a buffer of its own, as a file is read
    operations.push(...reader.write(bytes.slice(at, at + size)));
  }
  reader.end();
  return { operations, head: { ...reader.head }, found: reader.operationsFound };
}

/** What `JSON.parse` gives, split as the reader splits it. */
function parsedWhole(text: string) {
  const { operations, ...rest } = JSON.parse(text);
  return { operations: Object.entries(operations), rest };
}

const CHUNKS = [1, 2, 3, 7, 64, 4096, 1 << 30];

Deno.test("SessionFileReader reads every real client's session as JSON.parse does, in chunks of any size", async () => {
  const store = await fixtureStore(["claude/s6-subagent", "codex/s4-long", "opencode/s2-errors"]);
  try {
    const ids = store.listSessions({ limit: 100 }).items.map((s) => s.id);
    assert(ids.length >= 3);
    for (const id of ids) {
      const text = sessionJson(store.loadSession(id)!);
      const whole = parsedWhole(text);
      assert(whole.operations.length > 3, id);
      for (const size of CHUNKS) {
        const read = readIn(encoder.encode(text), size);
        assertEquals(read.operations, whole.operations, `${id} in chunks of ${size}`);
        // the head: every field but the operations, in the session's own keys
        const { operations: _, ...rest } = whole.rest as Record<string, unknown>;
        assertEquals(read.head, rest);
        assertEquals(read.found, "object");
      }
    }
  } finally {
    store.close();
  }
});

Deno.test("SessionFileReader keeps what JSON.parse keeps: escapes, emoji cut across chunks, __proto__, numbers, nesting, any order of keys", () => {
  const text = `\ufeff{
    "operations": {
      "a\\"b": {"text": "caf\\u00e9 \u{1F600} \\ud83d\\ude00 \\n\\t\\\\", "n": -0.5e-3, "big": 12345678901234567890},
      "__proto__": {"__proto__": {"x": 1}, "list": [[], {}, [{"y": [null, true, false]}]]},
      "e": {}
    },
    "schema_version": 1,
    "unknown_field": {"skipped": [1, 2, 3]},
    "timeline": [],
    "extensions": {"__proto__": "kept", "k": "}]{[\\""}
  }  \n`;
  const bytes = encoder.encode(text);
  const expected = JSON.parse(text.slice(1));
  for (const size of CHUNKS) {
    const read = readIn(bytes, size);
    assertEquals(read.operations.map(([id]) => id), ['a"b', "__proto__", "e"]);
    for (const [id, op] of read.operations) {
      assertEquals(
        JSON.stringify(op),
        JSON.stringify(Object.getOwnPropertyDescriptor(expected.operations, id)!.value),
      );
    }
    // `__proto__` is an own key of the value, as JSON.parse makes it
    const proto = read.operations[1][1] as Record<string, unknown>;
    assert(Object.hasOwn(proto, "__proto__"), `chunks of ${size}`);
    assertEquals(Object.getPrototypeOf(proto), Object.prototype);
    assertEquals(JSON.stringify(read.head.extensions), JSON.stringify(expected.extensions));
    assertEquals(read.head.schema_version, 1);
    assertEquals(read.head.timeline, []);
    assert(!("unknown_field" in read.head), "an unknown top-level field is skipped");
  }
});

Deno.test("SessionFileReader says whether the operations were an object", () => {
  const cases: { name: string; text: string; found: string; ops: number }[] = [
    { name: "an object", text: `{"operations": {"a": {}}}`, found: "object", ops: 1 },
    { name: "an empty object", text: `{"operations": {}}`, found: "object", ops: 0 },
    { name: "an array", text: `{"operations": [{"kind": "x"}]}`, found: "other", ops: 0 },
    { name: "a number", text: `{"operations": 5}`, found: "other", ops: 0 },
    { name: "null", text: `{"operations": null}`, found: "other", ops: 0 },
    { name: "missing", text: `{"timeline": []}`, found: "missing", ops: 0 },
  ];
  for (const c of cases) {
    const read = readIn(encoder.encode(c.text), 3);
    assertEquals([read.found, read.operations.length], [c.found, c.ops], c.name);
  }
});

Deno.test("SessionFileReader refuses a file that is not JSON, or not an object, with a SyntaxError saying so", () => {
  const cases: { name: string; text: string; expected: RegExp }[] = [
    { name: "empty", text: "", expected: /ends at byte 0 before the session does/ },
    { name: "an array", text: "[1, 2]", expected: /not a JSON object/ },
    { name: "a string", text: `"session"`, expected: /not a JSON object/ },
    {
      name: "cut short in an operation",
      text: `{"operations": {"a": {"kind": "prompt"`,
      expected: /ends at byte \d+ before the session does/,
    },
    { name: "cut short after a key", text: `{"timeline"`, expected: /before the session does/ },
    {
      name: "no colon",
      text: `{"timeline" []}`,
      expected: /not valid JSON: Unexpected LEFT_BRACKET/,
    },
    { name: "a comma first", text: `{, "a": 1}`, expected: /not valid JSON: Unexpected COMMA/ },
    {
      name: "a trailing comma",
      text: `{"a": 1,}`,
      expected: /not valid JSON: Unexpected RIGHT_BRACE/,
    },
    { name: "a key that is not a string", text: `{1: 2}`, expected: /not valid JSON/ },
    { name: "another document after", text: `{} {}`, expected: /not valid JSON/ },
    {
      name: "a bad value inside an operation",
      text: `{"operations": {"a": {"kind": tru}}}`,
      expected: /not valid JSON/,
    },
    {
      name: "a mismatched bracket",
      text: `{"operations": {"a": {"x": [1}}}}`,
      expected: /not valid JSON: Unexpected RIGHT_BRACE/,
    },
  ];
  for (const c of cases) {
    const bytes = encoder.encode(c.text);
    for (const size of [1, 5, 1 << 20]) {
      const e = assertThrows(() => readIn(bytes, size), SyntaxError);
      assertMatch(e.message, c.expected, `${c.name} in chunks of ${size}`);
    }
  }
});

Deno.test("SessionFileReader gives an operation cut across chunks once its last byte comes, and nothing before", () => {
  const reader = new SessionFileReader();
  reader.write(encoder.encode(`{"schema_version": 1, "operations": {`));
  const op = JSON.stringify({ kind: "prompt", text: "x".repeat(1000) });
  let read = 0;
  for (let i = 0; i < 5000; i++) {
    // an operation cut in two: its first half waits for its second
    const text = `${i ? "," : ""}"op${i}": ${op}`;
    const half = text.length >> 1;
    assertEquals(reader.write(encoder.encode(text.slice(0, half))), []);
    read += reader.write(encoder.encode(text.slice(half))).length;
  }
  reader.write(encoder.encode("}}"));
  reader.end();
  assertEquals(read, 5000);
});
