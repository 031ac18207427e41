/**
 * What an agent's logs contain, read independently of Chronicle's importers: every record type,
 * item type and part type a run wrote, counted; and what the import made of each (mapped to the
 * timeline or session, only counted as a known type shown nowhere, or reported as unknown). The
 * `--latest` run prints this per agent and version (`latestReport`), so a new CLI version's new
 * records are seen the day it ships.
 *
 * A type is `unknown` when the import reported an `unknown_*` issue naming it, `counted` when
 * the importer kept it only as a count (a `skipped_records` or `attachments` table in the
 * session's extensions), and `mapped` otherwise.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { ExportedSession } from "./chronicle.ts";

export type Disposition = "mapped" | "counted" | "unknown";

/** Native type keys with how often each occurs, e.g. `event_msg:token_count` -> 12. */
export type TypeCounts = Map<string, number>;

export interface TypeRow {
  key: string;
  count: number;
  disposition: Disposition;
  /** Scenarios whose logs hold it. */
  scenarios: string[];
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown) => typeof v === "string" && v ? v : undefined;

/** Every file under `dir` (recursively) whose name passes `keep`. */
async function filesUnder(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.isFile && keep(e.name)) out.push(p);
    }
  };
  await walk(dir);
  return out;
}

async function jsonLines(path: string): Promise<unknown[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      out.push(undefined);
    }
  }
  return out;
}

function bump(counts: TypeCounts, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function blocks(counts: TypeCounts, prefix: string, content: unknown): void {
  if (typeof content === "string") bump(counts, `${prefix}:text`);
  else if (Array.isArray(content)) {
    for (const b of content) if (isObj(b)) bump(counts, `${prefix}:${str(b.type) ?? "(none)"}`);
  }
}

/** Claude Code: record types, system subtypes, attachment types, message block types. */
function claudeRecord(counts: TypeCounts, v: unknown): void {
  if (!isObj(v)) return bump(counts, "(not an object)");
  const type = str(v.type) ?? "(none)";
  // A system record or an attachment is listed by its subtype, the level the importer maps.
  if (type === "system") bump(counts, `system:${str(v.subtype) ?? "(none)"}`);
  else if (type === "attachment" && isObj(v.attachment) && str(v.attachment.type)) {
    bump(counts, `attachment:${str(v.attachment.type)}`);
  } else bump(counts, type);
  if ((type === "user" || type === "assistant") && isObj(v.message)) {
    blocks(counts, `${type} block`, v.message.content);
  }
}

/** Codex CLI: top-level types, response item types, event message types. */
function codexRecord(counts: TypeCounts, v: unknown): void {
  if (!isObj(v)) return bump(counts, "(not an object)");
  const type = str(v.type) ?? (v.record_type !== undefined ? "record_type" : "(none)");
  const p = isObj(v.payload) ? v.payload : undefined;
  // An envelope is listed by what it carries.
  if (p && (type === "response_item" || type === "event_msg")) {
    bump(counts, `${type}:${str(p.type) ?? "(none)"}`);
  } else bump(counts, type);
}

/** Gemini CLI: metadata lines, `$set` keys, rewinds, message types and their content parts. */
function geminiRecord(counts: TypeCounts, v: unknown): void {
  if (!isObj(v)) return bump(counts, "(not an object)");
  if (v.id !== undefined) {
    bump(counts, `message:${str(v.type) ?? "(none)"}`);
    if (Array.isArray(v.toolCalls) && v.toolCalls.length) bump(counts, "message:toolCalls");
    if (Array.isArray(v.thoughts) && v.thoughts.length) bump(counts, "message:thoughts");
    if (Array.isArray(v.content)) {
      for (const part of v.content) {
        if (isObj(part)) bump(counts, `part:${Object.keys(part).sort().join("+") || "(empty)"}`);
      }
    }
    return;
  }
  if (isObj(v.$set)) {
    for (const k of Object.keys(v.$set)) bump(counts, `$set:${k}`);
    return;
  }
  if (v.$rewindTo !== undefined) return bump(counts, "$rewindTo");
  if (typeof v.sessionId === "string") return bump(counts, "metadata");
  bump(counts, `(keys ${Object.keys(v).slice(0, 3).join(",")})`);
}

/** OpenCode: message roles, part types and tool states from its database. */
function opencodeDatabase(counts: TypeCounts, path: string): void {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const rows = (sql: string) => db!.prepare(sql).all() as { data: string }[];
    for (const r of rows("SELECT data FROM message")) {
      const d = JSON.parse(String(r.data));
      bump(counts, `message:${str(d.role) ?? "(none)"}`);
    }
    for (const r of rows("SELECT data FROM part")) {
      const d = JSON.parse(String(r.data));
      const type = str(d.type) ?? "(none)";
      bump(counts, type);
      if (type === "tool" && isObj(d.state)) {
        bump(counts, `tool:${str(d.state.status) ?? "(none)"}`);
      }
    }
  } catch (e) {
    bump(counts, `(database unreadable: ${(e as Error).message.slice(0, 60)})`);
  } finally {
    db?.close();
  }
}

