import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import {
  exportSession,
  sessionDirName,
  sessionJson,
  sessionJsonChunks,
  verifyArtifacts,
} from "../../../core/artifacts/mod.ts";
import { fixtureStore } from "../server/_helpers.ts";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { denoArtifactReader, denoArtifactWriter } from "../../../runtime/artifact_fs.ts";

const SHARED = FIXTURES;

async function exported() {
  const home = `${SHARED}/realclients/claude/s6-subagent/native`;
  const store = ChronicleStore.open(":memory:");
  await importAll(store, { env: { home, env: {}, platform: "linux" }, fs: createDenoFs() });
  const out = await Deno.makeTempDir({ prefix: "chronicle-export-test-" });
  const session = store.loadSession(store.listSessions().items[0].id)!;
  const dir = await exportSession(session, {
    writer: denoArtifactWriter,
    readPayload: (sha) => store.payload(sha),
  }, out);
  return { store, out, dir, session };
}

Deno.test("exportSession() writes manifest, session and payloads with private modes", async () => {
  const { store, out, dir, session } = await exported();
  try {
    assertEquals(dir, `${out}/sessions/${sessionDirName(session.session.id)}`);
    assertEquals((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assertEquals((await Deno.stat(`${dir}/payloads`)).mode! & 0o777, 0o700);
    for (const f of ["manifest.json", "session.json"]) {
      assertEquals((await Deno.stat(`${dir}/${f}`)).mode! & 0o777, 0o600);
    }
    const manifest = JSON.parse(await Deno.readTextFile(`${dir}/manifest.json`));
    assertEquals(manifest.schema_version, 1);
    assertEquals(manifest.session_id, session.session.id);
    const names = [...Deno.readDirSync(`${dir}/payloads`)].map((e) => e.name);
    assertEquals(manifest.payload_count, names.length);
    const written = JSON.parse(await Deno.readTextFile(`${dir}/session.json`));
    for (
      const key of [
        "schema_version",
        "session",
        "connections",
        "timeline",
        "operations",
        "completeness",
        "provenance",
        "issues",
      ]
    ) {
      assert(key in written, key);
    }
    const op = Object.values(
      written.operations as Record<string, { tool?: string; request: { sha256: string } }>,
    )
      .find((o) => o.tool === "Write")!;
    assertEquals(
      JSON.parse(await Deno.readTextFile(`${dir}/payloads/${op.request.sha256}`)).file_path,
      "/home/dev/projects/s6-subagent/SUMMARY.md",
    );
    assertEquals(
      [...Deno.readDirSync(`${out}/sessions`)].map((e) => e.name),
      [sessionDirName(session.session.id)],
      "no temp folder left",
    );
    const report = await verifyArtifacts(denoArtifactReader, out);
    assertEquals(report.ok, true);
  } finally {
    store.close();
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("verifyArtifacts() catches a changed session, a changed payload, a missing payload and a wrong version", async (t) => {
  const cases: { name: string; tamper: (dir: string) => Promise<void>; expected: RegExp }[] = [
    {
      name: "session.json edited",
      tamper: async (d) =>
        await Deno.writeTextFile(
          `${d}/session.json`,
          (await Deno.readTextFile(`${d}/session.json`)).replace("s6-subagent", "s7"),
        ),
      expected: /does not match the checksum/,
    },
    {
      name: "payload altered",
      tamper: async (d) => {
        const [first] = [...Deno.readDirSync(`${d}/payloads`)];
        await Deno.writeTextFile(`${d}/payloads/${first.name}`, "tampered");
      },
      expected: /does not match its SHA-256/,
    },
    {
      name: "payload replaced by a symlink to /dev/zero (never followed, never read)",
      tamper: async (d) => {
        const [first] = [...Deno.readDirSync(`${d}/payloads`)];
        await Deno.remove(`${d}/payloads/${first.name}`);
        await Deno.symlink("/dev/zero", `${d}/payloads/${first.name}`);
      },
      expected: /is missing \(or not a regular file\)/,
    },
    {
      name: "payload replaced by a symlink to a copy of itself",
      tamper: async (d) => {
        const [first] = [...Deno.readDirSync(`${d}/payloads`)];
        const copy = `${d}/../${first.name}.copy`;
        await Deno.copyFile(`${d}/payloads/${first.name}`, copy);
        await Deno.remove(`${d}/payloads/${first.name}`);
        await Deno.symlink(copy, `${d}/payloads/${first.name}`);
      },
      expected: /is missing \(or not a regular file\)/,
    },
    {
      name: "session.json replaced by a symlink",
      tamper: async (d) => {
        await Deno.rename(`${d}/session.json`, `${d}/../session.json.real`);
        await Deno.symlink(`${d}/../session.json.real`, `${d}/session.json`);
      },
      expected: /session.json is missing \(or not a regular file\)/,
    },
    {
      name: "a payload bigger than the manifest's payload bytes",
      tamper: async (d) => {
        const m = JSON.parse(await Deno.readTextFile(`${d}/manifest.json`));
        m.payload_bytes = 1;
        await Deno.writeTextFile(`${d}/manifest.json`, JSON.stringify(m));
      },
      expected: /larger than the manifest's payload bytes allow/,
    },
    {
      name: "payload removed",
      tamper: async (d) => {
        const [first] = [...Deno.readDirSync(`${d}/payloads`)];
        await Deno.remove(`${d}/payloads/${first.name}`);
      },
      expected: /is missing/,
    },
    {
      name: "other schema version",
      tamper: async (d) => {
        const m = JSON.parse(await Deno.readTextFile(`${d}/manifest.json`));
        m.schema_version = 2;
        await Deno.writeTextFile(`${d}/manifest.json`, JSON.stringify(m));
      },
      expected: /schema_version 2/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const { store, out, dir } = await exported();
      try {
        await c.tamper(dir);
        const report = await verifyArtifacts(denoArtifactReader, out);
        assertEquals(report.ok, false);
        assertMatch(report.sessions[0].problems.join("\n"), c.expected);
      } finally {
        store.close();
        await Deno.remove(out, { recursive: true });
      }
    });
  }
});

Deno.test("exportSession() replaces an earlier export of the same session atomically", async () => {
  const { store, out, session } = await exported();
  try {
    await exportSession(session, {
      writer: denoArtifactWriter,
      readPayload: (sha) => store.payload(sha),
    }, out);
    assertEquals([...Deno.readDirSync(`${out}/sessions`)].length, 1);
    assertEquals((await verifyArtifacts(denoArtifactReader, out)).ok, true);
  } finally {
    store.close();
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("sessionDirName() keeps a hostile session id inside the export folder", async (t) => {
  const cases: [string, string][] = [
    ["claude-code:6e1ca488-75fe", "claude-code_6e1ca488-75fe"],
    ["codex:../../etc/passwd", "codex_.._.._etc_passwd"],
    ["..", "_"],
    [".hidden", "_hidden"],
    ["a/b\\c d", "a_b_c_d"],
  ];
  for (const [id, expected] of cases) {
    await t.step(JSON.stringify(id), () => {
      const name = sessionDirName(id);
      assertEquals(name, expected);
      assert(!name.includes("/") && !name.startsWith("."), name);
    });
  }
});

Deno.test("export refuses to write through a folder that is really a symlink", async () => {
  const { store, out, session } = await exported();
  const elsewhere = await Deno.makeTempDir({ prefix: "chronicle-elsewhere-" });
  try {
    const again = await Deno.makeTempDir({ prefix: "chronicle-export-link-" });
    await Deno.symlink(elsewhere, `${again}/sessions`);
    let threw = false;
    try {
      await exportSession(session, {
        writer: denoArtifactWriter,
        readPayload: (sha) => store.payload(sha),
      }, again);
    } catch (e) {
      threw = true;
      assertMatch((e as Error).message, /not a folder/);
    }
    assert(threw, "export wrote through a symlink");
    assertEquals([...Deno.readDirSync(elsewhere)], []);
    await Deno.remove(again, { recursive: true });
  } finally {
    await Deno.remove(out, { recursive: true });
    await Deno.remove(elsewhere, { recursive: true });
    store.close();
  }
});

Deno.test("session.json written in pieces is JSON.stringify's text, whatever the session holds", async () => {
  const store = await fixtureStore(["claude/s6-subagent", "codex/s4-long", "opencode/s4-long"]);
  const sessions = store.listSessions({ limit: 100 }).items.map((s) => store.loadSession(s.id)!);
  assert(sessions.length >= 3);
  const [first] = sessions;
  const odd = {
    ...first,
    // ids that look like numbers go first, in number order, as JSON.stringify puts them
    operations: {
      "10": first.operations[Object.keys(first.operations)[0]],
      "2": { ...Object.values(first.operations)[0], text: 'é\n\u2028"quoted" 😀' },
      "op:b": Object.values(first.operations)[0],
    },
    extensions: { nested: { a: [1, { b: null }], empty: {}, list: [] }, gone: undefined },
  };
  const noSteps = { ...first, operations: {}, timeline: [], issues: [] };
  for (const session of [...sessions, odd, noSteps] as typeof sessions) {
    assertEquals([...sessionJsonChunks(session)].join(""), sessionJson(session));
  }
  store.close();
});
