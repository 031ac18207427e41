/** Small Claude Code sessions written on the fly, and a file-backed store with packs. */
import {
  ChronicleStore,
  type FilterStrategy,
  importAll,
  type ImportOptions,
  inProcessRunner,
  PACK_MIN_BYTES,
  type PackFiles,
} from "../../../core/store/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { createPackFiles, packDir } from "../../../runtime/pack_files.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";

/**
 * A result of `n` characters that stays big when compressed (payloads are stored compressed):
 * the seed, then hex digits of a hash chain started from it.
 */
export const big = (seed: string, n = PACK_MIN_BYTES * 3) => {
  let out = seed + " ";
  for (let h = sha256Hex(seed); out.length < n; h = sha256Hex(h)) out += h;
  return out.slice(0, n);
};

export async function scratch(
  options: {
    packLimit?: number;
    payloadMergeRows?: number;
    wrap?: (p: PackFiles) => PackFiles;
    /** How search narrows to a filter (default: the store's own choice). */
    filteredSearch?: FilterStrategy;
  } = {},
) {
  const home = await Deno.makeTempDir({ prefix: "chronicle-packs-test-" });
  const data = `${home}/data`;
  await Deno.mkdir(data);
  const open = () => {
    const packs = createPackFiles(packDir(data));
    return ChronicleStore.open(`${data}/chronicle.db`, {
      packs: options.wrap ? options.wrap(packs) : packs,
      packLimit: options.packLimit,
      payloadMergeRows: options.payloadMergeRows,
      filteredSearch: options.filteredSearch,
    });
  };
  const fs = createDenoFs({ tempRoot: `${home}/.tmp` });
  const importOptions: ImportOptions = {
    env: { home, env: {}, platform: "linux" },
    fs,
    runner: inProcessRunner(fs),
  };
  const write = (sid: string, results: string[], tool = "Bash") =>
    writeClaudeSession(home, {
      sessionId: sid,
      cwd: "/work/demo",
      turns: [
        { user: `fix it, session ${sid}` },
        ...results.map((result, i) => ({
          tool: {
            name: tool,
            input: tool === "Read"
              ? { file_path: `/work/demo/f${i}.ts` }
              : { command: `make step${i}` },
            result,
          },
        })),
      ],
    });
  const run = (store: ChronicleStore, extra: Partial<ImportOptions> = {}) =>
    importAll(store, { ...importOptions, ...extra });
  return {
    home,
    /** Writes (or rewrites) session `sid`: a prompt, then one call (Bash, Read) per result. */
    write,
    data,
    open,
    run,
    /** Writes session `sid`, opens the store and imports: the usual start of a test. */
    async imported(sid: string, results: string[]): Promise<ChronicleStore> {
      await write(sid, results);
      const store = open();
      await run(store);
      return store;
    },
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