/** Qwen Code: record types, `system:` subtypes (telemetry by event name), message part kinds. */
function qwenRecord(counts: TypeCounts, v: unknown): void {
  if (!isObj(v)) return bump(counts, "(not an object)");
  const type = str(v.type) ?? "(none)";
  if (type === "system") {
    const subtype = str(v.subtype) ?? "(none)";
    const payload = isObj(v.systemPayload) ? v.systemPayload : {};
    const ev = isObj(payload.uiEvent) ? payload.uiEvent : {};
    const name = str(ev["event.name"])?.replace(/^qwen-code\./, "");
    bump(
      counts,
      subtype === "ui_telemetry" && name ? `system:ui_telemetry:${name}` : `system:${subtype}`,
    );
    return;
  }
  bump(counts, type);
  const parts = isObj(v.message) ? v.message.parts : undefined;
  for (const p of Array.isArray(parts) ? parts : []) {
    if (!isObj(p)) continue;
    const kind = p.thought === true ? "thought" : Object.keys(p).filter((k) => k !== "thought")
      .sort().join("+");
    bump(counts, `${type} part:${kind || "(empty)"}`);
  }
}

/** Any other agent: the `type` of each JSON line of its JSONL logs. */
function genericRecord(counts: TypeCounts, v: unknown): void {
  if (!isObj(v)) return bump(counts, "(not an object)");
  bump(counts, str(v.type) ?? str(v.kind) ?? "(none)");
}

/** The native types in the logs `agent` wrote under `home` (its `logRoots`). */
export async function inventory(
  agent: { id: string; logRoots: string[] },
  home: string,
): Promise<TypeCounts> {
  const counts: TypeCounts = new Map();
  for (const root of agent.logRoots) {
    const base = `${home}/${root}`;
    if (agent.id === "opencode") {
      if (base.endsWith(".db")) {
        if (await Deno.stat(base).then(() => true, () => false)) opencodeDatabase(counts, base);
      }
      continue;
    }
    const isJson = agent.id === "gemini"
      ? (n: string) => n.endsWith(".jsonl") || (n.startsWith("session-") && n.endsWith(".json"))
      : (n: string) => n.endsWith(".jsonl") && !n.endsWith(".meta.jsonl");
    const name = base.slice(base.lastIndexOf("/") + 1);
    const files = await Deno.stat(base)
      .then((s) => s.isFile ? (isJson(name) ? [base] : []) : filesUnder(base, isJson))
      .catch(() => [] as string[]);
    for (const f of files) {
      if (agent.id === "gemini" && f.endsWith(".json")) {
        const doc = JSON.parse(await Deno.readTextFile(f).catch(() => "{}"));
        bump(counts, "legacy document");
        for (const m of Array.isArray(doc.messages) ? doc.messages : []) geminiRecord(counts, m);
        continue;
      }
      const read = agent.id === "claude"
        ? claudeRecord
        : agent.id === "codex"
        ? codexRecord
        : agent.id === "gemini"
        ? geminiRecord
        : agent.id === "qwen"
        ? qwenRecord
        : genericRecord;
      for (const v of await jsonLines(f)) read(counts, v);
    }
  }
  return counts;
}

/**
 * Keys of every count table anywhere in the extensions: `skipped_records` (Claude Code, Codex,
 * Gemini, OpenCode), `counted_records` (Qwen Code), Claude Code's `attachments`.
 */
