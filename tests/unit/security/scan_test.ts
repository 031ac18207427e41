import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  ChronicleError,
  type PayloadRef,
  PayloadSink,
} from "../../../core/model/mod.ts";
import {
  compileGlob,
  type CustomRule,
  forEachGlobMatch,
  scanSession,
  scanText,
  sessionFindings,
} from "../../../core/security/mod.ts";
import { FakeSecrets } from "./_fake_secrets.ts";

const fake = new FakeSecrets(3);

function rule(
  id: string,
  pattern: string,
  action: "redact" | "allow",
  enabled = true,
): CustomRule {
  return { id, name: id, pattern, action, enabled };
}

Deno.test("compileGlob(): * spans non-whitespace, ? one character, the rest is literal", async (t) => {
  const table: { glob: string; text: string; want: string[] }[] = [
    { glob: "ACME-*", text: "key ACME-12.ab/c9 end", want: ["ACME-12.ab/c9"] },
    {
      glob: "*@corp.io",
      text: "mail: bob@corp.io, ann@corp.io",
      want: ["bob@corp.io", "ann@corp.io"],
    },
    { glob: "id-???", text: "id-abc id-ab id-a c", want: ["id-abc", "id-ab ", "id-a c"] },
    { glob: "a.b", text: "a.b axb", want: ["a.b"] },
    { glob: "(x)+[y]", text: "(x)+[y]", want: ["(x)+[y]"] },
    { glob: "Ünï*", text: "Ünïcode ok", want: ["Ünïcode"] },
    { glob: "Case", text: "case Case", want: ["Case"] },
  ];
  for (const c of table) {
    await t.step(`${c.glob} in ${JSON.stringify(c.text)}`, () => {
      const found: string[] = [];
      forEachGlobMatch(compileGlob(c.glob), c.text, (s, e) => void found.push(c.text.slice(s, e)));
      assertEquals(found, c.want);
    });
  }
});

Deno.test("compileGlob() refuses patterns that would match everywhere", () => {
  for (const bad of ["", "   ", "*", "*?*", "x".repeat(501)]) {
    const e = assertThrows(() => compileGlob(bad), ChronicleError);
    assertEquals((e as ChronicleError).code, "usage");
  }
});

Deno.test("scanText() keeps an allow-listed span even when a built-in would redact it", () => {
  const key = fake.aws();
  const text = `AWS_ACCESS_KEY_ID=${key} and dev@acme.io`;
  assertEquals(scanText(text).findings.map((f) => f.rule), ["api_key", "email"]);
  const r = scanText(text, { rules: [rule("a", key.slice(0, 8) + "*", "allow")] });
  assertEquals(r.findings.map((f) => f.rule), ["email"]);
  assert(r.redacted.includes(key));
});

Deno.test("scanText(): allow beats a custom redact rule on the same span", () => {
  const r = scanText("ticket PROJ-1234 here", {
    rules: [rule("r", "PROJ-*", "redact"), rule("a", "PROJ-1234", "allow")],
  });
  assertEquals(r.findings, []);
  assertEquals(r.redacted, "ticket PROJ-1234 here");
});

Deno.test("scanText(): a partial allow overlap still protects the span from redaction", () => {
  // the allow span covers only the domain; the e-mail that overlaps it stays as it is
  const r = scanText("write to ops@internal-corp.net", {
    rules: [rule("a", "internal-corp.net", "allow")],
  });
  assertEquals(r.findings, []);
});

Deno.test("scanText(): custom redact rules claim before the built-ins", () => {
  const url = `postgres://app:${fake.password()}@db.acme.io/app`;
  const r = scanText(`DATABASE_URL=${url}`, { rules: [rule("db", "postgres://*", "redact")] });
  assertEquals(r.findings.map((f) => [f.rule, f.custom, f.rule_id]), [["db", true, "db"]]);
  assertEquals(r.redacted, "DATABASE_URL=****");
});

Deno.test("scanText(): on overlap the earlier claim wins, custom rules in their order", () => {
  const r = scanText("code ZX-42-QQ end", {
    rules: [rule("first", "ZX-42*", "redact"), rule("second", "*42-QQ", "redact")],
  });
  assertEquals(r.findings.map((f) => [f.rule, f.start, f.end]), [["first", 5, 13]]);
  const swapped = scanText("code ZX-42-QQ end", {
    rules: [rule("second", "*42-QQ", "redact"), rule("first", "ZX-42*", "redact")],
  });
  assertEquals(swapped.findings.map((f) => f.rule), ["second"]);
});

Deno.test("scanText(): disabled custom rules do nothing", () => {
  const r = scanText("ZX-42", { rules: [rule("off", "ZX-*", "redact", false)] });
  assertEquals(r.findings, []);
});

Deno.test("scanText(): a db URL is one db_conn finding, never an e-mail plus a password", () => {
  const pw = fake.password();
  const text = `mysql://root:${pw}@mysql.acme.com:3306/shop?password=${pw}`;
  const r = scanText(text);
  assertEquals(r.findings.map((f) => f.rule), ["db_conn"]);
  assertEquals(r.redacted, "mysql://****");
});

Deno.test("scanText(): findings are sorted by position whatever the rule order", () => {
  const text = `a@b.io ${fake.github()} 10.0.0.1 c@d.io`;
  const r = scanText(text);
  assertEquals(r.findings.map((f) => f.rule), ["email", "api_key", "private_ip", "email"]);
  const starts = r.findings.map((f) => f.start);
  assertEquals(starts, [...starts].sort((a, b) => a - b));
});

