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
  operations.push(...reader.end());
  return {
    operations,
    head: { ...reader.head },
    found: reader.operationsFound,
    parsedFrom: reader.parsedFrom,
  };
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

/** The sessions of three real clients' recordings, as `sessionJson` writes them. */
async function realTexts(): Promise<string[]> {
  const store = await fixtureStore(["claude/s6-subagent", "codex/s4-long", "opencode/s2-errors"]);
  try {
    return store.listSessions({ limit: 100 }).items.map((s) =>
      sessionJson(store.loadSession(s.id)!)
    );
  } finally {
    store.close();
  }
}

/**
 * What the streaming parser alone makes of `text`: the same text after one space, a first line
 * that is not Chronicle's layout, so the parser reads it all (its bytes said one lower).
 */
function parsedAlone(text: string, size: number) {
  const read = outcome(" " + text, size);
  if ("error" in read) {
    return { error: read.error.replace(/byte (\d+)/g, (_, n) => `byte ${Number(n) - 1}`) };
  }
  assertEquals(read.parsedFrom, 0);
  return read;
}

/** `text` read in chunks of `size`: what it read, or the SyntaxError's message. */
function outcome(text: string, size: number) {
  try {
    return readIn(encoder.encode(text), size);
  } catch (e) {
    assert(e instanceof SyntaxError, String(e));
    return { error: e.message };
  }
}

/** A read's error message, or `read` when it read the file. */
const errorOf = (r: object) => ("error" in r ? String(r.error) : "read");

Deno.test("SessionFileReader reads Chronicle's own layout without the streaming parser", async () => {
  for (const text of await realTexts()) {
    for (const size of CHUNKS) {
      assertEquals(readIn(encoder.encode(text), size).parsedFrom, null, `chunks of ${size}`);
    }
  }
});

Deno.test("SessionFileReader reads a file that leaves Chronicle's layout partway on from there with the streaming parser, as that parser reads it whole", async () => {
  const text = (await realTexts()).find((t) => t.includes('"codex'))!;
  const lines = text.split("\n");
  // the lines where the operations begin and end, and the second operation's
  const opsAt = lines.indexOf(`  "operations": {`);
  const opsEnd = lines.indexOf("  },", opsAt);
  const op2 = lines.findIndex((l, i) => i > opsAt + 1 && /^ {4}"/.test(l));
  assert(opsAt > 0 && op2 > opsAt && opsEnd > op2);
  const edit = (at: number, f: (l: string) => string) =>
    lines.map((l, i) => (i === at ? f(l) : l)).join("\n");
  const cases: { name: string; text: string; from: number | null }[] = [
    { name: "a blank line between two operations", text: edit(op2, (l) => "\n" + l), from: op2 },
    { name: "an operation indented once more", text: edit(op2, (l) => "  " + l), from: op2 },
    {
      name: "an operation on one line",
      text: [
        ...lines.slice(0, op2),
        "    " +
        JSON.stringify(
          JSON.parse(
            `{${lines.slice(op2, lines.indexOf("    },", op2) + 1).join("\n").slice(0, -1)}}`,
          ),
        ).slice(1, -1) + ",",
        ...lines.slice(lines.indexOf("    },", op2) + 1),
      ].join("\n"),
      from: null,
    },
    { name: "a line ended with CRLF", text: edit(op2, (l) => l + "\r"), from: op2 },
    { name: "spaces after a closing brace", text: edit(opsEnd, (l) => l + " "), from: opsEnd },
    {
      name: "the first line after the object's brace",
      text: edit(0, () => `{"schema_version": 1,`).replace(`\n  "schema_version": 1,`, ""),
      from: 0,
    },
    {
      name: "a head field's value on the next line",
      text: edit(1, (l) => l.replace(": ", ":\n    ")),
      from: 1,
    },
    { name: "the file's last brace without a newline", text: text.trimEnd(), from: null },
    { name: "nothing after the session but whitespace", text: text + "  \n\n", from: null },
  ];
  const byteOf = (t: string, line: number) =>
    encoder.encode(t.split("\n").slice(0, line).join("\n") + (line ? "\n" : "")).length;
  for (const c of cases) {
    for (const size of CHUNKS) {
      const read = readIn(encoder.encode(c.text), size);
      const alone = parsedAlone(c.text, size);
      assert(!("error" in alone), c.name);
      assertEquals(
        [read.operations, read.head, read.found],
        [alone.operations, alone.head, alone.found],
        `${c.name} in chunks of ${size}`,
      );
      assertEquals(read.parsedFrom, c.from === null ? null : byteOf(c.text, c.from), c.name);
    }
  }
});

Deno.test("SessionFileReader says what is wrong with a file in Chronicle's layout, and at which byte, as the parser would", async () => {
  const text = (await realTexts()).find((t) => t.includes('"codex'))!;
  const bad = [
    {
      name: "a bad value",
      text: text.replace(/"kind": "(\w+)"/, '"kind": tru'),
      at: /at byte \d+/,
    },
    {
      name: "a comma after the last operation",
      text: text.replace(/\n {4}}\n {2}}/, "\n    },\n  }"),
    },
    { name: "no comma between two operations", text: text.replace(/\n {4}},\n/, "\n    }\n") },
    {
      name: "no comma between two fields",
      text: text.replace(/,\n {2}"timeline"/, '\n  "timeline"'),
    },
    { name: "cut short in an operation", text: text.slice(0, text.indexOf('"operations"') + 500) },
    { name: "cut short after its last operation", text: text.slice(0, text.lastIndexOf("\n  },")) },
    { name: "another document after", text: text + "{}\n" },
    { name: "an operation's brace not closed", text: text.replace(/\n {4}},\n/, "\n,\n") },
  ];
  for (const c of bad) {
    assert(c.text !== text, c.name);
    assert(!isJson(c.text), c.name);
    for (const size of CHUNKS) {
      const error = errorOf(outcome(c.text, size));
      assertMatch(error, /^session\.json is not valid JSON: /, `${c.name} in chunks of ${size}`);
      assertEquals(error, errorOf(parsedAlone(c.text, size)), `${c.name} in chunks of ${size}`);
    }
  }
  // the byte named is the file's
  const t = bad[0].text;
  const at = Number(/at byte (\d+)/.exec(errorOf(outcome(t, 64)))?.[1]);
  assertEquals(String.fromCharCode(encoder.encode(t)[at]), ",", "the byte after `tru`");
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