function countedKeys(ext: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(ext)) { for (const x of ext) countedKeys(x, into); }
  else if (isObj(ext)) {
    for (const [k, v] of Object.entries(ext)) {
      if ((k === "skipped_records" || k === "counted_records" || k === "attachments") && isObj(v)) {
        for (const t of Object.keys(v)) into.add(k === "attachments" ? `attachment:${t}` : t);
      } else countedKeys(v, into);
    }
  }
  return into;
}

/** What the import made of each type, judged from the exported sessions. */
export function dispositions(
  counts: TypeCounts,
  sessions: ExportedSession[],
): Map<string, Disposition> {
  const counted = new Set<string>();
  const unknownMessages: string[] = [];
  for (const e of sessions) {
    countedKeys(e.session.extensions, counted);
    for (const i of (e.session.issues ?? []) as { code?: string; message?: string }[]) {
      if (i.code?.startsWith("unknown")) unknownMessages.push(i.message ?? "");
    }
  }
  const out = new Map<string, Disposition>();
  for (const key of counts.keys()) {
    const leaf = key.slice(key.lastIndexOf(":") + 1);
    if (unknownMessages.some((m) => m.includes(JSON.stringify(leaf)))) out.set(key, "unknown");
    else if (counted.has(key) || counted.has(leaf)) out.set(key, "counted");
    else out.set(key, "mapped");
  }
  return out;
}

/** One agent at one version over its scenarios: the union of their types. */
export class VersionInventory {
  readonly rows = new Map<string, TypeRow>();
  readonly results: { scenario: string; ok: boolean }[] = [];

  constructor(readonly agent: string, readonly version: string, readonly label: string) {}

  add(scenario: string, counts: TypeCounts, disp: Map<string, Disposition>): void {
    for (const [key, n] of counts) {
      const row = this.rows.get(key) ??
        { key, count: 0, disposition: disp.get(key) ?? "mapped", scenarios: [] };
      row.count += n;
      // The worst verdict any scenario gave wins: unknown, then counted.
      const rank = { mapped: 0, counted: 1, unknown: 2 };
      const d = disp.get(key) ?? "mapped";
      if (rank[d] > rank[row.disposition]) row.disposition = d;
      if (!row.scenarios.includes(scenario)) row.scenarios.push(scenario);
      this.rows.set(key, row);
    }
  }
}

/** The report as Markdown: per agent and version, every type and its disposition. */
export function latestReport(inventories: VersionInventory[], stamp: string): string {
  const out = [
    "# Conformance: record types per agent and CLI version",
    "",
    `Written by \`deno task conformance --latest\` (or \`--report\`) on ${stamp}. For each agent,`,
    "the pinned version and npm's latest; every record / item / part type its logs held over the",
    "scenarios run, and what Chronicle's import made of it: **mapped** (operations, usage or",
    "session fields), **counted** (a known type kept only as a count in the session's",
    "`skipped_records` / `counted_records` / `attachments`), or **unknown** (reported as an",
    "`unknown_*` issue).",
    "",
  ];
  for (const inv of inventories) {
    const rows = [...inv.rows.values()].sort((a, b) => a.key.localeCompare(b.key));
    const passed = inv.results.filter((r) => r.ok).length;
    const by = (d: Disposition) => rows.filter((r) => r.disposition === d);
    out.push(
      `## ${inv.agent} ${inv.version} (${inv.label})`,
      "",
      `Scenarios: ${passed}/${inv.results.length} passed` +
        (inv.results.some((r) => !r.ok)
          ? ` (failed: ${inv.results.filter((r) => !r.ok).map((r) => r.scenario).join(", ")})`
          : "") +
        `. Types: ${rows.length} (${by("mapped").length} mapped, ${
          by("counted").length
        } counted, ` +
        `${by("unknown").length} unknown).`,
      "",
      "| type | count | import | scenarios |",
      "| ---- | ----: | ------ | --------- |",
      ...rows.map((r) =>
        `| \`${r.key.replace(/\|/g, "\\|")}\` | ${r.count} | ${r.disposition} | ${
          r.scenarios.join(", ")
        } |`
      ),
      "",
    );
    const counted = by("counted").map((r) => `\`${r.key}\``);
    const unknown = by("unknown").map((r) => `\`${r.key}\``);
    if (counted.length) out.push(`Only counted: ${counted.join(", ")}.`, "");
    if (unknown.length) out.push(`Unknown: ${unknown.join(", ")}.`, "");
  }
  return out.join("\n");
}
