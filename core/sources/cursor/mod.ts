/**
 * Cursor importer: two readers behind one source id. `ide.ts` reads the IDE's chats from its
 * `state.vscdb` databases; `agent.ts` reads the `cursor-agent` CLI's transcripts and chat
 * stores. Each has its own discover, detect and import; a unit goes to the one that detects it.
 */
import { agentName } from "../../model/agents.ts";
import type { Importer } from "../types.ts";
import { basename } from "../_import_kit.ts";
import { cursorAgent } from "./agent.ts";
import { SOURCE } from "./composer.ts";
import { cursorIde } from "./ide.ts";

export { cursorAgent } from "./agent.ts";
export { cursorIde, cursorUserDirs } from "./ide.ts";
export { uriToPath } from "./uri.ts";

const PARTS = [cursorIde, cursorAgent];

export const cursor: Importer<typeof SOURCE> = {
  id: SOURCE,
  displayName: agentName(SOURCE),
  async discover(env, fs) {
    return (await Promise.all(PARTS.map((p) => p.discover(env, fs)))).flat();
  },
  detect: (path) => PARTS.some((p) => p.detect(path)),
  import(unit, ctx) {
    // Transcripts and `store.db` chat stores are cursor-agent's; other databases the IDE's.
    // Only the IDE's databases (which grow big) are read in parts; cursor-agent's files whole.
    const agent = unit.kind === "jsonl" || basename(unit.path) === "store.db";
    return agent
      ? cursorAgent.import(unit, { ...ctx, maxPassBytes: undefined })
      : cursorIde.import(unit, ctx);
  },
  slices: true,
};
