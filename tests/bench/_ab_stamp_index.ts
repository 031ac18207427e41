/**
 * A/B of the change-stamp index (operations_changes, migration 5) on import: `with` or
 * `without HOME DATA` imports HOME into a new store at DATA exactly as `chronicle import` does,
 * `without` after dropping the index. Pair the two as whole processes from outside (A B A B,
 * ratios pair by pair); each prints one JSON line: seconds, the index's bytes, and what a live
 * view's read of the latest changes costs on the biggest session. Measured 2026-12-02 on a
 * 100 MB corpus: import CPU with/without 0.98 (0.92..1.00), the index 1.2 MB of a 90 MB store,
 * a live read 1.0 ms with it and 2.7 ms without (621 operations; it grows with the session).
 */
import { ChronicleStore } from "../../core/store/mod.ts";
import { createPackFiles, packDir } from "../../runtime/pack_files.ts";
import { runImport } from "../../cli/import.ts";
import type { CliIo } from "../../cli/io.ts";
import { dbOf } from "../_helpers/store_db.ts";

const [mode, home, data] = Deno.args;
await Deno.remove(data, { recursive: true }).catch(() => {});
await Deno.mkdir(data, { recursive: true });
const open = () =>
  ChronicleStore.open(`${data}/chronicle.db`, { packs: createPackFiles(packDir(data)) });
const store = open();
if (mode === "without") dbOf(store).exec("DROP INDEX operations_changes");
const io: CliIo = {
  stdout: () => {},
  stderr: () => {},
  stdin: () => Promise.resolve(new Uint8Array()),
  env: { HOME: home },
  cwd: Deno.cwd(),
  isTerminal: false,
};
const t0 = performance.now();
await runImport(store, io, { tempRoot: `${data}/tmp`, sources: ["claude-code"] });
const seconds = (performance.now() - t0) / 1000;
const db = dbOf(store);
const big = db.prepare(
  `SELECT (SELECT id FROM sessions WHERE num = session) AS id, count(*) AS n FROM operations
   GROUP BY session ORDER BY n DESC LIMIT 1`,
).get() as { id: string; n: number };
const clock = store.changeClock();
// A live viewer's read: the changes after the last stamp but one (what an append costs).
const t1 = performance.now();
for (let i = 0; i < 50; i++) {
  store.sessionChanges(big.id, { after: { stamp: clock - 1, rowid: Infinity } });
}
const liveReadMs = (performance.now() - t1) / 50;
const indexBytes = (db.prepare(
  "SELECT coalesce(sum(pgsize), 0) AS n FROM dbstat WHERE name = 'operations_changes'",
).get() as { n: number }).n;
store.close();
console.log(
  JSON.stringify({
    mode,
    seconds,
    ops_in_biggest: big.n,
    live_read_ms: liveReadMs,
    index_bytes: indexBytes,
  }),
);
