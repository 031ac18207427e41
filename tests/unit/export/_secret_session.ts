/**
 * A session that holds every `redact` case of fixtures/secrets/cases.jsonl in every place an
 * export shows text: the title (first prompt), prompts, replies, thinking, tool inputs, tool
 * results (also across the cut of a long result's head and tail), edit diffs, written files and
 * a sub-agent thread. It is written as Claude Code JSONL, imported by the real importer, then
 * given thinking steps and a sub-agent thread, and stored through the canonical import.
 */
import { payloadHashes, sessionJson } from "../../../core/artifacts/mod.ts";
import type { CanonicalSession } from "../../../core/model/mod.ts";
import { scanText } from "../../../core/security/mod.ts";
import { ChronicleStore, importAll } from "../../../core/store/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { createDenoFs } from "../../../runtime/deno_fs.ts";
import { loadCases } from "../../bench/secret_cases.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { type SyntheticTurn, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { DEFAULT_LIMITS } from "../../../core/export/mod.ts";

export interface SecretCase {
  index: number;
  text: string;
  /** The substrings the engine recognises as secret in the case's own text. */
  secrets: string[];
}

/** Every `redact` case with the spans of it that must never appear in an output. */
export async function secretCases(): Promise<SecretCase[]> {
  const cases = loadCases(await Deno.readTextFile(`${FIXTURES}/secrets/cases.jsonl`));
  return cases.flatMap((c, index) => {
    if (c.expect !== "redact") return [];
    const secrets = scanText(c.text).findings.map((f) => c.text.slice(f.start, f.end));
    return secrets.length ? [{ index, text: c.text, secrets }] : [];
  });
}

const SESSION = "5ec7e75e-0000-4000-8000-00000000c0de";

const filler = (n: number) =>
  "lorem ipsum dolor sit amet ".repeat(Math.ceil(Math.max(n, 0) / 27)).slice(0, Math.max(n, 0));

/** A long result whose opening and ending cuts (where an export shortens it) cross the case. */
function straddling(c: SecretCase): string {
  const half = Math.floor(c.text.length / 2);
  return filler(DEFAULT_LIMITS.resultHead - half - 1) + `\n${c.text}\n` + filler(20_000) +
    `\n${c.text}\n` + filler(DEFAULT_LIMITS.resultTail - half - 1);
}

function turns(cases: SecretCase[]): SyntheticTurn[] {
  const out: SyntheticTurn[] = [{ user: `Help me with this config: ${cases[0].text}` }];
  for (const c of cases) {
    out.push({ user: `Why does this fail?\n\n${c.text}\n` });
    out.push({ assistant: `The line \`${c.text}\` holds a credential; I found:\n\n> ${c.text}` });
    out.push({
      tool: {
        name: "Bash",
        input: { command: `grep -n "${c.text.slice(0, 200)}" config.env`, description: c.text },
        result: `config.env:3:${c.text}\nexit 0`,
      },
    });
    out.push({
      tool: {
        name: "Edit",
        input: {
          file_path: "/work/app/.env",
          old_string: `${c.text}\nA=1\n`,
          new_string: `A=1\n# ${c.text}\n`,
        },
        result: "The file /work/app/.env has been updated.",
      },
    });
  }
  out.push({
    tool: {
      name: "Write",
      input: { file_path: "/work/app/secrets.txt", content: cases.map((c) => c.text).join("\n") },
      result: "File created successfully",
    },
  });
  for (const c of cases) {
    out.push({
      tool: {
        name: "Bash",
        input: { command: "cat big.log" },
        result: straddling(c),
        is_error: true,
      },
    });
  }
  return out;
}

/**
 * A store holding the secret session (id returned) with thinking steps and a sub-agent thread.
 * Close the store when done.
 */
export async function secretStore(): Promise<
  { store: ChronicleStore; id: string; cases: SecretCase[] }
> {
  const cases = await secretCases();
  const home = await Deno.makeTempDir({ prefix: "chronicle-secrets-test-" });
  await writeClaudeSession(home, { sessionId: SESSION, cwd: "/work/app", turns: turns(cases) });
  const first = ChronicleStore.open(":memory:");
  await importAll(first, {
    env: { home, env: {}, platform: "linux" },
    fs: createDenoFs({ tempRoot: `${home}/.tmp` }),
  });
  const id = first.listSessions().items[0].id;
  const session = withThinkingAndThread(first.loadSession(id)!);
  const payloads = new Map<string, Uint8Array>();
  for (const sha of payloadHashes(session)) payloads.set(sha, first.payload(sha)!);
  first.close();
  await Deno.remove(home, { recursive: true });
  const store = ChronicleStore.open(":memory:");
  const outcome = store.putCanonicalSession(session, payloads, {
    sessionSha256: sha256Hex(sessionJson(session)),
  });
  if (outcome !== "imported") throw new Error(`secret session not stored: ${outcome}`);
  return { store, id, cases };
}

/**
 * Every third reply becomes thinking; the last quarter of the timeline becomes a sub-agent
 * thread spawned by the Bash call just before it.
 */
function withThinkingAndThread(session: CanonicalSession): CanonicalSession {
  const s = structuredClone(session);
  let replies = 0;
  for (const t of s.timeline) {
    const op = s.operations[t.op];
    if (op.kind === "reply" && replies++ % 3 === 0) op.kind = "thinking";
  }
  const from = Math.floor(s.timeline.length * 0.75);
  const spawner = s.timeline.slice(0, from).reverse().find((t) =>
    s.operations[t.op].tool === "Bash"
  )!;
  const task = s.operations[spawner.op];
  task.kind = "task";
  task.effect = "delegate";
  task.spawns = "agent-secrets";
  const main = s.connections[0];
  s.connections.push({
    id: "agent-secrets",
    kind: "subagent",
    parent_op: spawner.op,
    agent_type: "general-purpose",
    client: main.client,
    server: main.server,
  });
  for (const t of s.timeline.slice(from)) t.connection = "agent-secrets";
  s.completeness.connections["agent-secrets"] = "complete";
  return s;
}
