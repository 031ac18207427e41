/**
 * Where the user typed the command. `deno task` runs in the folder of `deno.json` and says where
 * the user was in `INIT_CWD`; paths the user types (arguments and path variables) resolve
 * against that folder, never against the checkout.
 */
import { isAbsolute, resolve } from "node:path";

/** Path variables Chronicle reads; a relative value resolves against the user's folder. */
const PATH_VARS = [
  "CHRONICLE_HOME",
  "HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "CODEX_HOME",
  "CURSOR_USER_DIR",
  "OPENCODE_DATA_DIR",
  "GEMINI_CLI_HOME",
  "QWEN_HOME",
  "QWEN_RUNTIME_DIR",
  "COPILOT_HOME",
] as const;
/** Path variables holding several paths separated by commas. */
const PATH_LIST_VARS = ["CLAUDE_CONFIG_DIR"] as const;

/**
 * The user's folder: `INIT_CWD` when this process was started by `deno task` (its working
 * folder is then the checkout that holds `deno.json`), else the process's own.
 */
export function userCwd(
  env: Record<string, string | undefined>,
  processCwd: string,
  checkout: string,
): string {
  const init = env.INIT_CWD;
  if (init && isAbsolute(init) && resolve(processCwd) === resolve(checkout)) return resolve(init);
  return processCwd;
}

/** A copy of `env` whose path variables are absolute, resolved against `cwd`. */
export function resolvePathVars(
  env: Record<string, string | undefined>,
  cwd: string,
): Record<string, string | undefined> {
  const out = { ...env };
  for (const name of PATH_VARS) {
    const v = out[name];
    if (v && !isAbsolute(v)) out[name] = resolve(cwd, v);
  }
  for (const name of PATH_LIST_VARS) {
    const v = out[name];
    if (v) {
      out[name] = v.split(",").map((
        p,
      ) => (p.trim() && !isAbsolute(p.trim()) ? resolve(cwd, p.trim()) : p))
        .join(",");
    }
  }
  return out;
}

/** A path the user typed, absolute: a relative one resolves against their folder (`io.cwd`). */
export function userPath(cwd: string, path: string): string {
  return resolve(cwd, path);
}
