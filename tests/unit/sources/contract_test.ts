/**
 * The importer contract, checked the same way for every importer on every fixture: operation
 * ids are stable across two imports; the order of a session's operations is total (no two
 * share an order key); every tool call is paired with its result or marked incomplete or
 * unmatched; effect and replay attributes follow from kind, completeness and request; an
 * unchanged file re-imports as nothing; a file read in two passes (the second appended) gives
 * the same operations as one pass; a bad line is a loss window of exactly that line; an
 * unknown record type is a counted issue, never a crash.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  type CanonicalSession,
  compareOrder,
  finishOperation,
  isToolKind,
  type Operation,
  validationProblems,
} from "../../../core/model/mod.ts";
import { IMPORTERS } from "../../../core/sources/registry.ts";
import type {
  FileStat,
  Importer,
  SourceFs,
  SourceUnit,
  UnitResult,
} from "../../../core/sources/types.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { assemble, filesUnder, resumeOf, SHARED } from "./_run_importer.ts";

/** One import case: the units of one or more sessions, imported together. */
interface Case {
  name: string;
  units: SourceUnit[];
}

/** A line each JSONL importer reads as a record of a type it does not know. */
const UNKNOWN_RECORD: Record<string, string> = {
  "claude-code": JSON.stringify({
    type: "zz-not-a-record-type",
    uuid: "0f0f0f0f-0000-4000-8000-000000000001",
    timestamp: "2026-01-01T00:00:00.000Z",
  }),
  codex: JSON.stringify({
    timestamp: "2026-01-01T00:00:00.000Z",
    type: "zz_not_a_record_type",
    payload: {},
  }),
  gemini: JSON.stringify({ zzNotARecordType: true }),
  cursor: JSON.stringify({ type: "zz_not_a_record_type" }),
  copilot: JSON.stringify({
    type: "zz_not_a_record_type",
    data: {},
    id: "0f0f0f0f-0000-4000-8000-000000000003",
    timestamp: "2026-01-01T00:00:00.000Z",
  }),
  qwen: JSON.stringify({
    type: "zz_not_a_record_type",
    uuid: "0f0f0f0f-0000-4000-8000-000000000002",
    timestamp: "2026-01-01T00:00:00.000Z",
  }),
};

const PEERS = `${SHARED}/peers`;
const REAL = `${SHARED}/realclients`;
const realFs = createDenoFs();

const unit = (
  source: SourceUnit["source"],
  path: string,
  kind: SourceUnit["kind"],
  rank = 0,
): SourceUnit => ({ source, path, kind, rank });

/** The units the importer discovers in each real-client scenario's native HOME. */
async function realClientCases(importer: Importer, agentDir: string): Promise<Case[]> {
  const out: Case[] = [];
  let scenarios: string[] = [];
  try {
    scenarios = [...Deno.readDirSync(`${REAL}/${agentDir}`)].filter((e) => e.isDirectory).map((
      e,
    ) => e.name).sort();
  } catch {
    return out;
  }
  for (const s of scenarios) {
    const home = `${REAL}/${agentDir}/${s}/native`;
    const units = await importer.discover({ home, env: {}, platform: "linux" }, realFs);
    if (units.length) out.push({ name: `realclients/${agentDir}/${s}`, units });
  }
  return out;
}

/** Every fixture of every importer, as import cases. */
async function casesOf(importer: Importer): Promise<Case[]> {
  const id = importer.id;
  switch (id) {
    case "claude-code": {
      const root = `${PEERS}/claude-code`;
      const all = await filesUnder(root, /\.jsonl$/);
      const inFolder = (p: string) => all.some((m) => p.startsWith(m.replace(/\.jsonl$/, "/")));
      // A session's folder beside it holds its sub-agents and workflow runs.
      const cases = all.filter((p) => !inFolder(p)).map((p) => ({
        name: p.slice(SHARED.length + 1),
        units: [p, ...all.filter((m) => m.startsWith(p.replace(/\.jsonl$/, "/")))].map((m) =>
          unit(id, m, "jsonl", m === p ? 0 : 1)
        ),
      }));
      return [...cases, ...await realClientCases(importer, "claude")];
    }
    case "codex": {
      const files = await filesUnder(`${PEERS}/codex`, /\.jsonl$/);
      return [
        ...files.map((p) => ({ name: p.slice(SHARED.length + 1), units: [unit(id, p, "jsonl")] })),
        ...await realClientCases(importer, "codex"),
      ];
    }
    case "gemini": {
      const files = await filesUnder(`${PEERS}/gemini`, /\.jsonl?$/);
      return [
        ...files.map((p) => ({
          name: p.slice(SHARED.length + 1),
          units: [unit(id, p, p.endsWith(".json") ? "json" : "jsonl")],
        })),
        ...await realClientCases(importer, "gemini"),
      ];
    }
    case "cursor": {
      const root = `${PEERS}/cursor`;
      const transcripts = (await filesUnder(root, /\.jsonl$/)).map((p) => ({
        name: p.slice(SHARED.length + 1),
        units: [unit(id, p, "jsonl")],
      }));
      return [
        ...transcripts,
        {
          name: "peers/cursor/constructed (state.vscdb)",
          units: [
            unit(id, `${root}/constructed/globalStorage_state.vscdb`, "sqlite"),
            unit(id, `${root}/constructed/workspaceStorage_abc123_state.vscdb`, "sqlite", 1),
          ],
        },
        {
          name: "peers/cursor/agentsessions_cursor-agent-cli_store.db",
          units: [unit(id, `${root}/agentsessions_cursor-agent-cli_store.db`, "sqlite")],
        },
      ];
    }
    case "opencode": {
      const root = `${PEERS}/opencode`;
      return [
        {
          name: "peers/opencode/constructed/opencode.db",
          units: [unit(id, `${root}/constructed/opencode.db`, "sqlite")],
        },
        { name: "peers/opencode/cass_storage", units: [unit(id, `${root}/cass_storage`, "tree")] },
        ...["storage_v2", "storage_legacy"].map((d) => ({
          name: `peers/opencode/agentsessions/${d}`,
          units: [unit(id, `${root}/agentsessions/${d}`, "tree")],
        })),
        ...await realClientCases(importer, "opencode"),
      ];
    }
    case "qwen":
      return await realClientCases(importer, "qwen");
    case "copilot":
      return await realClientCases(importer, "copilot");
  }
  return [];
}

