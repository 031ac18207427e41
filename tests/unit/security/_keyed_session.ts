/**
 * A stored Claude Code session with keys throughout, for scans read a page at a time: a prompt
 * with a key, `calls` shell calls (a key in every third command and every other result, "hello"
 * in every other result), and a last prompt with a key (the session's own field).
 */
import { type ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { writeClaudeSession } from "../../e2e/_synthetic.ts";
import type { FakeSecrets } from "./_fake_secrets.ts";

/** Imports the session into `store` from a log written under `home`; its id. */
export async function importKeyedSession(
  store: ChronicleStore,
  home: string,
  options: { sessionId: string; calls: number; fake: FakeSecrets },
): Promise<string> {
  const { sessionId, fake } = options;
  const log = await writeClaudeSession(home, {
    sessionId,
    cwd: "/tmp/keyed",
    turns: [
      { user: `deploy with ${fake.github()}` },
      ...Array.from({ length: options.calls }, (_, i) => ({
        tool: {
          name: "Bash",
          input: { command: i % 3 ? `echo ${i}` : `curl -H 'token: ${fake.github()}' x` },
          result: i % 2 ? `hello ${i}` : `key ${fake.github()} and hello again`,
        },
      })),
    ],
  });
  const last = { type: "last-prompt", lastPrompt: `again with ${fake.github()}`, sessionId };
  await Deno.writeTextFile(log, JSON.stringify(last) + "\n", { append: true });
  await importAll(store, {
    env: { home, env: { HOME: home }, platform: "linux" },
    fs: createDenoFs(),
  });
  return `claude-code:${sessionId}`;
}