Deno.test("SessionFileReader reads any edit of a session's file as the streaming parser alone does (seeded edits)", async () => {
  const texts = await realTexts();
  const text = texts.reduce((a, b) => (a.length < b.length ? a : b));
  let seed = 17;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const CHARS = [" ", "\n", ",", "}", "{", "]", '"', "0", "\r", "x", ":"];
  let stayed = 0;
  let handed = 0;
  for (let round = 0; round < 300; round++) {
    let t = text;
    for (let edits = 1 + random(3); edits > 0; edits--) {
      const at = random(t.length);
      const lines = t.split("\n");
      const line = random(lines.length);
      // every other round makes only the edits JSON always allows: a line indented otherwise,
      // or joined to the next
      switch (round % 2 ? random(6) : 4 + random(2)) {
        case 4:
          lines[line] = [" ", "\t", ""][random(3)] + lines[line].replace(/^ /, "");
          t = lines.join("\n");
          break;
        case 5:
          t = [...lines.slice(0, line), lines.slice(line, line + 2).join(" ")].concat(
            lines.slice(line + 2),
          ).join("\n");
          break;
        case 0:
          t = t.slice(0, at) + t.slice(at + 1);
          break;
        case 1:
          t = t.slice(0, at) + CHARS[random(CHARS.length)] + t.slice(at);
          break;
        case 2:
          t = [...lines.slice(0, line + 1), lines[line], ...lines.slice(line + 1)].join("\n");
          break;
        default:
          t = [...lines.slice(0, line), ...lines.slice(line + 1)].join("\n");
      }
    }
    const size = CHUNKS[random(CHUNKS.length)];
    const read = outcome(t, size);
    const alone = parsedAlone(t, size);
    if ("error" in read || "error" in alone) {
      assertEquals(errorOf(read), errorOf(alone), `round ${round}`);
    } else {
      assertEquals(
        [read.operations, read.head, read.found],
        [alone.operations, alone.head, alone.found],
        `round ${round}`,
      );
      if (read.parsedFrom === null) stayed++;
      else handed++;
    }
  }
  // edits that keep the layout (a space inside a string, a line of an operation doubled), and
  // edits read on by the parser, not only errors
  assert(stayed > 20 && handed > 10, `${stayed} kept the layout, ${handed} were handed on`);
});
