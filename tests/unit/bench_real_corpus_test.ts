/**
 * The import bench's corpora of real recordings (tests/bench/_real_corpus.ts): every copy is
 * a session of its own, imported without a loss or an error, and each copy's texts end with its
 * number (so no two copies' texts are one payload: the store keeps them all, as fresh text).
 */
import { assert, assertEquals } from "../_helpers/assert.ts";
import { ChronicleStore, importAll, inProcessRunner } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { writeRealJsonlHome, writeRealOpencodeHome } from "../bench/_real_corpus.ts";

for (const agent of ["gemini", "qwen", "copilot", "opencode"] as const) {
  Deno.test(`bench corpus of real ${agent} recordings: each copy a session, imported whole`, async () => {
    const home = await Deno.makeTempDir({ prefix: "chronicle-real-corpus-test-" });
    try {
      const written = agent === "opencode"
        ? writeRealOpencodeHome(home, 1)
        : writeRealJsonlHome(agent, home, 1);
      assert(written >= 2 ** 20, `${written} bytes written`);
      const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
      const store = ChronicleStore.open(":memory:");
      try {
        const summary = await importAll(store, {
          env: { home, env: {}, platform: "linux" },
          fs,
          runner: inProcessRunner(fs),
          sources: [agent],
        });
        assertEquals(summary.errors, []);
        assertEquals([summary.loss_windows, summary.sources[agent].failed], [0, 0]);
        const copies = store.listSessions({ limit: 10_000 }).items;
        assert(copies.length >= 4, `${copies.length} sessions`);
        assertEquals(new Set(copies.map((s) => s.id)).size, copies.length);
        // the same text in two copies is two payloads: each ends with its copy's number
        for (const copy of [0, 1, copies.length - 1]) {
          assert(store.search(`"copy ${copy}"`).total > 0, `copy ${copy}'s texts are marked`);
        }
      } finally {
        store.close();
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}
