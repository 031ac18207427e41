/**
 * Canonical round trips: export → import into a fresh data folder → export again gives the
 * same files, byte for byte, for every agent's fixture sessions; importing the same export
 * twice changes nothing; an export that fails verification is not imported; a session the
 * local logs own is kept as they say.
 */
import {
  exportSession,
  importArtifacts,
  type ImportedArtifact,
  sessionJson,
} from "../../../core/artifacts/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import { denoArtifactReader, denoArtifactWriter } from "../../../runtime/artifact_fs.ts";
import { createPackFiles, packDir } from "../../../runtime/pack_files.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { fixtureStore } from "../server/_helpers.ts";

const SCENARIOS = [
  "claude/s6-subagent",
  "claude/s2-errors",
  "codex/s4-long",
  "gemini/s2-errors",
  "opencode/s4-long",
];

async function exportAll(
  store: ChronicleStore,
  out: string,
  options: { storedOrder?: boolean } = {},
): Promise<void> {
  for (const s of store.listSessions({ limit: 1000 }).items) {
    await exportSession(store.loadSession(s.id)!, {
      writer: denoArtifactWriter,
      readPayload: (sha) => store.payload(sha),
      ...(options.storedOrder ? { readOrder: (shas) => store.payloadOrder(shas) } : {}),
    }, out);
  }
}

/** Every file under a folder, by relative path, as hex SHA-256. */
async function tree(dir: string, prefix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) Object.assign(out, await tree(dir, rel));
    else out[rel] = sha256Hex(await Deno.readFile(`${dir}/${rel}`));
  }
  return out;
}

/** A store on disk with pack files, as the CLI opens it. */
function diskStore(dir: string): ChronicleStore {
  return ChronicleStore.open(`${dir}/chronicle.db`, { packs: createPackFiles(packDir(dir)) });
}

/** As `chronicle import --canonical` does; `puts` counts the sessions handed to the store. */
function importInto(store: ChronicleStore, dir: string, puts = { n: 0 }) {
  return importArtifacts(
    denoArtifactReader,
    dir,
    (session, payloads, sha) => {
      puts.n++;
      return store.putCanonicalSession(session, payloads, { sessionSha256: sha });
    },
    (id, sha) => store.canonicalSkip(id, sha),
  );
}

const outcomes = (r: { sessions: ImportedArtifact[] }) => r.sessions.map((s) => s.outcome);

