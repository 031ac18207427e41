/**
 * The big single logs the memory benchmark imports (deterministic for a given size):
 * - one Claude Code session of about `mib` MiB, made of a Claude corpus's sessions written one
 *   after another into one file (their session id made one, every record's uuid and message
 *   id given a round's own tail, so no record repeats another);
 * - one Cursor `state.vscdb` holding about `mib` MiB of chats (composers of 500 bubbles,
 *   shaped like the fixture `peers/cursor/constructed/globalStorage_state.vscdb`'s);
 * - one Claude Code session of pasted prompts, each a line just under the longest read whole
 *   (`MAX_LINE_BYTES`), a reply and a call after each.
 */
import { addCursorChats } from "../_helpers/cursor_db.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";

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

/**
 * Writes one Claude Code session of `count` prompts of `mib` MiB each into `home`: a pasted log,
 * its lines numbered, so its words are many and its line stays under 32 MiB with its escapes.
 */
export async function writePastedPrompts(home: string, count: number, mib: number) {
  const turns = Array.from({ length: count }, (_, i) => {
    const lines: string[] = [];
    for (let n = 0, size = 0; size < mib << 20; n++) {
      const line = `${i}-${n} 2026-12-06T10:00:00Z INFO served request ${n} in ${n % 97} ms
`;
      lines.push(line);
      size += line.length;
    }
    return {
      user: `paste ${i}:
${lines.join("")}`,
      assistant: `read paste ${i}`,
      tool: { name: "Bash", input: { command: `wc -l paste${i}.log` }, result: `${lines.length}` },
    };
  });
  await writeClaudeSession(home, {
    sessionId: "0b16b16b-0000-4000-8000-0000000000aa",
    cwd: "/home/dev/projects/pasted",
    turns,
  });
}

function byName(a: Deno.DirEntry, b: Deno.DirEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Where Cursor's database is in a home, Linux's way. */
export const CURSOR_DB = ".config/Cursor/User/globalStorage/state.vscdb";

/** Writes `<home>/${CURSOR_DB}` of about `mib` MiB of chats. */
export function writeBigCursorDb(home: string, mib: number) {
  Deno.mkdirSync(`${home}/${CURSOR_DB.slice(0, CURSOR_DB.lastIndexOf("/"))}`, { recursive: true });
  addCursorChats(`${home}/${CURSOR_DB}`, { bytes: mib * 1024 * 1024, turns: 125 });
}
