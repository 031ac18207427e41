/**
 * Canonical round trips: export → import into a fresh data folder → export again gives the
 * same files, byte for byte, for every agent's fixture sessions; importing the same export
 * twice changes nothing; an export that fails verification is not imported; a session the
 * local logs own is kept as they say.
 */
import {
  type ArtifactReader,
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
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";
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

/**
 * As `chronicle import --canonical` does; `puts` counts the sessions handed to the store and
 * `reads` the payload files read.
 */
function importInto(store: ChronicleStore, dir: string, puts = { n: 0 }, reads = { n: 0 }) {
  const reader: ArtifactReader = {
    ...denoArtifactReader,
    readFile(path, maxBytes) {
      if (path.includes("/payloads/")) reads.n++;
      return denoArtifactReader.readFile(path, maxBytes);
    },
  };
  return importArtifacts(reader, dir, {
    skip: (id, sha) => store.canonicalSkip(id, sha),
    put: (session) => {
      puts.n++;
      return store.putCanonicalPages(session);
    },
  });
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
    // the first time, each payload is read once (checked as it is stored)
    const first = { n: 0 };
    await importInto(fresh, `${root}/A`, undefined, first);
    const files = (await Array.fromAsync(Deno.readDir(`${root}/A/sessions`))).map((e) =>
      [...Deno.readDirSync(`${root}/A/sessions/${e.name}/payloads`)].length
    );
    assertEquals(first.n, files.reduce((a, b) => a + b, 0));
    const before = rowCounts(fresh);
    const updated = dbOf(fresh).prepare("SELECT id, updated_at FROM sessions ORDER BY id").all();
    // said without handing the session to the store: its checksum, hashed from the stored
    // rows a page at a time, is the export's
    const puts = { n: 0 };
    const reads = { n: 0 };
    const again = await importInto(fresh, `${root}/A`, puts, reads);
    assertEquals(outcomes(again).every((o) => o === "unchanged"), true);
    assertEquals(puts.n, 0);
    // (read to be verified, each once, as the first time)
    assertEquals(reads.n, first.n);
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

Deno.test("a changed export imported over the stored session hashes the stored rows once", async () => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  const source = await fixtureStore(["claude/s6-subagent"]);
  const fresh = ChronicleStore.open(":memory:");
  try {
    await exportAll(source, `${root}/A`);
    const id = source.listSessions().items[0].id;
    const changed = structuredClone(source.loadSession(id)!);
    changed.session.title = "Renamed here";
    const payloads = payloadsOf(source, changed, new Map());
    const sha = sha256Hex(sessionJson(changed));
    assertEquals(fresh.putCanonicalSession(changed, payloads, { sessionSha256: sha }), "imported");
    // the stored session's checksum is hashed from its pages (storedSessionSha): counted
    const queries = (fresh as unknown as { queries: { operationPages(id: string): unknown } })
      .queries;
    const pages = queries.operationPages.bind(queries);
    let hashed = 0;
    queries.operationPages = (sid: string) => (hashed++, pages(sid));
    // asked by the import's skip, then by its write, with nothing written between: once
    assertEquals(outcomes(await importInto(fresh, `${root}/A`)), ["imported"]);
    assertEquals(hashed, 1);
    assertEquals(fresh.getSession(id)!.title, source.getSession(id)!.title);
    // once it is written the stamp has moved: the next ask hashes the new rows
    assertEquals(fresh.canonicalSkip(id, sha), null);
    assertEquals(hashed, 2);
    assertEquals(fresh.canonicalSkip(id, sha), null);
    assertEquals(hashed, 2);
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
    {
      name: "payloads past the manifest's payload bytes",
      tamper: async (dir) => {
        const m = JSON.parse(await Deno.readTextFile(`${dir}/manifest.json`));
        await Deno.writeTextFile(
          `${dir}/manifest.json`,
          JSON.stringify({ ...m, payload_bytes: m.payload_bytes - 1 }),
        );
      },
    },
    {
      name: "a payload more in the manifest than the session names",
      tamper: async (dir) => {
        const m = JSON.parse(await Deno.readTextFile(`${dir}/manifest.json`));
        await Deno.writeTextFile(
          `${dir}/manifest.json`,
          JSON.stringify({ ...m, payload_count: m.payload_count + 1 }),
        );
      },
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

/** A store holding one Claude Code session of `calls` tool calls, every result `bytes` long. */
async function longSessionStore(calls: number, bytes: (i: number) => number) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-home-" });
  await writeClaudeSession(home, {
    sessionId: "0b16b16b-3333-4444-8555-666677778888",
    cwd: "/work/long",
    turns: [
      { user: "read every file" },
      ...Array.from({ length: calls }, (_, i) => ({
        tool: {
          name: "Read",
          input: { file_path: `/work/long/f${i}.ts` },
          result: `file ${i} `.padEnd(bytes(i), `${i % 10}`),
        },
      })),
    ],
  });
  try {
    return await fixtureStore([], [home]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** As `importInto`, telling each page the store is handed: its operations and payload bytes. */
function importCountingPages(
  store: ChronicleStore,
  dir: string,
  pages: number[][],
  reader: ArtifactReader = denoArtifactReader,
) {
  return importArtifacts(reader, dir, {
    skip: (id, sha) => store.canonicalSkip(id, sha),
    put: (session) =>
      store.putCanonicalPages({
        ...session,
        pages: (async function* () {
          for await (const page of session.pages) {
            let bytes = 0;
            for (const b of page.payloads.values()) bytes += b.byteLength;
            pages.push([page.operations.length, bytes]);
            yield page;
          }
        })(),
      }),
  });
}

Deno.test("an export of a long session is imported a page at a time: the rows and the files again are those of the session put whole", async () => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  // 2,600 calls (2,601 steps); 44 of them with results of 1 MiB: pages end at 512 steps or
  // 16 MiB of payloads, whichever comes first
  const source = await longSessionStore(2600, (i) => i % 60 === 0 ? 1 << 20 : 200);
  const paged = diskStore(await Deno.makeTempDir({ dir: root }));
  const whole = ChronicleStore.open(":memory:");
  try {
    const id = source.listSessions().items[0].id;
    const session = source.loadSession(id)!;
    assertEquals(session.timeline.length, 2601);
    await exportAll(source, `${root}/A`);
    const pages: number[][] = [];
    const report = await importCountingPages(paged, `${root}/A`, pages);
    assertEquals(outcomes(report), ["imported"], JSON.stringify(report));
    assert(pages.length >= 6, `${pages.length} pages`);
    assertEquals(pages.reduce((n, [ops]) => n + ops, 0), 2601);
    for (const [ops, bytes] of pages) {
      assert(ops <= 512, `${ops} steps in a page`);
      // (a page ends once it holds 16 MiB: at most one call's 1 MiB past it)
      assert(bytes < (17 << 20), `${bytes} payload bytes in a page`);
    }
    assertEquals(
      whole.putCanonicalSession(session, payloadsOf(source, session, new Map()), {
        sessionSha256: sha256Hex(sessionJson(session)),
      }),
      "imported",
    );
    assertEquals(rowCounts(paged), rowCounts(whole));
    assertEquals(paged.loadSession(id), whole.loadSession(id));
    assertEquals(paged.loadSession(id), session);
    await exportAll(paged, `${root}/B`);
    assertEquals(await tree(`${root}/B`), await tree(`${root}/A`));
    assertEquals(paged.search("file 2599").total, source.search("file 1299").total);
  } finally {
    source.close();
    paged.close();
    whole.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an export that changes while it is imported leaves the store as it was", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "chronicle-roundtrip-" });
  const source = await longSessionStore(2600, () => 300);
  const cases: {
    name: string;
    /** Changes the session folder `d` once verify has read it. */
    change: (d: string) => Promise<void>;
    expected: RegExp;
  }[] = [
    {
      // every page is in by then: the last check undoes them all
      name: "session.json, at its very end",
      change: async (d) => {
        const bytes = await Deno.readFile(`${d}/session.json`);
        const longer = new Uint8Array(bytes.length + 1);
        longer.set(bytes);
        longer[bytes.length] = 0x20;
        await Deno.writeFile(`${d}/session.json`, longer);
      },
      expected: /session.json changed while importing/,
    },
    {
      name: "a payload the last page names",
      change: async (d) => {
        const ops = JSON.parse(await Deno.readTextFile(`${d}/session.json`)).operations;
        const refs = Object.values(ops).flatMap((op) => {
          const { request, response } = op as Record<string, { sha256?: string }>;
          return [request?.sha256, response?.sha256].filter((sha) => sha !== undefined);
        });
        await Deno.writeTextFile(`${d}/payloads/${refs.at(-1)}`, "changed");
      },
      expected: /payload [0-9a-f]{64} does not match its SHA-256/,
    },
  ];
  try {
    for (const c of cases) {
      await t.step(c.name, async () => {
        const fresh = ChronicleStore.open(":memory:");
        const out = await Deno.makeTempDir({ dir: root });
        try {
          await exportAll(source, out);
          const d = `${out}/sessions/${[...Deno.readDirSync(`${out}/sessions`)][0].name}`;
          // the second read of session.json is the import's, after verify's
          let reads = 0;
          const reader = {
            ...denoArtifactReader,
            async stream(path: string, maxBytes?: number) {
              if (path === `${d}/session.json` && ++reads === 2) await c.change(d);
              return await denoArtifactReader.stream(path, maxBytes);
            },
          };
          const pages: number[][] = [];
          const report = await importCountingPages(fresh, out, pages, reader);
          assertEquals(outcomes(report), ["failed"]);
          assertMatch(report.sessions[0].problems.join("\n"), c.expected);
          assert(pages.length >= 5, `${pages.length} pages were written before it failed`);
          assertEquals(fresh.listSessions().total, 0);
          assertEquals(Object.values(rowCounts(fresh)).every((n) => n === 0), true);
        } finally {
          fresh.close();
        }
      });
    }
  } finally {
    source.close();
    await Deno.remove(root, { recursive: true });
  }
});
