import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { type CanonicalSession, PayloadSink } from "../../../core/model/mod.ts";
import { makeScanCommand, type ScanStore } from "../../../cli/scan.ts";
import { UsageError } from "../../../cli/args.ts";
import { FakeSecrets } from "./_fake_secrets.ts";
import { memIo } from "./_io.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { importKeyedSession } from "./_keyed_session.ts";

const fake = new FakeSecrets(9);
const KEY = fake.github();

async function tree(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-scan-" });
  await Deno.mkdir(`${dir}/src/deep`, { recursive: true });
  await Deno.mkdir(`${dir}/.git`);
  await Deno.writeTextFile(`${dir}/src/app.ts`, `const token = "${KEY}";\n`);
  await Deno.writeTextFile(`${dir}/src/deep/notes.md`, "ask ops@acme-corp.io\n");
  await Deno.writeTextFile(`${dir}/src/clean.txt`, "nothing here\n");
  await Deno.writeTextFile(`${dir}/.git/config`, `url = https://x:${KEY}@github.com/a/b\n`);
  await Deno.writeFile(
    `${dir}/src/blob.bin`,
    new Uint8Array([0, 1, 2, ...new TextEncoder().encode(KEY)]),
  );
  return dir;
}

const scan = makeScanCommand();

Deno.test("chronicle scan walks a folder, skips .git and binaries, exits 1 on findings", async () => {
  const dir = await tree();
  try {
    const { io, stdout } = memIo({ cwd: dir });
    assertEquals(await scan(["src"], io), 1);
    assertEquals(
      stdout(),
      "src/app.ts:1:16  api_key (github)  ghp_****\n" +
        "src/deep/notes.md:1:5  email  ***@***.io\n" +
        "2 findings (api_key 1, email 1); scanned 3 files\n",
    );
    assert(!stdout().includes(KEY));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("chronicle scan exits 0 without findings and 2 on an unreadable path", async () => {
  const dir = await tree();
  try {
    const ok = memIo({ cwd: dir });
    assertEquals(await scan(["src/clean.txt"], ok.io), 0);
    assertEquals(ok.stdout(), "No findings; scanned 1 file.\n");
    const bad = memIo({ cwd: dir });
    assertEquals(await scan(["src/clean.txt", "missing.txt"], bad.io), 2);
    assertStringIncludes(bad.stderr(), 'chronicle scan: cannot read "missing.txt"');
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("chronicle scan - reads stdin; --redact prints the redacted text only", async () => {
  const text = `export GH=${KEY}\nhost 10.2.3.4\n`;
  const { io, stdout, stderr } = memIo({ stdin: text });
  assertEquals(await scan(["-", "--redact"], io), 1);
  assertEquals(stdout(), "export GH=ghp_****\nhost ***.***.***.***\n");
  assertStringIncludes(stderr(), "2 findings");
});

Deno.test("chronicle scan --show-secrets is the only way to print a secret", async () => {
  const plain = memIo({ stdin: `k=${KEY}` });
  await scan(["-", "--format", "json"], plain.io);
  assert(!plain.stdout().includes(KEY));
  const shown = memIo({ stdin: `k=${KEY}` });
  await scan(["-", "--format", "json", "--show-secrets"], shown.io);
  const json = JSON.parse(shown.stdout());
  assertEquals(json.results[0].findings[0].secret, KEY);
  assertEquals(json.total, 1);
  assertEquals(json.histogram, { api_key: 1 });
});

Deno.test("chronicle scan --format sarif prints a SARIF log", async () => {
  const { io, stdout } = memIo({ stdin: "mail ops@acme.io" });
  assertEquals(await scan(["-", "--format", "sarif"], io), 1);
  const log = JSON.parse(stdout());
  assertEquals(log.version, "2.1.0");
  assertEquals(log.runs[0].results[0].ruleId, "email");
  assertEquals(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri, "-");
});

Deno.test("chronicle scan: usage errors", async () => {
  for (const args of [[], ["--format", "xml", "-"], ["--session", "a", "--all"], ["--all"]]) {
    let thrown: unknown;
    try {
      await scan(args, memIo().io);
    } catch (e) {
      thrown = e;
    }
    assert(thrown instanceof UsageError, `${args.join(" ")}: ${thrown}`);
  }
});

function tinySession(id: string, sink: PayloadSink, text: string): CanonicalSession {
  const prov = {
    epoch: 0,
    source_range: {
      file: "/f",
      lines: [1, 1] as [number, number],
      bytes: [0, 1] as [number, number],
    },
  };
  return {
    schema_version: 1,
    recording: { id: "rec", source: "codex", source_paths: [], pipeline_version: "t" },
    session: { id, native_id: id, source: "codex", project: {} },
    connections: [],
    timeline: [{ seq: 0, op: "op1", connection: "main", offset_ns: 0 }],
    operations: {
      op1: {
        kind: "exec",
        effect: "process",
        tool: "shell",
        request: sink.json({ command: ["bash", "-lc", "env"] }),
        response: sink.text(text),
        completeness: "complete",
        provenance: prov,
        replay: { replayable: false, blockers: [] },
      },
    },
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  };
}

Deno.test("chronicle scan --session and --all scan imported sessions through the injected store", async () => {
  const sink = new PayloadSink();
  const sessions = [
    tinySession("codex:a", sink, `GITHUB_TOKEN=${KEY}\n`),
    tinySession("codex:b", sink, "PATH=/usr/bin\n"),
  ];
  let closed = 0;
  const store: ScanStore = {
    *sessions(sel) {
      for (const s of sessions) if (!sel.id || s.session.id === sel.id) yield s;
    },
    readPayload: (ref) =>
      "sha256" in ref ? new TextDecoder().decode(sink.payloads.get(ref.sha256)!) : null,
    rules: () => [],
    close: () => void closed++,
  };
  const cmd = makeScanCommand({ openStore: () => store });

  const one = memIo();
  assertEquals(await cmd(["--session", "codex:a"], one.io), 1);
  assertEquals(
    one.stdout(),
    "session:codex:a/op1/response:1:14  api_key (github)  ghp_****\n" +
      "1 finding (api_key 1); scanned 1 session\n",
  );
  const all = memIo();
  assertEquals(await cmd(["--all", "--format", "json"], all.io), 1);
  assertEquals(JSON.parse(all.stdout()).total, 1);
  assertEquals(JSON.parse(all.stdout()).scanned, { files: 0, sessions: 2 });
  const missing = memIo();
  assertEquals(await cmd(["--session", "codex:zzz"], missing.io), 2);
  assertStringIncludes(missing.stderr(), 'no session "codex:zzz"');
  assertEquals(closed, 3);

  let thrown: unknown;
  try {
    await makeScanCommand()(["--all"], memIo().io);
  } catch (e) {
    thrown = e;
  }
  assert(thrown instanceof UsageError);
});

Deno.test("chronicle scan: a file name with a line break or an escape sequence cannot forge output", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-scan-" });
  try {
    await Deno.writeTextFile(`${dir}/evil\nok.ts:1:1  nothing  \x1b[2Jx.ts`, `k = "${KEY}"\n`);
    const { io, stdout } = memIo({ cwd: dir });
    assertEquals(await scan(["."], io), 1);
    const lines = stdout().trimEnd().split("\n");
    assertEquals(lines.length, 2, stdout());
    assertStringIncludes(lines[0], "evil\\nok.ts:1:1  nothing  \\x1b[2Jx.ts");
    assert(!stdout().includes("\x1b"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stored session scanned in parts of a page of steps reports what it reports whole", async () => {
  const home = await Deno.makeTempDir({ prefix: "chronicle-scan-parts-" });
  const store = ChronicleStore.open(":memory:");
  try {
    const id = await importKeyedSession(store, home, {
      sessionId: "99999999-6666-4555-8444-333333333333",
      calls: 40,
      fake,
    });
    const scanWith = async (sessions: () => Iterable<CanonicalSession>) => {
      const io = memIo();
      const code = await makeScanCommand({
        openStore: () => ({
          sessions,
          readPayload: (ref) => store.payloadText(ref),
          rules: () => [],
        }),
      })(["--session", id, "--format", "json"], io.io);
      return { code, out: JSON.parse(io.stdout()) };
    };
    const parts = [...store.sessionParts(id, { steps: 7 })];
    assert(parts.length >= 5, `${parts.length} parts`);
    const whole = await scanWith(() => [store.loadSession(id)!]);
    const inParts = await scanWith(() => store.sessionParts(id, { steps: 7 }));
    assertEquals(inParts, whole);
    assertEquals(whole.out.scanned, { files: 0, sessions: 1 });
    assert(whole.out.total >= 28, `${whole.out.total} findings`);
    const lastPrompt = JSON.stringify(whole.out).match(/last_prompt/g) ?? [];
    assert(lastPrompt.length >= 1, "the session's own last prompt");
  } finally {
    store.close();
    await Deno.remove(home, { recursive: true });
  }
});
