/**
 * Corpora for the agents no generator writes (Gemini CLI, Qwen Code, Copilot CLI, OpenCode):
 * the real CLIs' recordings in `fixtures/realclients`, copied until they add up to the size
 * asked. Each copy is a session of its own: its session id is replaced by a new one in its
 * paths and its text, and every longer text in it (a prompt, a reply, an output; not a key,
 * an id or JSON in a string) ends with the copy's number, so no two copies' payloads are
 * the same and the store keeps each one, as it would fresh text. Real formats and record
 * mixes, which a generator would only imitate.
 */
import { DatabaseSync } from "node:sqlite";
import { FIXTURES } from "../_helpers/fixtures.ts";

const REAL = `${FIXTURES}/realclients`;

/** The JSONL agents, with where a recording's session log is and which id it goes by. */
const JSONL_AGENTS = {
  gemini: {
    log: (path: string) => /\/chats\/[^/]+\.jsonl$/.test(path),
    // (its file is named by the id's first 8 digits)
    id: (_path: string, text: string) => String(JSON.parse(text.split("\n", 1)[0]).sessionId),
  },
  qwen: {
    log: (path: string) => /\/chats\/[^/]+\.jsonl$/.test(path),
    id: (path: string) => path.split("/").pop()!.replace(/\.jsonl$/, ""),
  },
  copilot: {
    log: (path: string) => path.endsWith("/events.jsonl"),
    id: (path: string) => path.split("/").at(-2)!,
  },
} as const;

export type JsonlAgent = keyof typeof JSONL_AGENTS;

/** Writes a home of about `mib` MiB of `agent`'s logs into `dir`; returns their bytes. */
export function writeRealJsonlHome(agent: JsonlAgent, dir: string, mib: number): number {
  const spec = JSONL_AGENTS[agent];
  const recordings: { home: string; files: string[]; log: string; id: string }[] = [];
  for (const scenario of [...Deno.readDirSync(`${REAL}/${agent}`)].map((e) => e.name).sort()) {
    const home = `${REAL}/${agent}/${scenario}/native`;
    const files = filesUnder(home);
    const log = files.find(spec.log);
    if (!log) continue;
    recordings.push({ home, files, log, id: spec.id(log, Deno.readTextFileSync(log)) });
  }
  if (!recordings.length) throw new Error(`no ${agent} recordings under ${REAL}/${agent}`);
  const target = mib * 2 ** 20;
  const shared = new Set<string>();
  let bytes = 0;
  for (let copy = 0; bytes < target; copy++) {
    const r = recordings[copy % recordings.length];
    const id = copyId(r.id, copy);
    for (const file of r.files) {
      const rel = file.slice(r.home.length);
      const own = rel.includes(r.id) || rel.includes(r.id.slice(0, 8));
      if (!own && shared.has(rel)) continue; // a file of no one session: copied once
      shared.add(rel);
      const to = `${dir}${
        own ? rel.replaceAll(r.id, id).replaceAll(r.id.slice(0, 8), id.slice(0, 8)) : rel
      }`;
      Deno.mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true });
      if (file !== r.log) {
        Deno.copyFileSync(file, to);
        continue;
      }
      const text = Deno.readTextFileSync(file).replaceAll(r.id, id).split("\n")
        .map((line) => line.trim() ? JSON.stringify(marked(JSON.parse(line), copy)) : line)
        .join("\n");
      Deno.writeTextFileSync(to, text);
      bytes += new TextEncoder().encode(text).byteLength;
    }
  }
  return bytes;
}

/**
 * Writes an OpenCode home into `dir` whose `opencode.db` holds the long real recording's
 * session copied until its message and part data add up to about `mib` MiB; returns those
 * bytes.
 */
export function writeRealOpencodeHome(dir: string, mib: number): number {
  const to = `${dir}/.local/share/opencode`;
  Deno.mkdirSync(to, { recursive: true });
  const path = `${to}/opencode.db`;
  Deno.copyFileSync(
    `${REAL}/opencode/s4-long/native-checkpointed/.local/share/opencode/opencode.db`,
    path,
  );
  Deno.chmodSync(path, 0o644);
  const db = new DatabaseSync(path);
  try {
    const [session] = db.prepare("SELECT * FROM session").all() as Row[];
    const messages = db.prepare("SELECT * FROM message WHERE session_id = ?").all(
      session.id,
    ) as Row[];
    const parts = db.prepare("SELECT * FROM part WHERE session_id = ?").all(session.id) as Row[];
    const insert = (table: string, row: Row) => {
      const keys = Object.keys(row);
      db.prepare(
        `INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
      )
        .run(...keys.map((k) => row[k]));
    };
    const sid = String(session.id);
    const target = mib * 2 ** 20;
    let bytes = 0;
    db.exec("BEGIN");
    db.exec("DELETE FROM part; DELETE FROM message; DELETE FROM session");
    for (let copy = 0; bytes < target; copy++) {
      const suffix = `c${copy}`;
      const rid = (v: Row[string]) => typeof v === "string" ? `${v}${suffix}` : v;
      // the data's own ids too: the session's, and the message's its row names
      const data = (v: unknown, own: unknown) => {
        const json = String(v).replaceAll(sid, `${sid}${suffix}`)
          .replaceAll(`"${own}"`, `"${own}${suffix}"`);
        const text = JSON.stringify(marked(JSON.parse(json), copy));
        bytes += new TextEncoder().encode(text).byteLength;
        return text;
      };
      insert("session", {
        ...session,
        id: rid(session.id),
        title: `${session.title} ${copy}`,
        time_created: Number(session.time_created) + copy * 1000,
        time_updated: Number(session.time_updated) + copy * 1000,
      });
      for (const m of messages) {
        insert("message", {
          ...m,
          id: rid(m.id),
          session_id: rid(m.session_id),
          data: data(m.data, m.id),
        });
      }
      for (const p of parts) {
        insert("part", {
          ...p,
          id: rid(p.id),
          message_id: rid(p.message_id),
          session_id: rid(p.session_id),
          data: data(p.data, p.message_id),
        });
      }
    }
    db.exec("COMMIT");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return bytes;
  } finally {
    db.close();
  }
}

type Row = Record<string, string | number | null | Uint8Array>;

/** A session id for copy `copy`: the same form, its first 8 digits the copy's number. */
function copyId(id: string, copy: number): string {
  return copy.toString(16).padStart(8, "0") + id.slice(8);
}

/** The value with every longer text in it ending with the copy's number (see the module). */
function marked(v: unknown, copy: number): unknown {
  if (typeof v === "string") {
    return v.length > 24 && v.includes(" ") && !/^\s*[[{]/.test(v) ? `${v}\n(copy ${copy})` : v;
  }
  if (Array.isArray(v)) return v.map((x) => marked(x, copy));
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, marked(x, copy)]));
  }
  return v;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...filesUnder(p));
    else if (e.isFile) out.push(p);
  }
  return out.sort();
}
