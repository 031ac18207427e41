/**
 * Cursor IDE chats written into a `state.vscdb` (table `cursorDiskKV`), shaped like the
 * fixture `peers/cursor/constructed/globalStorage_state.vscdb`'s: a `composerData:` row per
 * chat and `bubbleId:` rows for its prompts, replies with thinking, `read_file` calls with
 * their results and token counts. Deterministic for given arguments. For the tests that read
 * databases in parts and for the memory benchmark.
 */
import { DatabaseSync } from "node:sqlite";
import { rng } from "./rng.ts";

const WORDS = ("alpha render parser session store value export const import async await " +
  "function return config index result").split(" ");

export interface CursorChats {
  /** The first chat's number (chat ids are `comp-big-<number>`). Default 0. */
  from?: number;
  /** How many chats; or until `bytes` of rows are written. */
  count?: number;
  bytes?: number;
  /** Turns per chat, four bubbles each. */
  turns: number;
  /** Words in a tool result. Default 500. */
  resultWords?: number;
  seed?: number;
}

/**
 * Adds chats to the database at `path` (made, with Cursor's two tables, when it does not
 * exist). Returns the bytes of rows written.
 */
export function addCursorChats(path: string, chats: CursorChats): number {
  const db = new DatabaseSync(path);
  const rand = rng(chats.seed ?? 7);
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)] + (rand() * 1000 | 0))
      .join(" ");
  let bytes = 0;
  try {
    db.exec(
      `CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
      CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);`,
    );
    const insert = db.prepare("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)");
    const from = chats.from ?? 0;
    let at = Date.parse("2026-01-01T08:00:00.000Z") + from * 10_000_000;
    for (
      let c = from;
      chats.count !== undefined ? c < from + chats.count : bytes < (chats.bytes ?? 0);
      c++
    ) {
      const cid = `comp-big-${String(c).padStart(6, "0")}`;
      const headers: { bubbleId: string; type: number }[] = [];
      db.exec("BEGIN");
      for (let turn = 0; turn < chats.turns; turn++) {
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
              result: JSON.stringify({
                contents: words(chats.resultWords ?? 500),
                totalLinesInFile: 40,
              }),
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
          name: `Chat ${c}`,
          createdAt: at - chats.turns * 4000,
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
  return bytes;
}