/**
 * The real file system with some files replaced by bytes held in memory (a changed copy of a
 * fixture), so a case can append to or corrupt a fixture without touching it.
 */
class OverlayFs implements SourceFs {
  readonly over = new Map<string, { bytes: Uint8Array; mtimeMs: number; ino: number }>();
  private clock = 1;
  constructor(private readonly base: SourceFs) {}

  set(path: string, bytes: Uint8Array, ino = 1): void {
    this.over.set(path, { bytes, mtimeMs: this.clock++, ino });
  }
  stat(path: string): Promise<FileStat | null> {
    const f = this.over.get(path);
    if (!f) return this.base.stat(path);
    return Promise.resolve({
      isFile: true,
      isDirectory: false,
      size: f.bytes.byteLength,
      mtimeMs: f.mtimeMs,
      ino: f.ino,
    });
  }
  readDir(path: string) {
    return this.base.readDir(path);
  }
  async *readFrom(path: string, offset: number): AsyncIterable<Uint8Array> {
    const f = this.over.get(path);
    if (!f) {
      yield* this.base.readFrom(path, offset);
      return;
    }
    for (let i = offset; i < f.bytes.byteLength; i += 65536) {
      yield f.bytes.slice(i, Math.min(i + 65536, f.bytes.byteLength));
    }
  }
  readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    const f = this.over.get(path);
    return f
      ? Promise.resolve(f.bytes.slice(offset, offset + length))
      : this.base.readRange(path, offset, length);
  }
  readTextFile(path: string): Promise<string> {
    const f = this.over.get(path);
    return f ? Promise.resolve(new TextDecoder().decode(f.bytes)) : this.base.readTextFile(path);
  }
  copyToTemp(path: string, dir: string, name: string): Promise<string> {
    return this.base.copyToTemp(path, dir, name);
  }
  makeTempDir(): Promise<string> {
    return this.base.makeTempDir();
  }
  remove(path: string): Promise<void> {
    return this.base.remove(path);
  }
}

async function importAll(importer: Importer, fs: SourceFs, units: SourceUnit[]) {
  const results: UnitResult[] = [];
  for (const u of units) results.push(await importer.import(u, { fs, epoch: 0 }));
  return { results, ...assemble(results, units) };
}

/** What two imports of the same bytes must agree on, operation by operation. */
function opFacts(s: CanonicalSession) {
  return s.timeline.map((t) => {
    const op = s.operations[t.op];
    return {
      id: t.op,
      connection: t.connection,
      kind: op.kind,
      tool: op.tool,
      native_id: op.native_id,
      completeness: op.completeness,
      is_error: op.is_error,
      request: op.request,
      response: op.response,
      text: op.text,
    };
  });
}

function checkSession(s: CanonicalSession, where: string): void {
  assertEquals(validationProblems(s), [], `${where}: valid`);
  const entries = s.timeline.map((t) => ({ id: t.op, op: s.operations[t.op] }));
  for (const { id, op } of entries) {
    const derived = finishOperation(structuredClone(op) as Operation);
    assertEquals(
      [op.effect, op.replay],
      [derived.effect, derived.replay],
      `${where}: ${id} effect and replay follow from kind, completeness and request`,
    );
    if (isToolKind(op.kind)) {
      assert(
        op.completeness !== "complete" || op.response !== undefined,
        `${where}: ${id} (${op.tool}) is complete, so it holds its result or says it is missing`,
      );
      assert(
        op.completeness !== "unmatched" || op.request === undefined,
        `${where}: ${id} is a result without a call, so it has no request`,
      );
    }
  }
}

