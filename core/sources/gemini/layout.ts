/**
 * Where Gemini CLI keeps its chats (`$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/`), what a
 * file's place says (sub-agent chats sit in `chats/<parent session>/`), and the project folder
 * from `projects.json`.
 */
import { sha256Hex } from "../../model/payload.ts";
import type { DiscoverEnv, SourceFs, SourceUnit } from "../types.ts";
import { isObj, joinPath, stemOf } from "../_import_kit.ts";
import type { GeminiPass } from "./pass.ts";

/** Where a chat file sits: `<root>/tmp/<project>/chats/[<parent>/]<file>`. */
export function geminiLayout(path: string): {
  root?: string;
  projectDir?: string;
  parentSession?: string;
} {
  const parts = path.split("/");
  const chats = parts.lastIndexOf("chats");
  if (chats < 2 || parts[chats - 2] !== "tmp") return {};
  return {
    root: parts.slice(0, chats - 2).join("/"),
    projectDir: parts[chats - 1],
    parentSession: chats === parts.length - 3 ? parts[chats + 1] : undefined,
  };
}

/** The project folder for a `tmp/<dir>`: from `projects.json` (name or SHA-256 of the path). */
export async function projectFromRegistry(
  fs: SourceFs,
  path: string,
  projectHash?: string,
): Promise<string | undefined> {
  const { root, projectDir } = geminiLayout(path);
  if (!root || !projectDir) return undefined;
  try {
    const doc = JSON.parse(await fs.readTextFile(joinPath(root, "projects.json")));
    const projects = isObj(doc) && isObj(doc.projects) ? doc.projects : {};
    for (const [dir, name] of Object.entries(projects)) {
      if (name === projectDir || sha256Hex(dir) === projectDir || sha256Hex(dir) === projectHash) {
        return dir;
      }
    }
  } catch { /* no registry: the project path stays unknown unless the chat names it */ }
  return undefined;
}

export function connectionFor(unit: SourceUnit): GeminiPass["connection"] {
  const parent = geminiLayout(unit.path).parentSession;
  if (parent) {
    return { id: `subagent:${stemOf(unit.path)}`, kind: "subagent", sessionId: parent };
  }
  return { id: "main", kind: "main" };
}

/** `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. */
export function geminiHome(env: DiscoverEnv): string {
  return joinPath(env.env.GEMINI_CLI_HOME || env.home, ".gemini");
}

/** A main chat file's name. */
export const CHAT_FILE = /^session-.*\.(jsonl|json)$/;
