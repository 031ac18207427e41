/**
 * Export cost: for the biggest real-client fixture session and synthetic sessions of 5,000 and
 * 50,000 steps, the time to build the redacted export document and to render Markdown and HTML,
 * with the sizes, against a baseline measured in the same run: loading the canonical session
 * from the store and serialising it as `session.json`. Run: deno task bench:export
 */
import { sessionJson } from "../../core/artifacts/mod.ts";
import { documentOf, renderHtml, renderMarkdown } from "../../core/export/mod.ts";
import { ChronicleStore, importAll } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { longTurns, writeClaudeSession } from "../e2e/_synthetic.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const store = ChronicleStore.open(":memory:");
const home = await Deno.makeTempDir({ prefix: "chronicle-export-bench-" });
const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
const realclients = `${ROOT}fixtures/realclients`;
for (const agent of Deno.readDirSync(realclients)) {
  if (!agent.isDirectory) continue;
  for (const s of Deno.readDirSync(`${realclients}/${agent.name}`)) {
    const h = `${realclients}/${agent.name}/${s.name}/native`;
    try {
      Deno.statSync(h);
    } catch {
      continue;
    }
    await importAll(store, { env: { home: h, env: {}, platform: "linux" }, fs });
  }
}
const biggest = store.listSessions({ sort: "op_count", limit: 1 }).items[0];
const synthetic: [string, number][] = [[
  "aaaaaaaa-0000-4000-8000-000000005000",
  5_000,
], ["aaaaaaaa-0000-4000-8000-000000050000", 50_000]];
for (const [id, n] of synthetic) {
  await writeClaudeSession(home, { sessionId: id, cwd: `/tmp/bench-${n}`, turns: longTurns(n) });
}
await importAll(store, { env: { home, env: {}, platform: "linux" }, fs });

const time = <T>(fn: () => T): [T, number] => {
  const t0 = performance.now();
  const out = fn();
  return [out, performance.now() - t0];
};
const mb = (s: string) => (new TextEncoder().encode(s).byteLength / 1e6).toFixed(2);

const ids = [
  [`biggest fixture (${biggest.id})`, biggest.id],
  ...synthetic.map((
    [id, n],
  ) => [`synthetic ${n.toLocaleString("en-US")} steps`, `claude-code:${id}`]),
];
// One warm-up pass, so the first measured session does not pay for compiling.
renderHtml(documentOf(store, biggest.id)!);
for (const [label, id] of ids) {
  const [session, tLoad] = time(() => store.loadSession(id)!);
  const [json, tJson] = time(() => sessionJson(session));
  const [doc, tDoc] = time(() => documentOf(store, id)!);
  const [md, tMd] = time(() => renderMarkdown(doc));
  const [html, tHtml] = time(() => renderHtml(doc));
  const base = tLoad + tJson;
  console.log(
    `${label}: ${session.timeline.length} steps; baseline load + session.json ${
      base.toFixed(0)
    } ms ` +
      `(${mb(json)} MB); document ${tDoc.toFixed(0)} ms (${(tDoc / base).toFixed(1)}x, redaction ` +
      `included, ${doc.redaction.total} findings); Markdown ${tMd.toFixed(0)} ms, ${mb(md)} MB; ` +
      `HTML ${tHtml.toFixed(0)} ms, ${mb(html)} MB; export md ${
        ((tDoc + tMd) / base).toFixed(1)
      }x, ` +
      `html ${((tDoc + tHtml) / base).toFixed(1)}x the baseline`,
  );
}
store.close();
await Deno.remove(home, { recursive: true });