function rowCounts(store: ChronicleStore): Record<string, number> {
  const out: Record<string, number> = {};
  for (
    const t of [
      "sessions",
      "operations",
      "payloads",
      "connections",
      "usage",
      "epochs",
      "session_issues",
      "loss_windows",
    ]
  ) {
    out[t] = (dbOf(store).prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
  }
  return out;
}

Deno.test("canonical export → import into a fresh data folder → export again gives identical files", async () => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  const source = await fixtureStore(SCENARIOS);
  try {
    await exportAll(source, `${root}/A`);
    await Deno.mkdir(`${root}/data`);
    const fresh = diskStore(`${root}/data`);
    try {
      const report = await importInto(fresh, `${root}/A`);
      assert(report.ok, JSON.stringify(report.sessions.filter((s) => s.outcome === "failed")));
      assertEquals(outcomes(report).every((o) => o === "imported"), true);
      assertEquals(report.sessions.length, source.listSessions().total);
      await exportAll(fresh, `${root}/B`);
      const a = await tree(`${root}/A`);
      assert(Object.keys(a).length > 20, "the export has files");
      assertEquals(await tree(`${root}/B`), a);
      // payloads read in the order the store keeps them (each frame inflated once): the same
      await exportAll(fresh, `${root}/C`, { storedOrder: true });
      assertEquals(await tree(`${root}/C`), a);
      const held = [
        ...new Set(
          Object.keys(a).filter((k) => k.includes("/payloads/")).map((k) =>
            k.slice(k.lastIndexOf("/") + 1)
          ),
        ),
      ];
      const unknown = "0".repeat(64);
      const ordered = fresh.payloadOrder([...held, unknown]);
      assertEquals(ordered.at(-1), unknown, "an unknown hash last");
      assertEquals([...ordered].sort(), [...held, unknown].sort(), "each hash once");
      // The imported sessions are searchable and listed like imported ones.
      const word = "inventory";
      assertEquals(fresh.search(word).total, source.search(word).total);
      assertEquals(fresh.listSessions().items, source.listSessions().items);
    } finally {
      fresh.close();
    }
  } finally {
    source.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("importing the same export twice changes nothing", async () => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  const source = await fixtureStore(SCENARIOS.slice(0, 2));
  const fresh = ChronicleStore.open(":memory:");
  try {
    await exportAll(source, `${root}/A`);
    await importInto(fresh, `${root}/A`);
    const before = rowCounts(fresh);
    const updated = dbOf(fresh).prepare("SELECT id, updated_at FROM sessions ORDER BY id").all();
    // said without reading a session or its payloads for the store: its checksum, hashed from
    // the stored rows a page at a time, is the export's
    const puts = { n: 0 };
    const again = await importInto(fresh, `${root}/A`, puts);
    assertEquals(outcomes(again).every((o) => o === "unchanged"), true);
    assertEquals(puts.n, 0);
    for (const { id } of fresh.listSessions().items) {
      const sha = sha256Hex(sessionJson(fresh.loadSession(id)!));
      assertEquals(fresh.canonicalSkip(id, sha), "unchanged");
      assertEquals(fresh.canonicalSkip(id, "0".repeat(64)), null, "a changed export is written");
      assertEquals(source.canonicalSkip(id, "0".repeat(64)), "kept_local");
    }
    assertEquals(fresh.canonicalSkip("claude-code:nowhere", "0".repeat(64)), null);
    assertEquals(rowCounts(fresh), before);
    assertEquals(
      dbOf(fresh).prepare("SELECT id, updated_at FROM sessions ORDER BY id").all(),
      updated,
    );
  } finally {
    source.close();
    fresh.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a changed export replaces an earlier canonical import; local logs are kept", async () => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  const source = await fixtureStore(["claude/s6-subagent"]);
  const fresh = ChronicleStore.open(":memory:");
  try {
    const id = source.listSessions().items[0].id;
    const session = source.loadSession(id)!;
    const payloads = new Map<string, Uint8Array>();
    const changed = structuredClone(session);
    changed.session.title = "Renamed on the other machine";
    const sha = sha256Hex(sessionJson(changed));
    assertEquals(
      fresh.putCanonicalSession(session, payloadsOf(source, session, payloads), {
        sessionSha256: sha256Hex(sessionJson(session)),
      }),
      "imported",
    );
    assertEquals(fresh.putCanonicalSession(changed, payloads, { sessionSha256: sha }), "imported");
    assertEquals(fresh.getSession(id)!.title, "Renamed on the other machine");
    assertEquals(fresh.listSessions().total, 1);
    // The source store imports this session from its own logs: they stay the truth.
    assertEquals(
      source.putCanonicalSession(changed, payloads, { sessionSha256: sha }),
      "kept_local",
    );
    assertEquals(source.loadSession(id)!.session.title, session.session.title);
    // The same bytes as the local copy are simply unchanged.
    assertEquals(
      source.putCanonicalSession(session, payloads, {
        sessionSha256: sha256Hex(sessionJson(session)),
      }),
      "unchanged",
    );
  } finally {
    source.close();
    fresh.close();
    await Deno.remove(root, { recursive: true });
  }
});

function payloadsOf(
  store: ChronicleStore,
  session: ReturnType<ChronicleStore["loadSession"]> & object,
  into: Map<string, Uint8Array>,
) {
  for (const op of Object.values(session.operations)) {
    for (const ref of [op.request, op.response]) {
      if (ref && "sha256" in ref) into.set(ref.sha256, store.payload(ref.sha256)!);
    }
  }
  return into;
}

Deno.test("an export that fails verification is not imported", async (t) => {
  const cases: { name: string; tamper: (dir: string) => Promise<void> }[] = [
    {
      name: "a payload changed",
      tamper: async (dir) => {
        const p = `${dir}/payloads/${[...Deno.readDirSync(`${dir}/payloads`)][0].name}`;
        await Deno.chmod(p, 0o600);
        await Deno.writeTextFile(p, "changed");
      },
    },
    {
      name: "session.json changed",
      tamper: async (dir) => {
        const p = `${dir}/session.json`;
        await Deno.writeTextFile(p, (await Deno.readTextFile(p)).replace("s6-subagent", "s7"));
      },
    },
    {
      name: "a payload missing",
      tamper: (dir) =>
        Deno.remove(`${dir}/payloads/${[...Deno.readDirSync(`${dir}/payloads`)][0].name}`),
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
      const source = await fixtureStore(["claude/s6-subagent"]);
      const fresh = ChronicleStore.open(":memory:");
      try {
        await exportAll(source, `${root}/A`);
        const dir = `${root}/A/sessions/${[...Deno.readDirSync(`${root}/A/sessions`)][0].name}`;
        await c.tamper(dir);
        const report = await importInto(fresh, `${root}/A`);
        assertEquals(report.ok, false);
        assertEquals(outcomes(report), ["failed"]);
        assert(report.sessions[0].problems.length > 0);
        assertEquals(fresh.listSessions().total, 0);
      } finally {
        source.close();
        fresh.close();
        await Deno.remove(root, { recursive: true });
      }
    });
  }
});