Deno.test("scanText() is deterministic: same input and rules, same output", () => {
  const parts: string[] = [];
  for (let i = 0; i < 50; i++) {
    parts.push(`k${i}=${fake.openai()} m${i}@acme.io 10.1.${i}.9 password: ${fake.password()}`);
  }
  const text = parts.join("\n");
  const rules = [rule("r", "m1*", "redact"), rule("a", "10.1.2.*", "allow")];
  const a = scanText(text, { rules });
  const b = scanText(text, { rules: [...rules] });
  assertEquals(a, b);
  assertEquals(scanText(text, { rules }), a);
});

Deno.test("scanText() returns the same string when there is nothing to redact", () => {
  const text = "plain text with no secrets";
  const r = scanText(text);
  assertEquals(r.findings, []);
  assert(r.redacted === text);
});

Deno.test("scanText() reports 1-based lines and columns, end exclusive", () => {
  const r = scanText("first line\n  mail me: x@acme.io\n");
  assertEquals(r.findings.map((f) => [f.line, f.column, f.end_line, f.end_column]), [[
    2,
    12,
    2,
    21,
  ]]);
});

Deno.test("scanText() can run a subset of the built-ins", () => {
  const text = "dev@acme.io 10.0.0.1";
  assertEquals(scanText(text, { builtins: ["private_ip"] }).findings.map((f) => f.rule), [
    "private_ip",
  ]);
});

function session(sink: PayloadSink, key: string): CanonicalSession {
  const prov = {
    epoch: 0,
    source_range: {
      file: "/f",
      lines: [1, 1] as [number, number],
      bytes: [0, 1] as [number, number],
    },
  };
  const base = {
    completeness: "complete" as const,
    provenance: prov,
    replay: { replayable: false, blockers: [] },
  };
  return {
    schema_version: 1,
    recording: { id: "rec_1", source: "claude-code", source_paths: ["/f"], pipeline_version: "t" },
    session: {
      id: "claude-code:s1",
      native_id: "s1",
      source: "claude-code",
      project: { path: "/p" },
      title: "deploy with dev@acme.io",
    },
    connections: [],
    timeline: [
      { seq: 0, op: "op_a", connection: "main", offset_ns: 0 },
      { seq: 1, op: "op_b", connection: "main", offset_ns: 1 },
      { seq: 2, op: "op_c", connection: "main", offset_ns: 2 },
    ],
    operations: {
      op_a: { ...base, kind: "prompt", effect: "none", text: "my key is " + key },
      op_b: {
        ...base,
        kind: "read",
        effect: "fs_read",
        tool: "Read",
        target: "/p/.env",
        request: sink.json({ file_path: "/p/.env" }),
        response: sink.text(`OPENAI_API_KEY=${key}\nHOST=10.0.0.7\n`),
      },
      op_c: {
        ...base,
        kind: "exec",
        effect: "process",
        tool: "Bash",
        request: { inline: "ls" },
        response: { sha256: "0".repeat(64), size: 12 },
        extensions: { raw: { note: "ping 192.168.1.1" } },
      },
    },
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  };
}

Deno.test("sessionFindings() finds what scanSession() finds, and neither copies nor changes the session", () => {
  const sink = new PayloadSink();
  const s = session(sink, fake.openai());
  const before = structuredClone(s);
  const read = (ref: PayloadRef) => {
    if (!("sha256" in ref)) return null;
    const b = sink.payloads.get(ref.sha256);
    return b ? new TextDecoder().decode(b) : null;
  };
  const { redacted, ...whole } = scanSession(s, { readPayload: read });
  assert(whole.total >= 4 && redacted.session.title !== s.session.title);
  assertEquals(sessionFindings(s, { readPayload: read }), whole);
  assertEquals(s, before, "the session is as it was");
  // a payload that cannot be read is counted, and the session keeps its reference
  const none = sessionFindings(s, { readPayload: () => null });
  assert(none.unreadable > 0);
  assertEquals(s, before);
});

Deno.test("scanSession() scans messages, tool inputs and results, and returns redacted copies", () => {
  const sink = new PayloadSink();
  const key = fake.openai();
  const s = session(sink, key);
  const before = structuredClone(s);
  const read = (ref: PayloadRef) => {
    if (!("sha256" in ref)) return null;
    const b = sink.payloads.get(ref.sha256);
    return b ? new TextDecoder().decode(b) : null;
  };
  const r = scanSession(s, { readPayload: read });

  assertEquals(s, before, "the original is never modified");
  assertEquals(r.session_id, "claude-code:s1");
  assertEquals(
    r.messages.map((m) => [m.op, m.field, m.findings.map((f) => f.rule)]),
    [
      ["", "title", ["email"]],
      ["op_a", "text", ["api_key"]],
      ["op_b", "response", ["api_key", "private_ip"]],
      ["op_c", "extensions", ["private_ip"]],
    ],
  );
  assertEquals(r.histogram, { email: 1, api_key: 2, private_ip: 2 });
  assertEquals(r.total, 5);
  assertEquals(r.unreadable, 1);

  const copy = r.redacted;
  assertEquals(copy.session.title, "deploy with ***@***.io");
  assertEquals(copy.operations.op_a.text, "my key is sk-****");
  assertEquals(copy.operations.op_b.response, {
    inline: "OPENAI_API_KEY=sk-****\nHOST=***.***.***.***\n",
  });
  // a payload without findings keeps its reference; an unreadable one can never leak
  assertEquals(copy.operations.op_b.request, s.operations.op_b.request);
  assertEquals(copy.operations.op_c.response, { redacted: true, size: 12 });
  assertEquals(copy.operations.op_c.extensions, { raw: { note: "ping ***.***.***.***" } });
  assert(!JSON.stringify(copy).includes(key));
});
