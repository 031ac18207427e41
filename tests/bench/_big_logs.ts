/**
 * The big single logs the memory benchmark imports (deterministic for a given size):
 * - one Claude Code session of about `mib` MiB, made of a Claude corpus's sessions written one
 *   after another into one file (their session id made one, every record's uuid and message
 *   id given a round's own tail, so no record repeats another);
 * - one Cursor `state.vscdb` holding about `mib` MiB of chats (composers of 500 bubbles,
 *   shaped like the fixture `peers/cursor/constructed/globalStorage_state.vscdb`'s).
 */
import { DatabaseSync } from "node:sqlite";
import { rng } from "./_codex_corpus.ts";

const SESSION = "0b16b16b-0000-4000-8000-000000000001";
/** Record uuids, message and tool-use ids: hex runs a round's tail makes distinct. */
const IDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{24,}/g;

/** Writes `<home>/.claude/projects/-home-dev-projects-big/<session>.jsonl` from `corpus`. */
export async function writeBigClaudeSession(corpus: string, home: string, mib: number) {
  const dir = `${home}/.claude/projects/-home-dev-projects-big`;
  await Deno.mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const project of [...Deno.readDirSync(`${corpus}/.claude/projects`)].sort(byName)) {
    const p = `${corpus}/.claude/projects/${project.name}`;
    for (const f of [...Deno.readDirSync(p)].sort(byName)) {
      if (f.isFile && f.name.endsWith(".jsonl")) files.push(`${p}/${f.name}`);
    }
  }
  const out = await Deno.open(`${dir}/${SESSION}.jsonl`, {
    write: true,
    create: true,
    truncate: true,
  });
  const encoder = new TextEncoder();
  const target = mib * 1024 * 1024;
  let bytes = 0;
  try {
    for (let round = 0; bytes < target; round++) {
      const tail = round.toString(16).padStart(4, "0");
      for (const file of files) {
        const own = file.slice(file.lastIndexOf("/") + 1, -".jsonl".length);
        for (const line of (await Deno.readTextFile(file)).split("\n")) {
          if (!line || bytes >= target) continue;
          const text = line.replaceAll(own, SESSION).replace(
            IDS,
            (id) => id === SESSION ? id : id.slice(0, -4) + tail,
          ) + "\n";
          const b = encoder.encode(text);
          await out.write(b);
          bytes += b.byteLength;
        }
        if (bytes >= target) break;
      }
    }
  } finally {
    out.close();
  }
}

function byName(a: Deno.DirEntry, b: Deno.DirEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

const WORDS = ("alpha render parser session store value export const import async await " +
  "function return config index result").split(" ");

/** Writes `<home>/.config/Cursor/User/globalStorage/state.vscdb` of about `mib` MiB of chats. */
export function writeBigCursorDb(home: string, mib: number) {
  const dir = `${home}/.config/Cursor/User/globalStorage`;
  Deno.mkdirSync(dir, { recursive: true });
  const path = `${dir}/state.vscdb`;
  try {
    Deno.removeSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const db = new DatabaseSync(path);
  const rand = rng(7);
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)] + (rand() * 1000 | 0))
      .join(" ");
  try {
    db.exec(`CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
      CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);`);
    const insert = db.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)");
    const target = mib * 1024 * 1024;
    let bytes = 0;
    let at = Date.parse("2026-01-01T08:00:00.000Z");
    for (let c = 0; bytes < target; c++) {
      const cid = `comp-big-${String(c).padStart(6, "0")}`;
      const headers: { bubbleId: string; type: number }[] = [];
      db.exec("BEGIN");
      for (let turn = 0; turn < 125; turn++) {
        const bubbles = [
          { type: 1, text: words(60) },
          { type: 2, text: words(80), thinking: { text: words(20) } },
          {
            type: 2,
            text: "",
            capabilityType: 15,
            toolFormerData: {
              tool: 40,
              toolCallId: `toolu_${c}_${turn}`,
              status: "completed",
              name: "read_file",
              rawArgs: JSON.stringify({ target_file: `src/file_${turn}.ts` }),
              params: JSON.stringify({ targetFile: `src/file_${turn}.ts` }),
              result: JSON.stringify({ contents: words(500), totalLinesInFile: 40 }),
            },
          },
          { type: 2, text: words(40), tokenCount: { inputTokens: 1200, outputTokens: 40 } },
        ];
        for (const [k, b] of bubbles.entries()) {
          const bubbleId = `b-${turn}-${k}`;
          at += 1000;
          const value = JSON.stringify({
            _v: 3,
            bubbleId,
            createdAt: new Date(at).toISOString(),
            requestId: `req-${turn}`,
            ...b,
          });
          insert.run(`bubbleId:${cid}:${bubbleId}`, value);
          headers.push({ bubbleId, type: b.type });
          bytes += value.length;
        }
      }
      insert.run(
        `composerData:${cid}`,
        JSON.stringify({
          _v: 10,
          composerId: cid,
          name: `Big chat ${c}`,
          createdAt: at - 500_000,
          lastUpdatedAt: at,
          status: "completed",
          unifiedMode: "agent",
          modelConfig: { modelName: "claude-4.5-sonnet" },
          fullConversationHeadersOnly: headers,
        }),
      );
      db.exec("COMMIT");
    }
  } finally {
    db.close();
  }
}
