/** Small Claude Code sessions written on the fly, and a file-backed store with packs. */
import { ChronicleStore, importAll, type ImportOptions } from "../../../core/store/mod.ts";
import { PACK_MIN_BYTES, type PackFiles } from "../../../core/store/packs.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { createPackFiles, packDir } from "../../../runtime/pack_files.ts";

/** A Claude Code session: a prompt, then one Bash call per result (the last one fails). */
export function sessionLines(sid: string, results: string[]): string {
  const lines: unknown[] = [];
  let parent: string | null = null;
  let t = Date.parse("2026-11-30T10:00:00Z");
  const push = (rec: Record<string, unknown>) => {
    const uuid = crypto.randomUUID();
    lines.push({
      ...rec,
      uuid,
      parentUuid: parent,
      sessionId: sid,
      cwd: "/work/demo",
      timestamp: new Date(t += 1000).toISOString(),
    });
    parent = uuid;
  };
  push({ type: "user", message: { role: "user", content: `fix it, session ${sid}` } });
  results.forEach((result, i) => {
    const id = `toolu_${sid.slice(0, 8)}_${i}`;
    push({
      type: "assistant",
      message: {
        id: `msg_${sid.slice(0, 8)}_${i}`,
        role: "assistant",
        model: "claude-test",
        content: [{ type: "tool_use", id, name: "Bash", input: { command: `make step${i}` } }],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    });
    push({
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: id,
          content: result,
          ...(i === results.length - 1 ? {} : { is_error: false }),
        }],
      },
    });
  });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

export const big = (seed: string, n = PACK_MIN_BYTES * 2) =>
  (seed + " ").repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);

export async function scratch(
  options: { packLimit?: number; wrap?: (p: PackFiles) => PackFiles } = {},
) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-packs-test-" });
  const projects = `${home}/.claude/projects/-work-demo`;
  await Deno.mkdir(projects, { recursive: true });
  const data = `${home}/data`;
  await Deno.mkdir(data);
  const open = () => {
    const packs = createPackFiles(packDir(data));
    return ChronicleStore.open(`${data}/chronicle.db`, {
      packs: options.wrap ? options.wrap(packs) : packs,
      packLimit: options.packLimit,
    });
  };
  const importOptions: ImportOptions = {
    env: { home, env: {}, platform: "linux" },
    fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
  };
  return {
    home,
    projects,
    data,
    open,
    run: (store: ChronicleStore) => importAll(store, importOptions),
    packBytes: () => {
      let total = 0;
      try {
        for (const e of Deno.readDirSync(packDir(data))) {
          total += Deno.statSync(`${packDir(data)}/${e.name}`).size;
        }
      } catch { /* no pack yet */ }
      return total;
    },
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  };
}