/** Order keys of one import pass's operations, per session: none shared by two operations. */
function checkTotalOrder(results: UnitResult[], where: string): void {
  const bySession = new Map<string, Map<string, { order: Parameters<typeof compareOrder>[0] }>>();
  for (const r of results) {
    for (const d of r.deltas) {
      const ops = bySession.get(d.session_id) ?? new Map();
      for (const o of d.operations) ops.set(o.id, o);
      bySession.set(d.session_id, ops);
    }
  }
  for (const [sid, ops] of bySession) {
    const list = [...ops.entries()].sort((a, b) => compareOrder(a[1].order, b[1].order));
    for (let i = 1; i < list.length; i++) {
      assert(
        compareOrder(list[i - 1][1].order, list[i][1].order) !== 0,
        `${where}: ${sid}: ${list[i - 1][0]} and ${list[i][0]} share an order key`,
      );
    }
  }
}

const encoder = new TextEncoder();

/** The byte offset just after the line ending nearest the middle of the file. */
function middleLineEnd(bytes: Uint8Array): number | null {
  const mid = bytes.indexOf(10, Math.floor(bytes.byteLength / 2));
  return mid === -1 || mid === bytes.byteLength - 1 ? null : mid + 1;
}

for (const importer of IMPORTERS) {
  Deno.test(`${importer.id}: every fixture keeps the importer contract`, async (t) => {
    const cases = await casesOf(importer);
    assert(cases.length > 0, `${importer.id} has fixtures`);
    for (const c of cases) {
      await t.step(c.name, async () => {
        const first = await importAll(importer, realFs, c.units);
        const second = await importAll(importer, realFs, c.units);
        assertEquals(
          second.sessions.map(opFacts),
          first.sessions.map(opFacts),
          "ids and operations are the same on a second import",
        );
        for (const s of first.sessions) checkSession(s, `${c.name} ${s.session.id}`);
        checkTotalOrder(first.results, c.name);
        for (const [i, u] of c.units.entries()) {
          const again = await importer.import(u, {
            fs: realFs,
            epoch: 1,
            resume: resumeOf(first.results[i]),
          });
          assertEquals([again.mode, again.deltas.length], ["unchanged", 0], `${u.path} re-import`);
        }
        const jsonl = c.units.filter((u) => u.kind === "jsonl");
        for (const u of jsonl) await incremental(importer, c, u, first.sessions);
      });
    }
  });
}

/**
 * The incremental checks on one JSONL unit of a case: the file read in two passes gives the
 * operations of one pass; a bad line in the middle is a loss window of that line alone; an
 * unknown record type there is a counted issue.
 */
async function incremental(
  importer: Importer,
  c: Case,
  u: SourceUnit,
  whole: CanonicalSession[],
): Promise<void> {
  const bytes = await Deno.readFile(u.path);
  const cut = middleLineEnd(bytes);
  if (cut === null) return;
  const others = c.units.filter((x) => x !== u);
  // Two passes: the first half, then the rest appended.
  {
    const fs = new OverlayFs(realFs);
    const before: UnitResult[] = [];
    for (const o of others) before.push(await importer.import(o, { fs, epoch: 0 }));
    fs.set(u.path, bytes.slice(0, cut));
    const head = await importer.import(u, { fs, epoch: 0 });
    fs.set(u.path, bytes);
    const tail = await importer.import(u, {
      fs,
      epoch: 1,
      resume: resumeOf(head),
    });
    assert(tail.mode !== "unchanged", `${u.path}: the appended half is read`);
    const { sessions } = assemble([...before, head, tail], [...others, u, u]);
    assertEquals(
      sessions.map(opFacts),
      whole.map(opFacts),
      `${u.path}: read in two passes, the same operations as in one`,
    );
  }
  const line = bytes.subarray(0, cut).filter((b) => b === 10).length + 1;
  const inject = async (text: string) => {
    const fs = new OverlayFs(realFs);
    const changed = new Uint8Array(bytes.byteLength + text.length + 1);
    changed.set(bytes.subarray(0, cut));
    changed.set(encoder.encode(text + "\n"), cut);
    changed.set(bytes.subarray(cut), cut + text.length + 1);
    fs.set(u.path, changed);
    const results: UnitResult[] = [];
    for (const o of c.units) results.push(await importer.import(o, { fs, epoch: 0 }));
    return { results, ...assemble(results, c.units) };
  };
  {
    const { sessions } = await inject("{ this line is not JSON");
    const windows = sessions.flatMap((s) => s.provenance.loss_windows).filter((w) =>
      w.file === u.path && w.lines[0] <= line && w.lines[1] >= line
    );
    assertEquals(windows.length, 1, `${u.path}: a bad line ${line} is one loss window`);
    assertEquals(windows[0].lines, [line, line], `${u.path}: the window holds only line ${line}`);
  }
  const unknown = UNKNOWN_RECORD[importer.id];
  if (unknown && u.kind === "jsonl") {
    const { sessions, results } = await inject(unknown);
    const issues = [
      ...sessions.flatMap((s) => s.issues),
      ...results.flatMap((r) => r.issues),
    ].filter((i) => i.file === u.path && /unknown/.test(i.code));
    assert(
      issues.some((i) => (i.count ?? 1) >= 1),
      `${u.path}: an unknown record type is a counted issue (${JSON.stringify(issues)})`,
    );
  }
}
